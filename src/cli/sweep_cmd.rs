//! `linkrev sweep SPEC`: validate an experiment spec and print its plan (`--dry-run`), or
//! run it.

use super::Outcome;
use crate::output::write_atomically;
use crate::results::store::{CompactProgress, Store, tables};
use crate::sweep::execute::{self, ExecuteOptions, Progress, Shard};
use crate::sweep::plan::Plan;
use crate::sweep::sequential;
use crate::sweep::spec_copy;
use crate::sweep::specs::{self, MobilityKind, Spec};
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use polars::prelude::{CsvWriter, SerWriter};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Set by Ctrl-C: finish the runs in progress, store them, stop.
static STOP: AtomicBool = AtomicBool::new(false);

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Experiment spec (TOML), e.g. analysis/me_load.toml.
    pub spec: PathBuf,
    /// Validate the spec and print the plan (axes, run count, work) without running.
    #[arg(long)]
    pub dry_run: bool,
    /// Worker threads (default: all cores, at most 1024). Results do not depend on it.
    #[arg(long, value_parser = super::thread_count)]
    pub threads: Option<usize>,
    /// Run only the K-th of N disjoint parts of the plan, e.g. 2/8 (for clusters).
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Results directory (default: results/<experiment>).
    #[arg(long)]
    pub results: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// A results directory written by `linkrev sweep`.
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A results directory written by `linkrev sweep`.
    pub dir: PathBuf,
    /// Write CSV copies of the tables (`runs.csv`, `changes.csv`, `requests.csv`,
    /// `route_changes.csv`).
    #[arg(long, required = true)]
    pub csv: bool,
    /// Export a directory whose sweep has not stored every run of its plan (by
    /// default refused, exit 1, with the count of missing runs).
    #[arg(long)]
    pub allow_incomplete: bool,
}

pub fn run(args: SweepArgs) -> anyhow::Result<Outcome> {
    // Every check, including each combination of axes, happens here, before any run.
    let spec = specs::load(&args.spec)?;
    let plan = specs::expand(&spec)?;
    specs::check_traces(&spec)?;
    if let Some(size) = plan.node_seconds().filter(|&s| s > LARGE_PLAN_NODE_SECONDS) {
        eprintln!(
            "warning: the plan simulates {size:.2e} node-seconds (nodes × duration over all \
             runs), more than {LARGE_PLAN_NODE_SECONDS:.0e}: expect days on one machine; \
             check the replications and axes, or spread it over a cluster (`linkrev slurm`)"
        );
    }
    if args.dry_run {
        print_plan(&spec, &plan)?;
        // The sweep itself would refuse a directory of another spec's runs: say so now,
        // before the user starts it.
        let dir = args
            .results
            .clone()
            .unwrap_or_else(|| Path::new("results").join(&plan.experiment));
        if let Err(e) = crate::sweep::spec_copy::refuse_other_spec(&plan, &dir) {
            eprintln!("warning: {e:#}; the sweep would refuse it");
        }
        Ok(Outcome::Success)
    } else {
        execute(&plan, &args)
    }
}

/// Plans larger than this many node-seconds get a warning before they start. The
/// shipped studies simulate 1e6 to 1e8; leader election at a few thousand events per
/// node-second runs about 1e5 node-seconds a second per core.
pub const LARGE_PLAN_NODE_SECONDS: f64 = 1e10;

/// Progress: a bar with rate and ETA on a terminal, a plain line every few seconds
/// otherwise (logs of batch jobs).
pub(super) struct CliProgress {
    bar: Option<ProgressBar>,
    total: AtomicUsize,
    done: AtomicUsize,
    last_line: Mutex<Instant>,
    /// Several executions share one bar over `total` runs (the demo): `start` adds to
    /// it instead of starting over.
    cumulative: bool,
}

impl CliProgress {
    /// A bar on a terminal, plain lines otherwise. With `grand_total`, one bar spans
    /// several executions of that many runs in all.
    pub(super) fn new(grand_total: Option<usize>) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(grand_total.unwrap_or(0) as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {per_sec}  ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Self {
            bar,
            total: AtomicUsize::new(grand_total.unwrap_or(0)),
            done: AtomicUsize::new(0),
            last_line: Mutex::new(Instant::now()),
            cumulative: grand_total.is_some(),
        }
    }
}

impl CliProgress {
    /// Ends a shared bar (see [`CliProgress::new`]) once every execution is done.
    pub(super) fn finish_all(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

impl Progress for CliProgress {
    fn start(&self, total: usize, already_done: usize) {
        if self.cumulative {
            self.done.fetch_add(already_done, Ordering::SeqCst);
            if let Some(bar) = &self.bar {
                bar.inc(already_done as u64);
            }
            return;
        }
        self.total.store(total, Ordering::SeqCst);
        self.done.store(already_done, Ordering::SeqCst);
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(already_done as u64);
        } else {
            eprintln!("{already_done}/{total} runs already stored");
        }
    }

    fn advance(&self, runs: usize) {
        let done = self.done.fetch_add(runs, Ordering::SeqCst) + runs;
        if let Some(bar) = &self.bar {
            bar.inc(runs as u64);
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        let total = self.total.load(Ordering::SeqCst);
        if last.elapsed() >= Duration::from_secs(5) || done == total {
            *last = Instant::now();
            eprintln!("{done}/{total} runs");
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar.as_ref().filter(|_| !self.cumulative) {
            bar.finish();
        }
    }

    fn compacting(&self, at: CompactProgress<'_>) {
        if let Some(line) = compaction_line(&self.last_line, at) {
            match &self.bar {
                Some(bar) if !bar.is_finished() => bar.println(line),
                _ => eprintln!("{line}"),
            }
        }
    }
}

/// A progress line for a compaction: at the start of each table and every few
/// seconds.
fn compaction_line(last_line: &Mutex<Instant>, at: CompactProgress<'_>) -> Option<String> {
    let mut last = last_line.lock().expect("progress lock");
    if at.chunks_done > 0 && last.elapsed() < Duration::from_secs(5) {
        return None;
    }
    *last = Instant::now();
    Some(format!(
        "compacting {}: {}/{} chunks merged",
        at.table, at.chunks_done, at.chunks
    ))
}

/// The flag Ctrl-C sets: finish the runs in progress, store them, stop. A second
/// Ctrl-C quits at once (exit code 130).
pub(super) fn stop_on_ctrl_c() -> &'static AtomicBool {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nstopping after the runs in progress (Ctrl-C again to quit at once) …");
    });
    &STOP
}

/// Runs the plan into its results directory, resumably.
fn execute(plan: &Plan, args: &SweepArgs) -> anyhow::Result<Outcome> {
    let dir = args
        .results
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&plan.experiment));
    spec_copy::refuse_other_spec(plan, &dir)?;
    let options = ExecuteOptions {
        threads: args.threads,
        shard: args.shard,
        batch: None,
    };
    // One lock from the spec copy to the last run: a sweep already running there is
    // named and refused before anything is written, its start-up cleanup of temporary
    // files cannot remove this process's half-written copy, and no other sweep can take
    // the directory between the copy and the runs (CI once caught one in that moment).
    // Opening the store first creates the table folders of a new directory a moment
    // before the copy: a sweep killed in that moment leaves folders without a spec
    // copy, which the same command run again completes.
    let store = execute::open_store(&dir, &options)?;
    spec_copy::keep(plan, &dir)?;
    let stop = stop_on_ctrl_c();
    if plan.sequential().is_some() {
        return execute_sequential(plan, store, &options, &dir, stop);
    }
    let progress = CliProgress::new(None);
    let report = execute::execute_in(plan, store, &options, stop, &progress)?;
    // Not `Store::open`: as a shard, other shards may be writing here right now.
    let stored = report.stored;
    eprintln!(
        "{}: {} runs this time, {} already stored; {stored} of {} runs of the plan stored",
        dir.display(),
        report.ran,
        report.already_done,
        plan.runs.len()
    );
    if report.interrupted {
        eprintln!("interrupted: run the same command again to finish the rest");
        return Ok(Outcome::Interrupted);
    }
    if stored == plan.runs.len() && args.shard.is_none() {
        eprintln!(
            "complete: {}",
            crate::results::store::compacted_summary(plan.runs.len())
        );
    } else if stored == plan.runs.len() {
        eprintln!(
            "every run stored; `linkrev merge {}` compacts the tables",
            dir.display()
        );
    } else if args.shard.is_some() {
        eprintln!(
            "shard done; `linkrev merge {}` once every shard has run",
            dir.display()
        );
    }
    Ok(Outcome::Success)
}

/// Runs a sequential plan a wave at a time: each wave's runs are decided from what is
/// stored ([`sequential::decide`]), so a kill, a resume or another shard changes
/// nothing. A shard goes on to the next wave while its own runs of it can be decided,
/// and stops when what is left waits for other shards.
fn execute_sequential(
    plan: &Plan,
    store: Store,
    options: &ExecuteOptions,
    dir: &Path,
    stop: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let fixed_runs = plan.runs.len();
    for wave in 1.. {
        let decision =
            sequential::decide_stored(plan, &store)?.expect("a sequential plan has a decision");
        eprintln!("wave {wave}: {}", decision.summary());
        if decision.done() {
            let runs = decision.wanted.len();
            let saved = format!(
                "{runs} runs, against {fixed_runs} for {} replications of every point",
                plan.replications
            );
            if options.shard.is_none() {
                execute::compact_complete(&store, &CliProgress::new(None))?;
                eprintln!(
                    "complete: every point met its target or reached max; {saved}; {}",
                    crate::results::store::compacted_summary(runs)
                );
            } else {
                eprintln!(
                    "every point decided ({saved}); `linkrev merge {}` compacts the tables",
                    dir.display()
                );
            }
            return Ok(Outcome::Success);
        }
        let done = store.completed()?;
        let mine = decision
            .wanted
            .iter()
            .filter(|&&i| options.shard.is_none_or(|s| s.contains(i)))
            .filter(|&&i| !done.contains_key(&plan.runs.get(i).key))
            .count();
        if mine == 0 {
            eprintln!(
                "shard done for now: the {} runs left of this wave belong to other shards; \
                 run this shard again once they are stored, or `linkrev merge {}` to list them",
                decision.missing,
                dir.display()
            );
            return Ok(Outcome::Success);
        }
        let progress = CliProgress::new(None);
        let report =
            execute::execute_part(plan, &store, options, &decision.wanted, stop, &progress)?;
        if report.interrupted {
            eprintln!("interrupted: run the same command again to finish the rest");
            return Ok(Outcome::Interrupted);
        }
    }
    unreachable!("the waves end when every point is decided")
}

/// The keys of the runs `plan` needs that `store` does not hold, in plan order: every
/// run of a fixed plan, or of a sequential one those its points need now.
fn missing_runs(plan: &Plan, store: &Store) -> anyhow::Result<Vec<String>> {
    let done = store.completed()?;
    let keys: Box<dyn Iterator<Item = String>> = match sequential::decide_stored(plan, store)? {
        Some(decision) => Box::new(decision.wanted.into_iter().map(|i| plan.runs.get(i).key)),
        None => Box::new(plan.runs.iter().map(|r| r.key)),
    };
    Ok(keys.filter(|key| !done.contains_key(key)).collect())
}

/// `linkrev merge DIR`: checks the stored runs against the spec copy; lists the missing
/// run keys (exit 1) or compacts the chunks into one file per table.
pub fn merge(args: MergeArgs) -> anyhow::Result<Outcome> {
    let plan = spec_copy::plan(&args.dir).map_err(|missing| in_use_or(&args.dir, missing))?;
    let store = Store::open(&args.dir)?;
    store.check_version()?;
    crate::sweep::fingerprints::check_present(&plan, &args.dir)?;
    let decision = sequential::decide_stored(&plan, &store)?;
    if let Some(decision) = &decision {
        print_points(decision)?;
    }
    let needed = decision
        .as_ref()
        .map_or(plan.runs.len(), |d| d.wanted.len());
    let missing = missing_runs(&plan, &store)?;
    if !missing.is_empty() {
        match &decision {
            Some(_) => outln!(
                "{} of the {needed} runs the points need now are missing (points short of \
                 their target get more runs a wave at a time: run the sweep, or its shards, \
                 again):",
                missing.len()
            ),
            None => outln!("{} of {} runs missing:", missing.len(), plan.runs.len()),
        }
        for key in &missing {
            outln!("{key}");
        }
        return Ok(Outcome::Mismatch);
    }
    // Before anything is compacted or removed: two copies of a run would both be kept.
    store.refuse_duplicates()?;
    let last_line = Mutex::new(Instant::now());
    store.compact_reporting(&|at| {
        if let Some(line) = compaction_line(&last_line, at) {
            eprintln!("{line}");
        }
    })?;
    store.refuse_missing_rows(
        "the compacted tables were written without them (by two processes at once, or \
         from damaged chunks): run the sweep again into a new results directory",
    )?;
    outln!(
        "{}: all {needed} runs present with all their rows; tables compacted",
        args.dir.display(),
    );
    Ok(Outcome::Success)
}

/// Each point of a sequential sweep: its replications, its least precise interval and
/// whether it met the target.
fn print_points(decision: &sequential::Decision) -> anyhow::Result<()> {
    outln!(
        "{:<6} {:<14} {:<12} {:<24} point",
        "n",
        "status",
        "widest",
        "metric (algorithm)"
    );
    for p in &decision.points {
        let held_back = p.worst.as_ref().and_then(|w| w.held_back);
        let status = match (p.status, held_back) {
            (sequential::Status::Met, _) => "met",
            (sequential::Status::StoppedAtMax, None) => "max, short",
            (sequential::Status::StoppedAtMax, Some(_)) => "max, held",
            (sequential::Status::Running, _) => "running",
        };
        let held = held_back
            .map(|why| format!(" (held back: {why})"))
            .unwrap_or_default();
        let (widest, what) = match &p.worst {
            Some(w) => (
                w.precision_words(),
                format!("{} ({})", w.metric, w.algorithm),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        outln!(
            "{:<6} {status:<14} {widest:<12} {what:<24} {}{held}",
            p.n,
            p.label
        );
    }
    outln!("{}", decision.summary());
    Ok(())
}

/// `missing` (a spec copy or tables `dir` lacks), unless a sweep holds `dir`'s lock: one
/// that has just started takes it before it writes them, and is named instead.
fn in_use_or(dir: &Path, missing: anyhow::Error) -> anyhow::Error {
    // A probe, not the lock: taking it would record this process as the holder, and a
    // shard starting at that instant would fail.
    crate::results::lock::in_use(dir).unwrap_or(missing)
}

/// Rows per piece when exporting a compacted table: bounded memory, few reads.
const EXPORT_PIECE_ROWS: usize = 200_000;

/// `linkrev export DIR --csv`: CSV copies of the stored tables, written atomically.
pub fn export(args: ExportArgs) -> anyhow::Result<Outcome> {
    // Checked before `Store::open`, which would create a directory that does not exist.
    Store::open_read_only(&args.dir).map_err(|missing| in_use_or(&args.dir, missing))?;
    let store = Store::open(&args.dir)?;
    store.check_tables()?;
    store.refuse_duplicates()?;
    // Tables of an interrupted sweep are a biased sample of its plan (the runs stored
    // first), so exporting them is a decision the user takes, not a silent default.
    let plan = spec_copy::plan(&args.dir)?;
    let missing = missing_runs(&plan, &store)?;
    if let Some(first) = missing.first() {
        let total =
            sequential::decide_stored(&plan, &store)?.map_or(plan.runs.len(), |d| d.wanted.len());
        let n = missing.len();
        if !args.allow_incomplete {
            eprintln!(
                "{}: {n} of {total} runs of its plan are missing (the first: {first}); \
                 nothing exported. Resume the sweep, or export what is stored with \
                 --allow-incomplete",
                args.dir.display()
            );
            return Ok(Outcome::Mismatch);
        }
        eprintln!(
            "note: {}: exporting {} of {total} runs; {n} are missing (the first: {first})",
            args.dir.display(),
            total - n
        );
    }
    store.refuse_missing_rows(&format!(
        "`linkrev merge {}` removes incomplete batches so that the sweep reruns them",
        args.dir.display()
    ))?;
    for table in tables() {
        let path = args.dir.join(format!("{table}.csv"));
        let mut rows = 0;
        let mut failure: Option<anyhow::Error> = None;
        // A failed piece fails the atomic write: no truncated CSV is left behind.
        write_atomically(&path, |w| {
            let mut header = true;
            let written = store.for_each_piece(table, EXPORT_PIECE_ROWS, &mut |piece| {
                CsvWriter::new(&mut *w)
                    .include_header(header)
                    .finish(piece)
                    .with_context(|| format!("encoding {}", path.display()))?;
                header = false;
                Ok(())
            });
            match written {
                Ok(n) => rows = n,
                Err(e) => failure = Some(e),
            }
            match failure {
                None => Ok(()),
                Some(_) => Err(std::io::Error::other("export failed")),
            }
        })
        .map_err(|e| failure.take().unwrap_or_else(|| anyhow::Error::from(e)))
        .with_context(|| format!("writing {}", path.display()))?;
        outln!("wrote {} ({rows} rows)", path.display());
    }
    Ok(Outcome::Success)
}

fn print_plan(spec: &Spec, plan: &Plan) -> anyhow::Result<()> {
    outln!("experiment    {}", plan.experiment);
    outln!("spec          {}", plan.spec_path.display());
    outln!("master seed   {}", spec.master_seed);
    outln!(
        "mobility      {}",
        match spec.mobility {
            MobilityKind::RandomWaypoint => "random waypoint (generated per run)",
            MobilityKind::Traces => "trace files",
        }
    );
    let list = |values: &[crate::sweep::plan::ParamValue]| {
        values
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if plan.axes.is_empty() {
        outln!("axes          none");
    }
    for (i, (name, values)) in plan.axes.iter().enumerate() {
        let label = if i == 0 { "axes" } else { "" };
        let count = match values.len() {
            1 => "1 value".to_string(),
            n => format!("{n} values"),
        };
        outln!("{label:<14}{name} = [{}] ({count})", list(values));
    }
    // A parameter two algorithms declare (`holder`) is one column: listed once, with
    // each distinct value.
    let mut fixed: Vec<String> = Vec::new();
    for p in spec.params.iter().filter(|p| !p.is_axis) {
        let entry = format!("{} = {}", p.name, p.values[0]);
        if !fixed.contains(&entry) {
            fixed.push(entry);
        }
    }
    outln!("fixed         {}", fixed.join(", "));
    let algorithms: Vec<&str> = plan.algorithms.iter().map(|a| a.name()).collect();
    outln!("algorithms    {}", algorithms.join(", "));
    match &spec.sequential {
        None => {
            outln!("replications  {}", plan.replications);
            outln!("runs          {}", plan.runs.len());
        }
        Some(seq) => {
            let r = seq.replications;
            let p = &seq.precision;
            outln!(
                "replications  {} to {}, {} at a time, until every point meets the target",
                r.min,
                r.max,
                r.batch
            );
            let targets: Vec<String> = p
                .targets
                .iter()
                .map(|t| match t.target {
                    crate::stats::Target::Relative(g) => format!(
                        "{} ±{}% (half-width ≤ {:.4} of the mean)",
                        t.metric,
                        100.0 * g,
                        g / (1.0 + g)
                    ),
                    crate::stats::Target::Absolute(b) => {
                        format!("{} ±{b} (half-width ≤ {b})", t.metric)
                    }
                    either => format!(
                        "{} {} (half-width ≤ the larger of the two)",
                        t.metric,
                        either.words()
                    ),
                })
                .collect();
            outln!(
                "precision     at {}% confidence{}, {} rule: {}",
                p.confidence * 100.0,
                p.paired
                    .as_ref()
                    .map(|b| format!(", paired against {b}"))
                    .unwrap_or_default(),
                p.rule.name(),
                targets.join("; ")
            );
            let per_rep = plan.runs.len() / plan.replications.max(1) as usize;
            outln!(
                "runs          {} to {} ({per_rep} per replication of every point)",
                per_rep * r.min as usize,
                plan.runs.len()
            );
        }
    }
    match plan.node_seconds() {
        Some(ns) => outln!("work          {ns:.3e} simulated node-seconds"),
        None => outln!("work          not computed for trace files (their sizes vary)"),
    }
    if let (Some(first), Some(last)) = (plan.runs.first(), plan.runs.last()) {
        outln!("first run     {} (seed {})", first.key, first.seed);
        outln!("last run      {} (seed {})", last.key, last.seed);
    }
    Ok(())
}
