//! `linkrev check`: exhaustive checking of a small configuration ([`crate::check`]).

use super::Outcome;
use super::run_cmd::algorithm_params;
use crate::check::graph::{SmallGraph, labelled_connected_graphs};
use crate::check::scenario::Scenario;
use crate::check::{
    CheckReport, CheckSetup, PersistentSets, ProgressHook, SearchProgress, Strategy, Verdict,
};
use crate::input::InputError;
use crate::output::write_atomically;
use crate::protocol::AlgoParams;
use crate::registry::Algorithm;
use crate::sim::ChangeMode;

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Algorithm to check (`linkrev algorithms` lists them).
    #[arg(long, value_parser = Algorithm::value_parser(), required_unless_present = "table")]
    pub algo: Option<Algorithm>,
    /// An algorithm parameter, KEY=VALUE (repeatable), e.g. --param k=2.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// The starting graph: path:N, ring:N, star:N, complete:N, grid:RxC (2 to 8 nodes),
    /// or a file of `a b` edges.
    #[arg(long, required_unless_present = "table")]
    pub graph: Option<String>,
    /// Instead of one check: every registered algorithm on every connected labelled
    /// 4-node graph (38) and on path:5 and ring:5, with 1, 2 and 3 changes (the table
    /// in the book's algorithms page), printed as Markdown. --max-depth applies; --requests defaults to 2 for
    /// mutual exclusion. With --algo, only that algorithm's rows, with its --param values
    /// (a variant's rows without the hour the whole table takes).
    #[arg(long, conflicts_with_all = ["graph", "json", "out"])]
    pub table: bool,
    /// Topology changes: any K link failures or formations among all pairs of nodes.
    #[arg(long, default_value_t = 1)]
    pub changes: u8,
    /// overlap: a change may happen while messages are in flight; serialize: only when
    /// none is (the leader-election paper's assumption, the simulator's `--changes`);
    /// connected: as overlap, but a link goes down only if the graph stays connected
    /// (link reversal then converges: routes get a verdict). Default: the family's own,
    /// as in --table: serialize for leader election, overlap for the others.
    #[arg(long = "changes-mode", value_enum)]
    pub change_mode: Option<CheckChanges>,
    /// CS requests to issue (mutual exclusion), at any nodes, at any time.
    #[arg(long, default_value_t = 0)]
    pub requests: u8,
    /// The most actions on one execution; longer ones are cut, and a property not
    /// violated within the bound is reported unknown. Finite state spaces close well
    /// within the default; an infinite one is cut by --max-states first.
    #[arg(long, default_value_t = 100)]
    pub max_depth: usize,
    /// The most states to generate, repeats included (about a kilobyte of memory per
    /// distinct state); beyond it the search stops and properties not violated are
    /// unknown.
    #[arg(long, default_value_t = 1_000_000)]
    pub max_states: usize,
    /// The most resident memory the search may take: bytes, or with K, M or G (powers
    /// of 1024), e.g. 4G. Past it the search admits no new state and ends, and
    /// properties not violated are unknown ("search cut at the memory bound"), where
    /// the process would otherwise be killed. Default: half of the memory the process
    /// may use (the machine's, or its cgroup's limit, whichever is smaller). Not with
    /// --table, whose parallel checks share one process's memory.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with = "table")]
    pub max_memory: Option<u64>,
    /// Checker threads. With 1 (the default) each violation found is a shortest one.
    #[arg(long, default_value_t = 1, value_parser = super::thread_count)]
    pub threads: usize,
    /// Symmetry reduction: explore states that differ only by a renaming of the nodes
    /// once. Applies only to algorithms whose rules never compare node ids (Raymond);
    /// the link-reversal algorithms break ties by id and are always explored in full.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub symmetry: OnOff,
    /// Renormalization: explore once the states that differ only by a shift of their
    /// heights (per component once no change remains, or, with serialize, none can
    /// come because the network is never quiet again), so that a component that
    /// reverses for ever closes into a cycle (me-rl, me-krl, gb-full, gb-partial:
    /// their rules only compare heights and step them by constants), or by an
    /// order-keeping renaming of their time stamps (le-malpani, le-tora5).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub renormalize: OnOff,
    /// Partial-order reduction by sleep sets (with one thread): an order of two steps at
    /// different nodes that leads to a state already reached is not tried again. The
    /// same states are visited and every verdict is the same; fewer transitions are
    /// generated, which is what --max-states counts. Off under symmetry reduction.
    #[arg(long = "partial-order", value_enum, default_value_t = OnOff::On)]
    pub partial_order: OnOff,
    /// A second try with persistent sets when the search is cut by --max-states or
    /// --max-depth (me-rl, me-krl, changes overlapping traffic, one thread): once every
    /// change and request is spent, only the steps of a set of nodes that no other step
    /// can disturb are taken from a state, when they change no property's judgement.
    /// Fewer states; the budget applies to each search, and the second's verdicts are
    /// taken only if it closes. `always`: the only search (a violation it finds is the
    /// shortest in the reduced graph, not necessarily overall); `off`: never.
    #[arg(long = "persistent-sets", value_enum, default_value_t = PersistentArg::WhenCut)]
    pub persistent_sets: PersistentArg,
    /// Level-gap abstraction (me-rl, me-krl, gb-full, gb-partial, with changes that
    /// overlap traffic and one thread): two runs of heights at least 2 levels apart are
    /// explored once whatever the distance, which closes the searches where a token or
    /// height in flight holds still while a component rises. An over-approximation:
    /// "holds" is still a proof; a violation found is reported only if it replays on the
    /// real system, otherwise the verdict is unknown and says so. With sleep sets, some
    /// abstract states may be skipped, never one that a real state maps to.
    #[arg(long = "abstract-gaps", value_enum, default_value_t = OnOff::On)]
    pub abstract_gaps: OnOff,
    /// Parts cut off for good (me-rl, me-krl, with renormalization): once no change
    /// remains, a component that holds no token is frozen, since no property reads it
    /// again; its nodes may otherwise reverse for ever and pile messages up. Exact: the
    /// same verdicts, fewer states.
    #[arg(long = "cut-off", value_enum, default_value_t = OnOff::On)]
    pub cut_off: OnOff,
    /// exhaustive: every execution within the bounds (a property may hold); random:
    /// --executions random executions, for graphs too large to close (6 to 10 nodes),
    /// reported as "no violation in N executions", never "holds" (an execution that
    /// comes back to a state it passed has run a cycle, judged for the eventually
    /// properties).
    #[arg(long, value_enum, default_value_t = StrategyArg::Exhaustive)]
    pub strategy: StrategyArg,
    /// Random executions to run (with --strategy random).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub executions: u64,
    /// Seed of the random executions (with --strategy random): the same seed, the same
    /// executions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write `check.json`, and per violation `<property>.txt` (its steps) and
    /// `<property>.scenario`, which `linkrev run --scenario` replays through the
    /// simulator.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Which topology changes the checker makes (`--changes-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckChanges {
    /// A change may happen while messages are in flight.
    Overlap,
    /// A change only when no message is in flight.
    Serialize,
    /// As overlap, keeping the graph connected.
    Connected,
}

/// How the executions are explored (`--strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StrategyArg {
    /// Every execution within the bounds.
    Exhaustive,
    /// Seeded random executions.
    Random,
}

/// When persistent sets are used ([`PersistentSets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PersistentArg {
    /// Never.
    Off,
    /// In a second search, when the first is cut by its budget.
    WhenCut,
    /// In the only search.
    Always,
}

impl From<PersistentArg> for PersistentSets {
    fn from(arg: PersistentArg) -> Self {
        match arg {
            PersistentArg::Off => PersistentSets::Off,
            PersistentArg::WhenCut => PersistentSets::WhenCut,
            PersistentArg::Always => PersistentSets::Always,
        }
    }
}

/// A switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// How long a check runs before its first progress line, and between two lines.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// The progress lines of one check on stderr: none for a check that ends within
/// [`PROGRESS_INTERVAL`], then one at most every interval, and one as each liveness pass
/// starts (no count moves while it runs).
fn progress_printer() -> ProgressHook {
    let started = Instant::now();
    // When the last line was printed; `None` before the first.
    let last: Mutex<Option<Instant>> = Mutex::new(None);
    ProgressHook {
        every: crate::check::PROGRESS_EVERY,
        tell: Arc::new(move |at: &SearchProgress| {
            let mut last = last.lock().expect("progress lock");
            let quiet_for = last.unwrap_or(started).elapsed();
            let starts_liveness = matches!(at, SearchProgress::Liveness { .. });
            if quiet_for < PROGRESS_INTERVAL && !(starts_liveness && last.is_some()) {
                return;
            }
            *last = Some(Instant::now());
            let resident = crate::memory::resident()
                .map(|(now, _)| format!(", {} resident", human_bytes(now)))
                .unwrap_or_default();
            eprintln!(
                "{:>7.1} s  {}{resident}",
                started.elapsed().as_secs_f64(),
                progress_line(at)
            );
        }),
    }
}

/// What a progress line says of `at`.
fn progress_line(at: &SearchProgress) -> String {
    let percent = |done: f64, of: f64| 100.0 * done / of.max(1.0);
    match *at {
        SearchProgress::Search {
            persistent,
            states,
            generated,
            max_states,
            depth,
        } => format!(
            "{}: {states} states, {generated} of {max_states} transitions ({:.0} %), depth {depth}",
            if persistent {
                "second search (persistent sets)"
            } else {
                "search"
            },
            percent(generated as f64, max_states as f64),
        ),
        SearchProgress::Liveness { states } => {
            format!("liveness: fair cycles among {states} stored states")
        }
        SearchProgress::Random { executions, of } => format!(
            "random: {executions} of {of} executions ({:.0} %)",
            percent(executions as f64, of as f64)
        ),
    }
}

/// `bytes` in binary units, one decimal (as `--max-memory` reads them).
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Runs the check; exit 1 when a property is violated.
pub fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    if args.table {
        out!("{}", table(&args)?);
        return Ok(Outcome::Success);
    }
    let (Some(algo), Some(graph)) = (args.algo, args.graph.as_deref()) else {
        unreachable!("clap requires --algo and --graph without --table");
    };
    let graph = SmallGraph::parse(graph).map_err(|e| InputError::parameter("graph", e))?;
    if args.requests > 0 && !algo.family().needs_workload() {
        return Err(InputError::parameter(
            "requests",
            format!(
                "{} is not a mutual-exclusion algorithm: it takes no CS requests",
                algo.name()
            ),
        )
        .into());
    }
    let params = algorithm_params(algo, &args.params)?;
    algo.check_node_ids(&params, graph.nodes)
        .map_err(|e| InputError::parameter("param", e))?;
    let change_mode =
        args.change_mode
            .unwrap_or(match algo.family().check_policy().table_changes {
                ChangeMode::Serialize => CheckChanges::Serialize,
                ChangeMode::Overlap => CheckChanges::Overlap,
            });
    let setup = CheckSetup {
        graph,
        changes: args.changes,
        change_mode: match change_mode {
            CheckChanges::Serialize => ChangeMode::Serialize,
            CheckChanges::Overlap | CheckChanges::Connected => ChangeMode::Overlap,
        },
        connected: change_mode == CheckChanges::Connected,
        requests: args.requests,
        max_depth: args.max_depth,
        max_states: args.max_states,
        max_memory: memory_bound(args.max_memory)?,
        threads: args.threads,
        symmetry: args.symmetry == OnOff::On,
        renormalize: args.renormalize == OnOff::On,
        partial_order: args.partial_order == OnOff::On,
        persistent_sets: args.persistent_sets.into(),
        abstract_gaps: args.abstract_gaps == OnOff::On,
        cut_off: args.cut_off == OnOff::On,
        strategy: match args.strategy {
            StrategyArg::Exhaustive => Strategy::Exhaustive,
            StrategyArg::Random => Strategy::Random {
                executions: args.executions,
                seed: args.seed,
            },
        },
        progress: Some(progress_printer()),
    };
    if let Some(dir) = &args.out {
        // Before the search, which may take minutes: not after it.
        crate::output::ensure_writable_dir(dir)
            .map_err(|e| InputError::file(dir, format!("cannot write here: {e}")))?;
    }
    eprintln!(
        "checking {} on {} ({} changes, {} requests, depth ≤ {})…",
        algo.name(),
        setup.graph.name,
        setup.changes,
        setup.requests,
        setup.max_depth
    );
    let report = algo.check(&params, &setup);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print_report(&report)?;
    }
    if let Some(dir) = &args.out {
        let scenario = |path: &[crate::check::model::Step]| Scenario {
            algorithm: algo.name().to_string(),
            params: args.params.clone(),
            nodes: setup.graph.nodes,
            links: setup.graph.edges.clone(),
            steps: path.to_vec(),
        };
        write_out(dir, &report, &scenario)?;
    }
    Ok(if report.violated() {
        Outcome::Mismatch
    } else {
        Outcome::Success
    })
}

fn print_report(report: &CheckReport) -> anyhow::Result<()> {
    outln!("algorithm      {}", report.algorithm);
    outln!("graph          {} {:?}", report.graph, report.edges);
    outln!(
        "budgets        {} changes ({}), {} requests",
        report.changes,
        report.change_mode,
        report.requests
    );
    let how = match report.cut_by {
        // A random check never closes the state space, cut or not.
        _ if report.strategy != "exhaustive" => String::new(),
        Some(crate::check::EVERY_PROPERTY_VIOLATED) => {
            " (search stopped: every property violated)".to_string()
        }
        Some(bound) => format!(" (search cut at the {bound})"),
        None => " (complete)".to_string(),
    };
    outln!("strategy       {}", report.strategy);
    outln!(
        "explored       {} states ({} generated), depth {} of {}{how}",
        report.states,
        report.states_generated,
        report.depth_reached,
        report.max_depth,
    );
    outln!(
        "symmetry       {}",
        if report.symmetry {
            "on: states counted up to renaming of the nodes"
        } else {
            "off"
        }
    );
    outln!(
        "renormalized   {}",
        match report.renormalized_what {
            Some(what) => format!("on: {what}"),
            None => "off".to_string(),
        }
    );
    outln!(
        "partial order  {}",
        match (report.partial_order, report.gaps_abstracted) {
            (true, false) => "on: sleep sets (the same states, fewer transitions)",
            (true, true) => {
                "on: sleep sets (every state a real one maps to, fewer transitions)"
            }
            (false, _) => "off",
        }
    );
    if report.persistent_sets && report.persistent_after.is_none() {
        outln!(
            "persistent     on: once changes and requests are spent, only steps no other can \
             disturb and no property sees (fewer states; a violation is the reduced \
             graph's shortest)"
        );
    }
    if let Some(first) = report.persistent_after {
        outln!(
            "persistent     on: the search with sleep sets alone was cut at {first} \
             transitions; the counts above are of the second, with persistent sets once \
             changes and requests are spent (fewer states), which closed"
        );
    }
    if report.cut_off {
        outln!(
            "cut off        on: once changes stop, components that hold no token are frozen \
             (no property reads them)"
        );
    }
    if report.gaps_abstracted {
        outln!(
            "abstraction    level gaps of 2 or more explored once whatever their size (an \
             over-approximation: holds is proved; a violation is reported only if it \
             replays on the real system)"
        );
    }
    outln!("time           {:.3} s", report.seconds);
    for p in &report.properties {
        let verdict = match &p.verdict {
            Verdict::Holds => "holds".to_string(),
            Verdict::Unknown => format!(
                "unknown (search cut at the {})",
                report.cut_by.unwrap_or("depth or state bound")
            ),
            Verdict::NoViolationFound { executions } => {
                format!("no violation in {executions} random executions")
            }
            Verdict::Unconfirmed { steps } => format!(
                "unknown (the gap abstraction found a violation in {} steps that does not \
                 replay on the real system)",
                steps.len()
            ),
            Verdict::Violated { steps, .. } => format!("VIOLATED in {} steps", steps.len()),
        };
        outln!("{:<38} {verdict}   [{}]", p.name, p.judged_in);
        if let Verdict::Violated { detail, steps, .. } = &p.verdict {
            for (i, step) in steps.iter().enumerate() {
                outln!("    {:>3}. {step}", i + 1);
            }
            outln!("    → {detail}");
        }
    }
    Ok(())
}

fn write_out(
    dir: &std::path::Path,
    report: &CheckReport,
    scenario: &dyn Fn(&[crate::check::model::Step]) -> Scenario,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report).context("serialising the report")?;
    let path = dir.join("check.json");
    write_atomically(&path, |w| std::io::Write::write_all(w, json.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))?;
    for p in &report.properties {
        if let Verdict::Violated { detail, steps, .. } = &p.verdict {
            let path = dir.join(format!("{}.txt", p.name));
            write_atomically(&path, |w| {
                writeln!(
                    w,
                    "# {} on {} {:?}: {} violated after {} steps: {detail}",
                    report.algorithm,
                    report.graph,
                    report.edges,
                    p.name,
                    steps.len()
                )?;
                for step in steps {
                    writeln!(w, "{step}")?;
                }
                Ok(())
            })
            .with_context(|| format!("writing {}", path.display()))?;
            let file = dir.join(format!("{}.scenario", p.name));
            let text = scenario(violation_path(p)).to_text(&format!(
                "linkrev scenario from `linkrev check`: {} on {}, {} changes ({}), {} \
                 requests: {} violated after {} steps: {detail}\nreplay: linkrev run \
                 --scenario {}",
                report.algorithm,
                report.graph,
                report.changes,
                report.change_mode,
                report.requests,
                p.name,
                steps.len(),
                file.display()
            ));
            write_atomically(&file, |w| std::io::Write::write_all(w, text.as_bytes()))
                .with_context(|| format!("writing {}", file.display()))?;
            eprintln!("replay: linkrev run --scenario {}", file.display());
        }
    }
    Ok(())
}

fn violation_path(p: &crate::check::PropertyOutcome) -> &[crate::check::model::Step] {
    match &p.verdict {
        Verdict::Violated { path, .. } => path,
        _ => &[],
    }
}

/// The book's table (algorithms page): every algorithm × graph × change budget, checked in parallel (each
/// check single-threaded, so each violation is a shortest one and the table is the
/// same on every run), summarised per algorithm, property and budget.
fn table(args: &CheckArgs) -> anyhow::Result<String> {
    use rayon::prelude::*;
    // One algorithm with the parameters given, or every one with its defaults.
    let chosen: Vec<(Algorithm, AlgoParams)> = match args.algo {
        Some(algo) => {
            let params = algorithm_params(algo, &args.params)?;
            // The smallest graph of the table has 4 nodes.
            algo.check_node_ids(&params, 4)
                .map_err(|e| InputError::parameter("param", e))?;
            vec![(algo, params)]
        }
        None if !args.params.is_empty() => {
            return Err(InputError::parameter(
                "param",
                "--param with --table needs --algo (the table's algorithms take their defaults)",
            )
            .into());
        }
        None => Algorithm::all().map(|a| (a, a.default_params())).collect(),
    };
    let mut graphs = labelled_connected_graphs(4);
    graphs.push(SmallGraph::parse("path:5").expect("a family"));
    graphs.push(SmallGraph::parse("ring:5").expect("a family"));
    let requests = if args.requests > 0 { args.requests } else { 2 };
    // Each family in its own change mode; one whose changes overlap traffic also one at
    // a time, where more state spaces are finite.
    let modes = |a: Algorithm| {
        let own = a.family().check_policy().table_changes;
        let mut modes = vec![own];
        if own == ChangeMode::Overlap {
            modes.push(ChangeMode::Serialize);
        }
        modes
    };
    let count = graphs.len();
    let jobs: Vec<(Algorithm, ChangeMode, usize, u8)> = chosen
        .iter()
        .map(|(a, _)| *a)
        .flat_map(|a| {
            modes(a).into_iter().flat_map(move |m| {
                (0..count).flat_map(move |g| (1..=3u8).map(move |c| (a, m, g, c)))
            })
        })
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let reports: Vec<CheckReport> = jobs
        .par_iter()
        .map(|&(algo, mode, g, changes)| {
            let setup = CheckSetup {
                graph: graphs[g].clone(),
                changes,
                change_mode: mode,
                requests: if algo.family().needs_workload() {
                    requests
                } else {
                    0
                },
                max_depth: args.max_depth,
                max_states: args.max_states,
                max_memory: None,
                threads: 1,
                symmetry: args.symmetry == OnOff::On,
                renormalize: args.renormalize == OnOff::On,
                partial_order: args.partial_order == OnOff::On,
                persistent_sets: args.persistent_sets.into(),
                abstract_gaps: args.abstract_gaps == OnOff::On,
                cut_off: args.cut_off == OnOff::On,
                strategy: Strategy::Exhaustive,
                connected: false,
                // Each check of the table is short; the table prints a line per check.
                progress: None,
            };
            let params = &chosen.iter().find(|(a, _)| *a == algo).expect("chosen").1;
            let report = algo.check(params, &setup);
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            eprintln!(
                "[{n}/{}] {} on {} with {changes} changes ({}): {:.1} s",
                jobs.len(),
                algo.name(),
                setup.graph.name,
                report.change_mode,
                report.seconds
            );
            report
        })
        .collect();
    let mut symmetric: Vec<String> = reports
        .iter()
        .filter(|r| r.symmetry)
        .map(|r| format!("`{}`", r.algorithm))
        .collect();
    symmetric.dedup();
    let symmetric = if symmetric.is_empty() {
        "none".to_string()
    } else {
        symmetric.join(", ")
    };
    let (selection, who) = match args.algo {
        Some(algo) => {
            let flags: String = args
                .params
                .iter()
                .map(|p| format!(" --param {p}"))
                .collect();
            let with = if args.params.is_empty() {
                "its default parameters".to_string()
            } else {
                args.params.join(", ")
            };
            (
                format!(" --algo {}{flags}", algo.name()),
                format!("`{}` with {with}", algo.name()),
            )
        }
        None => (
            String::new(),
            "every algorithm from its default parameters".to_string(),
        ),
    };
    let (reduced, each) = match args.persistent_sets {
        PersistentArg::WhenCut => (
            "; where a search cut by the budget was tried again with persistent sets, in that \
             search's reduced graph",
            " in each search",
        ),
        PersistentArg::Always => ("; in the reduced graph of persistent sets", ""),
        PersistentArg::Off => ("", ""),
    };
    let mut out = String::new();
    out.push_str(&format!(
        "Checked by `linkrev check --table{selection} --max-depth {} --max-states {}`: {who} \
         (node 0 starts as leader, token holder or destination) on the {} \
         connected labelled 4-node graphs (every labelling: the algorithms break ties by node id), \
         path:5 and ring:5, with 1, 2 and 3 topology changes, {requests} CS requests for mutual \
         exclusion, executions of up to {} actions. Changes come one at a time (`serialize`: \
         only while no message is in flight, leader election's assumption) or overlap traffic \
         (`overlap`, mutual exclusion's and routing's default). *holds*: no violation in the \
         whole state space (up to symmetry and renormalization{reduced}), every fair execution \
         included for the `eventually` properties; *unknown*: none within the bounds (depth, \
         or {} states generated{each}), but the search was cut; *violated*: the shortest \
         execution found (for a liveness violation, the shortest stem; a fair cycle may also \
         be found among the states of a search the bounds cut, whose stem is then the \
         shortest among those states'). Symmetry reduction \
         applied to: {} (the others compare node ids).\n\n",
        args.max_depth,
        args.max_states,
        graphs.len() - 2,
        args.max_depth,
        args.max_states,
        symmetric,
    ));
    out.push_str(
        "| algorithm | property | changes | mode | holds | unknown | violated | shortest violation |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for &(algo, _) in &chosen {
        let mine: Vec<(&CheckReport, ChangeMode, u8)> = reports
            .iter()
            .zip(&jobs)
            .filter(|(_, (a, ..))| *a == algo)
            .map(|(r, &(_, m, _, c))| (r, m, c))
            .collect();
        let Some((first, ..)) = mine.first() else {
            continue;
        };
        for (index, property) in first.properties.iter().enumerate() {
            for (mode, changes) in modes(algo)
                .into_iter()
                .flat_map(|m| (1..=3u8).map(move |c| (m, c)))
            {
                let (mut holds, mut unknown, mut violated) = (0, 0, 0);
                let mut shortest: Option<(usize, String)> = None;
                for (report, ..) in mine.iter().filter(|(_, m, c)| (*m, *c) == (mode, changes)) {
                    match &report.properties[index].verdict {
                        Verdict::Holds => holds += 1,
                        Verdict::Unknown
                        | Verdict::Unconfirmed { .. }
                        | Verdict::NoViolationFound { .. } => unknown += 1,
                        Verdict::Violated { steps, .. } => {
                            violated += 1;
                            if shortest.as_ref().is_none_or(|(n, _)| steps.len() < *n) {
                                shortest = Some((
                                    steps.len(),
                                    format!("{} steps on {}", steps.len(), report.graph),
                                ));
                            }
                        }
                    }
                }
                out.push_str(&format!(
                    "| {} | {} | {changes} | {} | {holds} | {unknown} | {violated} | {} |\n",
                    algo.name(),
                    property.name,
                    match mode {
                        ChangeMode::Overlap => "overlap",
                        ChangeMode::Serialize => "serialize",
                    },
                    shortest.map_or("".to_string(), |(_, s)| s)
                ));
            }
        }
    }
    Ok(out)
}

/// A size in bytes: a number, optionally followed by K, M or G (powers of 1024; `KB`,
/// `KiB` and the like are read alike).
pub(super) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let upper = text.to_ascii_uppercase();
    let unit = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (number, scale) = match unit.chars().last() {
        Some('K') => (&unit[..unit.len() - 1], 1u64 << 10),
        Some('M') => (&unit[..unit.len() - 1], 1 << 20),
        Some('G') => (&unit[..unit.len() - 1], 1 << 30),
        _ => (unit, 1),
    };
    let value: f64 = number.trim().parse().map_err(|_| {
        format!("`{text}` is not a size: a number of bytes, or with K, M or G (4G)")
    })?;
    let bytes = value * scale as f64;
    if !(bytes.is_finite() && bytes >= (1 << 20) as f64) {
        return Err(format!("`{text}`: give at least 1M"));
    }
    if bytes >= 1e18 {
        return Err(format!("`{text}` is more memory than any machine has"));
    }
    Ok(bytes as u64)
}

/// The memory bound of one check: `given`, or half of what the process may use (the
/// machine's memory, or its cgroup's limit under a container or a Slurm job, whichever
/// is smaller), so that a search too large ends with a report. Refused when the process
/// already holds more than it.
pub(super) fn memory_bound(given: Option<u64>) -> anyhow::Result<Option<u64>> {
    let bound = given.or_else(|| usable_memory().map(|m| m / 2));
    if let (Some(bound), Some((now, _))) = (bound, crate::memory::resident())
        && now >= bound
    {
        return Err(InputError::parameter(
            "max-memory",
            format!(
                "{} MB is below the {} MB this process already holds",
                bound >> 20,
                now >> 20
            ),
        )
        .into());
    }
    Ok(bound)
}

/// The memory this process may use, bytes: the machine's (`MemTotal`), or its cgroup's
/// limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) if smaller.
fn usable_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let total = line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024;
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| std::fs::read_to_string(p).ok())
    .filter_map(|t| t.trim().parse::<u64>().ok())
    .min();
    Some(cgroup.map_or(total, |c| c.min(total)))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("64kib"), Err("`64kib`: give at least 1M".into()));
        assert_eq!(parse_size("2048K"), Ok(2 << 20));
        assert!(parse_size("12").is_err(), "below 1M");
        assert!(parse_size("4T").is_err());
        assert!(parse_size("4GBIB").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("9e20").unwrap_err().contains("more memory"));
    }
}
