//! Experiment specs: a TOML file describing a sweep, validated completely before any run
//! starts, and expanded into a [`Plan`].
//!
//! # Format (see also `analysis/README.md`)
//!
//! ```toml
//! name = "me-load"              # [A-Za-z0-9_-]+, it becomes a directory name
//! master_seed = 1
//! replications = 30
//! algorithms = ["me-rl", "me-raymond"]
//!
//! [mobility]                    # random-waypoint keys, or `traces = [...]`, not both
//! nodes = 50
//! area = "1500x300"
//! speed_min = 1.0
//! speed_max = [5.0, 10.0, 20.0] # a list: a sweep axis
//! speed_dist = "uniform"        # or "normal" (setdest -s 2)
//! pause = 30.0
//! pause_dist = "constant"       # or "uniform" (on [0, 2·pause], setdest -P 2)
//! duration = 900.0
//! start = "stationary"          # or "classic"
//!
//! [network]                     # optional
//! range = 250.0
//! delay = "uniform:1ms:5ms"
//! link_break = "drain"          # or "drop"
//! changes = "overlap"           # or "serialize"
//! detection_delay = "0ms"
//!
//! [workload]                    # required iff an algorithm's family needs one
//! rate = [0.01, 0.02, 0.05]     # required in [workload]
//! cs_time = 0.1                 # or "exp:0.1"
//!
//! [params.me-rl]                # optional: an algorithm's parameters (`linkrev algorithms`)
//! holder = [0, 7]               # a list is an axis, as everywhere
//! ```
//!
//! # Decisions
//!
//! - **Explicit schema over serde derive.** The file is parsed into a `toml::Table` and
//!   walked key by key, because every error must name the file, the key path (with the
//!   list index, `mobility.speed_max[1]`) and the problem, and because any scalar may
//!   also be written as a list; a derived deserializer reports neither well.
//! - **Parameter names** are the TOML keys without their section (`speed_max`, `rate`,
//!   `delay`); they are unique across sections. The one exception is `traces`, whose
//!   values are named `trace` (one per run). These names appear in run keys, in
//!   [`Plan::axes`] and in [`PlannedRun::params`].
//! - **A list is an axis**, even with one element; a scalar is a fixed parameter. Values
//!   are canonicalised (integers written for floats become floats, durations get an exact
//!   unit, areas `WxH`), so `pause = 30` and `pause = 30.0` give the same key, and a list
//!   with two equal values is refused rather than silently running a point twice.
//! - **Defaults** for omitted keys are `linkrev run`'s (from [`crate::params`]), so a
//!   planned run can be reproduced with `linkrev run --seed SEED` and the same values.
//!   `name`, `master_seed`, `replications`, `algorithms`, `[mobility]` and, with a
//!   mutual-exclusion algorithm, `[workload]` and its `rate` have no default: a sweep
//!   should say what it sweeps. `master_seed` is an integer from 0 to 2^63 − 1
//!   (9223372036854775807, TOML's largest integer); run seeds derived from it use all
//!   64 bits, and `linkrev run --seed` takes any of them (up to 2^64 − 1).
//! - **`speed_min == speed_max` is allowed** (a constant speed, which the generator
//!   supports); `speed_min > speed_max` is an error.
//! - **Cross-key checks run for every combination** of the mobility axes (vmin ≤ vmax, a
//!   stationary start needs vmin > 0, the generator's size limit), naming the
//!   combination, so a sweep never fails half-way on a bad corner of its grid.
//! - **Workload parameters apply to families that need a workload only** (mutual
//!   exclusion). Leader-election runs do not carry `rate` or `cs_time`, and are not
//!   repeated along their axes.
//! - **Algorithm parameters** (`[params.NAME]`, checked against the registry) apply to
//!   that algorithm's runs only; omitted ones take the registry's defaults. They are in
//!   the run key when swept and in the tables always, but not in the seed text, which
//!   leaves out the algorithm: every algorithm of a point still sees the same trace,
//!   delays and requests. Algorithms declaring a parameter of the same name share its
//!   axis (one column, one key part).

use super::plan::{Expansion, MobilitySource, ParamValue, Plan, PlannedRun, RunList, Slot};
use crate::input::{InputError, Location};
use crate::mobility::Area;
use crate::mobility::rwp::{PauseDist, RwpParams, SpeedDist, StartMode};
use crate::params;
use crate::protocol::{AlgoParams, ParamKind};
use crate::registry::Algorithm;
use crate::sim::seeds::{self, Purpose};
use crate::sim::{
    ChangeMode, CsTime, DelayModel, Duration, LinkBreak, NetworkConfig, RunConfig, SimTime,
    WorkloadConfig,
};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Upper limit on the number of runs of one plan: beyond it a spec is almost certainly a
/// mistake (a replication count in the wrong place), and the plan alone would take
/// gigabytes.
pub const MAX_RUNS: u64 = 2_000_000;

/// Which runs a parameter belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every run.
    All,
    /// Runs of families that need a workload (`[workload]`).
    Workload,
    /// Runs of this algorithm only (`[params.NAME]`, or its defaults).
    Algorithm(Algorithm),
}

impl Scope {
    /// Whether a parameter of this scope applies to runs of `algorithm`.
    pub fn applies_to(self, algorithm: Algorithm) -> bool {
        match self {
            Scope::All => true,
            Scope::Workload => algorithm.family().needs_workload(),
            Scope::Algorithm(a) => a == algorithm,
        }
    }
}

/// One parameter of a spec with its values, validated and canonicalised.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecParam {
    /// Short name, used in keys and tables (`speed_max`).
    pub name: &'static str,
    /// Key path in the file (`mobility.speed_max`).
    pub path: String,
    /// One value for a fixed parameter, one or more for an axis, as written in keys and
    /// tables.
    pub values: Vec<ParamValue>,
    /// The same values, typed as runs use them (`typed[i]` is `values[i]`).
    pub typed: Vec<SpecValue>,
    /// Written as a list.
    pub is_axis: bool,
    /// Which runs it applies to.
    pub scope: Scope,
}

impl SpecParam {
    fn new(
        name: &'static str,
        path: String,
        typed: Vec<SpecValue>,
        is_axis: bool,
        scope: Scope,
    ) -> Self {
        Self {
            name,
            path,
            values: typed.iter().map(SpecValue::canonical).collect(),
            typed,
            is_axis,
            scope,
        }
    }

    /// The key path of value `index`: `mobility.speed_max[1]` for an axis.
    pub fn element_path(&self, index: usize) -> String {
        if self.is_axis {
            format!("{}[{index}]", self.path)
        } else {
            self.path.clone()
        }
    }
}

/// Where the spec's mobility comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MobilityKind {
    /// Generated by the random-waypoint generator from the `[mobility]` keys.
    RandomWaypoint,
    /// Trace files; the `trace` parameter holds their paths as written, relative to the
    /// spec's directory.
    Traces,
}

/// A validated experiment spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The file, as given (used in error messages).
    pub path: PathBuf,
    /// The experiment's name (a directory name).
    pub name: String,
    /// The seed every run seed derives from.
    pub master_seed: u64,
    /// Replications of every point.
    pub replications: u32,
    /// In the order written.
    pub algorithms: Vec<Algorithm>,
    /// Generated or read mobility.
    pub mobility: MobilityKind,
    /// Every parameter, in name order.
    pub params: Vec<SpecParam>,
    /// The spec's text, to give errors found after parsing (in [`expand`]) their line.
    pub text: String,
}

impl Spec {
    /// The parameter named `name` (the first, if several algorithms declare it).
    pub fn param(&self, name: &str) -> Option<&SpecParam> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The directory trace paths are relative to.
    fn base_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
}

/// Reads, parses and validates a spec file, then expands it.
pub fn plan_from_file(path: &Path) -> Result<Plan, InputError> {
    expand(&load(path)?)
}

/// Reads and validates a spec file. Cross-key checks that need every combination of
/// axes are done by [`expand`].
pub fn load(path: &Path) -> Result<Spec, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::file(path, format!("cannot read the spec: {e}")))?;
    // A byte-order mark (Windows editors write one) is not TOML.
    parse(text.strip_prefix('\u{feff}').unwrap_or(&text), path)
}

/// Validates spec text; `path` names the file in errors and anchors relative trace paths.
pub fn parse(text: &str, path: &Path) -> Result<Spec, InputError> {
    let file = path.display().to_string();
    let table: Table = toml::from_str(text).map_err(|e| {
        let location = match e.span() {
            Some(span) => Location::line(&file, 1 + text[..span.start].matches('\n').count()),
            None => Location::file(&file),
        };
        let mut message = format!("not valid TOML: {}", e.message().trim());
        if message.contains("too large") {
            message.push_str(&format!(
                " (TOML integers go up to {}, the largest master_seed)",
                i64::MAX
            ));
        }
        InputError::new(location, message)
    })?;
    Parser { file, path }
        .spec(&table, text)
        .map_err(|e| with_toml_line(e, text))
}

/// Gives an error that names a key path (`mobility.speed_max`, `algorithms[2]`) but no
/// line the line of that value in the TOML `text`, so every spec error reads
/// `file:line: key.path: problem`. A key that is missing has no line; the error stays
/// `file: key.path: problem`.
fn with_toml_line(mut error: InputError, text: &str) -> InputError {
    if error.location.line.is_none() {
        error.location.line = error
            .location
            .field
            .as_deref()
            .and_then(|f| toml_line(text, f));
    }
    error
}

/// The line (from 1) where the value at `key_path` starts in the TOML `text`. Segments
/// are `.`-separated table keys, each optionally indexed into an array (`nodes[2]`).
fn toml_line(text: &str, key_path: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut table = root.get_ref();
    let segments: Vec<&str> = key_path.split('.').collect();
    let mut start = None;
    for (n, segment) in segments.iter().enumerate() {
        let (name, index) = match segment.split_once('[') {
            Some((name, rest)) => (
                name,
                Some(rest.trim_end_matches(']').parse::<usize>().ok()?),
            ),
            None => (*segment, None),
        };
        let (_, mut value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        if let Some(i) = index {
            match value.get_ref() {
                DeValue::Array(items) => value = items.get(i)?,
                _ => return None,
            }
        }
        start = Some(value.span().start);
        if n + 1 < segments.len() {
            match value.get_ref() {
                DeValue::Table(inner) => table = inner,
                _ => return None,
            }
        }
    }
    Some(1 + text[..start?].matches('\n').count())
}

// ---------------------------------------------------------------------------------------
// Schema

/// How a value is checked and canonicalised.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// An integer ≥ 1.
    Count,
    /// A finite number ≥ 0.
    NonNegative,
    /// A finite number > 0.
    Positive,
    /// One of these words, each with its meaning.
    Choice(&'static [(&'static str, Choice)]),
    Area,
    Delay,
    Duration,
    CsTime,
    /// An existing file, relative to the spec's directory.
    TracePath,
}

struct Field {
    key: &'static str,
    kind: Kind,
    /// Whether an omitted key takes [`default_value`] (else it is left out).
    defaulted: bool,
}

const fn field(key: &'static str, kind: Kind) -> Field {
    Field {
        key,
        kind,
        defaulted: true,
    }
}

/// A key that is left out when omitted: a trace's `duration` defaults to the trace's own.
const fn optional(key: &'static str, kind: Kind) -> Field {
    Field {
        key,
        kind,
        defaulted: false,
    }
}

const TOP_KEYS: &[&str] = &[
    "name",
    "master_seed",
    "replications",
    "algorithms",
    "mobility",
    "network",
    "workload",
    "params",
];

const RWP_FIELDS: &[Field] = &[
    field("nodes", Kind::Count),
    field("area", Kind::Area),
    field("speed_min", Kind::NonNegative),
    field("speed_max", Kind::Positive),
    field(
        "speed_dist",
        Kind::Choice(&[
            ("uniform", Choice::Speed(SpeedShape::Uniform)),
            ("normal", Choice::Speed(SpeedShape::Normal)),
        ]),
    ),
    field("pause", Kind::NonNegative),
    field(
        "pause_dist",
        Kind::Choice(&[
            ("constant", Choice::Pause(PauseShape::Constant)),
            ("uniform", Choice::Pause(PauseShape::Uniform)),
        ]),
    ),
    field("duration", Kind::Positive),
    field(
        "start",
        Kind::Choice(&[
            ("stationary", Choice::Start(StartMode::Stationary)),
            ("classic", Choice::Start(StartMode::Classic)),
        ]),
    ),
];

const TRACE_FIELDS: &[Field] = &[
    optional("traces", Kind::TracePath),
    optional("duration", Kind::Positive),
    optional(
        "activity",
        Kind::Choice(&[
            ("none", Choice::Activity(false)),
            ("beside", Choice::Activity(true)),
        ]),
    ),
];

const NETWORK_FIELDS: &[Field] = &[
    field("range", Kind::Positive),
    field("delay", Kind::Delay),
    field(
        "link_break",
        Kind::Choice(&[
            ("drain", Choice::LinkBreak(LinkBreak::Drain)),
            ("drop", Choice::LinkBreak(LinkBreak::Drop)),
        ]),
    ),
    field(
        "changes",
        Kind::Choice(&[
            ("overlap", Choice::Changes(ChangeMode::Overlap)),
            ("serialize", Choice::Changes(ChangeMode::Serialize)),
        ]),
    ),
    field("detection_delay", Kind::Duration),
];

const WORKLOAD_FIELDS: &[Field] = &[
    field("rate", Kind::Positive),
    field("cs_time", Kind::CsTime),
];

/// `linkrev run`'s default for an omitted key, written as a user would write it (and
/// checked and canonicalised like a written value); `None` for keys without one.
fn default_value(key: &str) -> Option<Value> {
    let rwp = params::default_rwp(0);
    let (speed_min, speed_max) = rwp.speed.bounds();
    let text = |s: &str| Some(Value::String(s.to_string()));
    match key {
        "nodes" => Some(Value::Integer(rwp.nodes as i64)),
        "area" => text(&format!("{}x{}", rwp.area.width, rwp.area.height)),
        "speed_min" => Some(Value::Float(speed_min)),
        "speed_max" => Some(Value::Float(speed_max)),
        "speed_dist" => text("uniform"),
        "pause" => Some(Value::Float(rwp.pause.mean())),
        "pause_dist" => text("constant"),
        "duration" => Some(Value::Float(rwp.duration)),
        "start" => text("stationary"),
        "range" => Some(Value::Float(params::RANGE)),
        "delay" => text(params::DELAY),
        "link_break" => text(params::LINK_BREAK),
        "changes" => text(params::CHANGES),
        "detection_delay" => text(params::DETECTION_DELAY),
        "cs_time" => text(params::CS_TIME),
        _ => None,
    }
}

/// The shape of the speed distribution (`speed_dist`); its bounds are other keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpeedShape {
    /// Uniform on [speed_min, speed_max].
    Uniform,
    /// setdest's `-s 2`.
    Normal,
}

/// The shape of the pause distribution (`pause_dist`); its mean is `pause`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseShape {
    /// Always `pause`.
    Constant,
    /// Uniform on [0, 2·pause] (setdest's `-P 2`).
    Uniform,
}

/// The meaning of a word a spec key takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// `speed_dist`.
    Speed(SpeedShape),
    /// `pause_dist`.
    Pause(PauseShape),
    /// `start`.
    Start(StartMode),
    /// `link_break`.
    LinkBreak(LinkBreak),
    /// `changes`.
    Changes(ChangeMode),
    /// `activity` of traces: `beside` reads each trace's SUMO activity file, named like
    /// the trace with `mobility` replaced by `activity`.
    Activity(bool),
}

/// A spec value as parsed, typed as runs use it, so a run is built without parsing
/// text again; [`SpecValue::canonical`] is its form in run keys and table columns.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecValue {
    /// A count (`nodes`).
    Count(i64),
    /// A number (speeds, pause, duration, range, rate).
    Number(f64),
    /// `area`, metres.
    Area(Area),
    /// `delay`.
    Delay(DelayModel),
    /// `detection_delay`.
    Duration(Duration),
    /// `cs_time`.
    CsTime(CsTime),
    /// A word with its meaning.
    Choice(&'static str, Choice),
    /// A trace file, as written (relative to the spec's directory).
    Trace(String),
    /// An algorithm parameter (`[params.NAME]`), checked against the registry.
    Algorithm(ParamValue),
}

impl SpecValue {
    /// The canonical form: equal values written differently (`30` and `30.0`,
    /// `1000us` and `1ms`) get one form, so they get one run key.
    pub fn canonical(&self) -> ParamValue {
        match self {
            SpecValue::Count(n) => ParamValue::Int(*n),
            SpecValue::Number(x) => ParamValue::Float(*x),
            SpecValue::Area(a) => ParamValue::Text(format!("{}x{}", a.width, a.height)),
            SpecValue::Delay(d) => ParamValue::Text(delay_text(*d)),
            SpecValue::Duration(d) => ParamValue::Text(duration_text(*d)),
            // A constant CS time is a number of seconds, an exponential one `exp:MEAN`.
            SpecValue::CsTime(CsTime::Constant(d)) => ParamValue::Float(d.as_secs_f64()),
            SpecValue::CsTime(CsTime::Exponential { mean }) => {
                ParamValue::Text(format!("exp:{:?}", mean.as_secs_f64()))
            }
            SpecValue::Choice(word, _) => ParamValue::Text(word.to_string()),
            SpecValue::Trace(path) => ParamValue::Text(path.clone()),
            SpecValue::Algorithm(v) => v.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Validation

struct Parser<'a> {
    file: String,
    path: &'a Path,
}

impl Parser<'_> {
    fn err(&self, key_path: &str, message: impl Into<String>) -> InputError {
        InputError::new(Location::file(&self.file).with_field(key_path), message)
    }

    fn spec(&self, table: &Table, text: &str) -> Result<Spec, InputError> {
        self.unknown_keys(table, "", TOP_KEYS)?;
        let name = self.required(table, "name")?;
        let name = match name {
            Value::String(s)
                if !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                s.clone()
            }
            Value::String(s) => {
                return Err(self.err(
                    "name",
                    format!(
                        "`{s}` is not a valid experiment name: use letters, digits, `_` and \
                         `-` only (it becomes a directory name)"
                    ),
                ));
            }
            other => return Err(self.wrong_type("name", "a string", other)),
        };
        let master_seed = match self.required(table, "master_seed")? {
            Value::Integer(i) if *i >= 0 => *i as u64,
            Value::Integer(i) => {
                return Err(self.err(
                    "master_seed",
                    format!("must be an integer from 0 to {}, got {i}", i64::MAX),
                ));
            }
            other => return Err(self.wrong_type("master_seed", "an integer", other)),
        };
        let replications = match self.required(table, "replications")? {
            Value::Integer(i) if (1..=i64::from(u32::MAX)).contains(i) => *i as u32,
            Value::Integer(i) => {
                return Err(self.err(
                    "replications",
                    format!("must be a positive integer, got {i}"),
                ));
            }
            other => return Err(self.wrong_type("replications", "an integer", other)),
        };
        let algorithms = self.algorithms(self.required(table, "algorithms")?)?;

        let mut params = Vec::new();
        let mobility = match self.required(table, "mobility")? {
            Value::Table(t) => self.mobility(t, &mut params)?,
            other => return Err(self.wrong_type("mobility", "a table [mobility]", other)),
        };
        match table.get("network") {
            None => self.section(&Table::new(), "network", NETWORK_FIELDS, &mut params)?,
            Some(Value::Table(t)) => self.section(t, "network", NETWORK_FIELDS, &mut params)?,
            Some(other) => return Err(self.wrong_type("network", "a table [network]", other)),
        }
        let needs_workload = algorithms.iter().any(|a| a.family().needs_workload());
        match (table.get("workload"), needs_workload) {
            (None, false) => {}
            (None, true) => {
                return Err(self.err(
                    "workload",
                    format!(
                        "missing required section [workload] (with `rate`): {} algorithms \
                         need a request workload",
                        workload_families()
                    ),
                ));
            }
            (Some(Value::Table(_)), false) => {
                return Err(self.err(
                    "workload",
                    format!(
                        "no algorithm of this spec uses a workload (only {} algorithms do); \
                         remove [workload]",
                        workload_families()
                    ),
                ));
            }
            (Some(Value::Table(t)), true) => {
                if !t.contains_key("rate") {
                    return Err(self.err("workload.rate", "missing required key"));
                }
                let start = params.len();
                self.section(t, "workload", WORKLOAD_FIELDS, &mut params)?;
                for p in &mut params[start..] {
                    p.scope = Scope::Workload;
                }
            }
            (Some(other), _) => {
                return Err(self.wrong_type("workload", "a table [workload]", other));
            }
        }
        match table.get("params") {
            None => self.algorithm_params(&Table::new(), &algorithms, &mut params)?,
            Some(Value::Table(t)) => self.algorithm_params(t, &algorithms, &mut params)?,
            Some(other) => return Err(self.wrong_type("params", "a table [params.NAME]", other)),
        }
        params.sort_by_key(|p| p.name);
        Ok(Spec {
            path: self.path.to_path_buf(),
            name,
            master_seed,
            replications,
            algorithms,
            mobility,
            params,
            text: text.to_string(),
        })
    }

    fn required<'t>(&self, table: &'t Table, key: &str) -> Result<&'t Value, InputError> {
        table
            .get(key)
            .ok_or_else(|| self.err(key, "missing required key"))
    }

    fn wrong_type(&self, key_path: &str, expected: &str, got: &Value) -> InputError {
        self.err(
            key_path,
            format!("wrong type: expected {expected}, got {}", describe(got)),
        )
    }

    /// Refuses keys outside `known`, suggesting the closest known one.
    fn unknown_keys(&self, table: &Table, prefix: &str, known: &[&str]) -> Result<(), InputError> {
        for key in table.keys() {
            if !known.contains(&key.as_str()) {
                let hint = match closest(key, known) {
                    Some(k) => format!("; did you mean `{k}`?"),
                    None => format!(" (known: {})", known.join(", ")),
                };
                return Err(self.err(&format!("{prefix}{key}"), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    fn algorithms(&self, value: &Value) -> Result<Vec<Algorithm>, InputError> {
        let names = Algorithm::names();
        let items: Vec<(String, &Value)> = match value {
            Value::Array(a) if a.is_empty() => {
                return Err(self.err("algorithms", "empty list: give at least one algorithm"));
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("algorithms[{i}]"), v))
                .collect(),
            v => vec![("algorithms".to_string(), v)],
        };
        let mut out: Vec<Algorithm> = Vec::new();
        for (path, v) in items {
            let Value::String(s) = v else {
                return Err(self.wrong_type(&path, "an algorithm name (a string)", v));
            };
            let algo = match Algorithm::parse(s) {
                Some(algo) => algo,
                None => {
                    let other = s.as_str();
                    let hint = closest(other, &names)
                        .map(|k| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    return Err(self.err(
                        &path,
                        format!(
                            "unknown algorithm `{other}`; {hint}(known: {})",
                            names.join(", ")
                        ),
                    ));
                }
            };
            if out.contains(&algo) {
                return Err(self.err(&path, format!("duplicate value `{s}` in the list")));
            }
            out.push(algo);
        }
        Ok(out)
    }

    /// `[params.NAME]`: each algorithm's parameters, checked against the registry. An
    /// algorithm of the spec without a section, or a parameter left out, runs at the
    /// defaults (fixed values, kept in the tables like every other parameter).
    fn algorithm_params(
        &self,
        table: &Table,
        algorithms: &[Algorithm],
        params: &mut Vec<SpecParam>,
    ) -> Result<(), InputError> {
        for (name, section) in table {
            let path = format!("params.{name}");
            let Some(algorithm) = Algorithm::parse(name) else {
                let hint = closest(name, &Algorithm::names())
                    .map(|k| format!("; did you mean `{k}`?"))
                    .unwrap_or_default();
                return Err(self.err(&path, format!("unknown algorithm `{name}`{hint}")));
            };
            if !algorithms.contains(&algorithm) {
                return Err(self.err(
                    &path,
                    format!("`{name}` is not in `algorithms`: add it there or remove [{path}]"),
                ));
            }
            let Value::Table(section) = section else {
                return Err(self.wrong_type(&path, &format!("a table [{path}]"), section));
            };
            if algorithm.params().is_empty() && !section.is_empty() {
                let key = section.keys().next().expect("not empty");
                return Err(self.err(
                    &format!("{path}.{key}"),
                    format!("unknown parameter: {name} takes no parameters"),
                ));
            }
            let known: Vec<&str> = algorithm.params().iter().map(|d| d.name).collect();
            self.unknown_keys(section, &format!("{path}."), &known)?;
        }
        for &algorithm in algorithms {
            let section = match table.get(algorithm.name()) {
                Some(Value::Table(t)) => Some(t),
                _ => None,
            };
            for def in algorithm.params() {
                let path = format!("params.{}.{}", algorithm.name(), def.name);
                let check = |at: &str, v: &Value| -> Result<SpecValue, InputError> {
                    let value = match v {
                        Value::Integer(i) => ParamValue::Int(*i),
                        Value::Float(x) => ParamValue::Float(*x),
                        Value::String(s) => ParamValue::Text(s.trim().to_string()),
                        other => return Err(self.wrong_type(at, &def.kind_text(), other)),
                    };
                    let value = def.check(value).map_err(|e| self.err(at, e))?;
                    Ok(SpecValue::Algorithm(value))
                };
                let written = section.and_then(|t| t.get(def.name));
                let default = match def.default_value() {
                    ParamValue::Int(i) => Value::Integer(i),
                    ParamValue::Float(x) => Value::Float(x),
                    ParamValue::Text(s) => Value::String(s),
                };
                let (typed, is_axis) = self
                    .values(&path, written, Some(&default), check)?
                    .expect("a default is given");
                params.push(SpecParam::new(
                    def.name,
                    path,
                    typed,
                    is_axis,
                    Scope::Algorithm(algorithm),
                ));
            }
        }
        Ok(())
    }

    fn mobility(
        &self,
        table: &Table,
        params: &mut Vec<SpecParam>,
    ) -> Result<MobilityKind, InputError> {
        if table.contains_key("traces") {
            for key in table.keys() {
                if RWP_FIELDS.iter().any(|f| f.key == key) && key != "duration" {
                    return Err(self.err(
                        &format!("mobility.{key}"),
                        "a random-waypoint key next to `traces`: mobility is either generated \
                         (random-waypoint keys) or read from trace files (`traces`), not both",
                    ));
                }
            }
            self.section(table, "mobility", TRACE_FIELDS, params)?;
            Ok(MobilityKind::Traces)
        } else {
            let mut known: Vec<&str> = RWP_FIELDS.iter().map(|f| f.key).collect();
            known.push("traces");
            self.unknown_keys(table, "mobility.", &known)?;
            self.section(table, "mobility", RWP_FIELDS, params)?;
            Ok(MobilityKind::RandomWaypoint)
        }
    }

    /// Checks one section's keys and values; omitted keys take their defaults, or are
    /// left out if they have none (`duration` of a trace).
    fn section(
        &self,
        table: &Table,
        section: &str,
        fields: &[Field],
        params: &mut Vec<SpecParam>,
    ) -> Result<(), InputError> {
        let known: Vec<&str> = fields.iter().map(|f| f.key).collect();
        self.unknown_keys(table, &format!("{section}."), &known)?;
        for f in fields {
            let path = format!("{section}.{}", f.key);
            let name = if f.key == "traces" { "trace" } else { f.key };
            let default = default_value(f.key).filter(|_| f.defaulted);
            let written = match table.get(f.key) {
                Some(item) if f.key == "traces" && !item.is_array() => {
                    return Err(self.wrong_type(&path, "a list of trace file paths", item));
                }
                written => written,
            };
            let Some((typed, is_axis)) =
                self.values(&path, written, default.as_ref(), |at, v| {
                    self.value(at, f.kind, v)
                })?
            else {
                continue;
            };
            params.push(SpecParam::new(name, path, typed, is_axis, Scope::All));
        }
        Ok(())
    }

    /// The values of one key: a list is an axis (non-empty, no two values with one
    /// canonical form), a scalar a fixed value, an omitted key its default (`None`
    /// without one). Each value is checked by `check`.
    fn values(
        &self,
        path: &str,
        written: Option<&Value>,
        default: Option<&Value>,
        check: impl Fn(&str, &Value) -> Result<SpecValue, InputError>,
    ) -> Result<Option<(Vec<SpecValue>, bool)>, InputError> {
        match written {
            None => default
                .map(|v| Ok((vec![check(path, v)?], false)))
                .transpose(),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    return Err(self.err(
                        path,
                        "empty list: give at least one value (a list is a sweep axis)",
                    ));
                }
                let mut values: Vec<SpecValue> = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{path}[{i}]");
                    let v = check(&at, item)?;
                    let canonical = v.canonical();
                    if let Some(j) = values.iter().position(|w| w.canonical() == canonical) {
                        return Err(self.err(
                            &at,
                            format!(
                                "duplicate value {canonical} in the list (same as {path}[{j}]); \
                                 each axis value must be distinct"
                            ),
                        ));
                    }
                    values.push(v);
                }
                Ok(Some((values, true)))
            }
            Some(item) => Ok(Some((vec![check(path, item)?], false))),
        }
    }

    /// Checks one scalar value and types it.
    fn value(&self, path: &str, kind: Kind, v: &Value) -> Result<SpecValue, InputError> {
        let number = |expected: &str| match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(x) => Ok(*x),
            other => Err(self.wrong_type(path, expected, other)),
        };
        let text = |expected: &str| match v {
            Value::String(s) => Ok(s.trim()),
            other => Err(self.wrong_type(path, expected, other)),
        };
        let problem = |msg: String| self.err(path, msg);
        Ok(match kind {
            Kind::Count => match v {
                Value::Integer(i) if *i >= 1 => SpecValue::Count(*i),
                Value::Integer(i) => return Err(problem(format!("must be at least 1, got {i}"))),
                other => return Err(self.wrong_type(path, "a positive integer", other)),
            },
            Kind::NonNegative => {
                let x = number("a number")?;
                if !(x.is_finite() && x >= 0.0) {
                    return Err(problem(format!("must be a finite number >= 0, got {x}")));
                }
                SpecValue::Number(x)
            }
            Kind::Positive => {
                let x = number("a number")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(problem(format!("must be a finite number > 0, got {x}")));
                }
                SpecValue::Number(x)
            }
            Kind::Choice(choices) => {
                let s = text("a string")?;
                let Some(&(word, choice)) = choices.iter().find(|(w, _)| *w == s) else {
                    let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
                    let hint = closest(s, &words)
                        .map(|k| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    return Err(problem(format!(
                        "unknown value `{s}`; {hint}(expected {})",
                        words.join(" or ")
                    )));
                };
                SpecValue::Choice(word, choice)
            }
            Kind::Area => SpecValue::Area(
                params::parse_area(text("a string \"WIDTHxHEIGHT\"")?).map_err(problem)?,
            ),
            Kind::Delay => SpecValue::Delay(
                text("a delay string such as \"uniform:1ms:5ms\"")?
                    .parse()
                    .map_err(problem)?,
            ),
            Kind::Duration => SpecValue::Duration(
                params::parse_detection_delay(text("a duration string such as \"10ms\"")?)
                    .map_err(problem)?,
            ),
            Kind::CsTime => SpecValue::CsTime(match v {
                Value::Integer(_) | Value::Float(_) => {
                    params::parse_cs_time(&number("a number")?.to_string()).map_err(problem)?
                }
                Value::String(s) => params::parse_cs_time(s).map_err(problem)?,
                other => {
                    return Err(self.wrong_type(path, "seconds or a string \"exp:MEAN\"", other));
                }
            }),
            Kind::TracePath => {
                let s = text("a trace file path (a string)")?;
                let resolved = self
                    .path
                    .parent()
                    .map_or_else(|| PathBuf::from(s), |d| d.join(s));
                if !resolved.is_file() {
                    return Err(problem(format!(
                        "trace file `{}` does not exist (paths are relative to the spec's \
                         directory)",
                        resolved.display()
                    )));
                }
                SpecValue::Trace(s.to_string())
            }
        })
    }
}

/// The families whose algorithms need a workload, for errors (`mutual-exclusion`).
fn workload_families() -> String {
    crate::family::ALL
        .iter()
        .filter(|f| f.needs_workload())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short description of a value's type, for "wrong type" errors.
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("a string \"{s}\""),
        Value::Integer(i) => format!("an integer {i}"),
        Value::Float(x) => format!("a float {x}"),
        Value::Boolean(b) => format!("a boolean {b}"),
        Value::Datetime(d) => format!("a date-time {d}"),
        Value::Array(_) => "a list".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

/// The known key closest to `key` in edit distance, if close enough to be a likely typo.
pub(crate) fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .min()
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .map(|(_, k)| k)
}

/// Levenshtein distance (insertions, deletions, substitutions), by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Writes a duration exactly, in the largest unit that divides it (`1500us`, `2ms`), so
/// equal durations written differently get one canonical text.
fn duration_text(d: Duration) -> String {
    let ns = d.0;
    if ns == 0 {
        return "0s".to_string();
    }
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// A delay model in canonical text (`uniform:1ms:5ms`).
fn delay_text(model: DelayModel) -> String {
    match model {
        DelayModel::Constant(d) => format!("const:{}", duration_text(d)),
        DelayModel::Uniform { min, max } => {
            format!("uniform:{}:{}", duration_text(min), duration_text(max))
        }
        DelayModel::Exponential { min, mean } => {
            format!("exp:{}:{}", duration_text(min), duration_text(mean))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Expansion

/// 64-bit FNV-1a over the bytes of `text`: a fixed, documented hash (unlike std's
/// randomly keyed hasher), so a key's seed is the same in every process and release.
pub fn fnv1a64(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The run seed for a seed text: the master seed and the text's hash, mixed.
pub fn run_seed(master_seed: u64, seed_text: &str) -> u64 {
    seeds::mix(seeds::mix(master_seed) ^ fnv1a64(seed_text))
}

/// A value as written into a key: `/` (the key's separator) and `%` are percent-escaped,
/// so a trace path cannot split a key.
fn key_text(v: &ParamValue) -> String {
    v.to_string().replace('%', "%25").replace('/', "%2F")
}

/// Expands a spec into its plan, after checking every combination of the mobility axes.
///
/// Order: replication (outermost), then the parameter point (the axes in name order, the
/// last one fastest, each in the order written), then the algorithms as written. An
/// interrupted sweep thus holds whole replications of every point, and the algorithms
/// of one point and replication, which share a trace, are adjacent.
///
/// Key: `<experiment>/algo=<a>/<axis>=<value>/…/rep=<r>` with the run's axes in name
/// order (`r` from 0): unique within the experiment and short. Seed: derived from the
/// master seed and the *seed text*, `<experiment>/<param>=<value>/…/rep=<r>` over every
/// parameter of the run, fixed or swept, but not the algorithm (common random numbers).
/// Hence adding a value to an axis, or turning a fixed value into a list holding it,
/// changes no existing run's seed; changing a fixed value changes every seed, so stored
/// results of the old spec are never mistaken for the new one's.
pub fn expand(spec: &Spec) -> Result<Plan, InputError> {
    expand_checked(spec).map_err(|e| with_toml_line(e, &spec.text))
}

fn expand_checked(spec: &Spec) -> Result<Plan, InputError> {
    check_combinations(spec)?;
    check_node_ids(spec)?;
    let axes: Vec<&SpecParam> = spec.params.iter().filter(|p| p.is_axis).collect();
    let points: u64 = axes.iter().map(|a| a.values.len() as u64).product();
    let total = estimated_runs(spec);
    if total > MAX_RUNS {
        return Err(InputError::new(
            Location::file(spec.path.display().to_string()).with_field("replications"),
            format!(
                "the plan would have {total} runs (the limit is {MAX_RUNS}); use fewer axis \
                 values or replications"
            ),
        ));
    }
    // Runs are kept as (replication, point, algorithm) slots, 16 bytes each, and built
    // when asked for ([`Plan::run`]): a plan of two million runs takes 32 MB, not the
    // gigabytes its keys, seed texts and parameters would.
    let mut slots = Vec::with_capacity(total as usize);
    for rep in 0..spec.replications {
        for point in 0..points {
            let index = point_index(spec, point);
            for (a, &algorithm) in spec.algorithms.iter().enumerate() {
                // A run not using an axis is made once, at that axis's first value.
                let skip = spec
                    .params
                    .iter()
                    .zip(&index)
                    .any(|(p, &i)| !p.scope.applies_to(algorithm) && i != 0);
                if !skip {
                    slots.push(Slot {
                        replication: rep,
                        algorithm: a as u32,
                        point,
                    });
                }
            }
        }
    }
    // Algorithms sharing a parameter name share its axis (one column, one key part).
    let mut merged_axes: Vec<(String, Vec<ParamValue>)> = Vec::new();
    for a in &axes {
        match merged_axes.iter_mut().find(|(n, _)| n == a.name) {
            Some((_, values)) => {
                for v in &a.values {
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            None => merged_axes.push((a.name.to_string(), a.values.clone())),
        }
    }
    Ok(Plan {
        experiment: spec.name.clone(),
        spec_path: spec.path.clone(),
        axes: merged_axes,
        replications: spec.replications,
        algorithms: spec.algorithms.clone(),
        runs: RunList::Expanded(std::sync::Arc::new(Expansion {
            spec: spec.clone(),
            base_dir: spec.base_dir(),
            slots,
        })),
    })
}

/// The value index of every parameter at parameter point `point` (an odometer over the
/// axes, the last axis changing fastest; fixed parameters at 0).
fn point_index(spec: &Spec, point: u64) -> Vec<usize> {
    let mut index = vec![0usize; spec.params.len()];
    let mut rest = point;
    for (i, p) in spec.params.iter().enumerate().rev() {
        if p.is_axis {
            let n = p.values.len() as u64;
            index[i] = (rest % n) as usize;
            rest /= n;
        }
    }
    index
}

/// Builds run `index` of an expanded spec from its slot: key, seed and parameters.
pub(crate) fn materialize(expansion: &Expansion, index: usize) -> PlannedRun {
    let spec = &expansion.spec;
    let slot = expansion.slots[index];
    let algorithm = spec.algorithms[slot.algorithm as usize];
    let rep = slot.replication;
    let value_index = point_index(spec, slot.point);
    let applies = |p: &SpecParam| p.scope.applies_to(algorithm);
    let mut key = format!("{}/algo={}", spec.name, algorithm.name());
    let mut seed_text = spec.name.clone();
    let mut params = Vec::new();
    let mut point = Point::default();
    for (p, &i) in spec.params.iter().zip(&value_index) {
        if !applies(p) {
            continue;
        }
        point.0.push((p.name, &p.typed[i]));
        let v = &p.values[i];
        if p.is_axis {
            key.push_str(&format!("/{}={}", p.name, key_text(v)));
        }
        // The algorithm's own parameters stay out of the seed, as the algorithm does:
        // all algorithms of a point see the same draws.
        if !matches!(p.scope, Scope::Algorithm(_)) {
            seed_text.push_str(&format!("/{}={}", p.name, key_text(v)));
        }
        params.push((p.name.to_string(), v.clone()));
    }
    key.push_str(&format!("/rep={rep}"));
    seed_text.push_str(&format!("/rep={rep}"));
    let seed = run_seed(spec.master_seed, &seed_text);
    planned_run(
        index,
        key,
        seed_text,
        algorithm,
        rep,
        seed,
        params,
        &point,
        &expansion.base_dir,
    )
}

/// Simulated node-seconds of an expanded spec's runs (nodes × duration summed), from
/// their slots without building the runs; `None` when the runs read traces.
pub(crate) fn expansion_node_seconds(expansion: &Expansion) -> Option<f64> {
    let spec = &expansion.spec;
    if spec.mobility != MobilityKind::RandomWaypoint {
        return None;
    }
    let mut per_point: std::collections::HashMap<u64, Option<f64>> = Default::default();
    let mut total = 0.0;
    for slot in &expansion.slots {
        let size = *per_point.entry(slot.point).or_insert_with(|| {
            let index = point_index(spec, slot.point);
            let value = |name: &str| {
                spec.params
                    .iter()
                    .zip(&index)
                    .find(|(p, _)| p.name == name)
                    .map(|(p, &i)| &p.typed[i])
            };
            match (value("nodes"), value("duration")) {
                (Some(SpecValue::Count(n)), Some(SpecValue::Number(d))) => Some(*n as f64 * d),
                _ => None,
            }
        });
        total += size?;
    }
    Some(total)
}

/// The number of runs [`expand`] makes, without making them.
pub fn estimated_runs(spec: &Spec) -> u64 {
    let product = |algorithm: Algorithm| -> u64 {
        spec.params
            .iter()
            .filter(|p| p.is_axis && p.scope.applies_to(algorithm))
            .map(|p| p.values.len() as u64)
            .fold(1u64, u64::saturating_mul)
    };
    spec.algorithms
        .iter()
        .map(|&a| product(a))
        .fold(0u64, u64::saturating_add)
        .saturating_mul(u64::from(spec.replications))
}

/// One run's typed values, by parameter name (those that apply to its algorithm).
/// Each key has one [`Kind`], so a value of another type here is a bug in this file,
/// not bad input.
#[derive(Default)]
struct Point<'s>(Vec<(&'static str, &'s SpecValue)>);

impl Point<'_> {
    fn get(&self, name: &str) -> Option<&SpecValue> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    fn number(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(SpecValue::Number(x)) => *x,
            other => unreachable!("{name} is a number, got {other:?}"),
        }
    }

    fn choice(&self, name: &str) -> Choice {
        match self.get(name) {
            Some(SpecValue::Choice(_, c)) => *c,
            other => unreachable!("{name} is a word, got {other:?}"),
        }
    }

    /// The generator parameters of a random-waypoint point (`seed` as given).
    fn rwp(&self, seed: u64) -> RwpParams {
        let (min, max) = (self.number("speed_min"), self.number("speed_max"));
        let pause = self.number("pause");
        RwpParams {
            nodes: match self.get("nodes") {
                Some(SpecValue::Count(n)) => *n as usize,
                other => unreachable!("nodes is a count, got {other:?}"),
            },
            area: match self.get("area") {
                Some(SpecValue::Area(a)) => *a,
                other => unreachable!("area is an area, got {other:?}"),
            },
            speed: match self.choice("speed_dist") {
                Choice::Speed(SpeedShape::Normal) => SpeedDist::Normal { min, max },
                _ => SpeedDist::Uniform { min, max },
            },
            pause: match self.choice("pause_dist") {
                Choice::Pause(PauseShape::Uniform) => PauseDist::Uniform { mean: pause },
                _ => PauseDist::Constant(pause),
            },
            duration: self.number("duration"),
            start: match self.choice("start") {
                Choice::Start(start) => start,
                other => unreachable!("start is a start mode, got {other:?}"),
            },
            seed,
        }
    }

    /// The network model of a point.
    fn network(&self) -> NetworkConfig {
        NetworkConfig {
            delay: match self.get("delay") {
                Some(SpecValue::Delay(d)) => *d,
                other => unreachable!("delay is a delay model, got {other:?}"),
            },
            link_break: match self.choice("link_break") {
                Choice::LinkBreak(b) => b,
                other => unreachable!("link_break, got {other:?}"),
            },
            detection_delay: match self.get("detection_delay") {
                Some(SpecValue::Duration(d)) => *d,
                other => unreachable!("detection_delay is a duration, got {other:?}"),
            },
            changes: match self.choice("changes") {
                Choice::Changes(c) => c,
                other => unreachable!("changes, got {other:?}"),
            },
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn planned_run(
    index: usize,
    key: String,
    seed_text: String,
    algorithm: Algorithm,
    replication: u32,
    seed: u64,
    params: Vec<(String, ParamValue)>,
    point: &Point<'_>,
    base_dir: &Path,
) -> PlannedRun {
    let (mobility, duration) = match point.get("trace") {
        Some(SpecValue::Trace(path)) => {
            let path = base_dir.join(path);
            let activity = match point.get("activity") {
                Some(SpecValue::Choice(_, Choice::Activity(true))) => {
                    Some(crate::mobility::format::activity_path(&path))
                }
                _ => None,
            };
            (
                MobilitySource::Trace { path, activity },
                point.get("duration").map(|_| point.number("duration")),
            )
        }
        _ => {
            let rwp = point.rwp(seeds::derive(seed, Purpose::Mobility));
            (MobilitySource::Rwp(rwp), Some(rwp.duration))
        }
    };
    let algo_params = AlgoParams::resolve(
        algorithm.params(),
        algorithm
            .params()
            .iter()
            .filter_map(|d| match point.get(d.name) {
                Some(SpecValue::Algorithm(v)) => Some((d.name, v.clone())),
                _ => None,
            }),
    )
    .expect("checked against the registry");
    let workload = algorithm.family().needs_workload().then(|| WorkloadConfig {
        rate: point.number("rate"),
        cs_time: match point.get("cs_time") {
            Some(SpecValue::CsTime(cs)) => *cs,
            other => unreachable!("cs_time is a CS time, got {other:?}"),
        },
    });
    let config = RunConfig {
        network: point.network(),
        workload,
        duration: duration.map_or(SimTime::ZERO, SimTime::from_secs_f64),
        seed,
        script: None,
    };
    PlannedRun {
        index,
        key,
        seed_text,
        algorithm,
        replication,
        seed,
        range: point.number("range"),
        params,
        algo_params,
        mobility,
        config,
        duration,
    }
}

/// Checks node-id algorithm parameters (`holder`) against every run's node count, so a
/// sweep never fails half-way on a node that does not exist: every value of `nodes`
/// with random waypoint, every trace (read once, only if some id is above 0) with
/// trace files.
fn check_node_ids(spec: &Spec) -> Result<(), InputError> {
    let node_params: Vec<&SpecParam> = spec
        .params
        .iter()
        .filter(|p| match p.scope {
            Scope::Algorithm(a) => a
                .params()
                .iter()
                .any(|d| d.name == p.name && d.kind == ParamKind::Node),
            _ => false,
        })
        .collect();
    // Node 0 exists in every run: no trace needs reading for defaults.
    let above_zero = node_params
        .iter()
        .flat_map(|p| p.values.iter())
        .any(|v| matches!(v, ParamValue::Int(id) if *id > 0));
    if !above_zero {
        return Ok(());
    }
    // (node count, what has it) of every run.
    let counts: Vec<(i64, String)> = match (spec.param("nodes"), spec.param("trace")) {
        (Some(nodes), _) => nodes
            .typed
            .iter()
            .filter_map(|v| match v {
                SpecValue::Count(n) => Some((*n, format!("nodes = {n}"))),
                _ => None,
            })
            .collect(),
        (None, Some(traces)) => {
            let mut counts = Vec::new();
            for (i, v) in traces.typed.iter().enumerate() {
                let SpecValue::Trace(path) = v else { continue };
                let trace = crate::mobility::format::read_trace(&spec.base_dir().join(path))
                    .map_err(|e| {
                        InputError::new(
                            Location::file(spec.path.display().to_string())
                                .with_field(traces.element_path(i)),
                            format!("cannot read the trace to check node ids: {e}"),
                        )
                    })?;
                let n = trace.trace.node_count() as i64;
                counts.push((n, format!("trace `{path}` ({n} nodes)")));
            }
            counts
        }
        (None, None) => return Ok(()),
    };
    for p in node_params {
        for (i, value) in p.values.iter().enumerate() {
            let ParamValue::Int(id) = *value else {
                continue;
            };
            if let Some((count, what)) = counts.iter().find(|(n, _)| id >= *n) {
                return Err(InputError::new(
                    Location::file(spec.path.display().to_string()).with_field(p.element_path(i)),
                    format!(
                        "node {id} does not exist with {what}: node ids run from 0 to {}",
                        count - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Reads every trace a spec names (with its activity file when `activity = "beside"`),
/// so that a bad trace fails `sweep --dry-run` and the start of a sweep, located at its
/// entry in the spec, rather than a run hours in. Not part of [`expand`]: merging or
/// reporting stored results must not need the traces again.
pub fn check_traces(spec: &Spec) -> Result<(), InputError> {
    let Some(traces) = spec.param("trace") else {
        return Ok(());
    };
    let beside = spec.param("activity").is_some_and(|a| {
        a.typed
            .iter()
            .any(|v| matches!(v, SpecValue::Choice(_, Choice::Activity(true))))
    });
    for (i, v) in traces.typed.iter().enumerate() {
        let SpecValue::Trace(path) = v else { continue };
        let full = spec.base_dir().join(path);
        let options = crate::mobility::format::ReadOptions {
            duration: None,
            activity: beside.then(|| crate::mobility::format::activity_path(&full)),
        };
        crate::mobility::format::read_trace_with(&full, &options).map_err(|e| {
            with_toml_line(
                InputError::new(
                    Location::file(spec.path.display().to_string())
                        .with_field(traces.element_path(i)),
                    format!("cannot read the trace: {e}"),
                ),
                &spec.text,
            )
        })?;
    }
    Ok(())
}

/// Checks the cross-key constraints of random-waypoint mobility for every combination
/// of the mobility axes, naming the offending value and the combination.
fn check_combinations(spec: &Spec) -> Result<(), InputError> {
    if spec.mobility != MobilityKind::RandomWaypoint {
        return Ok(());
    }
    let mobility: Vec<&SpecParam> = spec
        .params
        .iter()
        .filter(|p| p.path.starts_with("mobility."))
        .collect();
    let combinations: u64 = mobility.iter().map(|p| p.values.len() as u64).product();
    let file = spec.path.display().to_string();
    for c in 0..combinations {
        let mut index = vec![0usize; mobility.len()];
        let mut rest = c;
        for (i, p) in mobility.iter().enumerate().rev() {
            let n = p.values.len() as u64;
            index[i] = (rest % n) as usize;
            rest /= n;
        }
        let values = Point(
            mobility
                .iter()
                .zip(&index)
                .map(|(p, &i)| (p.name, &p.typed[i]))
                .collect(),
        );
        let at = |name: &str| {
            let (k, p) = mobility
                .iter()
                .enumerate()
                .find(|(_, p)| p.name == name)
                .expect("every mobility key has a value");
            p.element_path(index[k])
        };
        let combination: Vec<String> = mobility
            .iter()
            .zip(&index)
            .filter(|(p, _)| p.is_axis)
            .map(|(p, &i)| format!("{} = {}", p.name, p.values[i]))
            .collect();
        let within = if combination.is_empty() {
            String::new()
        } else {
            format!(" (in the combination {})", combination.join(", "))
        };
        let err = |field: String, msg: String| {
            InputError::new(
                Location::file(&file).with_field(field),
                format!("{msg}{within}"),
            )
        };
        let (min, max) = (values.number("speed_min"), values.number("speed_max"));
        if min > max {
            let field = if spec.param("speed_min").is_some_and(|p| p.is_axis)
                && !spec.param("speed_max").is_some_and(|p| p.is_axis)
            {
                at("speed_min")
            } else {
                at("speed_max")
            };
            return Err(err(
                field,
                format!("speed_min {min} is above speed_max {max}: need speed_min <= speed_max"),
            ));
        }
        let rwp = values.rwp(0);
        if let Err(e) = rwp.validate() {
            // The generator names its command-line flags; map them to spec keys.
            let key = match e.location.file.trim_start_matches("--") {
                "speed" => "speed_min",
                other => other,
            }
            .to_string();
            let field = if mobility.iter().any(|p| p.name == key) {
                at(&key)
            } else {
                "mobility".to_string()
            };
            return Err(err(field, e.message.replace("--", "")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_parameters_do_not_shadow_spec_keys() {
        let spec_keys: Vec<&str> = [RWP_FIELDS, TRACE_FIELDS, NETWORK_FIELDS, WORKLOAD_FIELDS]
            .iter()
            .flat_map(|fields| fields.iter().map(|f| f.key))
            .chain(TOP_KEYS.iter().copied())
            .chain(["trace", "algo", "rep", "run_index", "run_key", "experiment"])
            .chain(["algorithm", "replication", "seed", "tool_version"])
            .collect();
        for a in Algorithm::all() {
            for p in a.params() {
                assert!(
                    !spec_keys.contains(&p.name),
                    "{}: parameter `{}` is a spec key",
                    a.name(),
                    p.name
                );
            }
        }
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference (Fowler, Noll, Vo): the offset basis and "a".
        assert_eq!(fnv1a64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn suggestions_need_a_close_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("sped_max", &["speed_min", "speed_max"]),
            Some("speed_max")
        );
        assert_eq!(closest("colour", &["nodes", "area"]), None);
    }

    #[test]
    fn durations_get_one_exact_text() {
        assert_eq!(duration_text(Duration(1_500_000)), "1500us");
        assert_eq!(duration_text(Duration(2_000_000)), "2ms");
        assert_eq!(duration_text(Duration(0)), "0s");
        let delay = |t: &str| delay_text(t.parse().unwrap());
        assert_eq!(delay("uniform:1000us:0.005s"), delay("uniform:1ms:5ms"));
        assert_eq!(delay("uniform:1000us:0.005s"), "uniform:1ms:5ms");
    }
}
