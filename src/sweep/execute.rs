//! Runs a plan: in parallel across runs (never inside one), streaming results to the
//! store in batches, skipping runs already stored, and stopping cleanly on request.
//!
//! Memory stays flat as the number of runs grows: only one batch of results is held at
//! a time, and at most `QUEUED_RUNS` finished runs wait for it (workers wait when the
//! writer falls behind; it then writes larger chunks to catch up). Determinism: each run depends only on its own planned parameters and seed, and
//! the store's compaction sorts by run index, so the tables are the same for any thread
//! count, batch size or shard split.

use super::plan::{MobilitySource, Plan, PlannedRun};
use crate::mobility::Trace;
use crate::mobility::format::{ReadOptions, read_trace_with};
use crate::mobility::rwp;
use crate::results::store::{CompactProgress, Store};
use crate::results::tables::{RunRecord, param_schema, runs_frame};
use crate::sim::{RunConfig, SimTime};
use crate::topology::events::{link_limit, try_link_timeline};
use crate::topology::stats::mobility_stats;
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Which part of the plan this process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    /// Number of shards the plan is split into (`N` in `K/N`).
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with 1 ≤ K ≤ N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("expected K/N, got `{text}`"))?;
        let (index, count): (usize, usize) = (
            k.trim()
                .parse()
                .map_err(|_| format!("`{k}` is not a number"))?,
            n.trim()
                .parse()
                .map_err(|_| format!("`{n}` is not a number"))?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(format!("need 1 <= K <= N, got {index}/{count}"));
        }
        Ok(Shard { index, count })
    }

    /// Whether run `index` of the plan belongs to this shard (round robin, so every
    /// shard gets a similar mix of parameters).
    pub fn contains(&self, index: usize) -> bool {
        index % self.count == self.index - 1
    }
}

/// How [`execute`] runs a plan.
#[derive(Clone, Debug)]
pub struct ExecuteOptions {
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Run only this shard; `None`: the whole plan (compacted when complete).
    pub shard: Option<Shard>,
    /// Runs per stored chunk (default: 4 per thread, at least 8).
    pub batch: Option<usize>,
}

/// What an execution did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecuteReport {
    /// Runs this process is responsible for (its shard, or the whole plan).
    pub planned: usize,
    /// Of those, runs already stored before this execution, hence skipped.
    pub already_done: usize,
    /// Runs simulated and stored by this execution.
    pub ran: usize,
    /// True when a stop was requested before every run of this shard finished.
    pub interrupted: bool,
    /// Runs of the whole plan (every shard) stored afterwards.
    pub stored: usize,
}

/// Progress callbacks (a bar on a terminal, plain lines otherwise).
pub trait Progress: Sync {
    /// Called once first: `total` runs for this process, `already_done` of them
    /// stored.
    fn start(&self, total: usize, already_done: usize);
    /// `runs` more runs were simulated (called from the worker threads).
    fn advance(&self, runs: usize);
    /// Called once at the end, also after a stop.
    fn finish(&self);
    /// The tables are being compacted (after the last run); nothing by default.
    fn compacting(&self, at: CompactProgress<'_>) {
        let _ = at;
    }
}

/// How one run reads its trace: the file, its activity file, and the length asked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceRequest {
    /// The trace file.
    pub path: PathBuf,
    /// Its SUMO activity file, if any.
    pub activity: Option<PathBuf>,
    /// The length the spec gives (`f64` bits), or `None` for the file's own.
    pub duration_bits: Option<u64>,
}

impl TraceRequest {
    /// The reading options it stands for.
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            duration: self.duration_bits.map(f64::from_bits),
            activity: self.activity.clone(),
        }
    }
}

/// Loads each trace once per execution (per length and activity file asked for), shared
/// by the worker threads.
#[derive(Default)]
struct TraceCache {
    traces: Mutex<HashMap<TraceRequest, Arc<Trace>>>,
}

impl TraceCache {
    fn get(&self, request: &TraceRequest) -> anyhow::Result<Arc<Trace>> {
        if let Some(t) = self.traces.lock().expect("cache lock").get(request) {
            return Ok(Arc::clone(t));
        }
        let trace = Arc::new(read_trace_with(&request.path, &request.options())?.trace);
        self.traces
            .lock()
            .expect("cache lock")
            .insert(request.clone(), Arc::clone(&trace));
        Ok(trace)
    }
}

/// Finished runs waiting for the chunk writer, at most.
const QUEUED_RUNS: usize = 64;
/// A chunk takes in the runs that are waiting up to this many runs or rows (see
/// [`execute`]); a larger chunk is read whole when the tables are compacted.
const MAX_CHUNK_RUNS: usize = 128;
const MAX_CHUNK_ROWS: usize = 32_768;

/// The trace, link timeline and run configuration of one planned run, as a sweep runs
/// it (`linkrev run --run KEY` reproduces a stored run alone with the same).
pub fn prepare_run(
    run: &PlannedRun,
    cache_trace: &dyn Fn(&TraceRequest) -> anyhow::Result<Arc<Trace>>,
) -> anyhow::Result<(Arc<Trace>, crate::topology::events::LinkTimeline, RunConfig)> {
    let trace = match &run.mobility {
        MobilitySource::Rwp(params) => Arc::new(rwp::generate(params)?),
        MobilitySource::Trace { path, activity } => cache_trace(&TraceRequest {
            path: path.clone(),
            activity: activity.clone(),
            duration_bits: run.duration.map(f64::to_bits),
        })?,
    };
    run.algorithm
        .check_node_ids(&run.algo_params, trace.node_count())
        .map_err(anyhow::Error::msg)?;
    let timeline = try_link_timeline(&trace, run.range, link_limit()?)?;
    let mut config = run.config.clone();
    config.duration = SimTime::from_secs_f64(run.duration.unwrap_or(trace.duration));
    Ok((trace, timeline, config))
}

/// Simulates one planned run, with its mobility covariates.
pub fn run_one(
    experiment: &str,
    run: &PlannedRun,
    cache_trace: &dyn Fn(&TraceRequest) -> anyhow::Result<Arc<Trace>>,
) -> anyhow::Result<RunRecord> {
    let (trace, timeline, config) = prepare_run(run, cache_trace)?;
    let mobility = mobility_stats(&trace, &timeline);
    let output = run.algorithm.run(&run.algo_params, &timeline, config);
    Ok(RunRecord {
        experiment: experiment.to_string(),
        run: run.identity(),
        output,
        mobility,
    })
}

/// Runs every run of `plan` (or of one shard) not yet in the store at `dir`.
/// When all runs of the plan are stored afterwards and this process ran the whole plan,
/// the store is compacted. A shard never compacts: other shards may be writing to the
/// same directory at the same time (Slurm array tasks), and compaction removes the chunks
/// they are listing; `linkrev merge` compacts once every shard has finished.
pub fn execute(
    plan: &Plan,
    dir: &Path,
    options: &ExecuteOptions,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> anyhow::Result<ExecuteReport> {
    let store = open_store(dir, options)?;
    execute_in(plan, store, options, stop, progress)
}

/// Opens `dir` for the runs of `options` (one shard's, or the whole plan's), holding
/// its lock until the store is dropped: a caller that writes more there first (the
/// spec copy) does so under the same lock, with no moment in between at which another
/// sweep could take the directory.
pub fn open_store(dir: &Path, options: &ExecuteOptions) -> anyhow::Result<Store> {
    match options.shard {
        Some(shard) => Store::open_shard(dir, (shard.index, shard.count), &|index| {
            shard.contains(index)
        }),
        None => Store::open(dir),
    }
}

/// [`execute`] into a store already open ([`open_store`] with the same `options`).
pub fn execute_in(
    plan: &Plan,
    store: Store,
    options: &ExecuteOptions,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> anyhow::Result<ExecuteReport> {
    let every: Vec<usize> = (0..plan.runs.len()).collect();
    let report = execute_part(plan, &store, options, &every, stop, progress)?;
    if !report.interrupted && options.shard.is_none() && report.stored == plan.runs.len() {
        compact_complete(&store, progress)?;
    }
    Ok(report)
}

/// Compacts a store that holds every run it should, then checks that no row went
/// missing on the way.
pub fn compact_complete(store: &Store, progress: &dyn Progress) -> anyhow::Result<()> {
    crate::memory::return_freed_memory();
    store.compact_reporting(&|at| progress.compacting(at))?;
    store.refuse_missing_rows(
        "the compacted tables lack them: run the sweep again into a new results directory",
    )
}

/// Runs the runs `wanted` (plan indices, ascending) of this process's shard that `store`
/// does not hold yet, and never compacts: a sequential sweep runs its plan a wave at a
/// time ([`crate::sweep::sequential`]), and only the last wave may compact.
pub fn execute_part(
    plan: &Plan,
    store: &Store,
    options: &ExecuteOptions,
    wanted: &[usize],
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> anyhow::Result<ExecuteReport> {
    // A shard's options with a whole-plan store would run other shards' runs; a whole
    // plan's options with a shard's store would compact beside running shards.
    let kind = |shard: bool| if shard { "one shard" } else { "the whole plan" };
    anyhow::ensure!(
        store.is_shard() == options.shard.is_some(),
        "internal error: a store opened for {} run with the options of {}",
        kind(store.is_shard()),
        kind(options.shard.is_some())
    );
    store.check_version()?;
    let schema = param_schema(
        plan.runs
            .representatives()
            .iter()
            .map(|r| r.params.as_slice()),
    );
    let columns = runs_frame(&[], &schema)?;
    let columns: Vec<&str> = columns
        .get_column_names()
        .iter()
        .map(|c| c.as_str())
        .collect();
    store.check_columns(&columns)?;
    let done = store.completed()?;
    // Run indices, not runs: a plan's runs are built when needed (see `RunList`).
    let mine: Vec<usize> = wanted
        .iter()
        .copied()
        .filter(|&i| options.shard.is_none_or(|s| s.contains(i)))
        .collect();
    let todo: Vec<usize> = if done.is_empty() {
        mine.clone()
    } else {
        mine.iter()
            .copied()
            .filter(|&i| !done.contains_key(&plan.runs.get(i).key))
            .collect()
    };
    let mut report = ExecuteReport {
        planned: mine.len(),
        already_done: mine.len() - todo.len(),
        ..Default::default()
    };
    let threads = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting worker threads")?;
    let batch = options.batch.unwrap_or((4 * threads).max(8));
    let cache = TraceCache::default();
    progress.start(mine.len(), report.already_done);
    // Workers run simulations and send each finished run over a channel; this thread
    // stores them a chunk at a time. No barrier between chunks, so one slow run never
    // leaves the other workers idle.
    // Bounded: when runs finish faster than chunks are written (thousands of short runs),
    // workers wait instead of piling finished runs up in memory.
    let (tx, rx) = std::sync::mpsc::sync_channel::<anyhow::Result<RunRecord>>(QUEUED_RUNS);
    // Workers take runs in plan order from a shared counter, so stored chunks cover
    // narrow ranges of run indices and compaction can stream them.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcome: anyhow::Result<()> = std::thread::scope(|scope| {
        let workers = scope.spawn(|| {
            pool.broadcast(|_| {
                let tx = tx.clone();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&index) = todo.get(i) else { break };
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let run = plan.runs.get(index);
                    let record = run_one(&plan.experiment, &run, &|p| cache.get(p))
                        .with_context(|| format!("run {}", run.key));
                    progress.advance(1);
                    // The receiver is gone only after a storage error, reported below.
                    let _ = tx.send(record);
                }
            });
            drop(tx);
        });
        let mut pending: Vec<RunRecord> = Vec::with_capacity(batch);
        let mut pending_rows = 0;
        let mut failure = None;
        while let Ok(first) = rx.recv() {
            // Runs that finished meanwhile join this chunk: a backlog makes chunks larger,
            // so the writer spends less per run (fewer files and syncs) and catches up.
            let mut arrived = Some(first);
            while let Some(record) = arrived.take() {
                match record {
                    Ok(record) if failure.is_none() => {
                        pending_rows += record.output.events.len() + 1;
                        pending.push(record);
                    }
                    Ok(_) => {}
                    Err(e) => {
                        failure.get_or_insert(e);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                if pending.len() < MAX_CHUNK_RUNS && pending_rows < MAX_CHUNK_ROWS {
                    arrived = rx.try_recv().ok();
                }
            }
            if failure.is_none() && pending.len() >= batch {
                pending.sort_by_key(|r| r.run.index);
                match store.write_batch(&pending, &schema) {
                    Ok(()) => {
                        report.ran += pending.len();
                        crate::memory::return_freed_memory();
                    }
                    Err(e) => {
                        failure = Some(e);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                pending.clear();
                pending_rows = 0;
            }
        }
        if failure.is_none() && !pending.is_empty() {
            pending.sort_by_key(|r| r.run.index);
            store.write_batch(&pending, &schema)?;
            report.ran += pending.len();
        }
        workers
            .join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?;
        failure.map_or(Ok(()), Err)
    });
    outcome?;
    if report.ran + report.already_done < mine.len() {
        report.interrupted = true;
    }
    progress.finish();
    report.stored = store.completed()?.len();
    Ok(report)
}
