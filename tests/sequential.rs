//! Sequential sweeps (`replications = { min, max, batch }` with `[precision]`): the
//! decision rule on made-up stored values, the runs of a stopped sweep against a fixed
//! sweep of `max` replications, thread counts, shards run in turns, and located errors
//! for bad precision settings.

use linkrev::stats::{MetricTarget, StoppingRule, Target};
use linkrev::sweep::sequential::{Status, StoredValues, decide};
use linkrev::sweep::specs;
use polars::prelude::*;
use std::path::Path;
use std::process::{Command, Output};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// RL against Raymond at two rates, small enough for a debug build; `replications`
/// and `precision` as given.
fn spec_text(replications: &str, precision: &str) -> String {
    format!(
        r#"name = "seq"
master_seed = 11
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
metrics = ["msgs_per_cs"]
relative_half_width = 0.08
"#;

const SEQUENTIAL: &str = "{ min = 3, max = 12, batch = 3 }";

/// The plan and the sequential settings of [`spec_text`] with `precision`, parsed as
/// `sweep` would.
fn planned(precision: &str) -> (linkrev::sweep::plan::Plan, specs::Sequential) {
    let spec = specs::parse(
        &spec_text(SEQUENTIAL, precision),
        Path::new("/nowhere/seq.toml"),
    )
    .unwrap();
    let plan = specs::expand(&spec).unwrap();
    (plan, spec.sequential.unwrap())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn runs(dir: &Path) -> DataFrame {
    let file = std::fs::File::open(dir.join("runs.parquet")).expect("compacted runs table");
    ParquetReader::new(file).finish().unwrap()
}

#[test]
fn the_rule_reads_only_a_points_first_n_replications() {
    let (plan, sequential) = planned(PRECISION);
    assert_eq!(
        sequential.precision.targets,
        [MetricTarget {
            metric: "msgs_per_cs".into(),
            target: Target::Relative(0.08)
        }]
    );
    assert_eq!(plan.runs.len(), 2 * 2 * 12);
    // Nothing stored: every point wants its first 3 replications of both algorithms.
    let empty = decide(&plan, &sequential, &StoredValues::new());
    assert_eq!(empty.wanted.len(), 2 * 2 * 3);
    assert_eq!(empty.missing, 12);
    assert!(
        empty
            .points
            .iter()
            .all(|p| p.status == Status::Running && p.n == 3)
    );

    // Point rate=0.2: constant values, met at min and again at 6: the guarded rule
    // stops there, at two looks in a row. Point rate=1.0: values alternate between 1
    // and 100 for replications below 9, then equal 50: short at 3 and 6, and still
    // short at 9 (the alternation is in its first 9), so it reaches max.
    let mut stored = StoredValues::new();
    for run in plan.runs.iter() {
        let rate = run
            .params
            .iter()
            .find(|(k, _)| k == "rate")
            .map(|(_, v)| v.to_string())
            .unwrap();
        let v = if rate == "0.2" {
            10.0
        } else if run.replication < 9 {
            if run.replication % 2 == 0 { 1.0 } else { 100.0 }
        } else {
            50.0
        };
        stored.insert(run.index, vec![Some(v)]);
    }
    let d = decide(&plan, &sequential, &stored);
    assert_eq!(d.points.len(), 2);
    assert_eq!((d.points[0].status, d.points[0].n), (Status::Met, 6));
    assert_eq!(
        (d.points[1].status, d.points[1].n),
        (Status::StoppedAtMax, 12)
    );
    assert!(d.done());
    assert_eq!(d.wanted.len(), 2 * 6 + 2 * 12);

    // Law and Kelton's rule as published stops rate=0.2 at its first look.
    let mut first_look = sequential.clone();
    first_look.precision.rule = StoppingRule::FirstLook;
    let f = decide(&plan, &first_look, &stored);
    assert_eq!((f.points[0].status, f.points[0].n), (Status::Met, 3));

    // Replications beyond a point's n change nothing: rewrite every run of rate=0.2
    // above replication 5 with wild values.
    let mut wild = stored.clone();
    for run in plan.runs.iter().filter(|r| r.replication >= 6) {
        if run.key.contains("rate=0.2") {
            wild.insert(run.index, vec![Some(1e9 * f64::from(run.replication))]);
        }
    }
    assert_eq!(decide(&plan, &sequential, &wild), d);

    // A missing run of the first 3 keeps a point running, whatever else is stored.
    let first = plan
        .runs
        .iter()
        .find(|r| r.key.contains("rate=1.0") && r.replication == 1)
        .unwrap();
    let mut gap = stored.clone();
    gap.remove(&first.index);
    let d = decide(&plan, &sequential, &gap);
    assert_eq!(
        (d.points[1].status, d.points[1].n, d.missing),
        (Status::Running, 3, 1)
    );
}

/// A sample whose spread one run holds is held back even when its interval is narrow
/// enough, and the point says so; the published rule stops it at its first look.
/// Each metric is judged against its own target: an absolute target no interval can
/// meet keeps every point to `max` whatever the relative one says, and one every
/// interval meets changes nothing.
#[test]
fn each_metric_meets_its_own_target() {
    let (plan, alone) = planned(PRECISION);
    // msgs_per_cs as in the test above (rate=0.2 met at 6, rate=1.0 short to max);
    // cs_entries varies with the replication, evenly enough that the tail guard lets it
    // pass.
    let values = |run: &linkrev::sweep::plan::PlannedRun| {
        let msgs = if run.key.contains("rate=0.2") {
            10.0
        } else if run.replication < 9 {
            if run.replication.is_multiple_of(2) {
                1.0
            } else {
                100.0
            }
        } else {
            50.0
        };
        (msgs, 5.0 + f64::from(run.replication % 3))
    };
    let mut one = StoredValues::new();
    let mut two = StoredValues::new();
    for run in plan.runs.iter() {
        let (msgs, entries) = values(&run);
        one.insert(run.index, vec![Some(msgs)]);
        two.insert(run.index, vec![Some(msgs), Some(entries)]);
    }
    let baseline = decide(&plan, &alone, &one);
    let states = |d: &linkrev::sweep::sequential::Decision| {
        d.points.iter().map(|p| (p.n, p.status)).collect::<Vec<_>>()
    };
    assert_eq!(
        states(&baseline),
        [(6, Status::Met), (12, Status::StoppedAtMax)]
    );
    let with = |half_width: &str| {
        let (_, sequential) = planned(&format!(
            "[precision]\nrelative_half_width = {{ msgs_per_cs = 0.08 }}\n\
             half_width = {{ cs_entries = {half_width} }}\n"
        ));
        assert_eq!(
            sequential.precision.targets[1],
            MetricTarget {
                metric: "cs_entries".into(),
                target: Target::Absolute(half_width.parse().unwrap())
            }
        );
        decide(&plan, &sequential, &two)
    };
    assert_eq!(states(&with("1e9")), states(&baseline));
    // A relative target and an absolute floor for one metric: met by whichever allows
    // more, so a floor no interval reaches changes nothing.
    let (_, either) = planned(
        "[precision]\nmetrics = [\"msgs_per_cs\"]\nrelative_half_width = 0.08\n\
         half_width = { msgs_per_cs = 1e-9 }\n",
    );
    assert_eq!(
        either.precision.targets,
        [MetricTarget {
            metric: "msgs_per_cs".into(),
            target: Target::Either {
                relative: 0.08,
                absolute: 1e-9
            }
        }]
    );
    assert_eq!(states(&decide(&plan, &either, &one)), states(&baseline));
    let tight = with("1e-9");
    assert_eq!(
        states(&tight),
        [(12, Status::StoppedAtMax), (12, Status::StoppedAtMax)]
    );
    for p in &tight.points {
        // The widest is the one furthest from its own target, not the largest number.
        let worst = p.worst.as_ref().unwrap();
        assert_eq!(
            (worst.metric.as_str(), worst.target),
            ("cs_entries", Target::Absolute(1e-9)),
            "{p:?}"
        );
        assert!(worst.precision_words().starts_with("±0."), "{worst:?}");
    }
}

#[test]
fn a_tail_dominated_point_is_held_back_and_says_why() {
    let (plan, sequential) = planned(PRECISION);
    // Every run 10, except replication 1 of each algorithm at 10.5: a half-width far
    // inside ±8%, and one run holding nearly all of the spread: a skewness of about
    // √n, which Cochran's n > 25·g₁² never lets pass.
    let mut stored = StoredValues::new();
    for run in plan.runs.iter() {
        let v = if run.replication == 1 { 10.5 } else { 10.0 };
        stored.insert(run.index, vec![Some(v)]);
    }
    let d = decide(&plan, &sequential, &stored);
    for point in &d.points {
        assert_eq!((point.status, point.n), (Status::StoppedAtMax, 12));
        let words = point.status_words();
        assert!(
            words.starts_with("stopped at max, held back: skewness ")
                && words.contains("(Cochran); one run holds 9"),
            "{words}"
        );
    }
    assert!(
        d.summary().starts_with(
            "2 points: 0 met the target, 2 stopped at max (2 of them narrow enough but held back)"
        ),
        "{}",
        d.summary()
    );
    let mut first_look = sequential.clone();
    first_look.precision.rule = StoppingRule::FirstLook;
    let f = decide(&plan, &first_look, &stored);
    assert!(f.points.iter().all(|p| (p.status, p.n) == (Status::Met, 3)));
}

/// RL against Raymond with an axis only Raymond has (`routing`), small enough for a
/// debug build, with a paired target on messages per CS entry.
fn variants_spec(replications: &str, target: &str) -> String {
    format!(
        r#"name = "variants"
master_seed = 5
replications = {replications}
algorithms = ["me-rl", "me-raymond"]

[params.me-raymond]
routing = ["oracle", "discovery"]

[mobility]
nodes = [6, 8]
area = "600x300"
duration = 40.0

[workload]
rate = 0.5

[precision]
metrics = ["msgs_per_cs"]
{target}
paired = "me-raymond"
"#
    )
}

/// An axis only Raymond has (`routing`) makes variants within a point, not points: RL,
/// which has no `routing`, runs once per point and is judged against (and paired
/// with) both of Raymond's variants, and all three stop at the same n. Before, the
/// points were `nodes=6` and `nodes=6/routing=discovery`, RL belonged to the first
/// only, and the discovery variant stopped on its own.
#[test]
fn an_axis_only_one_algorithm_has_makes_variants_that_stop_together() {
    let text = variants_spec("{ min = 3, max = 12, batch = 3 }", "half_width = 1.0");
    let spec = specs::parse(&text, Path::new("/nowhere/variants.toml")).unwrap();
    let plan = specs::expand(&spec).unwrap();
    let sequential = spec.sequential.clone().unwrap();
    // Values: RL 10 and Raymond with the oracle 20 every time; Raymond with discovery
    // alternates 0 and 100 below replication 9, so the pair RL − discovery is short
    // until max at nodes=6. At nodes=8 every variant is constant.
    let mut stored = StoredValues::new();
    for run in plan.runs.iter() {
        let v = match (run.algorithm.name(), run.key.contains("routing=discovery")) {
            ("me-rl", _) => 10.0,
            (_, false) => 20.0,
            (_, true) if run.key.contains("nodes=6") && run.replication < 9 => {
                if run.replication % 2 == 0 { 0.0 } else { 100.0 }
            }
            (_, true) => 30.0,
        };
        stored.insert(run.index, vec![Some(v)]);
    }
    let d = decide(&plan, &sequential, &stored);
    let labels: Vec<&str> = d.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["nodes=6", "nodes=8"]);
    assert_eq!(
        (d.points[0].status, d.points[0].n),
        (Status::StoppedAtMax, 12)
    );
    let worst = d.points[0].worst.as_ref().unwrap();
    assert_eq!(worst.algorithm, "me-rl − me-raymond routing=discovery");
    assert_eq!((d.points[1].status, d.points[1].n), (Status::Met, 6));
    // Every variant of a point has the same replications: 3 variants × 12 at
    // nodes=6, 3 × 6 at nodes=8.
    let wanted_at = |nodes: &str, variant: &dyn Fn(&str) -> bool| {
        d.wanted
            .iter()
            .map(|&i| plan.runs.get(i))
            .filter(|r| r.key.contains(nodes) && variant(&r.key))
            .count()
    };
    let rl = |k: &str| k.contains("algo=me-rl/");
    let oracle = |k: &str| k.contains("routing=oracle");
    let discovery = |k: &str| k.contains("routing=discovery");
    assert_eq!(
        [
            wanted_at("nodes=6", &rl),
            wanted_at("nodes=6", &oracle),
            wanted_at("nodes=6", &discovery)
        ],
        [12, 12, 12]
    );
    assert_eq!(
        [
            wanted_at("nodes=8", &rl),
            wanted_at("nodes=8", &oracle),
            wanted_at("nodes=8", &discovery)
        ],
        [6, 6, 6]
    );
}

#[test]
fn a_stopped_sweep_is_a_subset_of_the_fixed_one_for_any_threads_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // ±25% at the first look that meets it: loose enough to stop a point early within
    // 12 runs. (The guarded rule's skewness check asks for more runs than that of any
    // but near-symmetric samples; this test is about what a stop leaves stored.)
    let loose = format!(
        "{}rule = \"first-look\"\n",
        PRECISION.replace("0.08", "0.25")
    );
    let sequential = write(dir, "seq.toml", &spec_text(SEQUENTIAL, &loose));
    let fixed = write(dir, "fixed.toml", &spec_text("12", ""));

    let one = dir.join("one");
    let err = ok(&linkrev(&[
        "sweep",
        &sequential,
        "--threads",
        "1",
        "--results",
        one.to_str().unwrap(),
    ]));
    assert!(err.contains("wave 1: 2 points"), "{err}");
    assert!(err.contains("complete: every point met its target or reached max"));
    let two = dir.join("two");
    ok(&linkrev(&[
        "sweep",
        &sequential,
        "--threads",
        "2",
        "--results",
        two.to_str().unwrap(),
    ]));
    for t in linkrev::results::store::tables() {
        let name = format!("{t}.parquet");
        assert_eq!(
            std::fs::read(one.join(&name)).unwrap(),
            std::fs::read(two.join(&name)).unwrap(),
            "{name} differs between 1 and 2 threads"
        );
    }

    // Shards taking turns, each run as often as it has work: the same tables.
    let sharded = dir.join("sharded");
    let s = sharded.to_str().unwrap();
    for _ in 0..20 {
        for shard in ["1/2", "2/2"] {
            ok(&linkrev(&[
                "sweep",
                &sequential,
                "--shard",
                shard,
                "--results",
                s,
            ]));
        }
        let merged = linkrev(&["merge", s]);
        if merged.status.success() {
            break;
        }
        assert_eq!(merged.status.code(), Some(1), "missing runs: exit 1");
    }
    for t in linkrev::results::store::tables() {
        let name = format!("{t}.parquet");
        assert_eq!(
            std::fs::read(one.join(&name)).unwrap(),
            std::fs::read(sharded.join(&name)).unwrap(),
            "{name} differs between one process and shards in turns"
        );
    }

    // Every stored run is the fixed sweep's run of the same key, to the bit.
    let whole = dir.join("fixed");
    ok(&linkrev(&[
        "sweep",
        &fixed,
        "--results",
        whole.to_str().unwrap(),
    ]));
    let stopped = runs(&one);
    let all = runs(&whole);
    assert!(
        stopped.height() < all.height(),
        "the target stopped some point early"
    );
    let drop = ["experiment", "tool_version"];
    let stopped = stopped.drop_many(drop);
    let all = all.drop_many(drop);
    let index = |df: &DataFrame| -> Vec<u64> {
        df.column("run_index")
            .unwrap()
            .u64()
            .unwrap()
            .into_no_null_iter()
            .collect()
    };
    let keep: Vec<u64> = index(&stopped);
    let mask: BooleanChunked = index(&all).iter().map(|i| keep.contains(i)).collect();
    let subset = all.filter(&mask).unwrap();
    assert!(
        subset.equals_missing(&stopped),
        "runs of the stopped sweep differ from the fixed sweep's"
    );

    // merge and report name each point's replications and status.
    let merged = linkrev(&["merge", one.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&merged.stdout);
    assert!(
        text.contains("rate=0.2") && text.contains("rate=1.0"),
        "{text}"
    );
    let report = dir.join("report");
    ok(&linkrev(&[
        "report",
        one.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]));
    let precision = std::fs::read_to_string(report.join("data/_precision.csv")).unwrap();
    assert_eq!(precision.lines().count(), 3, "{precision}");
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(page.contains("id=\"precision\""));
}

#[test]
fn bad_precision_settings_are_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 15] = [
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_men\"]\nrelative_half_width = 0.05\n",
            "precision.metrics[0]: `wait_men` is not a metric of this spec's algorithms; did you mean `wait_mean`?",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_mean\"]\nrelative_half_width = 0.0\n",
            "precision.relative_half_width: must be above 0",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_mean\"]\nhalf_width = -1\n",
            "precision.half_width: must be above 0",
        ),
        (
            "{ min = 20, max = 10, batch = 5 }",
            PRECISION,
            "replications.min: min (20) is greater than max (10)",
        ),
        (
            "{ min = 5, max = 10, batch = 0 }",
            PRECISION,
            "replications.batch: must be a whole number from 1 to 4294967295, got 0",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_mean\"]\nrelative_half_width = 0.05\npaired = \"me-krl\"\n",
            "precision.paired: `me-krl` is not an algorithm of this spec",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_mean\"]\nrelative_half_width = 0.05\nconfidence = 95\n",
            "precision.confidence: wrong type",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"wait_mean\"]\nrelative_half_width = 0.05\nrule = \"sometimes\"\n",
            "precision.rule: `sometimes` is not a stopping rule (one of: guarded, first-look)",
        ),
        (
            SEQUENTIAL,
            "",
            "replications: replications from min to max need a [precision]",
        ),
        (
            SEQUENTIAL,
            "[precision]\nrelative_half_width = { wait_men = 0.05 }\n",
            "precision.relative_half_width.wait_men: `wait_men` is not a metric of this spec's algorithms; did you mean `wait_mean`?",
        ),
        (
            SEQUENTIAL,
            "[precision]\nhalf_width = {}\n",
            "precision.half_width: an empty table targets nothing",
        ),
        (
            SEQUENTIAL,
            "[precision]\nrelative_half_width = 0.05\n",
            "precision.relative_half_width: a number targets the metrics of `metrics`, which is missing",
        ),
        (
            SEQUENTIAL,
            "[precision]\nmetrics = [\"msgs_per_cs\"]\nhalf_width = { wait_mean = 0.5 }\n",
            "precision.metrics[0]: the metrics of `metrics` have no target",
        ),
        (
            SEQUENTIAL,
            "[precision]\nhalf_width = { msgs_per_cs = \"tight\" }\n",
            "precision.half_width.msgs_per_cs: wrong type: expected a number",
        ),
        (
            "10",
            PRECISION,
            "replications: a [precision] target needs replications = { min",
        ),
    ];
    for (i, (replications, precision, expected)) in cases.iter().enumerate() {
        let path = write(
            tmp.path(),
            &format!("bad{i}.toml"),
            &spec_text(replications, precision),
        );
        let out = linkrev(&["sweep", &path, "--dry-run"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {i}: {err}");
        assert!(err.contains(expected), "case {i}: {err}");
        // file:line: key: problem.
        let file = format!("bad{i}.toml:");
        let after = err.split(&file).nth(1).unwrap_or("");
        let line = after.split(':').next().unwrap_or("");
        assert!(line.parse::<u32>().is_ok(), "case {i} has no line: {err}");
    }
}

/// The same study end to end: swept for real, then reported with the paired figure
/// RL − Raymond (discovery). Every variant at a point has the same runs, and the
/// figure pairs every one of them: no caption speaks of runs without a partner.
#[test]
fn a_swept_variant_study_pairs_every_run_in_its_figure() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "variants.toml",
        &variants_spec(
            "{ min = 3, max = 9, batch = 3 }",
            "relative_half_width = 0.02",
        ),
    );
    let results = dir.path().join("results");
    ok(&linkrev(&[
        "sweep",
        &spec,
        "--results",
        results.to_str().unwrap(),
    ]));
    let table = runs(&results);
    let count = |nodes: i64, variant: &str| {
        let algorithm = table.column("algorithm").unwrap().str().unwrap().clone();
        let routing = table
            .column("routing")
            .ok()
            .map(|c| c.str().unwrap().clone());
        let n = table
            .column("nodes")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap();
        let n = n.i64().unwrap().clone();
        (0..table.height())
            .filter(|&i| n.get(i) == Some(nodes))
            .filter(|&i| match variant {
                "me-rl" => algorithm.get(i) == Some("me-rl"),
                routing_value => {
                    algorithm.get(i) == Some("me-raymond")
                        && routing.as_ref().and_then(|r| r.get(i)) == Some(routing_value)
                }
            })
            .count()
    };
    for nodes in [6, 8] {
        let counts = [
            count(nodes, "me-rl"),
            count(nodes, "oracle"),
            count(nodes, "discovery"),
        ];
        assert!(
            counts[0] >= 3 && counts.iter().all(|&c| c == counts[0]),
            "nodes={nodes}: {counts:?}"
        );
    }
    let figures = write(
        dir.path(),
        "variants.figures.toml",
        r#"[[figure]]
name = "msgs-paired-discovery"
kind = "paired"
x = "nodes"
y = "msgs_per_cs"
a = "me-rl"
b = "me-raymond routing=discovery"

[[figure]]
name = "msgs-oracle"
x = "nodes"
y = "msgs_per_cs"
series = "variant"
filter = { routing = "oracle" }
"#,
    );
    let report = dir.path().join("report");
    ok(&linkrev(&[
        "report",
        results.to_str().unwrap(),
        "--figures",
        &figures,
        "--out",
        report.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(page.contains("msgs-paired-discovery"), "no paired figure");
    assert!(!page.contains("no partner"), "a run without a partner");

    // ±2% from at most 9 runs: the points stop at max short of the target, and the
    // figures ring them and say how far they got.
    let figs = report.join("figures");
    let caption = std::fs::read_to_string(figs.join("msgs-paired-discovery.caption.txt")).unwrap();
    assert!(caption.contains("Ringed: "), "{caption}");
    assert!(caption.contains("at n = 9: "), "{caption}");
    let svg = std::fs::read_to_string(figs.join("msgs-paired-discovery.svg")).unwrap();
    assert!(svg.contains("stroke=\"#666666\""), "no ring drawn");
    let tex = std::fs::read_to_string(figs.join("msgs-paired-discovery.tex")).unwrap();
    assert!(
        tex.contains("\\addplot[only marks, forget plot, mark=o"),
        "no ring in the .tex"
    );

    // A filter on Raymond's routing keeps RL, which has no routing, and says so.
    let caption = std::fs::read_to_string(figs.join("msgs-oracle.caption.txt")).unwrap();
    assert!(
        caption.contains("RL (me-rl), which has no `routing`, is kept whole"),
        "{caption}"
    );
    let points = std::fs::read_to_string(figs.join("msgs-oracle.csv")).unwrap();
    assert!(points.lines().any(|l| l.starts_with("RL,")), "{points}");
    assert!(
        points
            .lines()
            .any(|l| l.starts_with("Raymond (oracle routing),"))
    );
    assert!(!points.contains("discovery"), "{points}");
}
