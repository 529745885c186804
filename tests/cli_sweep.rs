//! `linkrev sweep`, `merge` and `export` end to end through the binary: a sweep killed
//! with SIGKILL part way resumes to the same tables, a missing shard is reported run by
//! run and completed by rerunning it, and CSV export writes every table.

use linkrev::results::store::{Store, tables as table_names};
use polars::prelude::{CsvWriter, SerReader, SerWriter};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

/// A small RL-vs-Raymond sweep: 2 rates × 2 algorithms × `reps` replications.
fn write_spec(dir: &Path, reps: u32) -> String {
    let path = dir.join("small.toml");
    std::fs::write(
        &path,
        format!(
            r#"name = "small"
master_seed = 7
replications = {reps}
algorithms = ["me-rl", "me-raymond"]

[mobility]
nodes = 12
area = "800x300"
speed_min = 1.0
speed_max = 10.0
pause = 5.0
duration = 120.0

[workload]
rate = [0.1, 0.5]
cs_time = 0.05
"#
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn tables(dir: &Path) -> Vec<Vec<u8>> {
    table_names()
        .iter()
        .map(|t| std::fs::read(dir.join(format!("{t}.parquet"))).expect("compacted table"))
        .collect()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sweep_killed_part_way_resumes_to_identical_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 12);
    let whole = tmp.path().join("whole");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        whole.to_str().unwrap(),
        "--threads",
        "2",
    ]));

    let killed = tmp.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args([
            "sweep",
            &spec,
            "--results",
            killed.to_str().unwrap(),
            "--threads",
            "1",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first stored chunk, then kill without warning.
    let started = Instant::now();
    let runs = killed.join("runs");
    let committed = |dir: &Path| {
        std::fs::read_dir(dir).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "parquet"))
            })
            .count()
        })
    };
    while committed(&runs) == 0 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The killed sweep's lock is taken over, saying whose it was.
    let out = linkrev(&["merge", killed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "runs are missing");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("taking over the lock of pid {}", child.id())),
        "{err}"
    );
    // Whatever is on disk is readable: chunks are complete or absent.
    let store = Store::open(&killed).unwrap();
    let stored = store.completed().unwrap().len();
    assert!(
        stored > 0 && stored < 48,
        "killed after {stored} of 48 runs"
    );
    for table in table_names() {
        store.read_table(table).unwrap();
    }
    drop(store);
    // A compaction killed part way leaves a temporary file at the top: cleaned up.
    let leftover = killed.join(".linkrev-compaction.tmp");
    std::fs::write(&leftover, b"half a table").unwrap();
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        killed.to_str().unwrap(),
    ]));
    assert!(!leftover.exists(), "leftover temporary file kept");
    assert_eq!(tables(&whole), tables(&killed));
}

#[test]
fn merge_lists_the_runs_of_a_failed_shard_and_rerunning_it_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 2);
    let dir = tmp.path().join("sharded");
    let d = dir.to_str().unwrap();
    for shard in ["1/3", "3/3"] {
        ok(&linkrev(&[
            "sweep",
            &spec,
            "--results",
            d,
            "--shard",
            shard,
        ]));
    }
    let plan = linkrev::sweep::specs::plan_from_file(Path::new(&spec)).unwrap();
    let expected: Vec<String> = plan
        .runs
        .iter()
        .filter(|r| r.index % 3 == 1)
        .map(|r| r.key)
        .collect();
    let out = linkrev(&["merge", d]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{} of {} runs missing",
            expected.len(),
            plan.runs.len()
        )),
        "{text}"
    );
    for key in &expected {
        assert!(
            text.lines().any(|l| l == *key),
            "{key} not listed in\n{text}"
        );
    }
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        d,
        "--shard",
        "2/3",
    ]));
    let merge = linkrev(&["merge", d]);
    ok(&merge);
    // Compaction shows where it is, table by table.
    let said = String::from_utf8_lossy(&merge.stderr);
    assert!(said.contains("compacting runs: 0/"), "{said}");
    assert!(said.contains("compacting requests: 0/"), "{said}");
    let single = tmp.path().join("single");
    let sweep = linkrev(&["sweep", &spec, "--results", single.to_str().unwrap()]);
    ok(&sweep);
    let said = String::from_utf8_lossy(&sweep.stderr);
    assert!(said.contains("compacting changes: 0/"), "{said}");
    assert_eq!(
        tables(&single),
        tables(&dir),
        "merged shards differ from one process"
    );
}

#[test]
fn export_writes_csv_copies_and_a_changed_spec_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 1);
    let dir = tmp.path().join("res");
    let d = dir.to_str().unwrap();
    ok(&linkrev(&["sweep", &spec, "--results", d]));
    ok(&linkrev(&["export", d, "--csv"]));
    let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 4, "header + 4 runs");
    assert!(
        runs.lines()
            .next()
            .unwrap()
            .starts_with("run_index,run_key,experiment,algorithm")
    );
    assert!(dir.join("requests.csv").exists() && dir.join("changes.csv").exists());
    // The compacted requests table is exported a slice at a time; the CSV is the same
    // as the whole table's, and pieces of any size concatenate to the same rows.
    let store = Store::open(&dir).unwrap();
    let mut whole = store.read_table("requests").unwrap();
    let mut expected = Vec::new();
    CsvWriter::new(&mut expected).finish(&mut whole).unwrap();
    assert_eq!(std::fs::read(dir.join("requests.csv")).unwrap(), expected);
    let mut pieces = Vec::new();
    let rows = store
        .for_each_piece("requests", 7, &mut |piece| {
            assert!(piece.height() <= 7);
            pieces.push(piece.clone());
            Ok(())
        })
        .unwrap();
    assert_eq!(rows, whole.height());
    assert!(pieces.len() > 2, "{} pieces", pieces.len());
    let mut joined = pieces[0].clone();
    for p in &pieces[1..] {
        joined.vstack_mut(p).unwrap();
    }
    assert!(joined.equals_missing(&whole));
    // Same directory, different spec: refused, nothing mixed.
    let other = write_spec(&tmp.path().join("x").tap_mkdir(), 3);
    let out = linkrev(&["sweep", &other, "--results", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("different spec"));
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}
impl TapMkdir for std::path::PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

/// Trace paths in a spec are relative to the spec's directory; the results directory's
/// spec copy lives elsewhere, so `merge` and `report` must resolve them from the
/// original spec, as the sweep did.
#[test]
fn merge_and_report_resolve_trace_paths_of_the_original_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("traces");
    let specs = tmp.path().join("specs");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::create_dir_all(&specs).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    std::fs::copy(
        repo.join("setdest_v1_n20_p10_M10_t200_800x400.tcl"),
        traces.join("a.tcl"),
    )
    .unwrap();
    let spec = specs.join("t.toml");
    std::fs::write(
        &spec,
        r#"name = "t"
master_seed = 1
replications = 2
algorithms = ["me-rl", "me-raymond"]
[mobility]
traces = ["../traces/a.tcl"]
duration = 30.0
[workload]
rate = [0.1, 0.5]
"#,
    )
    .unwrap();
    // Deeper than the spec, so `../traces` from the copy points nowhere.
    let results = tmp.path().join("results").join("t");
    let run = linkrev(&[
        "sweep",
        spec.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--shard",
        "1/1",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let merge = linkrev(&["merge", results.to_str().unwrap()]);
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    let out = tmp.path().join("report");
    let report = linkrev(&[
        "report",
        results.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(out.join("index.html").is_file());

    // A complete directory needs its traces no more: merge and report without them.
    let kept = tmp.path().join("a.tcl.kept");
    std::fs::rename(traces.join("a.tcl"), &kept).unwrap();
    ok(&linkrev(&["merge", results.to_str().unwrap()]));
    let again = tmp.path().join("report2");
    ok(&linkrev(&[
        "report",
        results.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]));
    std::fs::rename(&kept, traces.join("a.tcl")).unwrap();

    // A trace regenerated between two shards (or a kill and a resume) is refused by
    // the next shard and by merge, naming the file, instead of being mixed in.
    let mixed = tmp.path().join("results").join("mixed");
    let m = mixed.to_str().unwrap();
    let s = spec.to_str().unwrap();
    ok(&linkrev(&["sweep", s, "--results", m, "--shard", "1/2"]));
    let mut text = std::fs::read_to_string(traces.join("a.tcl")).unwrap();
    text.push_str("# regenerated\n");
    std::fs::write(traces.join("a.tcl"), text).unwrap();
    for args in [
        vec!["sweep", s, "--results", m, "--shard", "2/2"],
        vec!["merge", m],
    ] {
        let out = linkrev(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("a.tcl") && err.contains("has changed since the runs stored"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_second_sweep_on_a_directory_in_use_is_refused_naming_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 40);
    let dir = tmp.path().join("busy");
    let d = dir.to_str().unwrap();
    let mut first = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", &spec, "--results", d, "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first sweep holds the lock (its pid is in the lock file), then
    // stop it there, so that it holds the lock while the others try however fast or
    // slow this machine is. (That the sweep holds one lock from its spec copy to its
    // last run, with no moment between at which another could take the directory, is
    // the structure of `sweep_cmd::execute`; a stop at a random moment would only
    // rarely land in such a gap.)
    let lock = dir.join(".linkrev.lock");
    let started = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid=")) {
        assert!(started.elapsed() < Duration::from_secs(60), "no lock taken");
        std::thread::sleep(Duration::from_millis(2));
    }
    let pid = first.id();
    let signal = |name: &str| {
        Command::new("sh")
            .args(["-c", &format!("kill -{name} {pid}")])
            .status()
            .is_ok_and(|status| status.success())
    };
    /// Lets the stopped sweep go on when this test goes on, and ends it if an
    /// assertion below fails (its directory is about to be deleted).
    struct Resume<F: Fn(&str) -> bool>(F);
    impl<F: Fn(&str) -> bool> Drop for Resume<F> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                (self.0)("KILL");
            }
            (self.0)("CONT");
        }
    }
    assert!(signal("STOP"), "kill -STOP {pid}");
    let stopped = Resume(signal);
    assert!(
        std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid=")),
        "the first sweep finished before it could be stopped"
    );
    for args in [
        vec!["sweep", &spec, "--results", d],
        vec!["merge", d],
        vec!["export", d, "--csv"],
    ] {
        let out = linkrev(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("in use by pid {}", first.id())),
            "{args:?}: {err}"
        );
    }
    drop(stopped);
    assert!(first.wait().unwrap().success());
    let alone = tmp.path().join("alone");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        alone.to_str().unwrap(),
    ]));
    assert_eq!(tables(&alone), tables(&dir), "the first sweep lost rows");
}

#[test]
fn a_batch_whose_chunks_were_deleted_is_reported_by_key_and_run_again() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 2);
    let whole = tmp.path().join("whole");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        whole.to_str().unwrap(),
    ]));
    // Finished but not compacted (one shard of one), then one batch's per-event chunks
    // deleted: its runs chunk alone must not count as stored.
    let dir = tmp.path().join("damaged");
    let d = dir.to_str().unwrap();
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        d,
        "--shard",
        "1/1",
    ]));
    let batch = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .min()
        .unwrap();
    let name = batch.file_name().unwrap();
    let keys: Vec<String> = {
        let df = polars::prelude::ParquetReader::new(std::fs::File::open(&batch).unwrap())
            .finish()
            .unwrap();
        df.column("run_key")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|k| k.unwrap().to_string())
            .collect()
    };
    for table in ["changes", "requests"] {
        std::fs::remove_file(dir.join(table).join(name)).unwrap();
    }
    let out = linkrev(&["merge", d]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "merge must not compact a damaged batch"
    );
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        err.contains("is missing") && err.contains("will run again"),
        "{err}"
    );
    for key in &keys {
        assert!(
            text.lines().any(|l| l == key),
            "{key} not listed in\n{text}"
        );
        assert!(err.contains(key.as_str()), "{key} not named in\n{err}");
    }
    ok(&linkrev(&["sweep", &spec, "--results", d]));
    assert_eq!(tables(&whole), tables(&dir), "rerun batch differs");
}

#[test]
fn compacted_tables_that_lack_a_runs_rows_are_refused_by_merge_and_report() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 1);
    let dir = tmp.path().join("compacted");
    let d = dir.to_str().unwrap();
    ok(&linkrev(&["sweep", &spec, "--results", d]));
    ok(&linkrev(&["merge", d]));
    // Drop run 0's request rows from the compacted table, as a lost write would.
    let path = dir.join("requests.parquet");
    let df = ParquetReader::new(std::fs::File::open(&path).unwrap())
        .finish()
        .unwrap();
    let keep = df.column("run_index").unwrap().u64().unwrap().not_equal(0);
    let key = df
        .column("run_key")
        .unwrap()
        .str()
        .unwrap()
        .get(0)
        .unwrap()
        .to_string();
    let mut short = df.filter(&keep).unwrap();
    ParquetWriter::new(std::fs::File::create(&path).unwrap())
        .finish(&mut short)
        .unwrap();
    let report = tmp.path().join("report");
    for args in [
        vec!["merge", d],
        vec!["report", d, "--out", report.to_str().unwrap()],
    ] {
        let out = linkrev(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("run {key} recorded"))
                && err.contains("`requests` rows but the table holds only 0"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn report_on_a_directory_with_no_stored_runs_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 1);
    let dir = tmp.path().join("empty");
    let d = dir.to_str().unwrap();
    ok(&linkrev(&["sweep", &spec, "--results", d]));
    // As a sweep killed before its first batch leaves it: the spec copy, no runs.
    for table in table_names() {
        std::fs::remove_file(dir.join(format!("{table}.parquet"))).unwrap();
    }
    let out = linkrev(&[
        "report",
        d,
        "--out",
        tmp.path().join("report").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no runs stored yet"), "{err}");
}

#[test]
fn export_of_an_incomplete_directory_says_how_many_runs_are_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 2);
    let dir = tmp.path().join("half");
    let d = dir.to_str().unwrap();
    // One shard of two: 4 of the plan's 8 runs stored.
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        d,
        "--shard",
        "1/2",
    ]));
    let refused = linkrev(&["export", d, "--csv"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("4 of 8 runs of its plan are missing"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-incomplete"), "{stderr}");
    assert!(!dir.join("runs.csv").exists(), "nothing exported");
    // Asked for, what is stored is exported, with a note.
    let allowed = linkrev(&["export", d, "--csv", "--allow-incomplete"]);
    ok(&allowed);
    let note = String::from_utf8_lossy(&allowed.stderr);
    assert!(
        note.contains("exporting 4 of 8 runs; 4 are missing"),
        "{note}"
    );
    let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "a header and the 4 stored runs");
}

/// A shard run twice at once can store the same runs in two batches; compaction would
/// keep both copies. `merge` and `export` refuse the directory, naming a duplicated
/// key, before they write or remove anything.
#[test]
fn merge_and_export_refuse_runs_stored_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 2);
    let dir = tmp.path().join("twice");
    let d = dir.to_str().unwrap();
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        d,
        "--shard",
        "1/2",
    ]));
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        d,
        "--shard",
        "2/2",
    ]));
    // What the second copy of a shard leaves: one batch's chunks again under another
    // batch's name.
    let mut copied = 0;
    for table in table_names() {
        let chunks = dir.join(table);
        let mut names: Vec<_> = std::fs::read_dir(&chunks)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let first = names.first().expect("a chunk").clone();
        std::fs::copy(&first, chunks.join("chunk-00000099.parquet")).unwrap();
        copied += 1;
    }
    assert!(copied > 0);
    let before: Vec<_> = walk(&dir);
    for args in [vec!["merge", d], vec!["export", d, "--csv"]] {
        let out = linkrev(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("runs are stored more than once (the first: small/"),
            "{stderr}"
        );
        assert_eq!(walk(&dir), before, "{args:?} changed the directory");
    }
}

/// Every file under `dir` with its size, sorted.
fn walk(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::metadata(&path).unwrap().len()));
            }
        }
    }
    files.sort();
    files
}

/// The same shard started twice at once (a requeued Slurm task beside the one still
/// running), many times over, and a shard of another split beside it: the second copy
/// is refused or finds its runs stored, and the merged tables always equal a clean
/// run's, never with a run twice or a row missing.
#[test]
fn the_same_shard_twice_at_once_never_stores_a_run_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 6);
    let clean = tmp.path().join("clean");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        clean.to_str().unwrap(),
    ]));
    let start = |dir: &Path, shard: &str| {
        Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(["sweep", &spec, "--results", dir.to_str().unwrap()])
            .args(["--shard", shard, "--threads", "1"])
            .output_in_background()
    };
    let (mut refused, mut overlapping) = (0, 0);
    for trial in 0..6 {
        let dir = tmp.path().join(format!("trial{trial}"));
        // Trials alternate between a twin of shard 1/2 and shard 1/3 beside it.
        let other = if trial % 2 == 0 { "1/2" } else { "1/3" };
        let first = start(&dir, "1/2");
        std::thread::sleep(Duration::from_millis(30 * trial as u64));
        let second = start(&dir, other).wait_with_output().unwrap();
        let first = first.wait_with_output().unwrap();
        // Whichever takes the lock first runs; the other is refused (or, started after
        // the first finished, finds its runs stored).
        let failed: Vec<&Output> = [&first, &second]
            .into_iter()
            .filter(|o| !o.status.success())
            .collect();
        // Twins lock one file: one of them runs. Two splits starting at the same instant
        // may each see the other's lock and both step back, which is safe.
        assert!(failed.len() <= 1 || other != "1/2", "both twins failed");
        for out in &failed {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            if other == "1/2" {
                assert!(err.contains("shard 1/2 is already running"), "{err}");
                refused += 1;
            } else {
                assert!(
                    err.contains("must split the plan the same way")
                        || err.contains("is already running"),
                    "{err}"
                );
                overlapping += 1;
            }
        }
        // Finish the plan (skipping whatever either of them stored).
        for shard in ["1/2", "2/2"] {
            ok(&linkrev(&[
                "sweep",
                &spec,
                "--results",
                dir.to_str().unwrap(),
                "--shard",
                shard,
            ]));
        }
        let merged = linkrev(&["merge", dir.to_str().unwrap()]);
        ok(&merged);
        assert_eq!(tables(&clean), tables(&dir), "trial {trial}");
    }
    eprintln!("twins refused {refused} times, other splits {overlapping} times");
    assert!(refused + overlapping > 0, "no trial ran the two at once");
}

/// Spawns a command with its output captured, without waiting for it.
trait Background {
    fn output_in_background(&mut self) -> std::process::Child;
}

impl Background for Command {
    fn output_in_background(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start linkrev")
    }
}

/// A seeded chaos run over a small sweep: shards started (twice, sometimes), merges
/// started beside them, processes killed at random moments. Whatever happens, each
/// command ends with a result or a refusal, a merge that succeeds leaves the clean
/// tables, and finishing the sweep afterwards gives the clean tables: never a run twice
/// or a row missing.
#[test]
fn chaos_of_kills_twin_shards_and_merges_ends_clean_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 4);
    let clean = tmp.path().join("clean");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        clean.to_str().unwrap(),
    ]));
    let dir = tmp.path().join("chaos");
    let d = dir.to_str().unwrap().to_string();
    // A fixed linear congruential sequence: the same chaos on every machine.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut running: Vec<(String, std::process::Child)> = Vec::new();
    let mut merged = 0;
    for _ in 0..24 {
        let (what, args): (&str, Vec<String>) = match next(4) {
            0 | 1 => {
                let shard = format!("{}/2", 1 + next(2));
                let args = [
                    "sweep",
                    &spec,
                    "--results",
                    &d,
                    "--shard",
                    &shard,
                    "--threads",
                    "1",
                ];
                ("shard", args.iter().map(|s| s.to_string()).collect())
            }
            2 => ("merge", vec!["merge".into(), d.clone()]),
            _ => {
                // Kill one running process without warning.
                if !running.is_empty() {
                    let i = next(running.len() as u64) as usize;
                    let (_, mut child) = running.remove(i);
                    let _ = child.kill();
                    let _ = child.wait();
                }
                std::thread::sleep(Duration::from_millis(next(100)));
                continue;
            }
        };
        let child = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(&args)
            .output_in_background();
        running.push((what.to_string(), child));
        std::thread::sleep(Duration::from_millis(next(150)));
        // Collect whatever has finished: a result or a refusal, never a crash.
        let mut still = Vec::new();
        for (what, mut child) in running.drain(..) {
            match child.try_wait().unwrap() {
                None => still.push((what, child)),
                Some(_) => {
                    let out = child.wait_with_output().unwrap();
                    let err = String::from_utf8_lossy(&out.stderr);
                    let code = out.status.code();
                    assert!(
                        matches!(code, Some(0..=2)),
                        "{what} ended with {code:?}: {err}"
                    );
                    if what == "merge" && code == Some(0) {
                        merged += 1;
                        assert_eq!(tables(&clean), tables(&dir), "a merge succeeded");
                    }
                }
            }
        }
        running = still;
    }
    for (what, child) in running {
        let out = child.wait_with_output().unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(0..=2)), "{what} ended with {code:?}");
    }
    // Finishing the sweep gives the clean tables.
    for shard in ["1/2", "2/2"] {
        ok(&linkrev(&[
            "sweep",
            &spec,
            "--results",
            &d,
            "--shard",
            shard,
        ]));
    }
    ok(&linkrev(&["merge", &d]));
    assert_eq!(tables(&clean), tables(&dir));
    eprintln!("chaos: {merged} merges succeeded along the way");
}

/// A dry run warns when its results directory holds another spec's runs, which the
/// sweep itself would refuse, and still prints the plan (exit 0).
#[test]
fn a_dry_run_warns_of_a_results_directory_of_another_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("spec.toml"), "name = \"other\"\n").unwrap();
    let spec = tmp.path().join("s.toml");
    std::fs::write(
        &spec,
        "name = \"s\"\nmaster_seed = 1\nreplications = 2\nalgorithms = [\"le-malpani\"]\n\
         [mobility]\nnodes = 5\nduration = 10.0\n",
    )
    .unwrap();
    let dry_run = |into: &std::path::Path| {
        linkrev(&[
            "sweep",
            spec.to_str().unwrap(),
            "--dry-run",
            "--results",
            into.to_str().unwrap(),
        ])
    };
    let out = dry_run(&results);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("holds results of a different spec")
            && stderr.contains("the sweep would refuse it"),
        "{stderr}"
    );
    // Into an empty directory, no warning.
    let fresh = tmp.path().join("fresh");
    let out = dry_run(&fresh);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert!(!fresh.exists(), "a dry run writes nothing");
}
