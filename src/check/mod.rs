//! Exhaustive checking of small configurations, on the same protocol code the simulator
//! runs.
//!
//! Random simulation samples interleavings; a model checker enumerates them. Given an
//! algorithm, a small starting graph, a budget of topology changes (any link of any pair
//! may fail or form, a pair more than once) and of CS requests, [`run`] explores every
//! order of message deliveries, changes, requests and releases breadth-first (so the
//! first violation found of each property is reached by a shortest execution when
//! checking single-threaded) and judges every state by the family's properties. One
//! thread runs the checker's own search ([`explore`]: every state stored, sleep sets
//! prune transitions); more run stateright's parallel search.
//!
//! | family | property | judged in |
//! |---|---|---|
//! | mutual exclusion | `at_most_k_in_cs`: at most k nodes in the critical section | every state |
//! | mutual exclusion | `token_count`: tokens held + in flight + lost = k | every state |
//! | mutual exclusion | `requests_served`: every request in a component holding a token is served once changes stop (bounded by the budgets) | terminal states |
//! | leader election | `legal_when_quiescent`: every component legal (one leader all agree on, the leader the only sink, views up to date) | quiescent states |
//! | route | `destination_oriented_when_quiescent`: in the destination's component no node but the destination is a sink, views up to date | quiescent states |
//! | mutual exclusion | `requests_eventually_served`: once changes stop, every request in a component that holds a token is served | every fair execution |
//! | leader election | `eventually_legal`: once changes stop, every component becomes legal | every fair execution |
//! | route | `eventually_destination_oriented`: once changes stop, the destination's component becomes destination oriented | every fair execution |
//!
//! A state is *quiescent* when no message is in flight and no change remains; *terminal*
//! when no action is enabled (every budget spent, nothing in flight, nobody in the CS),
//! which is "every request is eventually served once changes stop", bounded by the
//! budgets. The legality judgements are the monitors' own functions
//! ([`crate::observe::le::check_component`], [`crate::observe::route::check_component`]),
//! and the token count is the mutual-exclusion monitor's definition, so the checker and
//! the simulator judge alike. Each family's properties are part of its definition
//! ([`crate::family`]), which builds its model with [`family_model`]. The *eventually*
//! properties are judged over every fair execution, infinite ones included, once the
//! search has closed; a search cut by its budget can still show a fair cycle among the
//! states it stored, which is a real one ([`liveness`]).
//!
//! Link reversal raises heights forever in a component cut off from its token or
//! destination, and leader election stamps every new reference level with the time:
//! taken literally, such state spaces are infinite. Three exact quotients make many of
//! them finite: **height renormalization** ([`shift`]) explores once the states that
//! differ by a shift of their heights (per component once no change remains), so an
//! endless reversal becomes a cycle; **stamp ranking** ([`stamps`]) explores once the
//! states that differ by an order-keeping renaming of their time stamps; and with
//! changes one at a time, **dead changes** ([`dead_changes`]) drops the change budget
//! of a state from which the network can never be quiet again (a part cut off from its
//! token reverses for ever), so its components are renormalized apart. Each applies
//! to the protocols whose rules commute with it (a declared property, checked step by
//! step on random executions by `tests/check_quotients.rs`, which also checks dropped
//! budgets against a plain search for a quiet state).
//!
//! Once no change remains, **parts cut off for good** ([`cut_off`], exact) are frozen:
//! mutual exclusion's components that hold no token, which no property reads again and
//! whose nodes may reverse for ever, piling messages up.
//!
//! With changes overlapping traffic, two more reductions apply. **Dead messages**
//! ([`dead_messages`], exact up to stuttering): once no change remains, a message on a
//! failed link that its receiver can only ignore is dropped. The **level-gap
//! abstraction** ([`gaps`], not exact: an over-approximation): an execution may hold a
//! message in flight (a token sent over a link that then broke) while the rest of its
//! component reverses above it, and the distance between the two runs of heights grows
//! for ever; the abstraction forgets that distance once it is at least 2, taking each
//! abstract state's successors from the real states it stands for. Every real execution
//! is matched, so *holds* is still proved; a violation found is reported only if it
//! replays on the real system (a lasso must close on it), otherwise its verdict is
//! unknown and says so ([`Verdict::Unconfirmed`]).
//!
//! What stays infinite is asynchrony itself: an execution may pile messages up on one
//! link whose receiver waits, and no renaming or abstraction here makes those states
//! repeat; and overlapping changes multiply the interleavings. The search is therefore bounded by
//! `max_depth` actions (and `max_states` states generated, and `--max-memory`); a
//! property with no violation within the bounds is reported **unknown** when some
//! execution was cut, **holds** only when the whole (quotient) state space was explored.
//!
//! A violation's execution is a [`scenario::Scenario`]: `linkrev run --scenario`
//! replays it through the simulator, whose monitors report the same violation.
//!
//! **Symmetry reduction** ([`symmetry`]): for a protocol whose rules never compare node
//! ids (Raymond's), states that differ by a renaming of the nodes are explored once, so
//! `states` counts states up to renaming. The link-reversal algorithms break ties by
//! node id, so for them no renaming but the identity is a symmetry and the search is
//! full.
//!
//! Not modelled: timers (no registered algorithm sets one), and per-hop interleavings of
//! routed messages (a routed message is delivered in one step, see [`model`]).

pub mod cut_off;
pub mod dead_changes;
pub mod dead_messages;
pub mod explore;
pub mod gaps;
pub mod graph;
pub mod liveness;
pub mod model;
pub mod persistent;
pub mod random;
pub mod scenario;
pub mod sets;
pub mod shift;
pub mod stamps;
pub mod state;
pub mod store;
pub mod symmetry;

use crate::NodeId;
use crate::protocol::Protocol;
use graph::SmallGraph;
use model::{CheckProperty, ProtocolModel, Step, When};
use serde::Serialize;
use stateright::{Checker, Model};
use std::time::Instant;

/// What to check: the starting graph and the budgets.
#[derive(Clone, Debug)]
pub struct CheckSetup {
    /// The graph at the start.
    pub graph: SmallGraph,
    /// Topology changes allowed.
    pub changes: u8,
    /// Whether changes overlap message traffic or wait until none is in flight.
    pub change_mode: crate::sim::ChangeMode,
    /// Only changes that keep the graph connected (`--changes-mode connected`): a
    /// link goes down only if every node can still reach every other. Link reversal
    /// then always converges, so routes (Gafni–Bertsekas) have finite state spaces.
    pub connected: bool,
    /// CS requests to issue (mutual exclusion only).
    pub requests: u8,
    /// The most actions on one execution explored.
    pub max_depth: usize,
    /// The most states to generate, repeats included (memory: about a kilobyte per
    /// distinct state); the search stops there and unviolated properties are unknown.
    pub max_states: usize,
    /// The most resident memory the process may take, bytes (`--max-memory`): past it
    /// the search admits no new state, ends, and properties not violated are unknown
    /// ([`model::MemoryBound`]). `None`: no bound but `max_states`.
    pub max_memory: Option<u64>,
    /// Checker threads (1: shortest counterexamples guaranteed).
    pub threads: usize,
    /// Whether to explore one representative per node renaming, for protocols whose
    /// rules allow it ([`symmetry`]).
    pub symmetry: bool,
    /// Whether to explore states that differ only by a shift of their heights once, for
    /// protocols whose rules allow it ([`shift`]).
    pub renormalize: bool,
    /// Whether the single-threaded search prunes with sleep sets ([`explore`]): the
    /// same verdicts, fewer transitions, and the same states (with the gap abstraction,
    /// every state a real one maps to).
    pub partial_order: bool,
    /// When the single-threaded search takes persistent sets once every change and
    /// request is spent, where they apply ([`persistent`]: mutual exclusion by link
    /// reversal, changes overlapping traffic).
    pub persistent_sets: PersistentSets,
    /// Whether wide gaps between levels are abstracted where that is sound ([`gaps`]:
    /// one thread, renormalization on, changes overlapping traffic, a protocol whose
    /// levels step by one): "holds" stays a proof, a violation is reported only if it
    /// replays on the real system.
    pub abstract_gaps: bool,
    /// Whether parts no property reads once changes stop are frozen where the family
    /// names them and renormalization is on ([`cut_off`]: mutual exclusion's
    /// components that hold no token). Exact for every verdict, with "terminal" meaning
    /// nothing left to happen outside the frozen parts.
    pub cut_off: bool,
    /// Every execution (breadth-first), or random ones ([`random`]).
    pub strategy: Strategy,
    /// Told how far the single-threaded search has got, every so many transitions and
    /// once as each liveness pass starts: `linkrev check` prints a line from it every
    /// few seconds, since a search with a large budget runs for minutes and says
    /// nothing else until it ends. `None`: nobody listens (the table, most tests).
    pub progress: Option<ProgressHook>,
}

/// How often `linkrev check`'s search reports its progress: every this many
/// transitions generated (about a second's work in a release build).
pub const PROGRESS_EVERY: usize = 1 << 16;

/// How far a check has got: what [`CheckSetup::progress`] is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchProgress {
    /// The exhaustive search, as it goes.
    Search {
        /// Whether this is the second try, with persistent sets, after the first was
        /// cut by its budget.
        persistent: bool,
        /// Distinct states stored so far.
        states: usize,
        /// Transitions generated so far, what `--max-states` counts.
        generated: usize,
        /// That budget.
        max_states: usize,
        /// The depth (actions from the start) of the states being expanded.
        depth: usize,
    },
    /// The liveness pass, as it starts over this many stored states (nothing it counts
    /// moves until it ends).
    Liveness {
        /// States it judges.
        states: usize,
    },
    /// Random executions ([`Strategy::Random`]), as they go.
    Random {
        /// Executions run so far.
        executions: u64,
        /// Executions asked for.
        of: u64,
    },
}

/// Where a check reports its progress ([`CheckSetup::progress`]), and how often.
#[derive(Clone)]
pub struct ProgressHook {
    /// The search reports every this many transitions generated, random executions
    /// every this many executions (at least 1).
    pub every: usize,
    /// What it reports to; shared, so a setup stays cheap to clone.
    pub tell: std::sync::Arc<dyn Fn(&SearchProgress) + Send + Sync>,
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProgressHook {{ every: {} }}", self.every)
    }
}

impl CheckSetup {
    /// Tells [`Self::progress`] where the check is, if anyone listens.
    pub(crate) fn tell(&self, progress: SearchProgress) {
        if let Some(hook) = &self.progress {
            (hook.tell)(&progress);
        }
    }

    /// Whether the search reports after its `count`-th transition (or random execution).
    pub(crate) fn reports_at(&self, count: u64) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|hook| count.is_multiple_of(hook.every.max(1) as u64))
    }
}

impl CheckSetup {
    /// A check of `graph` with no change and no request, every reduction off, one
    /// thread, the command's default bounds (100 actions, 1,000,000 states) and no
    /// memory bound: the start of a setup built in code, which sets what it needs.
    pub fn plain(graph: SmallGraph) -> Self {
        Self {
            graph,
            changes: 0,
            change_mode: crate::sim::ChangeMode::Overlap,
            connected: false,
            requests: 0,
            max_depth: 100,
            max_states: 1_000_000,
            max_memory: None,
            threads: 1,
            symmetry: false,
            renormalize: false,
            partial_order: false,
            persistent_sets: PersistentSets::Off,
            abstract_gaps: false,
            cut_off: false,
            strategy: Strategy::Exhaustive,
            progress: None,
        }
    }
}

/// When persistent sets are used ([`persistent`]). They reach fewer states than sleep
/// sets alone, but may generate more transitions (sleep sets are off where they are
/// on), and a violation they find is the shortest of the reduced graph, not
/// necessarily of the system: so by default they are a second try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PersistentSets {
    /// Never.
    Off,
    /// In a second search, when the first (sleep sets alone) was cut by its state or
    /// depth bound with some verdict unknown; its verdicts are taken only if it closes,
    /// and never over a violation the first found.
    WhenCut,
    /// In the only search.
    Always,
}

/// How the executions of a model are explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// All of them, breadth-first, within the bounds: a verdict may be "holds".
    Exhaustive,
    /// `executions` random ones, seeded: a verdict is a violation or "no violation
    /// found", never "holds".
    Random {
        /// Executions to run.
        executions: u64,
        /// The generator's seed.
        seed: u64,
    },
}

/// A property's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Verdict {
    /// No violation in the whole (finite) state space.
    Holds,
    /// A violation, reached by these steps (shortest when single-threaded).
    Violated {
        /// What the judgement says is wrong in the last state.
        detail: String,
        /// The execution, one line per action.
        steps: Vec<String>,
        /// The same execution as data, to replay it.
        path: Vec<Step>,
    },
    /// No violation within the depth bound, but executions were cut there.
    Unknown,
    /// The gap abstraction ([`gaps`]) found an execution violating the property, but it
    /// does not replay on the real system: the abstraction may have made it up, so
    /// nothing is known.
    Unconfirmed {
        /// The abstract execution, one line per action.
        steps: Vec<String>,
    },
    /// No violation in this many random executions ([`Strategy::Random`]); says nothing
    /// of the executions not taken.
    NoViolationFound {
        /// Executions run.
        executions: u64,
    },
}

/// One property's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyOutcome {
    /// Its name.
    pub name: &'static str,
    /// In words.
    pub description: &'static str,
    /// Where it is judged (`always`, `quiescent`, `terminal`).
    pub judged_in: &'static str,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// What a check found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The algorithm's name.
    pub algorithm: String,
    /// The starting graph's name.
    pub graph: String,
    /// Its edges.
    pub edges: Vec<(NodeId, NodeId)>,
    /// The change budget.
    pub changes: u8,
    /// `overlap` or `serialize`.
    pub change_mode: &'static str,
    /// The request budget.
    pub requests: u8,
    /// The depth bound, actions.
    pub max_depth: usize,
    /// Distinct states visited.
    pub states: usize,
    /// States generated, repeats included.
    pub states_generated: usize,
    /// The longest execution explored, actions.
    pub depth_reached: usize,
    /// Whether symmetry reduction was applied (`states` then counts states up to node
    /// renaming); off when not asked for or when the protocol's rules compare node ids.
    pub symmetry: bool,
    /// Whether heights were renormalized ([`shift`]: states that differ by a shift of
    /// their heights counted once); off when not asked for or when the protocol's rules
    /// do not commute with shifts.
    pub renormalized: bool,
    /// What [`CheckReport::renormalized`] merged, in words (`None` when off).
    pub renormalized_what: Option<&'static str>,
    /// Whether sleep sets pruned transitions ([`explore`]; the states are the same, or,
    /// with the gap abstraction, include every state a real one maps to).
    pub partial_order: bool,
    /// Whether the states counted and the verdicts not violated come from a search that
    /// took persistent sets from some states ([`persistent`]).
    pub persistent_sets: bool,
    /// When the first search (sleep sets alone) was cut by its budget and a second one
    /// with persistent sets ([`persistent`]) closed: the transitions the first
    /// generated. `states`, `states_generated` and `depth_reached` are then the second
    /// search's, and so is every verdict but the first's violations.
    pub persistent_after: Option<usize>,
    /// Whether wide gaps between levels were abstracted ([`gaps`]): `states` then counts
    /// abstract states, each standing for many.
    pub gaps_abstracted: bool,
    /// Whether parts no property reads once changes stop were frozen ([`cut_off`]).
    pub cut_off: bool,
    /// Whether the search was cut (`cut_by` is set); kept as its own field for readers
    /// of `check.json` written before `cut_by`.
    pub truncated: bool,
    /// What cut the search, when it was cut: `"memory bound"`, `"depth bound"`,
    /// `"state bound"` or `"depth and state bounds"` (what an *unknown* verdict
    /// means), or [`EVERY_PROPERTY_VIOLATED`] (no verdict is unknown then).
    pub cut_by: Option<&'static str>,
    /// How states were explored: `"exhaustive"`, or `"random: R of N executions, seed
    /// S"` (R run, fewer than N when every property was violated early), so a random
    /// check's report says how to repeat it.
    pub strategy: String,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Per property.
    pub properties: Vec<PropertyOutcome>,
}

impl CheckReport {
    /// Whether some property is violated.
    pub fn violated(&self) -> bool {
        self.properties
            .iter()
            .any(|p| matches!(p.verdict, Verdict::Violated { .. }))
    }
}

/// [`CheckReport::cut_by`] when the search stopped because every property already had
/// its violation (each a shortest one): nothing left to learn.
pub const EVERY_PROPERTY_VIOLATED: &str = "violation of every property";

/// What a search went through, for its report.
pub(crate) struct Explored {
    pub(crate) states: usize,
    pub(crate) states_generated: usize,
    pub(crate) depth_reached: usize,
    pub(crate) symmetry: bool,
    pub(crate) renormalized: Option<&'static str>,
    pub(crate) partial_order: bool,
    pub(crate) persistent_sets: bool,
    pub(crate) persistent_after: Option<usize>,
    pub(crate) gaps_abstracted: bool,
    pub(crate) cut_off: bool,
    pub(crate) cut_by: Option<&'static str>,
    pub(crate) strategy: String,
    pub(crate) seconds: f64,
}

impl CheckSetup {
    /// The report of a search of this setup: the setup described, what the search
    /// went through, and each property's outcome.
    pub(crate) fn report(
        &self,
        algorithm: &str,
        explored: Explored,
        properties: Vec<PropertyOutcome>,
    ) -> CheckReport {
        CheckReport {
            algorithm: algorithm.to_string(),
            graph: self.graph.name.clone(),
            edges: self.graph.edges.clone(),
            changes: self.changes,
            change_mode: match self.change_mode {
                _ if self.connected => "connected",
                crate::sim::ChangeMode::Overlap => "overlap",
                crate::sim::ChangeMode::Serialize => "serialize",
            },
            requests: self.requests,
            max_depth: self.max_depth,
            states: explored.states,
            states_generated: explored.states_generated,
            depth_reached: explored.depth_reached,
            symmetry: explored.symmetry,
            renormalized: explored.renormalized.is_some(),
            renormalized_what: explored.renormalized,
            partial_order: explored.partial_order,
            persistent_sets: explored.persistent_sets,
            persistent_after: explored.persistent_after,
            gaps_abstracted: explored.gaps_abstracted,
            cut_off: explored.cut_off,
            truncated: explored.cut_by.is_some(),
            cut_by: explored.cut_by,
            strategy: explored.strategy,
            seconds: explored.seconds,
            properties,
        }
    }
}

/// Explores `model` and judges its properties: with one thread, by the checker's own
/// search ([`explore`], with sleep sets unless `setup.partial_order` is off); with
/// more, by stateright's parallel breadth-first search.
pub fn run<P: Protocol>(
    algorithm: &str,
    mut model: ProtocolModel<P>,
    setup: &CheckSetup,
) -> CheckReport {
    if let Strategy::Random { executions, seed } = setup.strategy {
        return random::run(algorithm, model, setup, (executions, seed));
    }
    let started = Instant::now();
    model.symmetry = setup.symmetry && symmetry::applies(&model.initial());
    model.renormalize = setup.renormalize && (shift::applies::<P>() || stamps::applies::<P>());
    if !setup.cut_off {
        model.cut_off = cut_off::CutOff::never();
    }
    // Without a change no link fails and no height rises: nothing to abstract.
    model.gaps = setup.abstract_gaps
        && setup.changes > 0
        && gaps::applies::<P>()
        && model.renormalize
        && !model.symmetry
        && setup.threads <= 1
        && setup.change_mode != crate::sim::ChangeMode::Serialize;
    if setup.threads <= 1 {
        return run_own(algorithm, model, setup, started);
    }
    // stateright counts the initial state as depth 1 and does not judge or expand
    // states at the target depth: states after `max_depth` actions have depth
    // `max_depth + 1`, so the target is one more.
    let target = setup.max_depth + 2;
    let checker = model
        .checker()
        .threads(setup.threads.max(1))
        .target_max_depth(target)
        .target_state_count(setup.max_states)
        .spawn_bfs()
        .join();
    // stateright's state target counts states generated, repeats included.
    let cut_by = match (
        checker.model().memory.passed(),
        checker.max_depth() >= target,
        checker.state_count() >= setup.max_states,
    ) {
        // Memory first: it stops the search wherever it is, whatever else was hit.
        (true, ..) => Some("memory bound"),
        (false, false, false) => None,
        (false, true, false) => Some("depth bound"),
        (false, false, true) => Some("state bound"),
        (false, true, true) => Some("depth and state bounds"),
    };
    let model = checker.model();
    let found: Vec<Option<Vec<Step>>> = model
        .properties
        .iter()
        .map(|p| checker.discovery(p.name).map(|path| path.into_actions()))
        .collect();
    let properties = outcomes(model, setup, cut_by.is_some(), found, None);
    setup.report(
        algorithm,
        Explored {
            states: checker.unique_state_count(),
            states_generated: checker.state_count(),
            depth_reached: checker.max_depth().saturating_sub(1).min(setup.max_depth),
            symmetry: model.symmetry,
            renormalized: model.renormalize.then(quotient_text::<P>),
            partial_order: false,
            persistent_sets: false,
            persistent_after: None,
            gaps_abstracted: false,
            cut_off: model.cuts_off(),
            cut_by,
            strategy: "exhaustive".to_string(),
            seconds: started.elapsed().as_secs_f64(),
        },
        properties,
    )
}

/// [`run`] with the checker's own single-threaded search.
fn run_own<P: Protocol>(
    algorithm: &str,
    model: ProtocolModel<P>,
    setup: &CheckSetup,
    started: Instant,
) -> CheckReport {
    let judged = |exploration: &explore::Exploration<P>| {
        let found: Vec<Option<Vec<Step>>> = exploration
            .violations
            .iter()
            .map(|v| v.map(|index| exploration.graph.stem(index)))
            .collect();
        // The liveness pass can use the stored states unless they are representatives of
        // renamings (fairness names links by node ids).
        let graph = (!model.symmetry).then_some(&exploration.graph);
        outcomes(&model, setup, exploration.cut_by.is_some(), found, graph)
    };
    let always = setup.persistent_sets == PersistentSets::Always;
    let first = explore::explore(&model, setup, setup.partial_order, always);
    let persistent_sets = first.reduced_states > 0;
    let mut properties = judged(&first);
    // What the report says of the search whose states it counts.
    let mut searched = (
        first.graph.len(),
        first.generated,
        first.depth_reached,
        first.cut_by,
    );
    // A search cut by its budget is tried again with persistent sets ([`persistent`]),
    // which reach fewer states; its verdicts are taken only if it closes, and never
    // over a violation the first search found (each of those a shortest one).
    let try_again = setup.persistent_sets == PersistentSets::WhenCut
        && persistent::applies(&model)
        && matches!(first.cut_by, Some(cut) if cut != "memory bound")
        && properties
            .iter()
            .any(|p| matches!(p.verdict, Verdict::Unknown));
    drop(first);
    let mut persistent_after = None;
    if try_again {
        let second = explore::explore(&model, setup, setup.partial_order, true);
        if second.cut_by.is_none() {
            for (kept, found) in properties.iter_mut().zip(judged(&second)) {
                if matches!(kept.verdict, Verdict::Unknown) {
                    *kept = found;
                }
            }
            persistent_after = Some(searched.1);
            searched = (
                second.graph.len(),
                second.generated,
                second.depth_reached,
                None,
            );
        }
    }
    let (states, states_generated, depth_reached, cut_by) = searched;
    setup.report(
        algorithm,
        Explored {
            states,
            states_generated,
            depth_reached,
            symmetry: model.symmetry,
            renormalized: model.renormalize.then(quotient_text::<P>),
            partial_order: setup.partial_order && !model.symmetry,
            persistent_sets: persistent_sets || persistent_after.is_some(),
            persistent_after,
            gaps_abstracted: model.gaps,
            cut_off: model.cuts_off(),
            cut_by,
            strategy: "exhaustive".to_string(),
            seconds: started.elapsed().as_secs_f64(),
        },
        properties,
    )
}

/// Each property's outcome, from the executions a search found violating them (steps
/// in the searched model, renamed back when symmetry is on) and, for the eventually
/// properties, the liveness pass over `graph` (the search's stored states, or, when
/// `None` and the search closed, a graph stored for it). Over the stored states of a
/// search cut by its budget (`truncated`) the pass can only find a violation
/// ([`liveness`]); the property is unknown otherwise.
fn outcomes<P: Protocol>(
    model: &ProtocolModel<P>,
    setup: &CheckSetup,
    truncated: bool,
    found: Vec<Option<Vec<Step>>>,
    graph: Option<&liveness::StateGraph<P>>,
) -> Vec<PropertyOutcome> {
    let open_liveness = model
        .properties
        .iter()
        .zip(&found)
        .any(|(p, f)| p.when == When::Eventually && f.is_none());
    let stored;
    let graph = match graph {
        _ if !open_liveness => None,
        // A search cut by its budget proves no liveness property, but a fair cycle among
        // the states it stored is a real one ([`liveness`]): it is looked for.
        Some(graph) => Some(graph),
        None if truncated => None,
        None => {
            stored = liveness::StateGraph::explore(model, setup.max_states);
            stored.as_ref()
        }
    };
    if let Some(graph) = graph {
        setup.tell(SearchProgress::Liveness {
            states: graph.len(),
        });
    }
    let liveness_unknown = open_liveness && (graph.is_none() || truncated);
    model
        .properties
        .iter()
        .zip(found)
        .enumerate()
        .map(|(index, (property, found))| {
            let lasso = match (graph, property.when, &found) {
                (Some(graph), When::Eventually, None) => liveness::check(model, graph, index),
                _ => None,
            };
            let verdict = match (found, lasso) {
                (None, Some(lasso)) if model.gaps && !liveness::replays(model, &lasso, index) => {
                    Verdict::Unconfirmed {
                        steps: lasso.path.iter().map(describe).collect(),
                    }
                }
                (Some(path), _) if model.gaps => match model.replay_exactly(&path) {
                    Some(last) if model.judge(index, &last).is_err() => Verdict::Violated {
                        detail: model.judge(index, &last).err().unwrap_or_default(),
                        steps: path.iter().map(describe).collect(),
                        path,
                    },
                    _ => Verdict::Unconfirmed {
                        steps: path.iter().map(describe).collect(),
                    },
                },
                (None, Some(lasso)) => {
                    let cycle = lasso.path.len() - lasso.stem;
                    let mut detail = liveness::lasso_detail(lasso.stem, cycle, &lasso.detail);
                    if truncated {
                        // Shortest among the lassos the stored states hold: a shorter
                        // one may run through states the search never reached.
                        detail.push_str(" (found among the states of a search cut by its budget)");
                    }
                    Verdict::Violated {
                        detail,
                        steps: lasso.path.iter().map(describe).collect(),
                        path: lasso.path,
                    }
                }
                (None, None) if property.when == When::Eventually && liveness_unknown => {
                    Verdict::Unknown
                }
                (Some(path), _) => {
                    let (path, last) = if model.symmetry {
                        symmetry::unrename_path(model.initial(), &path, |s, a| model.step(s, a))
                    } else {
                        let mut last = model.initial();
                        model.quotient_without_renaming(&mut last);
                        for step in &path {
                            last = model.next_state(&last, step.clone()).expect("replays");
                        }
                        (path, last)
                    };
                    let detail = model.judge(index, &last).err().unwrap_or_default();
                    let steps = path.iter().map(describe).collect();
                    Verdict::Violated {
                        detail,
                        steps,
                        path,
                    }
                }
                (None, None) if truncated => Verdict::Unknown,
                (None, None) => Verdict::Holds,
            };
            PropertyOutcome {
                name: property.name,
                description: property.description,
                judged_in: when_text(property.when),
                verdict,
            }
        })
        .collect()
}

/// What renormalization merges for `P`, in words.
fn quotient_text<P: Protocol>() -> &'static str {
    match (shift::applies::<P>(), stamps::applies::<P>()) {
        (true, true) => "states counted up to shifts of heights and renamings of time stamps",
        (true, false) => {
            "states counted up to a shift of their heights (each component's own once no \
             change can come)"
        }
        _ => "states counted up to an order-keeping renaming of their time stamps",
    }
}

/// Where a property is judged, in words.
pub fn when_text(when: When) -> &'static str {
    match when {
        When::Always => "every state",
        When::Quiescent => "quiescent states",
        When::Terminal => "terminal states",
        When::Eventually => "every fair execution",
    }
}

/// One step in words.
pub fn describe(step: &Step) -> String {
    match *step {
        Step::Deliver { from, to } => format!("deliver {from} -> {to}"),
        Step::DeliverRouted { origin, dest } => format!("deliver routed {origin} -> {dest}"),
        Step::Link { a, b, up: true } => format!("link {a} - {b} up"),
        Step::Link { a, b, up: false } => format!("link {a} - {b} down"),
        Step::Request { node } => format!("request at {node}"),
        Step::Release { node } => format!("release at {node}"),
    }
}

/// The model of `P` from a family's properties: the setup's graph and change budget,
/// `requests` CS requests (0 for a family without a workload), one token and no
/// destination (a family that needs them sets [`ProtocolModel::tokens`] and
/// [`ProtocolModel::destination`]). The families' definitions
/// ([`crate::family`]) build their models with it.
pub fn family_model<P: Protocol>(
    config: P::Config,
    setup: &CheckSetup,
    requests: u8,
    properties: Vec<CheckProperty<P>>,
) -> ProtocolModel<P> {
    debug_assert!(properties.len() <= model::MAX_PROPERTIES);
    ProtocolModel {
        config,
        nodes: setup.graph.nodes,
        initial_links: setup.graph.edges.clone(),
        pairs: graph::pairs(setup.graph.nodes),
        changes: setup.changes,
        change_mode: setup.change_mode,
        connected: setup.connected,
        requests,
        tokens: 1,
        destination: None,
        properties,
        found: Default::default(),
        symmetry: false,
        renormalize: false,
        gaps: false,
        memory: model::MemoryBound::new(setup.max_memory),
        dead_changes: dead_changes::Answers::new(setup.max_states),
        cut_off: cut_off::CutOff::never(),
    }
}

/// A typed check: builds `P`'s family model from the parameters and runs it (the
/// registry keeps one per algorithm: [`crate::family::check`]).
pub type CheckRunner = fn(&crate::protocol::AlgoParams, &str, &CheckSetup) -> CheckReport;

/// A plain breadth-first search over `model` to `max_depth` actions: a `HashSet` of
/// states and a queue, no properties, no threads. The baseline `linkrev bench check`
/// measures the checker's searches against; returns the distinct states it found. It
/// expands no state once `max_states` are stored, so its memory is bounded.
pub fn naive_bfs<M>(model: &M, max_depth: usize, max_states: usize) -> usize
where
    M: Model,
    M::State: std::hash::Hash + Eq + Clone,
{
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::new();
    for state in model.init_states() {
        if seen.insert(state.clone()) {
            queue.push_back((state, 0usize));
        }
    }
    let mut actions = Vec::new();
    while let Some((state, depth)) = queue.pop_front() {
        if depth >= max_depth || seen.len() >= max_states {
            continue;
        }
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            if let Some(next) = model.next_state(&state, action)
                && seen.insert(next.clone())
            {
                queue.push_back((next, depth + 1));
            }
        }
    }
    seen.len()
}
