#![warn(missing_docs)]
//! linkrev: trace-driven analysis of link-reversal algorithms on mobile ad hoc networks.
//!
//! Most users drive linkrev from its command line (`linkrev sweep`, `report`, `check`;
//! the book in `docs/` explains them). The library is the same code, for a study that
//! needs its own loop or an algorithm of one's own (`examples/own_algorithm.rs`).
//!
//! # A run in four steps
//!
//! A trace, its link events, one protocol run over them, and the run's summary: what
//! `linkrev run` does, and what every run of a sweep does.
//!
//! ```
//! use linkrev::mobility::{Area, rwp};
//! use linkrev::registry::Algorithm;
//! use linkrev::sim::{CsTime, Duration, NetworkConfig, RunConfig, SimTime, WorkloadConfig};
//! use linkrev::topology::events::link_timeline;
//!
//! // 1. Mobility: 12 nodes of random waypoint in 600 m × 600 m for 120 s, from
//! //    `linkrev run`'s defaults (1–20 m/s, 30 s pauses, stationary start).
//! let mut mobility = linkrev::params::default_rwp(7);
//! mobility.nodes = 12;
//! mobility.area = Area { width: 600.0, height: 600.0 };
//! mobility.duration = 120.0;
//! let trace = rwp::generate(&mobility)?;
//!
//! // 2. Topology: every link's up and down times at a 250 m radio range, exactly.
//! let links = link_timeline(&trace, 250.0);
//! assert_eq!(links.node_count, 12);
//!
//! // 3. A protocol run: RL (token mutual exclusion by link reversal), each node asking
//! //    for the critical section at rate 0.1/s and holding it 50 ms.
//! let rl = Algorithm::parse("me-rl").expect("a built-in algorithm");
//! let config = RunConfig {
//!     network: NetworkConfig::default(),
//!     workload: Some(WorkloadConfig {
//!         rate: 0.1,
//!         cs_time: CsTime::Constant(Duration::from_secs_f64(0.05)),
//!     }),
//!     duration: SimTime::from_secs_f64(120.0),
//!     seed: 7,
//!     script: None,
//!     max_events: None,
//! };
//! let output = rl.run(&rl.default_params(), &links, config);
//!
//! // 4. The summary: the same numbers a sweep stores as one row of its runs table.
//! let summary = &output.summary;
//! assert_eq!(summary.safety_violations, 0); // never two nodes in the CS
//! assert!(summary.messages > 0);
//! let entries = summary.metrics.get("cs_entries");
//! println!("{} messages, {entries:?} CS entries", summary.messages);
//! # Ok::<(), linkrev::input::InputError>(())
//! ```
//!
//! # Code map
//!
//! Data flows left to right. Modules are layered, and each imports only from the layers
//! below it, so no files import each other in a loop; bottom to top: `input`, `output`,
//! `memory`, `prefetch`, `stats`; `graph`, `mobility`, `plot`; `protocol`, `topology`; `sim`;
//! `observe`, `check`; `family`; `run`; `replay`, `results`; `registry`; `conformance`,
//! `params`; `sweep`; `report`; `cli`.
//!
//! ```text
//! traces/*.tcl, *.movements[.gz] ─┐
//! random-waypoint generator ──────┴─► Trace ──► LinkTimeline ──► Simulation<P: Protocol> ──► RunOutput ──► Store ──► Aggregate ──► Figures ──► Report
//!                                    mobility     topology        sim + protocol + observe     run         results    results       report      report
//! analysis/*.toml ──► Plan (sweep) ──► executor / --shard / Slurm ──┘                                  analysis/*.figures.toml ──┘
//! ```
//!
//! - [`input`]: located errors and warnings (`file:line: field: message`) for everything
//!   a user hands us; the CLI turns them into exit code 2.
//! - [`output`]: atomic file writes (temporary file, fsync, rename).
//! - [`memory`]: handing freed memory back to the OS between a sweep's chunks and files.
//! - [`prefetch`]: asking the processor to load the next events' node states early (large
//!   networks); it changes no value, only how long loads take.
//! - [`mobility::trace`]: the model: per-node piecewise-linear legs tiling `[0, duration]`.
//! - [`mobility::ns2`]: ns-2 `setdest` reader (tolerant, validated) and writer; footer.
//! - [`mobility::bonnmotion`]: BonnMotion `.movements[.gz]` + `.params` reader and writer.
//! - [`mobility::format`]: picks the reader or writer from a file name.
//! - [`mobility::activity`]: SUMO activity files (when each node exists), read beside a
//!   trace.
//! - [`mobility::rwp`]: seeded random-waypoint generator (classic and stationary start)
//!   and the analytic formulas used as test oracles.
//! - [`topology::events`]: exact link up/down events (closed-form per leg pair,
//!   sort-and-sweep over time windows) and the t = 0 neighbour sets.
//! - [`topology::components`]: connected components under link changes.
//! - [`topology::stats`]: mobility statistics (link changes, degree, components, speed).
//! - [`protocol`]: the sans-IO `Protocol` trait, `Ctx` effects, view traits, algorithm
//!   parameters (`config`) and a hand-driven test harness; one file per algorithm
//!   (`le_malpani`, `le_tora5`, `le_ingram`, `me_rl`, `me_krl`, `me_raymond`,
//!   `route_gb` with full and partial reversal).
//! - [`registry`]: the algorithms a process knows (name, description, family,
//!   parameters, runner, checker, replayer): the built-ins plus any a user adds
//!   ([`registry::Registry`], [`cli::main_with`]); everything that lists or runs
//!   algorithms reads it.
//! - [`family`]: problem families (leader election, mutual exclusion, routes to a
//!   destination), each one value in one file: its metrics (column, label, kind,
//!   support), its per-event table with typed columns, its workload need, report
//!   defaults and check policy, and how it watches, summarises, checks and draws runs of
//!   any protocol with its view trait (`Watches`); the types are in `family::def`.
//! - [`conformance`]: each family's property-test suite, run on every built-in
//!   algorithm by linkrev's tests and on a user's own algorithm by theirs.
//! - [`graph`]: breadth-first search on adjacency lists (BFS forests for initial
//!   states, shortest paths for routing).
//! - [`sim`]: integer-nanosecond event queue, the network model (delays, FIFO links,
//!   link-break and topology-change semantics, routed sends) and the CS workload.
//! - [`observe`]: metric collectors and safety monitors (leader election, mutual
//!   exclusion, routes), counting violations with a reproducer.
//! - [`stats`]: confidence intervals by method (Student-t, bootstrap, Wilson,
//!   Clopper–Pearson, delta method), each inside its metric's support, and the
//!   sequential stopping rule for a precision target, and their coverage measured by
//!   simulation (`stats::coverage`).
//! - [`params`]: run parameters written as text (flags, spec values) and their defaults,
//!   shared by `linkrev run` and sweep specs.
//! - [`sweep`]: experiment specs (TOML) expanded into a plan of keyed, seeded runs; the
//!   parallel, resumable executor; sequential sweeps that stop each point at a
//!   precision target; trace fingerprints; Slurm array scripts.
//! - [`results`]: run records as polars DataFrames, the Parquet store (atomic chunks,
//!   streaming compaction) and aggregation with confidence intervals.
//! - [`plot`]: line charts (SVG, PNG, CSV of the plotted points, pgfplots) with a
//!   colour-blind-safe palette, per-series markers, confidence-interval error bars or
//!   bands, staircases for empirical CDFs and a reference line for differences.
//! - [`report`]: figure specs (TOML) applied to results directories, and the HTML
//!   report with the figures, the tables behind them, the specs and safety totals.
//! - [`run`]: what one run produces: the summary (common fields plus the family's
//!   metrics) and per-event records; `run::runner`, the one generic run of every
//!   family.
//! - [`check`]: exhaustive checking of small configurations (stateright): the model
//!   over the protocol code (`state`, `model`), symmetry reduction, seeded random
//!   executions for larger graphs (`random`), small graphs, and
//!   the scenario files that replay its executions; the properties come from the
//!   families.
//! - [`replay`]: one run recorded as per-event deltas (a recorder beside the monitors)
//!   and written as a self-contained HTML page that animates it; the slides' worked
//!   examples as built-in scenarios.
//! - [`cli`]: the `linkrev` command line; `src/main.rs` only calls [`cli::main`].
//!
//! Why the layers are in this order, and the network model and metric definitions the
//! code refers to, are in the book's design page (`docs/src/explanation/design.md`).

/// Index of a node: nodes are always numbered `0..n` without gaps, in traces, in the
/// topology and in protocols alike.
pub type NodeId = u32;

/// The most nodes a run may have. The largest networks studied with link reversal have
/// thousands of nodes (the random-waypoint oracles sample 250,000 positions); ten million
/// would need gigabytes before the first event (a typo, or a node id that is a hash), so
/// the trace readers and the generator refuse more than a million with a message, and
/// protocols may store a node id in fewer bits than a [`NodeId`] has.
pub const MAX_NODES: usize = 1_000_000;

pub mod check;
pub mod cli;
pub mod conformance;
pub mod coverage;
pub mod family;
pub mod graph;
pub mod input;
pub mod memory;
pub mod mobility;
pub mod observe;
pub mod output;
pub mod output_dir;
pub mod params;
pub mod plot;
pub mod prefetch;
pub mod protocol;
pub mod registry;
pub mod replay;
pub mod report;
pub mod results;
pub mod run;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod topology;

/// The book's pages (`docs/src`), included so that `cargo test` compiles and runs their
/// Rust examples as doctests: a page whose code no longer builds fails the tests.
#[cfg(doctest)]
mod book {
    macro_rules! pages {
        ($($name:ident = $path:literal;)*) => {$(
            #[doc = include_str!(concat!("../docs/src/", $path))]
            struct $name;
        )*};
    }
    pages! {
        Introduction = "introduction.md";
        AddVariant = "how-to/add-variant.md";
        OwnCrate = "how-to/own-crate.md";
        AddFamily = "how-to/add-family.md";
    }
}
