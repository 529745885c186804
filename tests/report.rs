//! Figure specs, figures built from real stored results (checked against statistics
//! computed here by hand from the runs and requests tables), and `linkrev report` end
//! to end through the binary.

#[path = "common/report_data.rs"]
mod report_data;

use linkrev::plot::LineKind;
use linkrev::report::figspec::{self, FigureKind};
use linkrev::report::figures::{self, MAX_ECDF_POINTS, ecdf_points};
use linkrev::report::{Experiment, default_figures};
use polars::prelude::*;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

/// RL vs Raymond: 2 speeds × 2 rates × 2 algorithms × 3 replications, plus leader
/// election along the speeds (3 replications): 30 runs, stored once per test binary.
const SPEC: &str = r#"name = "fig"
master_seed = 11
replications = 3
algorithms = ["me-rl", "me-raymond", "le-malpani"]

[mobility]
nodes = 10
area = "600x300"
speed_min = 1.0
speed_max = [2.0, 10.0]
pause = 10.0
duration = 60.0

[workload]
rate = [0.05, 2.0]
cs_time = 0.05
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    results: PathBuf,
    root: PathBuf,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let spec = root.join("fig.toml");
        std::fs::write(&spec, SPEC).unwrap();
        let results = root.join("results");
        let out = linkrev(&[
            "sweep",
            spec.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Fixture {
            _tmp: tmp,
            results,
            root,
        }
    })
}

fn experiment() -> Experiment {
    Experiment::open(&fixture().results).unwrap()
}

fn figure(text: &str) -> figspec::FigureSpec {
    figspec::parse(text, "figs.toml").unwrap().remove(0)
}

fn f64s(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
    let c = df.column(name).unwrap().cast(&DataType::Float64).unwrap();
    c.f64().unwrap().iter().collect()
}

fn texts(df: &DataFrame, name: &str) -> Vec<Option<String>> {
    figures::column_text(df, name).unwrap()
}

/// Mean and 95% CI half-width of three values (t quantile 4.302653 for 2 degrees of
/// freedom, from the tables).
fn mean_ci3(v: &[f64]) -> (f64, f64) {
    assert_eq!(v.len(), 3);
    let mean = v.iter().sum::<f64>() / 3.0;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0;
    (mean, 4.302_653 * var.sqrt() / 3f64.sqrt())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn figure_spec_errors_name_file_line_and_field() {
    let cases: &[(&str, &str)] = &[
        (
            "[[figure]]\nname = \"a\"\nx = \"rate\"\ny = \"wait_mean\"\ncolour = 1\n",
            "figs.toml:5: figure.colour: unknown field `colour`",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"rate\"\ny = \"wait_mean\"\nlog_x = \"yes\"\n",
            "figs.toml:5: figure.log_x: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "[[figure]]\nname = 5\n",
            "figs.toml:2: figure.name: invalid type",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"rate\"\n",
            "figure.y: missing",
        ),
        (
            "[[figure]]\nname = \"a\"\nkind = \"ecdf\"\nx = \"wait_s\"\ny = \"wait_mean\"\n",
            "figure.y: not used by ecdf",
        ),
        (
            "[[figure]]\nname = \"a\"\nkind = \"paired\"\nx = \"rate\"\ny = \"w\"\na = \"me-rl\"\nb = \"me-rl\"\n",
            "figure.b: equals a",
        ),
        (
            "[[figure]]\nname = \"a\"\nkind = \"paired\"\nx = \"rate\"\ny = \"w\"\na = \"me-rl\"\nb = \"raymond\"\n",
            "figure.b: `raymond` is not an algorithm",
        ),
        (
            "[[figure]]\nname = \"a b\"\nx = \"rate\"\ny = \"w\"\n",
            "figure.name",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"r\"\ny = \"w\"\n\n[[figure]]\nname = \"a\"\nx = \"r\"\ny = \"w\"\n",
            "figs.toml:7: figure.name: `a` is used twice (first at line 1)",
        ),
        (
            "[[figure]]\nname = \"a\"\nkind = \"bar\"\nx = \"r\"\ny = \"w\"\n",
            "figs.toml:3",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"r\"\ny = \"w\"\nfilter = { rate = [] }\n",
            "figure.filter.rate: an empty list",
        ),
        ("title = \"x\"\n", "figs.toml:1: title: unknown field"),
        (
            "[[figure]]\nname = \"_a\"\nx = \"r\"\ny = \"w\"\n",
            "figure.name",
        ),
        (
            "[[figure]]\nname = \"a--b\"\nx = \"r\"\ny = \"w\"\n",
            "figure.name",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"rate\"\ny = \"w\"\nfacet = \"rate\"\n",
            "figure.facet: `rate` is already x",
        ),
        (
            "[[figure]]\nname = \"a\"\nx = \"rate\"\ny = \"w\"\nseries = [\"algorithm\", \"rate\"]\n",
            "figure.series: `rate` is already x",
        ),
        (
            "[[figure]]\nname = \"a\"\nkind = \"paired\"\nx = \"rate\"\ny = \"w\"\na = \"me-rl\"\nb = \"me-raymond\"\nfacet = \"replication\"\n",
            "figure.facet: a paired figure pairs runs",
        ),
        ("", "no [[figure]] tables"),
    ];
    for (text, expected) in cases {
        let e = figspec::parse(text, "figs.toml").unwrap_err().to_string();
        assert!(e.contains(expected), "{text:?}: `{e}` lacks `{expected}`");
        assert!(e.starts_with("figs.toml"), "{e}");
    }
    let ok = figure(
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_mean\"\nstatistic = \"p95\"\n\
         series = [\"algorithm\", \"speed_max\"]\nfilter = { speed_max = 2, algorithm = \"me-rl\" }\n",
    );
    assert_eq!(ok.series, ["algorithm", "speed_max"]);
    assert_eq!(ok.filter.len(), 2);
    assert!(matches!(ok.kind, FigureKind::Line { .. }));
}

#[test]
fn ecdf_points_are_exact_and_thinned_to_a_bound() {
    // 4 finished of 5 events: F(1) = 2/5, F(2) = 3/5, F(5) = 4/5 (the fifth never ended).
    let p = ecdf_points(&[1.0, 1.0, 2.0, 5.0], 5);
    let xy: Vec<(f64, f64)> = p.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(xy, [(1.0, 0.4), (2.0, 0.6), (5.0, 0.8)]);
    assert!(ecdf_points(&[], 3).is_empty());

    let values: Vec<f64> = (0..10_000).map(|i| f64::from(i) * 0.001).collect();
    let p = ecdf_points(&values, 10_000);
    assert_eq!(p.len(), MAX_ECDF_POINTS);
    assert_eq!((p[0].x, p[0].y), (0.0, 1e-4));
    let last = p.last().unwrap();
    assert_eq!((last.x, last.y), (9.999, 1.0));
    for w in p.windows(2) {
        assert!(w[0].x < w[1].x && w[0].y < w[1].y);
        // Each kept point is exact: F(x) = (index + 1) / n for distinct values.
        let i = (w[1].x / 0.001).round();
        assert!(close(w[1].y, (i + 1.0) / 10_000.0));
    }
}

#[test]
fn line_figure_plots_hand_computed_means_and_intervals() {
    let e = experiment();
    let spec = figure(
        "[[figure]]\nname = \"wait\"\nx = \"rate\"\ny = \"wait_mean\"\nfacet = \"speed_max\"\n\
         filter = { algorithm = [\"me-rl\", \"me-raymond\"] }\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    assert_eq!(fig.panels.len(), 2);
    assert_eq!(fig.panels[0].stem, "wait--speed_max-2");
    assert_eq!(fig.panels[1].stem, "wait--speed_max-10");

    // By hand: every run's wait_mean, grouped by (speed, algorithm, rate).
    let runs = &e.runs;
    let (alg, speed, rate, wait) = (
        texts(runs, "algorithm"),
        f64s(runs, "speed_max"),
        f64s(runs, "rate"),
        f64s(runs, "wait_mean"),
    );
    let mut groups: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for i in 0..runs.height() {
        if let (Some(a), Some(s), Some(r), Some(w)) = (&alg[i], speed[i], rate[i], wait[i]) {
            groups
                .entry((format!("{s}"), a.clone(), format!("{r}")))
                .or_default()
                .push(w);
        }
    }
    let mut checked = 0;
    for (panel, speed) in fig.panels.iter().zip(["2", "10"]) {
        assert!(
            panel
                .chart
                .title
                .contains(&format!("(max. speed {speed} m/s)")),
            "{}",
            panel.chart.title
        );
        let labels: Vec<&str> = panel
            .chart
            .series
            .iter()
            .map(|s| s.label.as_str())
            .collect();
        // Legends say the papers' names, not the registry's.
        assert_eq!(labels, ["Raymond", "RL"]);
        for s in &panel.chart.series {
            assert_eq!(s.points.len(), 2, "{}", s.label);
            for p in &s.points {
                let algorithm = if s.label == "RL" {
                    "me-rl"
                } else {
                    "me-raymond"
                };
                let v = &groups[&(speed.to_string(), algorithm.to_string(), format!("{}", p.x))];
                let (mean, half) = mean_ci3(v);
                assert!(close(p.y, mean), "{} {}: {} vs {mean}", s.label, p.x, p.y);
                assert!((p.low.unwrap() - (mean - half)).abs() < 1e-6 * (1.0 + half));
                assert!((p.high.unwrap() - (mean + half)).abs() < 1e-6 * (1.0 + half));
                checked += 1;
            }
        }
        // The table behind the panel holds the same numbers.
        assert_eq!(panel.table.height(), 4);
        let means = f64s(&panel.table, "mean");
        let plotted: Vec<f64> = panel
            .chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.y))
            .collect();
        for y in plotted {
            assert!(means.iter().any(|m| m.is_some_and(|m| close(m, y))));
        }
    }
    assert_eq!(checked, 8);
    assert!(fig.panels[0].note.contains("n = 3"));
}

#[test]
fn paired_figure_matches_per_replication_differences() {
    let e = experiment();
    let spec = figure(
        "[[figure]]\nname = \"d\"\nkind = \"paired\"\nx = \"rate\"\ny = \"wait_mean\"\n\
         a = \"me-rl\"\nb = \"me-raymond\"\nseries = \"speed_max\"\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    let panel = &fig.panels[0];
    assert_eq!(panel.chart.reference_y, Some(0.0));
    let runs = &e.runs;
    let (alg, speed, rate, rep, wait) = (
        texts(runs, "algorithm"),
        f64s(runs, "speed_max"),
        f64s(runs, "rate"),
        f64s(runs, "replication"),
        f64s(runs, "wait_mean"),
    );
    let mut by_pair: BTreeMap<(String, String, String), [Option<f64>; 2]> = BTreeMap::new();
    for i in 0..runs.height() {
        let side = match alg[i].as_deref() {
            Some("me-rl") => 0,
            Some("me-raymond") => 1,
            _ => continue,
        };
        let key = (
            format!("{}", speed[i].unwrap()),
            format!("{}", rate[i].unwrap()),
            format!("{}", rep[i].unwrap()),
        );
        by_pair.entry(key).or_default()[side] = wait[i];
    }
    assert_eq!(panel.chart.series.len(), 2);
    // Differences of a few milliseconds are drawn in ms (the table keeps seconds).
    let unit = if panel.chart.y_label.contains("(ms)") {
        1e3
    } else {
        1.0
    };
    for s in &panel.chart.series {
        let speed = s
            .label
            .strip_prefix("max. speed ")
            .and_then(|l| l.strip_suffix(" m/s"))
            .unwrap();
        for p in &s.points {
            let d: Vec<f64> = by_pair
                .iter()
                .filter(|((sp, r, _), _)| sp == speed && *r == format!("{}", p.x))
                .filter_map(|(_, [a, b])| Some((*a)? - (*b)?))
                .collect();
            let (mean, half) = mean_ci3(&d);
            let (mean, half) = (mean * unit, half * unit);
            assert!(close(p.y, mean), "{}: {} vs {mean}", s.label, p.y);
            assert!((p.high.unwrap() - p.low.unwrap() - 2.0 * half).abs() < 1e-6 * (1.0 + half));
        }
    }
}

#[test]
fn ecdf_figure_counts_unfinished_requests_in_the_denominator() {
    let e = experiment();
    let spec = figure(
        "[[figure]]\nname = \"w\"\nkind = \"ecdf\"\nx = \"wait_s\"\n\
         filter = { speed_max = 10, rate = 2.0 }\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    let panel = &fig.panels[0];
    assert_eq!(panel.chart.kind, LineKind::Steps);
    let requests = e.store.read_table("requests").unwrap();
    let (alg, speed, rate, wait) = (
        texts(&requests, "algorithm"),
        f64s(&requests, "speed_max"),
        f64s(&requests, "rate"),
        f64s(&requests, "wait_s"),
    );
    let mut unfinished = 0;
    for s in &panel.chart.series {
        let algorithm = match s.label.as_str() {
            "RL" => "me-rl",
            "Raymond" => "me-raymond",
            other => panic!("unexpected series {other}"),
        };
        let rows: Vec<Option<f64>> = (0..requests.height())
            .filter(|&i| {
                alg[i].as_deref() == Some(algorithm)
                    && speed[i] == Some(10.0)
                    && rate[i] == Some(2.0)
            })
            .map(|i| wait[i])
            .collect();
        let finished: Vec<f64> = rows.iter().flatten().copied().collect();
        assert!(!rows.is_empty());
        unfinished += rows.len() - finished.len();
        let last = s.points.last().unwrap();
        assert!(close(last.y, finished.len() as f64 / rows.len() as f64));
        assert_eq!(last.x, finished.iter().copied().fold(f64::MIN, f64::max));
        assert!(s.points.len() <= MAX_ECDF_POINTS);
        assert!(
            s.points
                .windows(2)
                .all(|w| w[0].x < w[1].x && w[0].y < w[1].y)
        );
    }
    // The point of the test: some requests were still waiting when the runs ended.
    assert!(unfinished > 0, "the fixture must leave requests unserved");
    assert_eq!(panel.chart.reference_y, Some(1.0), "the line F = 1");
}

#[test]
fn distribution_quantiles_count_unfinished_events_as_infinite() {
    use linkrev::report::figures::quantile_of_all;
    // [1, 2, 3, inf]: the median interpolates 2 and 3; the p95 lies among the unfinished.
    assert_eq!(quantile_of_all(&[1.0, 2.0, 3.0], 4, 0.5), Some(2.5));
    assert_eq!(quantile_of_all(&[1.0, 2.0, 3.0], 4, 0.95), None);
    assert_eq!(quantile_of_all(&[1.0, 2.0, 3.0], 3, 0.5), Some(2.0));
    assert_eq!(quantile_of_all(&[], 2, 0.5), None);
}

#[test]
fn figures_refuse_typos_pooling_and_absent_values() {
    let e = experiment();
    let err = |text: &str| {
        let spec = figure(text);
        match figures::build(&spec, &e) {
            Ok(_) => panic!("{text} should fail"),
            Err(e) => format!("{e:#}"),
        }
    };
    let head = "[[figure]]\nname = \"f\"\n";
    let e1 = err(&format!(
        "{head}x = \"rate\"\ny = \"wait_men\"\nfacet = \"speed_max\"\n\
         filter = {{ algorithm = \"me-rl\" }}\n"
    ));
    assert!(
        e1.contains("figs.toml:4: figure.y: no column `wait_men`"),
        "{e1}"
    );
    assert!(e1.contains("did you mean `wait_mean`?"), "{e1}");
    // speed_max varies but is not named: the figure would average over it.
    let e2 = err(&format!(
        "{head}x = \"rate\"\ny = \"wait_mean\"\nfilter = {{ algorithm = \"me-rl\" }}\n"
    ));
    assert!(
        e2.contains("sweep axis `speed_max` still takes 2 values"),
        "{e2}"
    );
    let e3 = err(&format!(
        "{head}x = \"rate\"\ny = \"wait_mean\"\nfacet = \"speed_max\"\n\
         filter = {{ algorithm = [\"me-rl\", \"me-rl2\"] }}\n"
    ));
    assert!(
        e3.contains("figure.filter.algorithm: no row has algorithm = me-rl2"),
        "{e3}"
    );
    let e4 = err(&format!(
        "{head}x = \"algorithm\"\ny = \"wait_mean\"\nseries = \"speed_max\"\n"
    ));
    assert!(e4.contains("figure.x: `algorithm` is not numeric"), "{e4}");
    let e5 = err(&format!(
        "{head}x = \"rate\"\ny = \"wait_mean\"\nseries = \"speed_max\"\n"
    ));
    assert!(e5.contains("mix the algorithms"), "{e5}");
    let e7 = err(&format!("{head}kind = \"ecdf\"\nx = \"rate\"\n"));
    assert!(
        e7.contains("figure.x: `rate` is not a per-event metric"),
        "{e7}"
    );
    let e6 = err(&format!(
        "{head}x = \"rate\"\ny = \"wait_mean\"\nfacet = \"speed_max\"\n\
         filter = {{ speed_max = \"fast\" }}\n"
    ));
    assert!(e6.contains("`speed_max` is numeric"), "{e6}");
}

#[test]
fn default_figures_cover_each_metric_and_axis_without_pooling() {
    let e = experiment();
    let specs = default_figures(std::slice::from_ref(&e));
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "fig-wait_mean-vs-rate",
        "fig-msgs_per_cs-vs-speed_max",
        "fig-wait_mean-paired-vs-speed_max",
        "fig-conv_time_mean-vs-speed_max",
        "fig-msgs_per_change-vs-speed_max",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    // Leader election has no workload axis to be plotted against.
    assert!(!names.contains(&"fig-conv_time_mean-vs-rate"));
    for spec in &specs {
        let fig = figures::build(spec, &e).unwrap();
        assert!(!fig.panels.is_empty());
    }
}

fn write_figures(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("figures.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const FIGURES: &str = r#"[[figure]]
name = "wait"
x = "rate"
y = "wait_mean"
facet = "speed_max"
filter = { algorithm = ["me-rl", "me-raymond"] }
log_x = true
interval = "band"

[[figure]]
name = "wait-ecdf"
kind = "ecdf"
x = "wait_s"
filter = { speed_max = 10, rate = 2.0 }

[[figure]]
name = "conv"
x = "speed_max"
y = "conv_time_mean"
filter = { algorithm = "le-malpani" }
size = "two-column"
"#;

#[test]
fn report_writes_page_figures_and_data_and_replaces_the_old_one() {
    let fx = fixture();
    let tmp = tempfile::tempdir_in(&fx.root).unwrap();
    let figs = write_figures(tmp.path(), FIGURES);
    let out = tmp.path().join("reports").join("r");
    let args = [
        "report",
        fx.results.to_str().unwrap(),
        "--figures",
        figs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let run = linkrev(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        out.join("index.html").display().to_string()
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let stems = [
        "wait--speed_max-2",
        "wait--speed_max-10",
        "wait-ecdf",
        "conv",
    ];
    assert_eq!(page.matches("<svg").count(), stems.len());
    for stem in stems {
        for ext in ["svg", "png", "csv", "tex"] {
            let f = out.join("figures").join(format!("{stem}.{ext}"));
            assert!(f.is_file(), "{}", f.display());
        }
        assert!(out.join("data").join(format!("{stem}.csv")).is_file());
        assert!(page.contains(&format!("href=\"figures/{stem}.png\"")));
    }
    // Safety totals, run counts, the specs verbatim and the version, in plain sight.
    assert!(page.contains("id=\"safety\""));
    assert!(page.contains("30 of 30 planned runs stored"), "run count");
    assert!(page.contains(&format!("linkrev {}", env!("CARGO_PKG_VERSION"))));
    assert!(page.contains("name = &quot;fig&quot;"), "experiment spec");
    assert!(page.contains("name = &quot;wait-ecdf&quot;"), "figure spec");
    let runs_csv = std::fs::read_to_string(out.join("data/_runs.csv")).unwrap();
    assert!(runs_csv.starts_with("experiment,algorithm,planned,stored,safety_violations"));
    assert_eq!(runs_csv.lines().count(), 4);
    // The plotted CSV of a panel holds exactly its points: 2 series × 2 rates.
    let csv = std::fs::read_to_string(out.join("figures/wait--speed_max-2.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4);

    // A file added to the report is not linkrev's: the report is not replaced, and
    // the file is named. Without it, the same inputs give the same bytes.
    std::fs::write(out.join("figures/stale.svg"), "old").unwrap();
    let refused = linkrev(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("stale.svg was not written by linkrev")
    );
    assert!(out.join("figures/stale.svg").is_file());
    std::fs::remove_file(out.join("figures/stale.svg")).unwrap();
    let again = linkrev(&args);
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        page
    );
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["r"], "no staging directories left behind");
}

#[test]
fn report_errors_exit_2_and_leave_no_output() {
    let fx = fixture();
    let tmp = tempfile::tempdir_in(&fx.root).unwrap();
    let results = fx.results.to_str().unwrap();
    let out = tmp.path().join("out");
    let bad = write_figures(
        tmp.path(),
        &FIGURES.replace("y = \"conv_time_mean\"", "y = \"conv_time\""),
    );
    let run = linkrev(&[
        "report",
        results,
        "--figures",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:19: figure.y: no column `conv_time`",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written for a bad figure spec");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);

    // A directory that is not a report is never replaced.
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "precious").unwrap();
    let run = linkrev(&["report", results, "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("was not written whole by this linkrev"));
    assert!(out.join("thesis.tex").is_file());

    // Not a results directory.
    let run = linkrev(&["report", tmp.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("not a results directory"));
}

/// Every shipped figure spec draws from its study: the study runs at a toy size (2
/// replications of 30 s; same axes, same columns) and `linkrev report` must build every
/// figure of the spec from it.
#[test]
fn shipped_figure_specs_draw_from_their_studies() {
    let analysis = Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis");
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(&analysis).unwrap() {
        let figures = entry.unwrap().path();
        let Some(stem) = figures
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".figures.toml"))
        else {
            continue;
        };
        let study = analysis.join(format!("{stem}.toml"));
        let mut spec: toml::Table = toml::from_str(&std::fs::read_to_string(&study).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", study.display()));
        spec.insert("replications".into(), 2.into());
        // A toy size of a study with a precision target: two runs, no target.
        spec.remove("precision");
        if let Some(toml::Value::Table(m)) = spec.get_mut("mobility") {
            m.insert("duration".into(), 30.0.into());
        }
        let toy = tmp.path().join(format!("{stem}.toml"));
        std::fs::write(&toy, toml::to_string(&spec).unwrap()).unwrap();
        let results = tmp.path().join("results").join(stem);
        let run = linkrev(&[
            "sweep",
            toy.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let out = tmp.path().join("reports").join(stem);
        let run = linkrev(&[
            "report",
            results.to_str().unwrap(),
            "--figures",
            figures.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            run.status.success(),
            "{}: {}",
            figures.display(),
            String::from_utf8_lossy(&run.stderr)
        );
        report_data::intervals_in_support(&out.join("data"));
        let specs = figspec::load(&figures).unwrap();
        let page = std::fs::read_to_string(out.join("index.html")).unwrap();
        for f in &specs {
            assert!(
                page.contains(&format!("id=\"fig-{}\"", f.name)),
                "{}",
                f.name
            );
        }
        checked += 1;
    }
    assert_eq!(
        checked, 8,
        "me_load, me_speed, me_variants, le_speed, le_nodes, le_variants, le_variants_dense, \
         gb_reversal"
    );
}

#[test]
fn captions_warn_when_runs_behind_a_figure_violated_safety() {
    let runs = df!(
        "run_index" => [0u64, 1, 2, 3],
        "safety_violations" => [0u64, 3, 0, 1],
        "aborted" => [None, None, Some("storm"), None],
    )
    .unwrap();
    let behind = |idx: &[u64]| df!("run_index" => idx.to_vec()).unwrap();
    assert_eq!(figures::incidents_note(&behind(&[0]), &runs).unwrap(), None);
    let note = figures::incidents_note(&behind(&[0, 1, 2, 2]), &runs)
        .unwrap()
        .unwrap();
    assert!(
        note.contains(
            "Of the 3 runs behind this figure, 1 had safety violations and 1 were stopped"
        ),
        "{note}"
    );
}

/// A sweep still running (here: one shard of two stored) can be reported: the page says
/// how many runs are stored, and paired figures count the runs without a partner.
#[test]
fn a_partial_sweep_is_reported_with_its_run_count() {
    let fx = fixture();
    let tmp = tempfile::tempdir_in(&fx.root).unwrap();
    let spec = tmp.path().join("fig.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let results = tmp.path().join("half");
    let run = linkrev(&[
        "sweep",
        spec.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--shard",
        "1/2",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let figs = write_figures(
        tmp.path(),
        "[[figure]]\nname = \"d\"\nkind = \"paired\"\nx = \"rate\"\ny = \"wait_mean\"\n\
         a = \"me-rl\"\nb = \"me-raymond\"\nseries = \"speed_max\"\n",
    );
    let out = tmp.path().join("report");
    let run = linkrev(&[
        "report",
        results.to_str().unwrap(),
        "--figures",
        figs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Shard 1 of 2 holds the even run indices: 15 of the 30.
    assert!(page.contains("15 of 30 planned runs stored"), "run count");
    let e = Experiment::open(&results).unwrap();
    let spec = figspec::load(&figs).unwrap().remove(0);
    let fig = figures::build(&spec, &e).unwrap();
    let unpaired: u64 = fig.panels[0]
        .table
        .column("unpaired")
        .unwrap()
        .u64()
        .unwrap()
        .sum()
        .unwrap();
    // By hand: ME runs of the shard whose partner (other algorithm, same point and
    // replication) is not stored.
    let (alg, speed, rate, rep) = (
        texts(&e.runs, "algorithm"),
        f64s(&e.runs, "speed_max"),
        f64s(&e.runs, "rate"),
        f64s(&e.runs, "replication"),
    );
    let key = |i: usize| format!("{:?}/{:?}/{:?}", speed[i], rate[i], rep[i]);
    let me: Vec<usize> = (0..e.runs.height())
        .filter(|&i| alg[i].as_deref().is_some_and(|a| a.starts_with("me-")))
        .collect();
    let alone = me
        .iter()
        .filter(|&&i| !me.iter().any(|&j| j != i && key(j) == key(i)))
        .count() as u64;
    assert!(alone > 0, "the shard split must leave some runs unpaired");
    assert_eq!(unpaired, alone);
    assert!(
        fig.panels[0]
            .note
            .contains(&format!("{alone} runs had no partner"))
    );

    // A series keeps its colour and marker in every panel, even where another panel
    // lacks some series.
    let faceted = figure(
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_mean\"\nfacet = \"speed_max\"\n\
         filter = { algorithm = [\"me-rl\", \"me-raymond\"] }\n",
    );
    let fig = figures::build(&faceted, &e).unwrap();
    let mut style_of: BTreeMap<String, linkrev::plot::Look> = BTreeMap::new();
    for panel in &fig.panels {
        for (i, s) in panel.chart.series.iter().enumerate() {
            let style = panel.chart.look(i);
            assert_eq!(
                *style_of.entry(s.label.clone()).or_insert(style),
                style,
                "{}",
                s.label
            );
        }
    }
}

#[test]
fn results_inside_the_output_directory_are_refused() {
    let fx = fixture();
    let tmp = tempfile::tempdir_in(&fx.root).unwrap();
    let out = tmp.path().join("r");
    let run = linkrev(&[
        "report",
        fx.results.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    // Results kept inside an old report: replacing the report would delete them.
    let inner = out.join("results");
    let copy = Command::new("cp")
        .args(["-r", fx.results.to_str().unwrap(), inner.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copy.success());
    let run = linkrev(&[
        "report",
        inner.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    // Refused twice over: the results are not in the report's manifest, and they lie
    // inside what would be replaced.
    assert!(String::from_utf8_lossy(&run.stderr).contains("was not written by linkrev"));
    assert!(inner.join("runs.parquet").is_file());
}

/// Compaction writes the compacted table before removing the chunks: after a kill in
/// between, both hold the same runs, which must be counted once (and `merge` finishes
/// the job).
#[test]
fn runs_in_chunks_and_the_compacted_table_count_once() {
    let fx = fixture();
    let tmp = tempfile::tempdir_in(&fx.root).unwrap();
    let spec = tmp.path().join("fig.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let results = tmp.path().join("res");
    let r = results.to_str().unwrap();
    // A whole plan as one shard: stored in chunks, not compacted.
    let run = linkrev(&[
        "sweep",
        spec.to_str().unwrap(),
        "--results",
        r,
        "--shard",
        "1/1",
    ]);
    assert!(run.status.success());
    let chunks = tmp.path().join("chunks");
    let copy = |from: &Path, to: &Path| {
        let ok = Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    copy(&results.join("runs"), &chunks);
    assert!(linkrev(&["merge", r]).status.success());
    // The kill: chunks back beside the compacted table.
    std::fs::remove_dir_all(results.join("runs")).unwrap();
    copy(&chunks, &results.join("runs"));
    let e = Experiment::open(&results).unwrap();
    assert_eq!(e.runs.height(), 30);
    let out = tmp.path().join("report");
    let run = linkrev(&["report", r, "--out", out.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("30 of 30 planned runs stored"));
    // `merge` completes the interrupted compaction.
    let run = linkrev(&["merge", r]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(std::fs::read_dir(results.join("runs")).unwrap().count(), 0);
}

/// Seeds are full-range `u64`: the report prints them whole (they used to show as `?`
/// above 2^63, so half of the incidents could not be replayed from the page).
#[test]
fn text_of_large_unsigned_values_is_exact() {
    let df = DataFrame::new(2, vec![Column::new("seed".into(), vec![u64::MAX, 7u64])]).unwrap();
    assert_eq!(
        figures::column_text(&df, "seed").unwrap(),
        [Some(u64::MAX.to_string()), Some("7".to_string())]
    );
}

/// The per-run indicators follow the stored columns they are computed from.
#[test]
fn indicators_mark_violating_and_stopped_runs() {
    let e = experiment();
    let violations = f64s(&e.runs, "safety_violations");
    let aborted = figures::column_text(&e.runs, "aborted").unwrap();
    let violated = f64s(&e.runs, "violated");
    let stormed = f64s(&e.runs, "stormed");
    let cut_short = f64s(&e.runs, "cut_short");
    for i in 0..e.runs.height() {
        let v = violations[i].unwrap();
        assert_eq!(
            violated[i],
            Some(if v > 0.0 { 1.0 } else { 0.0 }),
            "row {i}"
        );
        let storm = aborted[i]
            .as_deref()
            .is_some_and(|r| r.contains("(a message storm)"));
        let other = aborted[i].is_some() && !storm;
        assert_eq!(stormed[i], Some(f64::from(u8::from(storm))), "row {i}");
        assert_eq!(cut_short[i], Some(f64::from(u8::from(other))), "row {i}");
    }
    assert_eq!(
        figures::column_label("violated"),
        "fraction of runs with a safety violation"
    );
}

/// Variants: Raymond with both routing modes and me-krl with two token counts, 2 rates ×
/// 3 replications (18 runs), stored once per test binary.
const VARIANTS_SPEC: &str = r#"name = "var"
master_seed = 4
replications = 3
algorithms = ["me-raymond", "me-krl"]

[mobility]
nodes = 10
area = "600x300"
speed_min = 1.0
speed_max = 10.0
pause = 10.0
duration = 60.0

[workload]
rate = [0.1, 1.0]
cs_time = 0.05

[params.me-raymond]
routing = ["oracle", "discovery"]

[params.me-krl]
k = [1, 2]
"#;

fn variants_experiment() -> Experiment {
    static RESULTS: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, results) = RESULTS.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let spec = tmp.path().join("var.toml");
        std::fs::write(&spec, VARIANTS_SPEC).unwrap();
        let results = tmp.path().join("results");
        let out = linkrev(&[
            "sweep",
            spec.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (tmp, results)
    });
    Experiment::open(results).unwrap()
}

#[test]
fn variants_name_the_parameters_that_vary_among_an_algorithms_runs() {
    let e = variants_experiment();
    let mut variants: Vec<String> = texts(&e.runs, "variant").into_iter().flatten().collect();
    variants.sort();
    variants.dedup();
    // `holder` and `forwarding` are fixed, so they are left out.
    assert_eq!(
        variants,
        [
            "me-krl k=1",
            "me-krl k=2",
            "me-raymond routing=discovery",
            "me-raymond routing=oracle"
        ]
    );
    // Where no parameter varies, the variant is the algorithm.
    let plain = experiment();
    assert_eq!(
        texts(&plain.runs, "variant"),
        texts(&plain.runs, "algorithm")
    );
}

/// The parts of a breakdown add up: a run's messages are split among the kinds, so at
/// each x the mean per-CS-entry counts of the kinds sum to the mean messages per CS
/// entry of the same runs, computed here from the runs table.
#[test]
fn a_breakdown_of_messages_by_kind_adds_up_to_messages_per_cs_entry() {
    let e = variants_experiment();
    let spec = figure(
        "[[figure]]\nname = \"k\"\nkind = \"breakdown\"\nx = \"rate\"\nfacet = \"variant\"\n\
         series = []\ny = [\"msgs_request_per_cs\", \"msgs_token_per_cs\", \
         \"msgs_link_info_per_cs\", \"msgs_route_request_per_cs\", \"msgs_route_reply_per_cs\"]\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    assert_eq!(fig.panels.len(), 4, "one panel per variant");
    let (variant, rate, per_cs) = (
        texts(&e.runs, "variant"),
        f64s(&e.runs, "rate"),
        f64s(&e.runs, "msgs_per_cs"),
    );
    let mut discovery_charged = false;
    for panel in &fig.panels {
        // A kind sent by no run of the variant is left out, and named in the caption.
        let left_out = panel
            .note
            .split("being zero at every point: ")
            .nth(1)
            .map_or(0, |names| names.matches("per CS entry").count());
        assert_eq!(panel.chart.series.len() + left_out, 5, "{}", panel.stem);
        // The panel's title names its variant in the legend's words.
        let legend = linkrev::report::legend::Legend::default();
        let name = variant
            .iter()
            .flatten()
            .find(|v| {
                panel
                    .chart
                    .title
                    .ends_with(&format!("({})", legend.label(v)))
            })
            .unwrap()
            .as_str();
        for x in [0.1, 1.0] {
            let parts: f64 = panel
                .chart
                .series
                .iter()
                .map(|s| s.points.iter().find(|p| p.x == x).map_or(0.0, |p| p.y))
                .sum();
            let whole: Vec<f64> = (0..e.runs.height())
                .filter(|&i| variant[i].as_deref() == Some(name) && rate[i] == Some(x))
                .filter_map(|i| per_cs[i])
                .collect();
            let whole = whole.iter().sum::<f64>() / whole.len() as f64;
            assert!(close(parts, whole), "{name} at {x}: {parts} vs {whole}");
        }
        let route = panel
            .chart
            .series
            .iter()
            .find(|s| s.label.starts_with("RouteRequest"));
        if name == "me-raymond routing=discovery" {
            discovery_charged = route.is_some_and(|r| r.points.iter().all(|p| p.y > 0.0));
        } else {
            assert!(
                route.is_none() && panel.note.contains("RouteRequest messages"),
                "{name} pays no routes, and the caption says so"
            );
        }
    }
    assert!(discovery_charged);
}

#[test]
fn paired_figures_pair_variants_and_name_them_when_one_is_missing() {
    let e = variants_experiment();
    let paired = |a: &str, b: &str| {
        figure(&format!(
            "[[figure]]\nname = \"d\"\nkind = \"paired\"\nx = \"rate\"\ny = \"msgs_per_cs\"\n\
             a = \"{a}\"\nb = \"{b}\"\n"
        ))
    };
    let fig = figures::build(
        &paired("me-raymond routing=discovery", "me-raymond routing=oracle"),
        &e,
    )
    .unwrap();
    let points = &fig.panels[0].chart.series[0].points;
    assert_eq!(points.len(), 2);
    assert!(
        points.iter().all(|p| p.y > 0.0),
        "discovery costs more: {points:?}"
    );
    let err = figures::build(&paired("me-raymond", "me-krl k=1"), &e)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("me-raymond routing=discovery"), "{err}");
}

/// `simultaneous = "sidak"` draws every interval of the figure at (0.95)^(1/m), m the
/// intervals drawn over all panels, and says so: each Student-t half-width grows by
/// t(2) at that level over t(2) at 95%.
#[test]
fn simultaneous_intervals_are_drawn_at_the_sidak_level_and_named() {
    let e = experiment();
    let text = "[[figure]]\nname = \"m\"\nx = \"rate\"\ny = \"msgs_per_cs\"\n\
                series = \"algorithm\"\nfacet = \"speed_max\"\n\
                filter = { algorithm = [\"me-rl\", \"me-raymond\"] }\n";
    let plain = figures::build(&figure(text), &e).unwrap();
    let together =
        figures::build(&figure(&format!("{text}simultaneous = \"sidak\"\n")), &e).unwrap();
    let m: usize = plain.panels.iter().map(|p| p.table.height()).sum();
    assert_eq!(m, 8, "2 speeds × 2 rates × 2 algorithms, 3 runs each");
    let level = 0.95_f64.powf(1.0 / m as f64);
    let t = |p: f64| StudentsT::new(0.0, 1.0, 2.0).unwrap().inverse_cdf(p);
    let widen = t((1.0 + level) / 2.0) / t(0.975);
    for (a, b) in plain.panels.iter().zip(&together.panels) {
        let (ha, hb) = (f64s(&a.table, "half_width"), f64s(&b.table, "half_width"));
        for (x, y) in ha.iter().zip(&hb) {
            let (x, y) = (x.unwrap(), y.unwrap());
            assert!((y / x - widen).abs() < 1e-9 * widen, "{y} / {x} vs {widen}");
        }
        assert!(
            b.note
                .contains("The figure's 8 intervals are simultaneous (Šidák)"),
            "{}",
            b.note
        );
        assert!(!a.note.contains("simultaneous"));
    }
}

/// A paired figure counts where a is below and above b by paired t tests, Holm-adjusted
/// at 5%: recomputed here from the runs, by hand.
#[test]
fn paired_captions_count_holm_adjusted_differences() {
    let e = experiment();
    let spec = figure(
        "[[figure]]\nname = \"h\"\nkind = \"paired\"\nx = \"rate\"\ny = \"msgs_per_cs\"\n\
         a = \"me-rl\"\nb = \"me-raymond\"\nseries = \"speed_max\"\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    let table = &fig.panels[0].table;
    let (mean, sd, n) = (f64s(table, "mean"), f64s(table, "sd"), f64s(table, "n"));
    let mut p: Vec<(f64, bool)> = Vec::new();
    for i in 0..table.height() {
        let (m, s, n) = (mean[i].unwrap(), sd[i].unwrap(), n[i].unwrap());
        let tdist = StudentsT::new(0.0, 1.0, n - 1.0).unwrap();
        let t = m / (s / n.sqrt());
        p.push((2.0 * (1.0 - tdist.cdf(t.abs())), m < 0.0));
    }
    // Holm by hand: sorted ascending, reject while p(i) ≤ 0.05 / (m − i).
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].0.total_cmp(&p[b].0));
    let (mut below, mut above) = (0, 0);
    for (i, &k) in order.iter().enumerate() {
        if p[k].0 > 0.05 / (p.len() - i) as f64 {
            break;
        }
        if p[k].1 { below += 1 } else { above += 1 }
    }
    let words = format!(
        "Over the figure's {} points, RL is below Raymond at {below} and above at {above}",
        p.len()
    );
    assert!(
        fig.panels[0].note.contains(&words),
        "{}\nwanted: {words}",
        fig.panels[0].note
    );
}

/// Intervals from fewer runs than the metric's least (`wait_mean`: 100) are counted as
/// rough in the caption and marked in the table; a metric without a least and an even
/// spread is not.
#[test]
fn intervals_from_too_few_runs_are_marked_rough() {
    let e = experiment();
    let fig = figures::build(
        &figure(
            "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_mean\"\nseries = \"algorithm\"\n\
                 facet = \"speed_max\"\nfilter = { algorithm = [\"me-rl\", \"me-raymond\"] }\n",
        ),
        &e,
    )
    .unwrap();
    for panel in &fig.panels {
        let rough = panel
            .table
            .column("ci_rough")
            .unwrap()
            .bool()
            .unwrap()
            .clone();
        assert!(rough.iter().all(|r| r == Some(true)), "3 runs < 100");
        assert!(
            panel
                .note
                .contains("intervals are rough: fewer than the 100 runs this metric needs"),
            "{}",
            panel.note
        );
    }
}

/// The series' labels, in drawing order, of every panel of `fig`.
fn legend_labels(fig: &figures::Figure) -> Vec<Vec<String>> {
    fig.panels
        .iter()
        .map(|p| p.chart.series.iter().map(|s| s.label.clone()).collect())
        .collect()
}

#[test]
fn legends_say_paper_names_and_take_the_authors_labels_and_styles() {
    let e = variants_experiment();
    let plain = figure(
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_rmean\"\nseries = \"variant\"\n",
    );
    let fig = figures::build(&plain, &e).unwrap();
    let mut labels = legend_labels(&fig).remove(0);
    labels.sort();
    assert_eq!(
        labels,
        [
            "Raymond (oracle routing)",
            "Raymond (route discovery)",
            "k-RL (k = 1)",
            "k-RL (k = 2)"
        ]
    );

    let chosen = figure(
        "[labels]\n\"me-krl k=2\" = \"file label\"\n\
         [styles]\n\"me-krl k=1\" = { marker = \"cross\" }\n\
         [[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_rmean\"\nseries = \"variant\"\n\
         labels = { \"me-krl k=2\" = \"two tokens\", \"me-raymond routing=oracle\" = \"Raymond\" }\n\
         styles = { \"me-raymond routing=discovery\" = { color = \"#000000\", marker = \"hollow-square\", line = \"dashed\" } }\n",
    );
    let fig = figures::build(&chosen, &e).unwrap();
    let chart = &fig.panels[0].chart;
    let look_of = |label: &str| {
        let i = chart.series.iter().position(|s| s.label == label).unwrap();
        chart.look(i)
    };
    // The figure's own entry wins over the file's.
    assert!(chart.series.iter().any(|s| s.label == "two tokens"));
    assert!(chart.series.iter().all(|s| s.label != "file label"));
    let discovery = look_of("Raymond (route discovery)");
    assert_eq!(discovery.color, (0, 0, 0));
    assert_eq!(discovery.marker, linkrev::plot::MarkerShape::HollowSquare);
    assert_eq!(discovery.dash, linkrev::plot::Dash::Dashed);
    assert_eq!(
        look_of("k-RL (k = 1)").marker,
        linkrev::plot::MarkerShape::Cross
    );
    // Every output of the panel says the label and draws the look.
    let svg = linkrev::plot::render_svg(chart).unwrap();
    assert!(svg.contains("two tokens") && svg.contains("Raymond (route discovery)"));
    let tex = linkrev::plot::pgfplots_tex(chart);
    assert!(tex.contains("{two tokens};"), "{tex}");
    assert!(tex.contains("red,0;green,0;blue,0"), "{tex}");

    // Two series the legend would call alike are refused: they could not be told apart.
    let clash = figure(
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_rmean\"\nseries = \"variant\"\n\n\
         labels = { \"me-krl k=1\" = \"k-RL\", \"me-krl k=2\" = \"k-RL\" }\n",
    );
    let err = figures::build(&clash, &e).err().unwrap().to_string();
    assert!(err.contains("both be labelled \"k-RL\""), "{err}");
    assert!(
        err.contains("figs.toml:7"),
        "at the line of `labels`: {err}"
    );
}

#[test]
fn a_label_entry_that_names_no_series_is_refused_with_what_it_could_name() {
    let tmp = tempfile::tempdir().unwrap();
    let e = variants_experiment();
    let figs = write_figures(
        tmp.path(),
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_rmean\"\nseries = \"variant\"\n\
         labels = { \"me-rl\" = \"RL\" }\n",
    );
    let out = tmp.path().join("report");
    let run = linkrev(&[
        "report",
        e.dir.to_str().unwrap(),
        "--figures",
        figs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("figures.toml:6"), "{stderr}");
    assert!(stderr.contains("\"me-rl\" names no series"), "{stderr}");
    assert!(
        stderr.contains("\"me-krl k=1\""),
        "names what it could name: {stderr}"
    );
    assert!(!out.exists(), "nothing written");

    // The same through `--labels`, the report-wide table.
    let labels = tmp.path().join("labels.toml");
    std::fs::write(
        &labels,
        "[labels]\n\"me-krl k=1\" = \"one token\"\n\"me-r1\" = \"typo\"\n",
    )
    .unwrap();
    let run = linkrev(&[
        "report",
        e.dir.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"me-r1\" names no series of any figure"),
        "{stderr}"
    );
}

#[test]
fn a_filter_on_a_parameter_some_algorithms_lack_keeps_them_and_says_so() {
    let e = variants_experiment();
    let spec = figure(
        "[[figure]]\nname = \"w\"\nx = \"rate\"\ny = \"wait_rmean\"\nseries = \"variant\"\n\
         filter = { routing = \"oracle\" }\n",
    );
    let fig = figures::build(&spec, &e).unwrap();
    let mut labels = legend_labels(&fig).remove(0);
    labels.sort();
    // Raymond's discovery runs go; k-RL, which has no routing, stays whole.
    assert_eq!(
        labels,
        ["Raymond (oracle routing)", "k-RL (k = 1)", "k-RL (k = 2)"]
    );
    let note = &fig.panels[0].note;
    assert!(
        note.contains("The filter routing = oracle applies to the algorithms with that parameter; k-RL (me-krl), which has no `routing`, is kept whole."),
        "{note}"
    );
    // Every k-RL run is behind the figure: 2 rates × 3 replications per k.
    let n: u64 = fig.panels[0]
        .table
        .column("n")
        .unwrap()
        .u64()
        .unwrap()
        .sum()
        .unwrap_or(0);
    assert_eq!(
        n,
        3 * 2 * 3,
        "k=1, k=2 and Raymond (oracle), 2 rates, 3 runs each"
    );
}

/// The first field of a CSV line, unquoted.
fn first_csv_field(line: &str) -> String {
    match line.strip_prefix('"') {
        Some(rest) => {
            let end = rest.find("\",").expect("a closing quote");
            rest[..end].replace("\"\"", "\"")
        }
        None => line.split(',').next().unwrap_or("").to_string(),
    }
}

#[test]
fn a_report_of_the_demo_with_a_label_map_names_no_algorithm_by_its_registry_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (report, results) = (tmp.path().join("report"), tmp.path().join("results"));
    let run = linkrev(&[
        "demo",
        "--quick",
        "--out",
        report.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let labels = tmp.path().join("labels.toml");
    std::fs::write(
        &labels,
        "[labels]\n\"me-rl\" = \"RL (ours)\"\n\"me-raymond routing=discovery\" = \"Raymond + discovery\"\n",
    )
    .unwrap();
    let mut dirs: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|d| d.unwrap().path().display().to_string())
        .collect();
    dirs.sort();
    let mapped = tmp.path().join("mapped");
    let mut args = vec!["report".to_string()];
    args.extend(dirs);
    args.extend([
        "--labels".into(),
        labels.display().to_string(),
        "--out".into(),
        mapped.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = linkrev(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let names = linkrev::registry::Algorithm::names();
    let mut legends = 0;
    let mut saw_mapped = false;
    for dir in [&report, &mapped] {
        for entry in std::fs::read_dir(dir.join("figures")).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let series: Vec<String> = match path.extension().and_then(|e| e.to_str()) {
                // The plotted points' CSV: its first column is the legend label.
                Some("csv") => text.lines().skip(1).map(first_csv_field).collect(),
                // The legend's entries: `\node[anchor=west, …] at (…) {label};`.
                Some("tex") => text
                    .lines()
                    .filter(|l| l.starts_with("\\node[anchor=west"))
                    .filter_map(|l| l.rsplit_once(" {"))
                    .map(|(_, label)| label.trim_end_matches("};").to_string())
                    .collect(),
                _ => continue,
            };
            for label in series {
                legends += 1;
                saw_mapped |= label.contains("RL (ours)");
                for name in &names {
                    assert!(!label.contains(name), "{}: {label}", path.display());
                }
            }
        }
    }
    assert!(legends > 100 && saw_mapped, "{legends} legend entries read");

    // Every figure file has its caption beside it, as the page prints it, and the
    // LaTeX ones compile.
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    let mut captions = Vec::new();
    for entry in std::fs::read_dir(report.join("figures")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".svg") else {
            continue;
        };
        let dir = report.join("figures");
        let text = std::fs::read_to_string(dir.join(format!("{stem}.caption.txt")))
            .unwrap_or_else(|_| panic!("no caption beside {name}"));
        let tex = std::fs::read_to_string(dir.join(format!("{stem}.caption.tex"))).unwrap();
        assert!(text.contains(" Experiment demo-"), "{stem}: {text}");
        assert!(tex.starts_with("\\caption{") && tex.trim_end().ends_with('}'));
        // The page's caption is the file's, after the title.
        // (its end: the title may hold a ". " of its own, "max. speed").
        let note = text.rsplit_once(" Experiment ").unwrap().0;
        let start = note.char_indices().rev().nth(150).map_or(0, |(i, _)| i);
        let note = &note[start..];
        let escaped = note
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('\'', "&#39;")
            .replace('"', "&quot;");
        assert!(page.contains(&escaped), "{stem}: the page lacks {escaped}");
        captions.push(format!(
            "\\begin{{figure}}\\input{{{stem}.caption.tex}}\\end{{figure}}\n"
        ));
    }
    assert!(captions.len() >= 12, "{} captions", captions.len());
    let has_latex = Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_latex {
        let doc = format!(
            "\\documentclass{{article}}\n\\begin{{document}}\n{}\\end{{document}}\n",
            captions.join("")
        );
        std::fs::write(report.join("figures/captions.tex"), doc).unwrap();
        let run = Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error", "captions.tex"])
            .current_dir(report.join("figures"))
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{log}");
        assert!(!log.contains("Missing character"), "{log}");
    }
}
