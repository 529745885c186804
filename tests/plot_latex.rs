//! The pgfplots files compile: each is wrapped in a minimal document and run through
//! pdflatex, the program a paper will use.
//!
//! Needs `pdflatex` with pgfplots (Debian: texlive-latex-base, texlive-latex-recommended,
//! texlive-pictures; `.ci/run` installs them). Without it the test says so and passes,
//! unless LINKREV_REQUIRE_LATEX=1 (set by `.ci/run`).

use linkrev::plot::{IntervalStyle, LineChart, LineKind, Point, Series, pgfplots_tex};
use std::process::Command;

#[path = "common/figure_outputs.rs"]
mod figure_outputs;

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
    if !figure_outputs::latex_available() {
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

/// One drawing, two outputs: the SVG and the compiled `.tex` put the legend box and
/// every marker and interval at the same place (to 1.5% of the plot area), and in
/// neither does the legend cover data: for a chart with room in a corner, a chart on
/// log axes, and one with data in every corner (where the y axis is raised to give the
/// legend a band of its own).
#[test]
fn the_tex_and_the_svg_draw_the_same_figure() {
    if !figure_outputs::latex_available() {
        return;
    }
    let mut cases: Vec<(&str, LineChart)> = charts()
        .into_iter()
        .filter(|(name, _)| *name != "ecdf")
        .collect();
    let corners = |i: f64| {
        vec![
            Point::with_ci(1.0, 10.0 + i, 9.0 + i, 11.0 + i),
            Point::with_ci(2.0, 1.0 + i, 0.5 + i, 1.5 + i),
            Point::with_ci(3.0, 5.0 + i, 4.0 + i, 6.0 + i),
            Point::with_ci(4.0, 1.0 + i, 0.5 + i, 1.5 + i),
            Point::with_ci(5.0, 10.0 + i, 9.0 + i, 11.0 + i),
        ]
    };
    cases.push((
        "corners",
        LineChart {
            title: "Data in every corner".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series {
                    label: "RL".into(),
                    points: corners(0.0),
                },
                Series {
                    label: "Raymond (route discovery)".into(),
                    points: corners(0.3),
                },
            ],
            ..LineChart::default()
        },
    ));
    for (name, chart) in cases {
        let colors: Vec<String> = (0..chart.series.len())
            .map(|i| {
                let (r, g, b) = chart.look(i).color;
                format!("#{r:02X}{g:02X}{b:02X}")
            })
            .collect();
        let colors: Vec<&str> = colors.iter().map(String::as_str).collect();
        let svg = figure_outputs::read_svg(&linkrev::plot::render_svg(&chart).unwrap(), &colors);
        let tmp = tempfile::tempdir().unwrap();
        let tex = figure_outputs::read_tex(&pgfplots_tex(&chart), tmp.path());
        eprintln!("{name}: legend SVG {:?} .tex {:?}", svg.legend, tex.legend);
        figure_outputs::assert_same_drawing(&svg, &tex, 0.015);
        let points: usize = chart.series.iter().map(|s| s.points.len()).sum();
        let drawn: usize = svg.markers.iter().map(|(_, m)| m.len()).sum();
        assert_eq!(drawn, points, "{name}: every marker read from the SVG");
    }
}
