//! `linkrev bench`: speed measurements any user can reproduce, each reported next to a
//! baseline run in the same process (these machines are noisy; ratios travel).

use super::Outcome;
use super::run_cmd::parse_rwp_spec;
use crate::mobility::rwp;
use crate::params::{self, AreaShape};
use crate::registry::Algorithm;
use crate::registry::simulate;
use crate::sim::hold::{self, HoldDelay};
use crate::sim::seeds::{self, Purpose};
use crate::topology::events::{link_limit, try_link_timeline};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Hold model through linkrev's event queue vs a bare BinaryHeap loop.
    Engine(EngineArgs),
    /// Events per second of every registered algorithm with every monitor on (50 nodes ×
    /// 900 s).
    Protocols(ProtocolArgs),
    /// Events per second of every registered algorithm as the network grows (50, 200,
    /// 800 and 1,600 nodes at the density of 50 nodes in 1500 m × 300 m, square areas,
    /// 300 s, every monitor on, fastest of 3 rounds that take turns, short runs repeated to fill
    /// 0.1 s): whether the cost of an event grows with the network.
    Scale(ScaleArgs),
    /// States per second of the model checker (`linkrev check`): stateright's
    /// breadth-first search on 1 and 2 threads vs a plain HashSet-and-queue search of the
    /// same model in the same process.
    Check(CheckBenchArgs),
    /// How often the intervals the studies print hold the truth, on linkrev's own
    /// metrics: each harness point's first R replications are run as its study runs
    /// them, their statistic is the truth, and each procedure the study uses (its fixed
    /// count, or its sequential rule) is applied to disjoint blocks of them. Prints each
    /// procedure's coverage with its Clopper–Pearson interval over the blocks.
    Coverage(CoverageArgs),
}

#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// The directory holding the shipped studies' specs.
    #[arg(long, default_value = "analysis")]
    pub analysis: std::path::PathBuf,
    /// A harness point to measure (repeatable; all by default): wait-low-load,
    /// wait-restricted, wait-paired, msgs-per-cs, storms, violations-rare,
    /// reversals-near-zero.
    #[arg(long = "point")]
    pub points: Vec<String>,
    /// Replications in each point's reference sample: 10 to 100,000.
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u32).range(10..=100_000))]
    pub replications: u32,
    /// Worker threads (runs are parallel; each run is sequential): default all cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Keep each point's reference sample in this directory (one JSON file per study
    /// point) and reuse it while its study's spec and linkrev's version are unchanged:
    /// a second measurement of the procedures, or one with more replications, runs
    /// only the replications missing. Delete it after changing a metric's code.
    #[arg(long, value_name = "DIR")]
    pub samples: Option<std::path::PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckBenchArgs {
    /// Algorithm checked.
    #[arg(long, default_value = "me-rl", value_parser = Algorithm::value_parser())]
    pub algo: Algorithm,
    /// Starting graph.
    #[arg(long, default_value = "ring:4")]
    pub graph: String,
    #[arg(long, default_value_t = 2)]
    pub changes: u8,
    #[arg(long, default_value_t = 2)]
    pub requests: u8,
    #[arg(long, default_value_t = 11)]
    pub max_depth: usize,
    /// The most states each search generates (the plain search: stores), as for
    /// `linkrev check`; with the memory bound below, what keeps a deep bound finite.
    #[arg(long, default_value_t = 1_000_000)]
    pub max_states: usize,
    /// The most resident memory a search may take, as for `linkrev check` (default:
    /// half of the memory the process may use).
    #[arg(long, value_name = "SIZE", value_parser = super::check_cmd::parse_size)]
    pub max_memory: Option<u64>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CheckBenchResult {
    search: &'static str,
    states: usize,
    wall_time_s: f64,
    states_per_s: f64,
    /// States per second relative to the plain search.
    relative_to_plain: f64,
    /// Peak resident memory the search added, over its distinct states: what a state
    /// costs with the visited set and the queue (`None` where the kernel cannot say).
    bytes_per_state: Option<f64>,
}

/// Runs `search` (which returns its distinct states) and measures the peak resident
/// memory it added, per state.
fn measured<T>(search: impl FnOnce() -> (usize, T)) -> (usize, T, Option<f64>) {
    crate::memory::return_freed_memory();
    let reset = crate::memory::reset_peak();
    let before = crate::memory::resident().map(|(now, _)| now);
    let (states, out) = search();
    let peak = crate::memory::resident().map(|(_, peak)| peak);
    let per_state = match (reset, before, peak) {
        (true, Some(before), Some(peak)) if states > 0 => {
            Some(peak.saturating_sub(before) as f64 / states as f64)
        }
        _ => None,
    };
    (states, out, per_state)
}

#[derive(Debug, Args)]
pub struct ScaleArgs {
    /// Network sizes, comma-separated; the area grows with them at constant density.
    #[arg(long, value_delimiter = ',', default_value = "50,200,800,1600")]
    pub nodes: Vec<usize>,
    /// The area's shape: a square grows the mean degree 1.35× from 50 to 1,600 nodes, a
    /// 5:1 strip 1.73× (fewer nodes near its edges as it widens).
    #[arg(long, value_enum, default_value_t = AreaShape::Square)]
    pub shape: AreaShape,
    /// Simulated seconds per run.
    #[arg(long, default_value_t = 300.0)]
    pub duration: f64,
    /// CS requests per second per node.
    #[arg(long, default_value_t = 0.1)]
    pub rate: f64,
    #[arg(long, default_value_t = 3)]
    pub seed: u64,
    /// Algorithms to measure, comma-separated (default: every registered one).
    #[arg(long, value_delimiter = ',', value_parser = Algorithm::value_parser())]
    pub algo: Vec<Algorithm>,
    /// Rounds, each measuring every algorithm at every size once, in turn (a run
    /// repeated until 0.1 s have passed); per algorithm and size the fastest
    /// measurement counts (the others met a busier machine: the runs are identical).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: u32,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ScaleResult {
    algorithm: &'static str,
    nodes: usize,
    /// The area, metres.
    width_m: f64,
    height_m: f64,
    /// Events of one run.
    events: u64,
    /// Topology changes applied in one run. Their share of the events grows with the
    /// network (4.4% of me-rl's events at 50 nodes, 26% at 1,600): random waypoint
    /// nodes in a larger area spend less of their time paused, so each node's links
    /// change about twice as often, and a change costs more than a delivery.
    topology_changes: u64,
    /// Wall time of one run: the fastest window's mean.
    wall_time_s: f64,
    /// Runs in the fastest window ([`MIN_WINDOW_S`]).
    runs_per_window: u32,
    events_per_s: f64,
    /// Events per second relative to the same algorithm at the smallest size.
    relative_to_smallest: f64,
}

/// The most events `bench engine` keeps pending: some 320 MB in its two queues.
const MAX_PENDING: usize = 10_000_000;

#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Events kept pending: 1 to 10,000,000 (about 32 bytes each in the two queues).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=MAX_PENDING as u64))]
    pub pending: u64,
    /// Events processed per measurement: 1 to 1,000,000,000.
    #[arg(long, default_value_t = 5_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub events: u64,
    /// Measurements per loop, taking turns; the best of each is kept: 1 to 100.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub repeats: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProtocolArgs {
    /// Mobility, as for `linkrev run --rwp`.
    #[arg(
        long,
        default_value = "nodes=50,area=1500x300,speed=1:20,pause=30,duration=900"
    )]
    pub rwp: String,
    /// CS requests per second per node.
    #[arg(long, default_value_t = 0.1)]
    pub rate: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ProtocolResult {
    algorithm: &'static str,
    family: &'static str,
    events: u64,
    wall_time_s: f64,
    events_per_s: f64,
    safety_violations: u64,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<Outcome> {
    match cmd {
        BenchCommand::Engine(args) => engine(args),
        BenchCommand::Protocols(args) => protocols(args),
        BenchCommand::Scale(args) => scale(args),
        BenchCommand::Check(args) => check(args),
        BenchCommand::Coverage(args) => coverage(args),
    }
}

/// `bench check`: the model checker's states per second against a plain search.
fn check(args: CheckBenchArgs) -> anyhow::Result<Outcome> {
    use crate::check::{self, CheckSetup, graph::SmallGraph};
    use crate::family::{MutualExclusion, Watches};
    use crate::protocol::me_rl::Rl;
    let graph = SmallGraph::parse(&args.graph)
        .map_err(|e| crate::input::InputError::parameter("graph", e))?;
    let requests = if args.algo.family().needs_workload() {
        args.requests
    } else {
        0
    };
    let max_memory = super::check_cmd::memory_bound(args.max_memory)?;
    let setup = |threads, partial_order| CheckSetup {
        graph: graph.clone(),
        changes: args.changes,
        change_mode: crate::sim::ChangeMode::Overlap,
        requests,
        max_depth: args.max_depth,
        max_states: args.max_states,
        max_memory,
        threads,
        // The plain search explores the full state space: compare like with like.
        symmetry: false,
        renormalize: false,
        partial_order,
        persistent_sets: crate::check::PersistentSets::Off,
        abstract_gaps: false,
        cut_off: false,
        strategy: crate::check::Strategy::Exhaustive,
        connected: false,
        progress: None,
    };
    // The plain search needs the model's type: RL, the default and heaviest.
    let plain = (args.algo.name() == "me-rl").then(|| {
        let config = crate::protocol::TokenStart::default();
        let model = <MutualExclusion as Watches<Rl>>::model(config, &setup(1, false));
        measured(|| {
            let started = std::time::Instant::now();
            // `max_depth` actions, as the checker's own search explores.
            let states = check::naive_bfs(&model, args.max_depth, args.max_states);
            (states, started.elapsed().as_secs_f64())
        })
    });
    let mut rows = Vec::new();
    let base = plain.map(|(states, secs, _)| states as f64 / secs);
    if let Some((states, secs, bytes)) = plain {
        rows.push(CheckBenchResult {
            search: "plain BFS (HashSet + queue)",
            states,
            wall_time_s: secs,
            states_per_s: states as f64 / secs,
            relative_to_plain: 1.0,
            bytes_per_state: bytes,
        });
    }
    // One thread runs the checker's own search (every state stored, for the liveness
    // pass), with and without sleep sets; two run stateright's (fingerprints only; it
    // also stores the states one action beyond the bound, unjudged).
    for (threads, partial_order, name) in [
        (1, false, "own BFS, 1 thread"),
        (1, true, "own BFS + sleep sets, 1 thread"),
        (2, false, "stateright BFS, 2 threads"),
    ] {
        let (states, seconds, bytes) = measured(|| {
            let report = args
                .algo
                .check(&args.algo.default_params(), &setup(threads, partial_order));
            (report.states, report.seconds)
        });
        let rate = states as f64 / seconds;
        rows.push(CheckBenchResult {
            search: name,
            states,
            wall_time_s: seconds,
            states_per_s: rate,
            relative_to_plain: base.map_or(f64::NAN, |b| rate / b),
            bytes_per_state: bytes,
        });
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        outln!(
            "{} on {}, {} changes, {requests} requests, depth {}",
            args.algo.name(),
            graph.name,
            args.changes,
            args.max_depth
        );
        outln!(
            "{:<30} {:>10} {:>9} {:>12} {:>9} {:>12}",
            "search",
            "states",
            "wall s",
            "states/s",
            "vs plain",
            "bytes/state"
        );
        for r in &rows {
            let bytes = r
                .bytes_per_state
                .map_or_else(|| "-".to_string(), |b| format!("{b:.0}"));
            outln!(
                "{:<30} {:>10} {:>9.3} {:>12.0} {:>8.2}x {bytes:>12}",
                r.search,
                r.states,
                r.wall_time_s,
                r.states_per_s,
                r.relative_to_plain
            );
        }
    }
    Ok(Outcome::Success)
}

fn scale(args: ScaleArgs) -> anyhow::Result<Outcome> {
    let mut networks = Vec::new();
    for &nodes in &args.nodes {
        let params = params::scale_rwp(
            nodes,
            args.shape,
            args.duration,
            seeds::derive(args.seed, Purpose::Mobility),
        );
        let area = (params.area.width, params.area.height);
        let trace = rwp::generate(&params)?;
        if let Some(problem) =
            crate::sim::workload::requests_problem(nodes, args.rate, trace.duration)
        {
            return Err(crate::input::InputError::parameter("rate", problem).into());
        }
        let timeline = try_link_timeline(&trace, 250.0, link_limit()?)
            .map_err(|e| crate::input::InputError::parameter("nodes", e.to_string()))?;
        networks.push((nodes, area, trace.duration, timeline));
    }
    // The repeats take turns: each round runs every algorithm at every size once, so a
    // busy stretch of the machine slows one run of many cells rather than every run of
    // one cell (on a shared 2-core machine large runs varied by 40% between minutes).
    let algorithms: Vec<Algorithm> = Algorithm::all()
        .filter(|a| args.algo.is_empty() || args.algo.contains(a))
        .collect();
    // Per (size, algorithm): the fastest window.
    let mut fastest: Vec<Option<Window>> = vec![None; networks.len() * algorithms.len()];
    for round in 1..=args.repeats {
        for (size, (nodes, (w, h), duration, timeline)) in networks.iter().enumerate() {
            for (a, &algorithm) in algorithms.iter().enumerate() {
                if !args.json {
                    eprintln!(
                        "round {round}/{}: {nodes} nodes ({w} m × {h} m), {} …",
                        args.repeats,
                        algorithm.name()
                    );
                }
                let config = params::bench_config(algorithm, args.rate, *duration, args.seed);
                let window = Window::measure(|| simulate(algorithm, timeline, config.clone()));
                let best = &mut fastest[size * algorithms.len() + a];
                if best.is_none_or(|b| window.wall_per_run() < b.wall_per_run()) {
                    *best = Some(window);
                }
            }
        }
    }
    let mut results: Vec<ScaleResult> = Vec::new();
    for (size, (nodes, (width_m, height_m), ..)) in networks.iter().enumerate() {
        for (a, &algorithm) in algorithms.iter().enumerate() {
            let window = fastest[size * algorithms.len() + a].expect("at least one round");
            let events_per_s = window.events as f64 / window.wall_per_run().max(1e-9);
            let smallest = results
                .iter()
                .find(|r| r.algorithm == algorithm.name())
                .map_or(events_per_s, |r| r.events_per_s);
            results.push(ScaleResult {
                algorithm: algorithm.name(),
                nodes: *nodes,
                width_m: *width_m,
                height_m: *height_m,
                events: window.events,
                topology_changes: window.topology_changes,
                wall_time_s: window.wall_per_run(),
                runs_per_window: window.runs,
                events_per_s,
                relative_to_smallest: events_per_s / smallest,
            });
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        outln!(
            "{:<12} {:>6} {:>10} {:>8} {:>9} {:>5} {:>12} {:>9}",
            "algorithm",
            "nodes",
            "events",
            "changes",
            "wall s",
            "runs",
            "events/s",
            "vs first"
        );
        for algorithm in &algorithms {
            for r in results.iter().filter(|r| r.algorithm == algorithm.name()) {
                outln!(
                    "{:<12} {:>6} {:>10} {:>7.1}% {:>9.4} {:>5} {:>12.0} {:>8.2}×",
                    r.algorithm,
                    r.nodes,
                    r.events,
                    100.0 * r.topology_changes as f64 / r.events.max(1) as f64,
                    r.wall_time_s,
                    r.runs_per_window,
                    r.events_per_s,
                    r.relative_to_smallest
                );
            }
        }
    }
    Ok(Outcome::Success)
}

/// Shortest stretch of wall time one measurement of `bench scale` covers. A 50-node run
/// takes a few milliseconds and a 1,600-node run up to seconds; the fastest of a few
/// few-millisecond runs catches the machine's best moment far more easily than the
/// fastest of a few long ones, which biased every 1,600/50 ratio down on a busy
/// machine (the book's performance page). Repeating a short run until this much time has passed
/// makes the two sizes' measurements windows of comparable length.
const MIN_WINDOW_S: f64 = 0.1;

/// Identical runs of one algorithm at one size, back to back, filling at least
/// [`MIN_WINDOW_S`] (a longer run fills it alone).
#[derive(Clone, Copy)]
struct Window {
    /// Events of one run (every run of a window is the same run).
    events: u64,
    /// Topology changes applied in one run.
    topology_changes: u64,
    runs: u32,
    /// Wall time of the whole window, the simulations' own (`RunSummary::wall_time_s`).
    wall_s: f64,
}

impl Window {
    fn measure(mut run: impl FnMut() -> crate::run::RunOutput) -> Window {
        let mut window = Window {
            events: 0,
            topology_changes: 0,
            runs: 0,
            wall_s: 0.0,
        };
        // The cap ends a window of runs too short for the clock to see.
        while window.wall_s < MIN_WINDOW_S && window.runs < 1_000 {
            let summary = run().summary;
            window.events = summary.events;
            window.topology_changes = summary.topology_changes;
            window.runs += 1;
            window.wall_s += summary.wall_time_s;
        }
        window
    }

    fn wall_per_run(&self) -> f64 {
        self.wall_s / f64::from(self.runs)
    }
}

fn engine(args: EngineArgs) -> anyhow::Result<Outcome> {
    let results: Vec<_> = [HoldDelay::Uniform1000, HoldDelay::Exponential500]
        .into_iter()
        .map(|delay| {
            if !args.json {
                eprintln!(
                    "hold model, {delay:?} delays: {} events, {} pending …",
                    args.events, args.pending
                );
            }
            hold::measure(
                args.pending as usize,
                args.events,
                delay,
                args.repeats as usize,
            )
        })
        .collect();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        outln!(
            "{:<16} {:>16} {:>16} {:>8}",
            "delay",
            "linkrev ev/s",
            "bare heap ev/s",
            "ratio"
        );
        for r in &results {
            let name = match r.delay {
                HoldDelay::Uniform1000 => "uniform 0-1000ns",
                HoldDelay::Exponential500 => "exp mean 500ns",
            };
            outln!(
                "{name:<16} {:>16.0} {:>16.0} {:>7.1}%",
                r.events_per_s,
                r.bare_events_per_s,
                100.0 * r.ratio
            );
        }
    }
    Ok(Outcome::Success)
}

fn protocols(args: ProtocolArgs) -> anyhow::Result<Outcome> {
    let params = parse_rwp_spec(&args.rwp, args.seed)?;
    // Bounded as `linkrev run` is: the same limits on links and requests.
    let trace = rwp::generate(&params)?;
    if let Some(problem) =
        crate::sim::workload::requests_problem(trace.node_count(), args.rate, trace.duration)
    {
        return Err(crate::input::InputError::parameter("rate", problem).into());
    }
    let timeline = try_link_timeline(&trace, 250.0, link_limit()?)
        .map_err(|e| crate::input::InputError::parameter("rwp", e.to_string()))?;
    let mut results = Vec::new();
    for algorithm in Algorithm::all() {
        let config = params::bench_config(algorithm, args.rate, trace.duration, args.seed);
        if !args.json {
            eprintln!("{} …", algorithm.name());
        }
        let s = simulate(algorithm, &timeline, config).summary;
        results.push(ProtocolResult {
            algorithm: algorithm.name(),
            family: algorithm.family().name(),
            events: s.events,
            wall_time_s: s.wall_time_s,
            events_per_s: s.events as f64 / s.wall_time_s,
            safety_violations: s.safety_violations,
        });
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        outln!(
            "{:<14} {:<18} {:>10} {:>10} {:>14}",
            "algorithm",
            "family",
            "events",
            "wall s",
            "events/s"
        );
        for r in &results {
            outln!(
                "{:<14} {:<18} {:>10} {:>10.3} {:>14.0}",
                r.algorithm,
                r.family,
                r.events,
                r.wall_time_s,
                r.events_per_s
            );
        }
    }
    Ok(Outcome::Success)
}

/// `bench coverage`: the coverage harness ([`crate::coverage`]).
fn coverage(args: CoverageArgs) -> anyhow::Result<Outcome> {
    use crate::coverage::{Procedure, harness_points, measure, run_reference};
    let all = harness_points();
    let chosen: Vec<_> = if args.points.is_empty() {
        all.iter().collect()
    } else {
        let mut chosen = Vec::new();
        for name in &args.points {
            let point = all.iter().find(|p| p.name == name).ok_or_else(|| {
                let names: Vec<&str> = all.iter().map(|p| p.name).collect();
                crate::input::InputError::parameter(
                    "point",
                    format!(
                        "no harness point {name}; the points are {}",
                        names.join(", ")
                    ),
                )
            })?;
            chosen.push(point);
        }
        chosen
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()?;
    if let Some(dir) = &args.samples {
        crate::output::ensure_writable_dir(dir)
            .map_err(|e| anyhow::anyhow!("--samples {}: {e}", dir.display()))?;
    }
    let mut rows = Vec::new();
    for point in chosen {
        if !args.json {
            eprintln!(
                "{}: {} replications of {} at {} …",
                point.name,
                args.replications,
                point.study,
                point.at.join("/")
            );
        }
        let progress = super::sweep_cmd::CliProgress::new(None);
        let sample = pool.install(|| {
            run_reference(
                point,
                &args.analysis,
                args.replications,
                args.samples.as_deref(),
                &progress,
            )
        })?;
        for procedure in Procedure::for_point(point, &sample) {
            rows.push(measure(point, &sample, &procedure, 0.95)?);
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(Outcome::Success);
    }
    outln!(
        "| point | statistic | method | procedure | truth (±95%) | blocks | mean n | median half-width | coverage (95% CI) | claimed: covered |"
    );
    outln!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let claimed = match r.claimed {
            0 => "none".to_string(),
            c => format!("{c}: {:.3}", f64::from(r.claimed_covered) / f64::from(c)),
        };
        outln!(
            "| {} | {} | {} | {} | {:.4} ± {:.4} | {} | {:.1} | {:.4} | {:.3} [{:.3}, {:.3}] | {} |",
            r.point,
            r.statistic,
            r.method,
            r.procedure,
            r.truth,
            r.truth_half_width,
            r.blocks,
            r.mean_n,
            r.median_half_width,
            r.coverage,
            r.coverage_low,
            r.coverage_high,
            claimed
        );
    }
    Ok(Outcome::Success)
}
