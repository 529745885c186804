//! The sweep executor and the Parquet store: tables byte-identical for any thread count,
//! batch size and shard split; interrupted sweeps resume to the same tables; stored rows
//! carry their parameters.

use linkrev::mobility::Area;
use linkrev::mobility::rwp::{PauseDist, RwpParams, SpeedDist, StartMode};
use linkrev::registry::Algorithm;
use linkrev::results::store::{Store, tables as table_names};
use linkrev::sim::seeds::{self, Purpose};
use linkrev::sim::{
    ChangeMode, CsTime, Duration, LinkBreak, NetworkConfig, RunConfig, SimTime, WorkloadConfig,
};
use linkrev::sweep::execute::{ExecuteOptions, Progress, Shard, execute};
use linkrev::sweep::plan::{MobilitySource, ParamValue, Plan, PlannedRun, RunList};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Quiet;
impl Progress for Quiet {
    fn start(&self, _: usize, _: usize) {}
    fn advance(&self, _: usize) {}
    fn finish(&self) {}
}

/// Stops the sweep after `after` runs have finished.
struct StopAfter<'a> {
    after: usize,
    done: AtomicUsize,
    stop: &'a AtomicBool,
}
impl Progress for StopAfter<'_> {
    fn start(&self, _: usize, _: usize) {}
    fn advance(&self, n: usize) {
        if self.done.fetch_add(n, Ordering::SeqCst) + n >= self.after {
            self.stop.store(true, Ordering::SeqCst);
        }
    }
    fn finish(&self) {}
}

/// 2 algorithms × 2 rates × 3 replications of a small random-waypoint network.
fn plan() -> Plan {
    let mut runs = Vec::new();
    for (ri, rate) in [0.2, 0.5].into_iter().enumerate() {
        for rep in 0..3u32 {
            for algorithm in [algo("me-rl"), algo("me-raymond")] {
                let seed = seeds::mix(1000 + (ri as u64) * 10 + u64::from(rep));
                let rwp = RwpParams {
                    nodes: 10,
                    area: Area {
                        width: 600.0,
                        height: 300.0,
                    },
                    speed: SpeedDist::Uniform {
                        min: 1.0,
                        max: 10.0,
                    },
                    pause: PauseDist::Constant(5.0),
                    duration: 60.0,
                    start: StartMode::Stationary,
                    seed: seeds::derive(seed, Purpose::Mobility),
                };
                runs.push(PlannedRun {
                    index: runs.len(),
                    key: format!("t/algo={}/rate={rate:?}/rep={rep}", algorithm.name()),
                    seed_text: format!("t/rate={rate:?}/rep={rep}"),
                    algorithm,
                    replication: rep,
                    seed,
                    params: vec![
                        ("nodes".into(), ParamValue::Int(10)),
                        ("rate".into(), ParamValue::Float(rate)),
                    ],
                    algo_params: algorithm.default_params(),
                    mobility: MobilitySource::Rwp(rwp),
                    range: 250.0,
                    config: RunConfig {
                        network: NetworkConfig {
                            delay: "uniform:1ms:5ms".parse().unwrap(),
                            link_break: LinkBreak::Drain,
                            detection_delay: Duration(0),
                            changes: ChangeMode::Overlap,
                        },
                        workload: Some(WorkloadConfig {
                            rate,
                            cs_time: CsTime::Constant(Duration(50_000_000)),
                        }),
                        duration: SimTime::from_secs_f64(60.0),
                        seed,
                        script: None,
                        max_events: None,
                    },
                    duration: Some(60.0),
                });
            }
        }
    }
    Plan {
        experiment: "t".into(),
        spec_path: "t.toml".into(),
        axes: vec![(
            "rate".into(),
            vec![ParamValue::Float(0.2), ParamValue::Float(0.5)],
        )],
        replications: 3,
        algorithms: vec![algo("me-rl"), algo("me-raymond")],
        runs: RunList::Listed(runs),
    }
}

fn options(threads: usize, batch: usize, shard: Option<Shard>) -> ExecuteOptions {
    ExecuteOptions {
        threads: Some(threads),
        shard,
        batch: Some(batch),
    }
}

fn tables(dir: &Path) -> Vec<Vec<u8>> {
    table_names()
        .iter()
        .map(|t| std::fs::read(dir.join(format!("{t}.parquet"))).expect("compacted table"))
        .collect()
}

#[test]
fn tables_are_byte_identical_across_threads_batches_and_shards() {
    let plan = plan();
    let stop = AtomicBool::new(false);
    let root = tempfile::tempdir().unwrap();
    let one = root.path().join("one");
    let report = execute(&plan, &one, &options(1, 5, None), &stop, &Quiet).unwrap();
    assert_eq!(
        (report.planned, report.ran, report.interrupted),
        (12, 12, false)
    );
    let two = root.path().join("two");
    execute(&plan, &two, &options(2, 3, None), &stop, &Quiet).unwrap();
    assert_eq!(
        tables(&one),
        tables(&two),
        "thread count or batch size changed the tables"
    );

    let sharded = root.path().join("sharded");
    for k in 1..=3 {
        let shard = Shard::parse(&format!("{k}/3")).unwrap();
        let r = execute(&plan, &sharded, &options(1, 2, Some(shard)), &stop, &Quiet).unwrap();
        assert_eq!(r.planned, 4);
    }
    // Shards never compact (others may be writing beside them); merging does.
    assert!(!sharded.join("runs.parquet").exists());
    Store::open(&sharded).unwrap().compact().unwrap();
    assert_eq!(
        tables(&one),
        tables(&sharded),
        "shards merged differ from one process"
    );
}

#[test]
fn an_interrupted_sweep_resumes_to_the_same_tables() {
    let plan = plan();
    let root = tempfile::tempdir().unwrap();
    let whole = root.path().join("whole");
    let never = AtomicBool::new(false);
    execute(&plan, &whole, &options(2, 4, None), &never, &Quiet).unwrap();

    let resumed = root.path().join("resumed");
    let stop = AtomicBool::new(false);
    let stopper = StopAfter {
        after: 5,
        done: AtomicUsize::new(0),
        stop: &stop,
    };
    let first = execute(&plan, &resumed, &options(2, 4, None), &stop, &stopper).unwrap();
    assert!(first.interrupted && first.ran < 12, "{first:?}");
    assert!(
        !resumed.join("runs.parquet").exists(),
        "an incomplete sweep must not compact"
    );
    let second = execute(&plan, &resumed, &options(2, 4, None), &never, &Quiet).unwrap();
    assert_eq!(second.already_done, first.ran);
    assert_eq!(second.ran + first.ran, 12);
    assert_eq!(tables(&whole), tables(&resumed));
}

#[test]
fn rows_carry_parameters_seeds_versions_and_covariates() {
    let plan = plan();
    let dir = tempfile::tempdir().unwrap();
    execute(
        &plan,
        dir.path(),
        &options(2, 4, None),
        &AtomicBool::new(false),
        &Quiet,
    )
    .unwrap();
    let store = Store::open(dir.path()).unwrap();
    let runs = store.read_table("runs").unwrap();
    assert_eq!(runs.height(), 12);
    for col in [
        "run_key",
        "algorithm",
        "replication",
        "seed",
        "tool_version",
        "rate",
        "nodes",
        "wait_mean",
        "msgs_per_cs",
        "mob_mean_degree",
        "mob_link_change_rate",
    ] {
        assert!(runs.column(col).is_ok(), "runs lacks {col}");
    }
    // Common random numbers: both algorithms of one replication share the seed and the
    // mobility covariates.
    let seeds = runs.column("seed").unwrap().u64().unwrap().clone();
    let degree = runs
        .column("mob_mean_degree")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    for i in (0..12).step_by(2) {
        assert_eq!(seeds.get(i), seeds.get(i + 1));
        assert_eq!(degree.get(i), degree.get(i + 1));
    }
    let requests = store.read_table("requests").unwrap();
    let total: u64 = runs
        .column("cs_requests")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .flatten()
        .sum();
    assert_eq!(
        requests.height() as u64,
        total,
        "one requests row per CS request"
    );
}

#[test]
fn shards_running_at_the_same_time_in_one_directory_merge_to_the_same_tables() {
    // As Slurm array tasks do: every shard starts (and opens the store) while others
    // are writing chunks; none may remove another's chunks in flight.
    let plan = plan();
    let stop = AtomicBool::new(false);
    let root = tempfile::tempdir().unwrap();
    let one = root.path().join("one");
    execute(&plan, &one, &options(1, 5, None), &stop, &Quiet).unwrap();
    let together = root.path().join("together");
    std::thread::scope(|scope| {
        for k in 1..=4 {
            let (plan, together, stop) = (&plan, &together, &stop);
            scope.spawn(move || {
                // Staggered, so that later shards open the store while earlier ones write.
                std::thread::sleep(std::time::Duration::from_millis(15 * (k - 1)));
                let shard = Shard::parse(&format!("{k}/4")).unwrap();
                execute(plan, together, &options(1, 1, Some(shard)), stop, &Quiet).unwrap()
            });
        }
    });
    let store = Store::open(&together).unwrap();
    assert_eq!(store.completed().unwrap().len(), 12);
    store.compact().unwrap();
    assert_eq!(tables(&one), tables(&together));
}

#[test]
fn a_shard_removes_only_its_own_orphans_and_no_temporary_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    Store::open(dir).unwrap();
    // Orphans (no `runs` chunk of the same name) of run 0 (shard 1/2) and run 1 (2/2),
    // and a write in progress.
    let orphan0 = dir.join("changes").join("chunk-00000000.parquet");
    let orphan1 = dir.join("changes").join("chunk-00000001.parquet");
    let temp = dir.join("runs").join(".linkrev-abc.tmp");
    for path in [&orphan0, &orphan1, &temp] {
        std::fs::write(path, b"x").unwrap();
    }
    let shard = Shard::parse("1/2").unwrap();
    Store::open_shard(dir, (1, 2), &|i| shard.contains(i)).unwrap();
    assert!(!orphan0.exists(), "shard 1's own orphan is removed");
    assert!(
        orphan1.exists(),
        "shard 2's chunk may be a write in progress"
    );
    assert!(
        temp.exists(),
        "a temporary file may be another shard's write"
    );
    Store::open(dir).unwrap();
    assert!(
        !orphan1.exists() && !temp.exists(),
        "a lone process cleans up all"
    );
}

fn algo(name: &str) -> Algorithm {
    Algorithm::parse(name).expect("registered")
}

/// Runs stored with other table columns (an older linkrev, before an algorithm gained a
/// parameter) are not resumed into: compaction could not join the chunks.
#[test]
fn a_directory_with_other_columns_is_refused() {
    let plan = plan();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("r");
    let stop = AtomicBool::new(false);
    let stopper = StopAfter {
        after: 3,
        done: AtomicUsize::new(0),
        stop: &stop,
    };
    execute(&plan, &dir, &options(1, 2, None), &stop, &stopper).unwrap();
    // The same plan, with one more parameter: its tables gain a column.
    let mut wider = plan.clone();
    wider.runs = RunList::Listed(
        plan.runs
            .iter()
            .map(|mut r| {
                r.params.push(("zz_extra".into(), ParamValue::Int(1)));
                r
            })
            .collect(),
    );
    let never = AtomicBool::new(false);
    let err = execute(&wider, &dir, &options(1, 2, None), &never, &Quiet)
        .expect_err("other columns must be refused")
        .to_string();
    assert!(
        err.contains("not stored there: zz_extra") && err.contains("use another results"),
        "{err}"
    );
    // The original plan still resumes.
    let report = execute(&plan, &dir, &options(1, 2, None), &never, &Quiet).unwrap();
    assert_eq!(report.already_done + report.ran, 12);
}

#[test]
fn a_compaction_killed_between_tables_finishes_to_the_same_tables() {
    let plan = plan();
    let stop = AtomicBool::new(false);
    let root = tempfile::tempdir().unwrap();
    let whole = root.path().join("whole");
    execute(&plan, &whole, &options(2, 4, None), &stop, &Quiet).unwrap();
    let shard = Shard::parse("1/1").unwrap();
    // The compacted `changes` table written, then killed: (a) before its chunks were
    // removed, (b) after. Either way the batches are complete, none is rerun, and
    // compaction finishes to the tables of an uninterrupted sweep.
    for chunks_removed in [false, true] {
        let dir = root.path().join(format!("killed-{chunks_removed}"));
        execute(&plan, &dir, &options(2, 4, Some(shard)), &stop, &Quiet).unwrap();
        std::fs::copy(whole.join("changes.parquet"), dir.join("changes.parquet")).unwrap();
        if chunks_removed {
            std::fs::remove_dir_all(dir.join("changes")).unwrap();
        }
        let store = Store::open(&dir).unwrap();
        assert_eq!(store.completed().unwrap().len(), 12, "a batch was dropped");
        store.compact().unwrap();
        assert!(store.verify().unwrap().is_empty());
        assert_eq!(tables(&whole), tables(&dir));
    }
}

/// Every compacted file of `table` in `dir`, by name, with its bytes.
fn compacted_files(dir: &Path, table: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(&format!("{table}.")) && name.ends_with(".parquet")
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_table_larger_than_a_file_is_split_by_run_index_and_reads_back_whole() {
    let plan = plan();
    let stop = AtomicBool::new(false);
    let root = tempfile::tempdir().unwrap();
    let whole = root.path().join("whole");
    execute(&plan, &whole, &options(2, 4, None), &stop, &Quiet).unwrap();
    let shard = Shard::parse("1/1").unwrap();
    let mut splits = Vec::new();
    for (threads, batch) in [(1, 5), (2, 3)] {
        let dir = root.path().join(format!("split-{threads}-{batch}"));
        execute(
            &plan,
            &dir,
            &options(threads, batch, Some(shard)),
            &stop,
            &Quiet,
        )
        .unwrap();
        // Files of 5 runs: runs 0–4, 5–9, 10–11.
        let store = Store::open(&dir).unwrap().with_part_runs(5);
        store.compact().unwrap();
        assert!(store.verify().unwrap().is_empty());
        let one = Store::open_read_only(&whole).unwrap();
        for table in table_names() {
            let files = compacted_files(&dir, table);
            let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
            if table == "runs" {
                assert_eq!(
                    names,
                    [
                        "runs.00000005.parquet",
                        "runs.00000010.parquet",
                        "runs.parquet"
                    ]
                );
            }
            let read = store.read_table(table).unwrap();
            let expected = one.read_table(table).unwrap();
            assert!(
                read.equals_missing(&expected),
                "{table}: the split files read back differ from the single file"
            );
            // Each file holds exactly its runs.
            for (name, _) in &files {
                use polars::prelude::{ParquetReader, SerReader};
                let file = std::fs::File::open(dir.join(name)).unwrap();
                let df = ParquetReader::new(file).finish().unwrap();
                let first = name
                    .strip_prefix(&format!("{table}."))
                    .and_then(|rest| rest.strip_suffix(".parquet"))
                    .map_or(0, |digits| digits.parse::<u64>().unwrap());
                for i in df
                    .column("run_index")
                    .unwrap()
                    .u64()
                    .unwrap()
                    .into_no_null_iter()
                {
                    assert!((first..first + 5).contains(&i), "{name} holds run {i}");
                }
            }
            // Read a slice at a time, the rows come in the same order.
            let mut pieces = Vec::new();
            let rows = store
                .for_each_piece(table, 7, &mut |df| {
                    pieces.push(df.clone());
                    Ok(())
                })
                .unwrap();
            assert_eq!(rows, expected.height());
            if let Some(mut all) = pieces.first().cloned() {
                for p in &pieces[1..] {
                    all.vstack_mut(p).unwrap();
                }
                assert!(all.equals_missing(&expected), "{table}: pieces differ");
            }
            splits.push(files);
        }
        // Every run counts as stored, wherever its `runs` row is: a second sweep runs none.
        assert_eq!(store.completed().unwrap().len(), 12);
        drop(store);
        let again = execute(&plan, &dir, &options(1, 5, None), &stop, &Quiet).unwrap();
        assert_eq!((again.ran, again.stored), (0, 12));
    }
    let half = splits.len() / 2;
    assert_eq!(
        splits[..half],
        splits[half..],
        "thread count or batch size changed the split files"
    );
}

/// A compaction whose tables would not hold the rows their runs recorded (here a run
/// stored twice, which `merge` refuses before compacting; `Store::compact` alone does
/// not) removes what it wrote and keeps every chunk: the directory stays recoverable.
#[test]
fn a_compaction_that_fails_its_check_keeps_the_chunks() {
    let plan = plan();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let never = AtomicBool::new(false);
    // Shards never compact: every run is stored as chunks.
    for shard in ["1/2", "2/2"] {
        let shard = Some(Shard::parse(shard).unwrap());
        execute(&plan, &dir, &options(1, 4, shard), &never, &Quiet).unwrap();
    }
    // A copy of one batch under another chunk name: its runs are stored twice.
    let chunk = |table: &str| -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
            .collect();
        files.sort();
        files
    };
    let first = chunk("runs")[0].clone();
    let name = first.file_name().unwrap().to_owned();
    for table in table_names() {
        let from = dir.join(table).join(&name);
        std::fs::copy(&from, dir.join(table).join("chunk-99999999.parquet")).unwrap();
    }
    let before: Vec<usize> = table_names().iter().map(|t| chunk(t).len()).collect();
    let store = Store::open(&dir).unwrap();
    let err = store.compact().unwrap_err().to_string();
    assert!(
        err.contains("too many: the run is stored more than once")
            && err.contains("the chunks kept"),
        "{err}"
    );
    for (table, n) in table_names().iter().zip(before) {
        assert_eq!(chunk(table).len(), n, "{table}: chunks removed");
        assert!(!dir.join(format!("{table}.parquet")).exists(), "{table}");
    }
}
