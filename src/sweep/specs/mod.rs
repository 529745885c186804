//! Experiment specs: a TOML file describing a sweep, validated completely before any run
//! starts, and expanded into a [`Plan`](crate::sweep::plan::Plan).
//!
//! # Format (see also `analysis/README.md`)
//!
//! ```toml
//! name = "me-load"              # [A-Za-z0-9_-]+, it becomes a directory name
//! master_seed = 1
//! replications = 30           # or { min = 5, max = 200, batch = 5 } with [precision]
//! algorithms = ["me-rl", "me-raymond"]
//! # max_events = 50000000     # optional: every run's event budget
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
//!
//! [precision]                   # with a replication range: when a point has enough
//! metrics = ["wait_mean"]       # (see `precision.rs` and `crate::sweep::sequential`)
//! relative_half_width = 0.05
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
//!   [`Plan::axes`](crate::sweep::plan::Plan::axes) and in
//!   [`PlannedRun::params`](crate::sweep::plan::PlannedRun::params).
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
//!
//! # Files
//!
//! - `schema.rs`: the [`Spec`] types, the keys of each section with their kinds, the
//!   defaults, and the canonical form of values.
//! - `walk.rs`: the TOML walk ([`load`], [`parse`]): errors located at `file:line`, with
//!   "did you mean" suggestions.
//! - `expand.rs`: expansion into a plan ([`expand()`], [`estimated_runs`],
//!   [`plan_from_file`]); the plan builds each run from its slot
//!   ([`RunList::get`](crate::sweep::plan::RunList::get)).
//! - `point.rs`: parameter points (the odometer over the axes) and their typed values.
//! - `seeds.rs`: run seeds ([`fnv1a64`], [`run_seed`]).
//! - `precision.rs`: a sequential sweep's `replications = { min, max, batch }` and
//!   `[precision]` target ([`Sequential`]).
//! - `checks.rs`: cross-checks over every combination of the axes, node ids and traces
//!   ([`check_traces`]).

mod checks;
mod expand;
pub(crate) mod point;
mod precision;
pub(crate) mod schema;
pub(crate) mod seeds;
mod walk;

pub use checks::{check_traces, trace_files};
pub use expand::{estimated_runs, expand, plan_from_file};
pub use schema::{
    Choice, KeyDoc, MAX_RUNS, MobilityKind, PauseShape, Scope, Sequential, Spec, SpecParam,
    SpecValue, SpeedShape,
};

/// Every spec key, section by section (title, keys), listed from the tables the parser
/// checks against (`TOP_KEYS`, the sections' fields, `[precision]`'s keys), so the
/// reference (`linkrev reference`) names every key the parser takes; a key without its
/// description stops the page from being built, which `tests/reference.rs` catches.
pub fn key_docs() -> Vec<(&'static str, Vec<KeyDoc>)> {
    let mut sections = schema::section_key_docs();
    sections.push((
        "`replications` as a table",
        precision::replication_key_docs(),
    ));
    sections.push(("`[precision]`", precision::key_docs()));
    sections
}
pub use seeds::{FNV_OFFSET, fnv1a64, fnv1a64_more, run_seed};
pub(crate) use walk::closest;
pub use walk::{load, parse, parse_stored};
