//! The algorithms a linkrev process knows: the built-ins, plus any a user adds.
//!
//! Every place that lists, validates, runs or describes algorithms reads the installed
//! [`Registry`] through the [`Algorithm`] handle: `linkrev run --algo`, `linkrev
//! algorithms`, spec validation, `linkrev bench protocols`, the benches, the report's
//! defaults and the tests' conformance suites. A few places name a built-in for a
//! purpose of their own: the coverage harness's points (`coverage::points`), the
//! baseline of `linkrev bench protocols` (RL's plain event loop) and the replay of a
//! checker scenario's starting state (`replay::scenarios`); no dispatch on a name
//! decides how an algorithm runs. An entry is one line: the protocol type, its name and a one-line description;
//! the family comes from the constructor ([`leader_election`], [`mutual_exclusion`],
//! [`route`]), which also picks the family's runner, checker and replayer, and the
//! parameters from the protocol's [`ProtocolConfig`], so the declaration of a parameter
//! and the code that reads it sit in the protocol's file.
//!
//! Adding an algorithm inside linkrev: write `src/protocol/<name>.rs` (see the toy
//! protocol in [`crate::protocol`]'s docs), add its line to [`BUILTIN`], and its
//! family's conformance suite runs on it (`tests/conformance.rs`).
//!
//! Adding one in your own crate, without a fork: build a [`Registry`] from
//! [`Registry::builtin`], [`Registry::add`] your entry, and hand it to
//! [`crate::cli::main_with`]: your binary is then the whole `linkrev` command line with
//! your algorithm beside the built-ins (`examples/own_algorithm.rs` is a worked
//! example). [`crate::conformance`] runs your family's suite on it from your own tests.
//!
//! The process's registry is installed once, before anything reads it
//! ([`Registry::install`]); a program that installs none gets the built-ins.

use crate::family::{self, Family, LeaderElection, MutualExclusion, Route, Watches};
use crate::protocol::le_ingram::LeIngram;
use crate::protocol::le_malpani::LeMalpani;
use crate::protocol::le_tora5::LeTora5;
use crate::protocol::me_krl::Krl;
use crate::protocol::me_raymond::Raymond;
use crate::protocol::me_rl::Rl;
use crate::protocol::route_gb::{GbFull, GbPartial};
use crate::protocol::{
    AlgoParams, LeaderView, ParamDef, Protocol, ProtocolConfig, ReplayView, RouteView, TokenView,
};
use crate::run::RunOutput;
use crate::sim::RunConfig;
use crate::topology::events::LinkTimeline;
use std::fmt;
use std::time::Instant;

/// The algorithms linkrev ships, in the order they are listed to users.
pub static BUILTIN: &[AlgorithmDef] = &[
    leader_election::<LeMalpani>(
        "le-malpani",
        "Leader election by link reversal (Malpani, Welch, Vaidya 2000): the slides' rules A-E",
    )
    .legend("MWV")
    .caveat(
        "follows the published rules A–E, which have known counterexamples when the network \
         partitions and merges (a stale Update revives a lost leader; rule E can strand a \
         merging node as a sink): see the book, The algorithms and where they come from.",
    ),
    leader_election::<LeTora5>(
        "le-tora5",
        "le-malpani plus TORA's fifth case: a sink below another node's reflected level starts a new reference level",
    )
    .legend("MWV + TORA case 5"),
    leader_election::<LeIngram>(
        "le-ingram",
        "Leader election for dynamic networks (Ingram, Shields, Walter, Welch 2009; causal clocks 2013)",
    )
    .legend("Ingram et al.")
    .value_words(&[("clock", "perfect", "perfect clocks"), ("clock", "causal", "causal clocks")]),
    mutual_exclusion::<Rl>(
        "me-rl",
        "Token mutual exclusion by link reversal (Walter, Welch, Vaidya 2001: RL)",
    )
    .legend("RL"),
    mutual_exclusion::<Krl>(
        "me-krl",
        "k-mutual exclusion by link reversal: RL with k tokens (after Walter, Cao, Mohanty 2001; reconstructed, see its docs)",
    )
    .legend("k-RL")
    .value_words(&[("forwarding", "on", "forwarding"), ("forwarding", "off", "no forwarding")]),
    mutual_exclusion::<Raymond>(
        "me-raymond",
        "Raymond's tree token algorithm (1989), the baseline, over a routing layer: free (oracle) or paid for (discovery)",
    )
    .legend("Raymond")
    .value_words(&[("routing", "oracle", "oracle routing"), ("routing", "discovery", "route discovery")]),
    route::<GbFull>(
        "gb-full",
        "Routes to one destination by full link reversal (Gafni, Bertsekas 1981): a sink reverses all its links",
    )
    .legend("Full reversal"),
    route::<GbPartial>(
        "gb-partial",
        "Routes to one destination by partial link reversal (Gafni, Bertsekas 1981): a sink reverses the links of neighbours that have not reversed since it last did",
    )
    .legend("Partial reversal"),
];

/// How a family runs one algorithm: parameters, timeline and run configuration in,
/// records and summary out.
type Runner = fn(&AlgoParams, &LinkTimeline, RunConfig) -> RunOutput;

/// One registry entry.
#[derive(Clone)]
pub struct AlgorithmDef {
    /// The name on the command line, in specs and in results (`me-rl`).
    pub name: &'static str,
    /// One line for listings.
    pub description: &'static str,
    /// The problem it solves.
    pub family: Family,
    /// Its parameters, with types, defaults and ranges.
    pub params: &'static [ParamDef],
    /// A known flaw, said next to the algorithm's incidents in reports (a published
    /// algorithm keeps its published rules, flaws included).
    pub caveat: Option<&'static str>,
    /// What figure legends call it, as a paper would ("RL"); the name when not set.
    pub legend: &'static str,
    /// How legends say a parameter's value, as `(parameter, value, words)`: `("routing",
    /// "discovery", "route discovery")`. A value without words reads `k = 2`.
    pub value_words: &'static [(&'static str, &'static str, &'static str)],
    /// The kinds of message it sends ([`crate::protocol::Message::KINDS`]).
    pub message_kinds: &'static [&'static str],
    runner: Runner,
    checker: crate::check::CheckRunner,
    replayer: crate::replay::Replayer,
    steps_checker: StepsChecker,
}

/// How a family checks a scenario's steps against its model
/// ([`family::check_steps`]).
type StepsChecker = fn(
    &AlgoParams,
    usize,
    &[(crate::NodeId, crate::NodeId)],
    &[crate::check::model::Step],
) -> Result<(), (usize, String)>;

impl AlgorithmDef {
    /// Every parameter at its default.
    pub fn default_params(&self) -> AlgoParams {
        AlgoParams::defaults(self.params)
    }

    /// Checks the node-id parameters against a run of `nodes` nodes (the one check that
    /// needs the run's trace).
    pub fn check_node_ids(&self, params: &AlgoParams, nodes: usize) -> Result<(), String> {
        params.check_node_ids(self.params, nodes)
    }

    /// Runs the algorithm configured by `params` (checked against [`Self::params`], and
    /// by [`Self::check_node_ids`] against the timeline) on a timeline, with its
    /// family's monitors and metrics.
    ///
    /// # Panics
    /// If a node-id parameter names no node of the timeline.
    pub fn run(
        &self,
        params: &AlgoParams,
        timeline: &LinkTimeline,
        config: RunConfig,
    ) -> RunOutput {
        if let Err(e) = self.check_node_ids(params, timeline.node_count) {
            panic!("{}: {e}", self.name);
        }
        let started = Instant::now();
        let mut output = (self.runner)(params, timeline, config);
        output.summary.algorithm = self.name;
        output.summary.wall_time_s = started.elapsed().as_secs_f64();
        output
    }

    /// [`Self::run`] with a recorder for the replay viewer ([`crate::replay`]): the
    /// run's output (its violations kept whole, up to [`crate::replay::MAX_MARKS`]) and
    /// the events of `window`.
    ///
    /// # Panics
    /// If a node-id parameter names no node of the timeline.
    pub fn replay(
        &self,
        params: &AlgoParams,
        timeline: &LinkTimeline,
        config: RunConfig,
        window: crate::replay::Window,
    ) -> (RunOutput, crate::replay::document::Recorded) {
        if let Err(e) = self.check_node_ids(params, timeline.node_count) {
            panic!("{}: {e}", self.name);
        }
        let started = Instant::now();
        let (mut output, recorded) = (self.replayer)(params, timeline, config, window);
        output.summary.algorithm = self.name;
        output.summary.wall_time_s = started.elapsed().as_secs_f64();
        (output, recorded)
    }

    /// Checks every interleaving of a small configuration exhaustively
    /// ([`crate::check`]) with this algorithm's family properties.
    pub fn check(
        &self,
        params: &AlgoParams,
        setup: &crate::check::CheckSetup,
    ) -> crate::check::CheckReport {
        (self.checker)(params, self.name, setup)
    }

    /// Checks a scenario's execution (`steps` from `links` on `nodes` nodes) against
    /// the family's model, step by step: `Err((k, why))` for the first impossible step.
    pub fn check_steps(
        &self,
        params: &AlgoParams,
        nodes: usize,
        links: &[(crate::NodeId, crate::NodeId)],
        steps: &[crate::check::model::Step],
    ) -> Result<(), (usize, String)> {
        (self.steps_checker)(params, nodes, links, steps)
    }

    /// The entry with the name legends give it (module docs of [`crate::report`]).
    pub const fn legend(self, legend: &'static str) -> Self {
        Self { legend, ..self }
    }

    /// The entry with words for some parameter values in legends (`(parameter, value,
    /// words)`).
    pub const fn value_words(
        self,
        value_words: &'static [(&'static str, &'static str, &'static str)],
    ) -> Self {
        Self {
            value_words,
            ..self
        }
    }

    /// The entry with a caveat.
    pub const fn caveat(self, caveat: &'static str) -> Self {
        Self {
            caveat: Some(caveat),
            ..self
        }
    }
}

/// An entry for protocol `P` in family `F`: `F`'s generic run, check and replay for
/// `P`, with `P`'s parameters and message kinds. [`leader_election`],
/// [`mutual_exclusion`] and [`route`] name the built-in families; a family of a user's
/// own is named by its marker type here.
pub const fn algorithm<F: Watches<P>, P: Protocol + ReplayView>(
    name: &'static str,
    description: &'static str,
) -> AlgorithmDef {
    let runner: Runner = crate::run::runner::run::<F, P>;
    let checker: crate::check::CheckRunner = family::check::<F, P>;
    let replayer: crate::replay::Replayer = crate::replay::record::<F, P>;
    let steps_checker: StepsChecker = family::check_steps::<F, P>;
    AlgorithmDef {
        name,
        description,
        family: F::FAMILY,
        params: <P::Config as ProtocolConfig>::PARAMS,
        caveat: None,
        legend: name,
        value_words: &[],
        message_kinds: <P::Msg as crate::protocol::Message>::KINDS,
        runner,
        checker,
        replayer,
        steps_checker,
    }
}

/// A leader-election algorithm: runs with the leader-election monitor and metrics.
pub const fn leader_election<P: Protocol + LeaderView + ReplayView>(
    name: &'static str,
    description: &'static str,
) -> AlgorithmDef {
    algorithm::<LeaderElection, P>(name, description)
}

/// A mutual-exclusion algorithm: runs with the workload, the mutual-exclusion monitors
/// and metrics.
pub const fn mutual_exclusion<P: Protocol + TokenView + ReplayView>(
    name: &'static str,
    description: &'static str,
) -> AlgorithmDef {
    algorithm::<MutualExclusion, P>(name, description)
}

/// A route-family algorithm: runs with the destination-orientation monitor and metrics.
pub const fn route<P: Protocol + RouteView + ReplayView>(
    name: &'static str,
    description: &'static str,
) -> AlgorithmDef {
    algorithm::<Route, P>(name, description)
}

/// Why an entry cannot join a registry, or a registry cannot be installed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    /// Two entries share a name: results and specs name algorithms, so names are keys.
    #[error("two algorithms are named `{name}`: \"{first}\" and \"{second}\"; rename one of them")]
    NameClash {
        /// The shared name.
        name: &'static str,
        /// The description of the entry already registered.
        first: &'static str,
        /// The description of the entry that was added.
        second: &'static str,
    },
    /// A name that cannot stand in specs, tables and file names.
    #[error(
        "`{0}` cannot name an algorithm: use letters, digits, `-` and `_`, starting with a letter"
    )]
    BadName(&'static str),
    /// A parameter that would collide with a column of the results.
    #[error("{algorithm}: parameter `{param}` {why}")]
    BadParam {
        /// The algorithm declaring it.
        algorithm: &'static str,
        /// The parameter's name.
        param: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The process already reads a registry: installing another now would change what
    /// names mean halfway through.
    #[error("a registry is already installed in this process")]
    AlreadyInstalled,
}

/// The algorithms a process knows, in the order they are listed: the built-ins and any
/// a user adds. Build one, then [`install`](Self::install) it (or hand it to
/// [`crate::cli::main_with`]) before anything reads algorithms.
#[derive(Clone)]
pub struct Registry {
    defs: Vec<AlgorithmDef>,
}

/// Whether `name` is a column the store writes besides parameters: a run's identity, its
/// outcome and counts, a row count, or a per-event table's column.
fn stored_column(name: &str) -> bool {
    use crate::results::tables;
    tables::IDENTITY_COLUMNS
        .iter()
        .chain(tables::OUTCOME_COLUMNS)
        .any(|(c, ..)| *c == name)
        || tables::RUN_COLUMNS.iter().any(|m| m.column == name)
        || family::ALL.iter().any(|f| {
            let table = f.event_table();
            tables::stored_rows_column(table) == name
                || table.columns().iter().any(|(c, _)| *c == name)
        })
}

/// Names an algorithm parameter may not take besides stored columns: the spec keys
/// (parameters are spec keys too, `[params.NAME]`, and one name is one table column)
/// and the words of run keys. The spec parser's tests hold this list to its own keys.
pub const RESERVED_NAMES: &[&str] = &[
    // Spec keys, top level and by section.
    "name",
    "master_seed",
    "replications",
    "algorithms",
    "mobility",
    "network",
    "workload",
    "params",
    "precision",
    "max_events",
    "nodes",
    "area",
    "speed_min",
    "speed_max",
    "speed_dist",
    "pause",
    "pause_dist",
    "duration",
    "start",
    "traces",
    "trace",
    "activity",
    "range",
    "delay",
    "link_break",
    "changes",
    "detection_delay",
    "rate",
    "cs_time",
    // Columns of every row, and words of run keys.
    "run_index",
    "run_key",
    "experiment",
    "algorithm",
    "algo",
    "replication",
    "rep",
    "seed",
    "tool_version",
];

impl Registry {
    /// The algorithms linkrev ships ([`BUILTIN`]).
    pub fn builtin() -> Self {
        let mut registry = Registry { defs: Vec::new() };
        for def in BUILTIN {
            registry
                .add(def.clone())
                .expect("the built-in entries are valid");
        }
        registry
    }

    /// Adds `def` after the entries already there. Refused, naming both entries, if its
    /// name is taken; refused if its name is not a plain word, or a parameter's default
    /// lies outside its range or its name is a metric's column, a spec key or an
    /// identifying column ([`RESERVED_NAMES`]).
    pub fn add(&mut self, def: AlgorithmDef) -> Result<&mut Self, RegistryError> {
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if !def.name.starts_with(|c: char| c.is_ascii_alphabetic()) || !def.name.chars().all(plain)
        {
            return Err(RegistryError::BadName(def.name));
        }
        if let Some(first) = self.defs.iter().find(|d| d.name == def.name) {
            return Err(RegistryError::NameClash {
                name: def.name,
                first: first.description,
                second: def.description,
            });
        }
        for p in def.params {
            let bad = |why: String| RegistryError::BadParam {
                algorithm: def.name,
                param: p.name,
                why,
            };
            if let Err(e) = p.check(p.default_value()) {
                return Err(bad(format!("has a default outside its range: {e}")));
            }
            if let Some(f) = family::ALL.iter().find(|f| f.metric(p.name).is_some()) {
                return Err(bad(format!("is the name of a {} metric", f.name())));
            }
            if RESERVED_NAMES.contains(&p.name) {
                return Err(bad(
                    "is a spec key or a word of run keys: a spec could not set it".to_string(),
                ));
            }
            if stored_column(p.name) {
                return Err(bad(
                    "is a column of the stored tables: its own column would shadow it".to_string(),
                ));
            }
        }
        self.defs.push(def);
        Ok(self)
    }

    /// The entries, in listing order.
    pub fn entries(&self) -> &[AlgorithmDef] {
        &self.defs
    }

    /// Makes this the registry every [`Algorithm`] of the process refers to. Once only,
    /// and before anything has read the registry (which installs the built-ins).
    pub fn install(self) -> Result<(), RegistryError> {
        if self.defs.len() > usize::from(u16::MAX) {
            panic!("more than {} algorithms", u16::MAX);
        }
        INSTALLED
            .set(self.defs)
            .map_err(|_| RegistryError::AlreadyInstalled)
    }
}

/// The process's registry, once installed or first read.
static INSTALLED: std::sync::OnceLock<Vec<AlgorithmDef>> = std::sync::OnceLock::new();

/// The installed entries (the built-ins if nothing was installed before the first read).
fn installed() -> &'static [AlgorithmDef] {
    INSTALLED.get_or_init(|| Registry::builtin().defs)
}

/// A registered algorithm: a small copyable handle on its entry in the installed
/// [`Registry`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Algorithm(u16);

impl Algorithm {
    /// Every registered algorithm, in registry order.
    pub fn all() -> impl ExactSizeIterator<Item = Algorithm> + Clone {
        (0..installed().len() as u16).map(Algorithm)
    }

    /// The algorithm named `name`.
    pub fn parse(name: &str) -> Option<Algorithm> {
        Self::all().find(|a| a.name() == name)
    }

    /// Every name, in registry order.
    pub fn names() -> Vec<&'static str> {
        Self::all().map(Algorithm::name).collect()
    }

    /// The registry entry.
    pub fn def(self) -> &'static AlgorithmDef {
        &installed()[self.0 as usize]
    }

    /// The registry name (`me-rl`).
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The one-line description.
    pub fn description(self) -> &'static str {
        self.def().description
    }

    /// The family.
    pub fn family(self) -> Family {
        self.def().family
    }

    /// What figure legends call it ("RL").
    pub fn legend(self) -> &'static str {
        self.def().legend
    }

    /// How a legend says `param = value`: the registered words ("route discovery"), or
    /// `param = value`.
    pub fn value_legend(self, param: &str, value: &str) -> String {
        self.def()
            .value_words
            .iter()
            .find(|(p, v, _)| *p == param && *v == value)
            .map_or_else(|| format!("{param} = {value}"), |(_, _, w)| w.to_string())
    }

    /// A known flaw of the algorithm as registered, if any.
    pub fn caveat(self) -> Option<&'static str> {
        self.def().caveat
    }

    /// The declared parameters.
    pub fn params(self) -> &'static [ParamDef] {
        self.def().params
    }

    /// The kinds of message it sends, by name.
    pub fn message_kinds(self) -> &'static [&'static str] {
        self.def().message_kinds
    }

    /// Every parameter at its default.
    pub fn default_params(self) -> AlgoParams {
        AlgoParams::defaults(self.params())
    }

    /// Checks the node-id parameters against a run of `nodes` nodes (the one check that
    /// needs the run's trace).
    pub fn check_node_ids(self, params: &AlgoParams, nodes: usize) -> Result<(), String> {
        self.def().check_node_ids(params, nodes)
    }

    /// Runs the algorithm: [`AlgorithmDef::run`].
    ///
    /// # Panics
    /// If a node-id parameter names no node of the timeline.
    pub fn run(self, params: &AlgoParams, timeline: &LinkTimeline, config: RunConfig) -> RunOutput {
        self.def().run(params, timeline, config)
    }

    /// Runs the algorithm with a recorder: [`AlgorithmDef::replay`].
    ///
    /// # Panics
    /// If a node-id parameter names no node of the timeline.
    pub fn replay(
        self,
        params: &AlgoParams,
        timeline: &LinkTimeline,
        config: RunConfig,
        window: crate::replay::Window,
    ) -> (RunOutput, crate::replay::document::Recorded) {
        self.def().replay(params, timeline, config, window)
    }

    /// Checks a small configuration exhaustively: [`AlgorithmDef::check`].
    pub fn check(
        self,
        params: &AlgoParams,
        setup: &crate::check::CheckSetup,
    ) -> crate::check::CheckReport {
        self.def().check(params, setup)
    }

    /// A clap value parser accepting the registered names (listed in `--help`).
    pub fn value_parser() -> impl clap::builder::TypedValueParser<Value = Algorithm> {
        use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
        PossibleValuesParser::new(
            Self::all().map(|a| PossibleValue::new(a.name()).help(a.description())),
        )
        .map(|name| Algorithm::parse(&name).expect("a possible value"))
    }
}

/// Runs `algorithm` with its default parameters on a timeline, with its family's
/// monitors (see [`Algorithm::run`] for other parameters).
pub fn simulate(algorithm: Algorithm, timeline: &LinkTimeline, config: RunConfig) -> RunOutput {
    algorithm.run(&algorithm.default_params(), timeline, config)
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Algorithm {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtins_form_a_valid_registry() {
        let registry = Registry::builtin();
        assert_eq!(registry.entries().len(), BUILTIN.len());
        for a in Algorithm::all() {
            assert_eq!(Algorithm::parse(a.name()), Some(a));
            assert!(!a.description().is_empty());
        }
        assert_eq!(Algorithm::parse("le-nobody"), None);
    }

    #[test]
    fn an_entry_that_cannot_join_is_refused_with_the_reason() {
        let mut registry = Registry::builtin();
        let clash = mutual_exclusion::<Rl>("me-rl", "a second RL");
        assert_eq!(
            registry.add(clash).err(),
            Some(RegistryError::NameClash {
                name: "me-rl",
                first: BUILTIN[3].description,
                second: "a second RL",
            })
        );
        for bad in ["", "9lives", "me rl", "me/rl"] {
            let def = mutual_exclusion::<Rl>(bad, "x");
            assert_eq!(registry.add(def).err(), Some(RegistryError::BadName(bad)));
        }
        let fine = mutual_exclusion::<Rl>("me-rl-again", "RL under another name");
        assert!(registry.add(fine).is_ok());
        assert_eq!(registry.entries().len(), BUILTIN.len() + 1);
        assert_eq!(registry.entries().last().unwrap().name, "me-rl-again");
    }

    #[test]
    fn a_parameter_named_like_a_metric_is_refused() {
        let mut def = mutual_exclusion::<Rl>("me-odd", "x");
        def.params = &[crate::protocol::ParamDef {
            name: "wait_mean",
            description: "clashes with a metric",
            kind: crate::protocol::ParamKind::Int { min: 0, max: 1 },
            default: crate::protocol::ParamDefault::Int(0),
        }];
        let err = Registry::builtin().add(def).err().expect("refused");
        assert!(err.to_string().contains("wait_mean"), "{err}");
        assert!(err.to_string().contains("mutual-exclusion metric"), "{err}");
    }
}
