//! The coverage harness (`linkrev bench coverage`, `linkrev::coverage`) on a study
//! small enough for a debug build: its reference sample is the study's own runs, its
//! sequential blocks stop where the sweep stops the point, and its coverage counts are
//! those of a brute-force recount.

use linkrev::coverage::{
    HarnessPoint, Procedure, Statistic, blocks, harness_points, measure, run_reference,
};
use polars::prelude::*;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::path::Path;
use std::process::Command;

/// Progress nobody watches.
struct Silent;

impl linkrev::sweep::execute::Progress for Silent {
    fn start(&self, _: usize, _: usize) {}
    fn advance(&self, _: usize) {}
    fn finish(&self) {}
}

/// RL against Raymond at two rates, 8 nodes for 40 s.
fn spec_text(replications: &str, precision: &str) -> String {
    format!(
        r#"name = "tiny"
master_seed = 5
replications = {replications}
algorithms = ["me-rl", "me-raymond"]

[mobility]
nodes = 8
area = "600x300"
speed_min = 1.0
speed_max = 10.0
pause = 5.0
duration = 40.0

[workload]
rate = [0.2, 1.0]
cs_time = 0.05
{precision}"#
    )
}

const PRECISION: &str = r#"
[precision]
metrics = ["msgs_per_cs", "wait_mean"]
relative_half_width = 0.1
"#;

fn point(study: &'static str, statistic: Statistic) -> HarnessPoint {
    HarnessPoint {
        name: "tiny",
        shape: "a test",
        study,
        at: &["rate=0.2"],
        statistic,
        also: &[],
        fixed: &[],
    }
}

const RL_MSGS: Statistic = Statistic::Mean {
    algorithm: "me-rl",
    metric: "msgs_per_cs",
};

fn runs_table(dir: &Path) -> DataFrame {
    let file = std::fs::File::open(dir.join("runs.parquet")).expect("compacted runs table");
    ParquetReader::new(file).finish().unwrap()
}

#[test]
fn the_reference_sample_is_the_studys_runs_and_a_block_stops_where_the_sweep_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("tiny.toml");
    std::fs::write(
        &spec,
        spec_text("{ min = 3, max = 15, batch = 3 }", PRECISION),
    )
    .unwrap();
    let results = tmp.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", spec.to_str().unwrap(), "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = runs_table(&results);

    // The point's first 30 replications, run by the harness.
    let p = point("tiny.toml", RL_MSGS);
    let sample = run_reference(&p, tmp.path(), 30, None, &Silent).unwrap();
    assert_eq!(sample.len(), 30);
    assert_eq!(
        sample
            .algorithms
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>(),
        ["me-rl", "me-raymond"]
    );

    // Every stored run of the point has the value the harness found for it.
    let key = runs.column("run_key").unwrap().str().unwrap().clone();
    let msgs = runs.column("msgs_per_cs").unwrap().f64().unwrap().clone();
    let rep = runs
        .column("replication")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap();
    let rep = rep.i64().unwrap();
    let (c, a) = (
        sample.column("msgs_per_cs").unwrap(),
        sample.algorithm("me-rl").unwrap(),
    );
    let mut stored = 0;
    for i in 0..runs.height() {
        let k = key.get(i).unwrap();
        if k.contains("algo=me-rl/") && k.contains("rate=0.2") {
            let r = rep.get(i).unwrap() as usize;
            assert_eq!(sample.values[r][a][c], msgs.get(i), "run {k}");
            stored += 1;
        }
    }

    assert!(
        stored >= 3,
        "the sweep stores at least min = 3 runs of the point"
    );
    // The sweep stopped the point at `stored` replications; the harness's first block,
    // which starts at replication 0, stops there too, and the next starts after it.
    let procedure = Procedure::of_study(&sample);
    assert!(matches!(procedure, Procedure::Sequential(_)));
    let found = blocks(&p.statistic, &sample, &procedure, 0.95);
    assert_eq!(found[0].start, 0);
    assert_eq!(
        found[0].n, stored,
        "the sweep stored {stored} replications of the point"
    );
    assert_eq!(found[1].start, stored);
    assert!(found.iter().all(|b| (3..=15).contains(&b.n)));
}

#[test]
fn coverage_is_a_brute_force_count_over_disjoint_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("tiny.toml"), spec_text("8", "")).unwrap();
    let p = point("tiny.toml", RL_MSGS);
    let sample = run_reference(&p, tmp.path(), 43, None, &Silent).unwrap();
    let (a, c) = (
        sample.algorithm("me-rl").unwrap(),
        sample.column("msgs_per_cs").unwrap(),
    );
    let values: Vec<f64> = sample.values.iter().map(|r| r[a][c].unwrap()).collect();
    let truth = values.iter().sum::<f64>() / values.len() as f64;

    // 43 replications hold 5 blocks of 8 (the study's count); the last 3 are unused.
    let procedure = Procedure::of_study(&sample);
    assert_eq!(procedure, Procedure::Fixed { n: 8 });
    let row = measure(&p, &sample, &procedure, 0.95).unwrap();
    assert_eq!(row.blocks, 5);
    assert_eq!(row.mean_n, 8.0);
    assert!((row.truth - truth).abs() < 1e-12 * truth);

    // Each block's Student-t interval by hand.
    let t = StudentsT::new(0.0, 1.0, 7.0).unwrap().inverse_cdf(0.975);
    let mut covered = 0;
    // A figure marks a block's interval rough when it is too skewed for its size: the
    // procedure stands behind the others.
    let (mut claimed, mut claimed_covered) = (0, 0);
    for block in values.chunks_exact(8).take(5) {
        let mean = block.iter().sum::<f64>() / 8.0;
        let var = block.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 7.0;
        let h = t * (var / 8.0).sqrt();
        let holds = (mean - h).max(0.0) <= truth && truth <= mean + h;
        covered += u32::from(holds);
        if linkrev::stats::sequential::held_back(block, 0).is_none() {
            claimed += 1;
            claimed_covered += u32::from(holds);
        }
    }
    assert_eq!(row.covered, covered);
    assert_eq!(row.coverage, f64::from(covered) / 5.0);
    assert!(row.coverage_low <= row.coverage && row.coverage <= row.coverage_high);
    // msgs_per_cs declares no least runs: a fixed count stands behind every block the
    // skewness guard passes.
    assert_eq!(
        (row.claimed, row.claimed_covered),
        (claimed, claimed_covered)
    );

    // A sample shorter than one block is refused, naming the point.
    let short = run_reference(&p, tmp.path(), 7, None, &Silent).unwrap();
    let err = measure(&p, &short, &procedure, 0.95)
        .unwrap_err()
        .to_string();
    assert!(err.contains("tiny") && err.contains("at least 8"), "{err}");
}

#[test]
fn a_point_must_name_one_point_of_its_study() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("tiny.toml"), spec_text("8", "")).unwrap();
    let mut p = point("tiny.toml", RL_MSGS);
    p.at = &[];
    let err = run_reference(&p, tmp.path(), 10, None, &Silent).unwrap_err();
    assert!(
        format!("{err:#}").contains("name a value of every axis"),
        "{err:#}"
    );
    p.at = &["rate=0.3"];
    let err = run_reference(&p, tmp.path(), 10, None, &Silent).unwrap_err();
    assert!(format!("{err:#}").contains("no run of me-rl"), "{err:#}");
}

#[test]
fn the_built_in_points_name_points_of_the_shipped_studies() {
    let analysis = Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis");
    for p in harness_points() {
        p.statistic.columns().unwrap();
        let spec = linkrev::sweep::specs::load(&analysis.join(p.study)).unwrap();
        let plan = linkrev::sweep::specs::expand(&spec).unwrap();
        let at: Vec<_> = plan
            .runs
            .iter()
            .filter(|r| {
                p.at.iter()
                    .all(|want| r.key.split('/').any(|part| part == *want))
            })
            .filter(|r| p.statistic.algorithms().contains(&r.algorithm.name()))
            .collect();
        assert_eq!(
            at.len(),
            p.statistic.algorithms().len() * spec.replications as usize,
            "{}: {} at {:?}",
            p.name,
            p.study,
            p.at
        );
    }
}

/// Counts the runs a harness call simulates.
struct Counting(std::sync::atomic::AtomicUsize);

impl linkrev::sweep::execute::Progress for Counting {
    fn start(&self, _: usize, _: usize) {}
    fn advance(&self, runs: usize) {
        self.0.fetch_add(runs, std::sync::atomic::Ordering::Relaxed);
    }
    fn finish(&self) {}
}

/// `--samples`: a kept reference sample is read back rather than run, grows by running
/// only the replications it lacks, survives a comment or a new replication count, and
/// is not used once the study's runs change.
#[test]
fn a_kept_sample_is_reused_grown_and_dropped_with_its_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let kept = tmp.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(tmp.path().join("tiny.toml"), spec_text("8", "")).unwrap();
    let p = point("tiny.toml", RL_MSGS);
    let ran = |r: u32| {
        let counting = Counting(0.into());
        let sample = run_reference(&p, tmp.path(), r, Some(&kept), &counting).unwrap();
        (sample, counting.0.into_inner())
    };
    let (first, n1) = ran(12);
    assert_eq!(n1, 12, "one algorithm, 12 replications");
    let (again, n2) = ran(12);
    assert_eq!((n2, &again.values), (0, &first.values));
    let (grown, n3) = ran(15);
    assert_eq!(n3, 3, "only the 3 replications missing");
    assert_eq!(grown.values[..12], first.values[..]);
    // A comment or another replication count changes no run: the sample serves.
    std::fs::write(
        tmp.path().join("tiny.toml"),
        format!("# a comment\n{}", spec_text("30", "")),
    )
    .unwrap();
    let (kept_again, n_same) = ran(12);
    assert_eq!((n_same, &kept_again.values), (0, &first.values));
    // A different spec (another seed) makes the kept sample stale.
    std::fs::write(
        tmp.path().join("tiny.toml"),
        spec_text("8", "").replace("master_seed = 5", "master_seed = 6"),
    )
    .unwrap();
    let (_, n4) = ran(12);
    assert_eq!(n4, 12);
}
