//! The pgfplots files compile: each is wrapped in a minimal document and run through
//! pdflatex, the program a paper will use.
//!
//! Needs `pdflatex` with pgfplots (Debian: texlive-latex-base, texlive-latex-recommended,
//! texlive-pictures; `.ci/run` installs them). Without it the test says so and passes,
//! unless LINKREV_REQUIRE_LATEX=1 (set by `.ci/run`).

use linkrev::plot::{IntervalStyle, LineChart, LineKind, Point, Series, pgfplots_tex};
use std::process::Command;

fn has_pdflatex() -> bool {
    Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn charts() -> Vec<(&'static str, LineChart)> {
    let two = |f: fn(f64) -> Point| {
        vec![
            Series {
                label: "me-rl, speed_max=2".into(),
                points: (1..=4).map(|i| f(f64::from(i))).collect(),
            },
            Series {
                label: "me-raymond & 50% of λ".into(),
                points: (1..=4).map(|i| f(f64::from(i) * 1.5)).collect(),
            },
        ]
    };
    vec![
        (
            "line",
            LineChart {
                title: "CS waiting time (λ = 0.1/s, v ≤ 20 m/s)".into(),
                x_label: "request rate λ (1/s per node)".into(),
                y_label: "Δ mean CS waiting time (s) (me-rl − me-raymond)".into(),
                series: two(|x| Point::with_ci(x, x * 0.5 - 1.0, x * 0.5 - 1.5, x * 0.5 - 0.5)),
                reference_y: Some(0.0),
                ..LineChart::default()
            },
        ),
        (
            "log",
            LineChart {
                title: "Messages per CS entry".into(),
                x_label: "rate".into(),
                y_label: "messages".into(),
                // The first point's interval reaches below zero, off the log axis.
                series: two(|x| Point::with_ci(x, x * 10.0, x * 10.0 - 15.0, x * 12.0)),
                log_x: true,
                log_y: true,
                intervals: IntervalStyle::Band,
                ..LineChart::default()
            },
        ),
        (
            "ecdf",
            LineChart {
                title: "Waiting times".into(),
                x_label: "CS waiting time (s)".into(),
                y_label: "fraction of requests ≤ x".into(),
                series: two(|x| Point::new(x, x / 5.0)),
                kind: LineKind::Steps,
                reference_y: Some(1.0),
                ..LineChart::default()
            },
        ),
    ]
}

#[test]
fn pgfplots_files_compile_with_pdflatex() {
    if !has_pdflatex() {
        assert!(
            std::env::var("LINKREV_REQUIRE_LATEX").as_deref() != Ok("1"),
            "LINKREV_REQUIRE_LATEX=1 but no pdflatex on PATH"
        );
        eprintln!("skipped: no pdflatex on PATH (apt-get install texlive-pictures)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (name, chart) in charts() {
        std::fs::write(tmp.path().join(format!("{name}.tex")), pgfplots_tex(&chart)).unwrap();
        let doc = format!(
            "\\documentclass{{article}}\n\\usepackage{{pgfplots}}\n\\pgfplotsset{{compat=1.16}}\n\
             \\begin{{document}}\n\\input{{{name}.tex}}\n\\end{{document}}\n"
        );
        let main = format!("doc-{name}.tex");
        std::fs::write(tmp.path().join(&main), doc).unwrap();
        let run = Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error", &main])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{name}: {log}");
        assert!(tmp.path().join(format!("doc-{name}.pdf")).is_file());
        assert!(!log.contains("Warning: Missing character"), "{name}: {log}");
    }
}
