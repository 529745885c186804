//! Reads a figure's two outputs as a reader sees them, to compare them: the SVG as
//! drawn (plot area, legend box, markers and interval bars) and the pgfplots `.tex` as
//! pdflatex places it (the same, from coordinates the test adds to a copy of the file
//! and pdflatex reports). Positions are fractions of the plot area, x from the left and
//! y from the bottom, so the two outputs compare whatever their units.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Whether pdflatex with pgfplots is here. Without it a test says so and passes, unless
/// `LINKREV_REQUIRE_LATEX=1` (set by `.ci/run`, which installs it).
pub fn latex_available() -> bool {
    let found = Command::new("kpsewhich")
        .arg("pgfplots.sty")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    assert!(
        found || std::env::var("LINKREV_REQUIRE_LATEX").as_deref() != Ok("1"),
        "LINKREV_REQUIRE_LATEX=1 but no pdflatex with pgfplots"
    );
    if !found {
        eprintln!("skipped: no pdflatex with pgfplots (apt-get install texlive-pictures)");
    }
    found
}

/// A rectangle in plot-area fractions.
#[derive(Clone, Copy, Debug)]
pub struct Frac {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Frac {
    fn contains(&self, x: f64, y: f64, margin: f64) -> bool {
        x >= self.x0 - margin
            && x <= self.x1 + margin
            && y >= self.y0 - margin
            && y <= self.y1 + margin
    }
}

/// What a test reads from one output.
#[derive(Debug)]
pub struct Drawn {
    /// The legend box.
    pub legend: Frac,
    /// Each data marker's centre, by series colour (`#RRGGBB`), left to right.
    pub markers: Vec<(String, Vec<(f64, f64)>)>,
    /// Each interval bar: x and its two ends.
    pub bars: Vec<(f64, f64, f64)>,
    /// The plot area's size in the output's units (pixels or points).
    pub size: (f64, f64),
}

impl Drawn {
    /// The markers and bars the legend box covers (empty: none), with `margin` for a
    /// marker's own size.
    pub fn covered(&self, margin: f64) -> Vec<String> {
        let mut out = Vec::new();
        for (color, points) in &self.markers {
            for &(x, y) in points {
                if self.legend.contains(x, y, margin) {
                    out.push(format!("marker {color} at ({x:.3}, {y:.3})"));
                }
            }
        }
        for &(x, lo, hi) in &self.bars {
            let l = &self.legend;
            if x >= l.x0 && x <= l.x1 && hi >= l.y0 && lo <= l.y1 {
                out.push(format!("interval at x {x:.3} from {lo:.3} to {hi:.3}"));
            }
        }
        out
    }
}

fn attr(element: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = element.find(&key)? + key.len();
    let end = element[start..].find('"')? + start;
    Some(element[start..end].to_string())
}

fn num(element: &str, name: &str) -> f64 {
    attr(element, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| {
            let end = svg[i..].find('>').map_or(svg.len(), |e| i + e + 1);
            &svg[i..end]
        })
        .collect()
}

/// Reads an SVG written by linkrev: the plot area from the axis lines (the y axis is the
/// first vertical black line, the x axis the longest horizontal one), the legend box
/// (the white rectangle at opacity 0.85), markers drawn as circles in `colors` outside
/// the legend's own samples, and interval bars (vertical lines in `colors`).
pub fn read_svg(svg: &str, colors: &[&str]) -> Drawn {
    let lines: Vec<Vec<(f64, f64)>> = elements(svg, "polyline")
        .into_iter()
        .filter(|e| attr(e, "stroke").as_deref() == Some("#000000"))
        .map(|e| points(&attr(e, "points").unwrap_or_default()))
        .filter(|p| p.len() == 2)
        .collect();
    let y_axis = lines
        .iter()
        .find(|p| p[0].0 == p[1].0 && (p[0].1 - p[1].1).abs() > 50.0)
        .expect("a y axis");
    let x_axis = lines
        .iter()
        .filter(|p| p[0].1 == p[1].1)
        .max_by(|a, b| (a[1].0 - a[0].0).abs().total_cmp(&(b[1].0 - b[0].0).abs()))
        .expect("an x axis");
    let (left, top) = (y_axis[0].0, y_axis[0].1.min(y_axis[1].1));
    let bottom = y_axis[0].1.max(y_axis[1].1);
    let right = x_axis[0].0.max(x_axis[1].0);
    let fx = |x: f64| (x - left) / (right - left);
    let fy = |y: f64| (bottom - y) / (bottom - top);
    let box_ = elements(svg, "rect")
        .into_iter()
        .find(|e| attr(e, "opacity").as_deref() == Some("0.85"))
        .expect("a legend box");
    let (bx, by) = (num(box_, "x"), num(box_, "y"));
    let (bw, bh) = (num(box_, "width"), num(box_, "height"));
    let legend = Frac {
        x0: fx(bx),
        x1: fx(bx + bw),
        y0: fy(by + bh),
        y1: fy(by),
    };
    // The legend's own samples sit at its sample's centre (left of its text).
    let sample_x = |cx: f64| cx > bx && cx < bx + 30.0;
    let mut markers = Vec::new();
    for &color in colors {
        let filled = |e: &&str| attr(e, "fill").as_deref() == Some(color);
        let circles = elements(svg, "circle")
            .into_iter()
            .filter(filled)
            .map(|e| (num(e, "cx"), num(e, "cy")));
        // Squares: small rectangles; triangles: polygons, centred a half-width below
        // their apex.
        let squares = elements(svg, "rect")
            .into_iter()
            .filter(filled)
            .filter(|e| num(e, "width") <= 10.0)
            .map(|e| {
                (
                    num(e, "x") + num(e, "width") / 2.0,
                    num(e, "y") + num(e, "height") / 2.0,
                )
            });
        let triangles = elements(svg, "polygon")
            .into_iter()
            .filter(filled)
            .map(|e| points(&attr(e, "points").unwrap_or_default()))
            .filter(|p| p.len() == 3)
            .map(|p| {
                let (lo, hi) = p
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), q| {
                        (l.min(q.0), h.max(q.0))
                    });
                let top = p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min);
                ((lo + hi) / 2.0, top + (hi - lo) / 2.0)
            });
        let mut at: Vec<(f64, f64)> = circles
            .chain(squares)
            .chain(triangles)
            .filter(|&(cx, cy)| !(sample_x(cx) && cy > by && cy < by + bh))
            .map(|(cx, cy)| (fx(cx), fy(cy)))
            .collect();
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        markers.push((color.to_string(), at));
    }
    let bars = elements(svg, "polyline")
        .into_iter()
        .filter(|e| attr(e, "stroke").is_some_and(|c| colors.contains(&c.as_str())))
        .map(|e| points(&attr(e, "points").unwrap_or_default()))
        .filter(|p| p.len() == 2 && p[0].0 == p[1].0 && p[0].1 != p[1].1)
        .map(|p| (fx(p[0].0), fy(p[0].1.max(p[1].1)), fy(p[0].1.min(p[1].1))))
        .collect();
    Drawn {
        legend,
        markers,
        bars,
        size: (right - left, bottom - top),
    }
}

fn points(text: &str) -> Vec<(f64, f64)> {
    text.split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// The data coordinates of a linkrev `.tex` file, by `\addplot` in order: (x, y, low
/// offset, high offset) per point; rings (`forget plot`) left out.
/// One data point of a `.tex` file as written: x, y and the interval's offsets (low,
/// high).
type TexPoint = (String, String, Option<(String, String)>);

/// A pgfplots colour `{rgb,255:red,R;green,G;blue,B}` after `key=` in `line`, as
/// `#RRGGBB`.
fn tex_color(line: &str, key: &str) -> Option<String> {
    let rest = line.split(&format!("{key}={{rgb,255:")).nth(1)?;
    let body = rest.split('}').next()?;
    let mut rgb = body.split(';').map(|part| {
        part.split(',')
            .nth(1)
            .and_then(|v| v.trim().parse::<u8>().ok())
    });
    let (r, g, b) = (rgb.next()??, rgb.next()??, rgb.next()??);
    Some(format!("#{r:02X}{g:02X}{b:02X}"))
}

/// Each `\addplot`'s line colour and marker fill, and its points.
fn tex_points(tex: &str) -> Vec<(String, String, Vec<TexPoint>)> {
    let mut plots = Vec::new();
    let mut current: Option<(String, String, Vec<_>)> = None;
    for line in tex.lines() {
        if line.starts_with("\\addplot[") && !line.contains("forget plot") {
            let color = tex_color(line, "color").unwrap_or_default();
            let fill = tex_color(line, "fill").unwrap_or_else(|| "white".into());
            current = Some((color, fill, Vec::new()));
            continue;
        }
        if line.starts_with("};") {
            if let Some(plot) = current.take() {
                plots.push(plot);
            }
            continue;
        }
        let Some((_, _, points)) = current.as_mut() else {
            continue;
        };
        let line = line.split('%').next().unwrap_or("").trim();
        let Some(rest) = line.strip_prefix('(') else {
            continue;
        };
        let (xy, bars) = rest.split_once(')').unwrap();
        let (x, y) = xy.split_once(',').unwrap();
        let bars = bars.trim();
        let bars = bars.strip_prefix("+= (0,").map(|b| {
            let (hi, rest) = b.split_once(')').unwrap();
            let lo = rest
                .trim()
                .trim_start_matches("-= (0,")
                .trim_end_matches(')');
            (lo.trim().to_string(), hi.trim().to_string())
        });
        points.push((x.trim().to_string(), y.trim().to_string(), bars));
    }
    plots
}

/// Compiles `tex` with pdflatex in `dir` after adding named coordinates at every data
/// point and interval end, and reads their places from pdflatex's log, with the
/// legend's corners (which the file names); each plot's markers under the colour the
/// file gives it.
pub fn read_tex(tex: &str, dir: &Path) -> Drawn {
    let plots = tex_points(tex);
    let mut probes = String::from(
        "\\coordinate (probe axis sw) at (rel axis cs:0,0);\n\
         \\coordinate (probe axis ne) at (rel axis cs:1,1);\n",
    );
    let mut names = vec!["probe axis sw".to_string(), "probe axis ne".to_string()];
    for (i, (_, _, points)) in plots.iter().enumerate() {
        for (k, (x, y, bars)) in points.iter().enumerate() {
            let name = format!("probe {i} {k}");
            probes.push_str(&format!("\\coordinate ({name}) at (axis cs:{x},{y});\n"));
            names.push(name.clone());
            if let Some((lo, hi)) = bars {
                let low: f64 = y.parse::<f64>().unwrap() - lo.parse::<f64>().unwrap();
                let high: f64 = y.parse::<f64>().unwrap() + hi.parse::<f64>().unwrap();
                for (end, v) in [("low", low), ("high", high)] {
                    probes.push_str(&format!(
                        "\\coordinate ({name} {end}) at (axis cs:{x},{v});\n"
                    ));
                    names.push(format!("{name} {end}"));
                }
            }
        }
    }
    names.push("linkrev legend nw".into());
    names.push("linkrev legend se".into());
    let mut report = String::new();
    for name in &names {
        report.push_str(&format!(
            "\\path ({name}); \\pgfgetlastxy{{\\px}}{{\\py}}\\typeout{{PROBE {name}=\\px,\\py}}\n"
        ));
    }
    let probed = tex
        .replacen("\\end{axis}", &format!("{probes}\\end{{axis}}"), 1)
        .replacen(
            "\\end{tikzpicture}",
            &format!("{report}\\end{{tikzpicture}}"),
            1,
        );
    std::fs::write(dir.join("figure.tex"), probed).unwrap();
    std::fs::write(
        dir.join("doc.tex"),
        "\\documentclass{article}\n\\usepackage{pgfplots}\n\\pgfplotsset{compat=1.16}\n\
         \\begin{document}\n\\input{figure.tex}\n\\end{document}\n",
    )
    .unwrap();
    let run = Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "doc.tex"])
        .current_dir(dir)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(run.status.success(), "{log}");
    let at = |name: &str| -> (f64, f64) {
        let key = format!("PROBE {name}=");
        let line = log
            .lines()
            .find_map(|l| l.strip_prefix(key.as_str()))
            .unwrap_or_else(|| panic!("no {name} in the log"));
        let (x, y) = line.split_once(',').unwrap();
        let pt = |v: &str| v.trim().trim_end_matches("pt").parse::<f64>().unwrap();
        (pt(x), pt(y))
    };
    let (sw, ne) = (at("probe axis sw"), at("probe axis ne"));
    let fx = |x: f64| (x - sw.0) / (ne.0 - sw.0);
    let fy = |y: f64| (y - sw.1) / (ne.1 - sw.1);
    let (nw, se) = (at("linkrev legend nw"), at("linkrev legend se"));
    let legend = Frac {
        x0: fx(nw.0),
        x1: fx(se.0),
        y0: fy(se.1),
        y1: fy(nw.1),
    };
    let mut markers = Vec::new();
    let mut bars = Vec::new();
    for (i, (color, fill, points)) in plots.iter().enumerate() {
        // A filled marker is filled with its line's colour, as in the SVG.
        assert!(
            fill == color || fill == "white",
            "plot {i}: marker filled {fill}, line {color}"
        );
        let mut at_points = Vec::new();
        for (k, (_, _, b)) in points.iter().enumerate() {
            let p = at(&format!("probe {i} {k}"));
            at_points.push((fx(p.0), fy(p.1)));
            if b.is_some() {
                let lo = at(&format!("probe {i} {k} low"));
                let hi = at(&format!("probe {i} {k} high"));
                bars.push((fx(p.0), fy(lo.1), fy(hi.1)));
            }
        }
        at_points.sort_by(|a, b| a.0.total_cmp(&b.0));
        markers.push((color.clone(), at_points));
    }
    Drawn {
        legend,
        markers,
        bars,
        size: (ne.0 - sw.0, ne.1 - sw.1),
    }
}

/// Asserts that the SVG and the `.tex` place the legend and every marker and interval
/// alike (within `tolerance` of the plot area), and that no legend covers data in
/// either.
pub fn assert_same_drawing(svg: &Drawn, tex: &Drawn, tolerance: f64) {
    let l = (&svg.legend, &tex.legend);
    for (what, a, b) in [
        ("left", l.0.x0, l.1.x0),
        ("right", l.0.x1, l.1.x1),
        ("bottom", l.0.y0, l.1.y0),
        ("top", l.0.y1, l.1.y1),
    ] {
        assert!(
            (a - b).abs() < tolerance,
            "legend {what}: SVG {a:.4} vs .tex {b:.4}"
        );
    }
    assert_eq!(svg.markers.len(), tex.markers.len());
    for ((color, a), (tex_color, b)) in svg.markers.iter().zip(&tex.markers) {
        assert_eq!(color, tex_color, "the same series in the same colour");
        assert_eq!(a.len(), b.len(), "markers of {color}");
        for (p, q) in a.iter().zip(b) {
            assert!(
                (p.0 - q.0).abs() < tolerance && (p.1 - q.1).abs() < tolerance,
                "{color}: SVG ({:.4}, {:.4}) vs .tex ({:.4}, {:.4})",
                p.0,
                p.1,
                q.0,
                q.1
            );
        }
    }
    // The plot areas have one shape: the .tex is drawn at the SVG's size (px → bp).
    let (ws, hs) = svg.size;
    let (wt, ht) = tex.size;
    assert!(
        ((ws / hs) - (wt / ht)).abs() < 0.02 * ws / hs,
        "plot area {ws}×{hs} px vs {wt}×{ht} pt"
    );
    // A marker's radius (3 px) as a fraction of the plot area.
    let margin = 3.0 / ws.min(hs);
    for (name, drawn) in [("SVG", svg), (".tex", tex)] {
        let covered = drawn.covered(margin);
        assert!(covered.is_empty(), "{name}: the legend covers {covered:?}");
    }
}
