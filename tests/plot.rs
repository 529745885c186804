//! Figures: SVG structure, PNG size and content, CSV and pgfplots exports.

use linkrev::plot::line::render_rgb;
use linkrev::plot::{
    FigureSize, IntervalStyle, LineChart, LineKind, Point, Series, pgfplots_tex, points_csv,
    render_png, render_svg,
};

fn chart() -> LineChart {
    LineChart {
        title: "Leader election latency".into(),
        x_label: "Number of nodes".into(),
        y_label: "Latency (s)".into(),
        series: vec![
            Series {
                label: "LE-Malpani".into(),
                points: vec![
                    Point::with_ci(10.0, 1.5, 1.2, 1.8),
                    Point::with_ci(20.0, 2.5, 2.0, 3.0),
                    Point::with_ci(40.0, 4.0, 3.1, 4.9),
                ],
            },
            Series {
                label: "ME-RL".into(),
                points: vec![
                    Point::new(10.0, 0.5),
                    Point::new(20.0, 0.75),
                    Point::with_ci(40.0, 1.25, 1.0, 1.5),
                ],
            },
            Series {
                label: "ME-Raymond".into(),
                points: vec![Point::new(10.0, 3.0), Point::new(40.0, 6.0)],
            },
        ],
        log_x: false,
        log_y: false,
        size: FigureSize::OneColumn,
        ..LineChart::default()
    }
}

/// Series lines are the only polylines stroked in a palette colour.
fn count_series_polylines(svg: &str) -> usize {
    let palette = [
        "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
    ];
    svg.split("<polyline")
        .skip(1)
        .filter(|el| {
            let el = &el[..el.find("/>").unwrap_or(el.len())];
            palette.iter().any(|c| el.to_uppercase().contains(c))
        })
        .count()
}

#[test]
fn svg_has_labels_title_legend_and_one_line_per_series() {
    let c = chart();
    let svg = render_svg(&c).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
    assert!(svg.contains(r#"width="350""#) && svg.contains(r#"height="260""#));
    for text in ["Leader election latency", "Number of nodes", "Latency (s)"] {
        assert!(svg.contains(text), "missing {text}");
    }
    for s in &c.series {
        assert!(svg.contains(&format!(">{}<", s.label)) || svg.contains(&s.label));
    }
    assert_eq!(count_series_polylines(&svg), c.series.len(), "{svg}");
}

#[test]
fn svg_two_column_is_wider() {
    let mut c = chart();
    c.size = FigureSize::TwoColumn;
    let svg = render_svg(&c).unwrap();
    assert!(svg.contains(r#"width="700""#) && svg.contains(r#"height="350""#));
}

#[test]
fn empty_chart_renders() {
    let c = LineChart {
        title: "Empty".into(),
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    assert!(svg.contains("Empty"));
    assert_eq!(count_series_polylines(&svg), 0);
    assert_eq!(points_csv(&c), "series,x,y,low,high\n");
    assert_eq!(pgfplots_tex(&c).matches("\\addplot").count(), 0);
}

#[test]
fn log_axes_render() {
    let mut c = chart();
    c.log_x = true;
    c.log_y = true;
    // Non-positive values have no place on a log axis: dropped, not a panic.
    c.series[2].points.push(Point::new(0.0, 1.0));
    c.series[2].points.push(Point::new(5.0, -1.0));
    let svg = render_svg(&c).unwrap();
    assert_eq!(count_series_polylines(&svg), 3);
    let csv = points_csv(&c);
    assert!(!csv.contains("ME-Raymond,0,") && !csv.contains(",-1,"));
    let (_, _, rgb) = render_rgb(&c).unwrap();
    assert!(distinct_colours(&rgb) > 1);
    // A single point and a series of one value still get a non-degenerate range.
    c.series = vec![Series {
        label: "one".into(),
        points: vec![Point::new(3.0, 3.0)],
    }];
    render_svg(&c).unwrap();
    c.log_x = false;
    c.log_y = false;
    render_svg(&c).unwrap();
}

fn distinct_colours(rgb: &[u8]) -> usize {
    let mut seen: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[test]
fn png_has_double_size_and_content() {
    let dir = tempfile::tempdir().unwrap();
    for (size, w, h) in [
        (FigureSize::OneColumn, 700u32, 520u32),
        (FigureSize::TwoColumn, 1400, 700),
    ] {
        let mut c = chart();
        c.size = size;
        let path = dir.path().join("fig.png");
        render_png(&c, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&bytes[12..16], b"IHDR");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((width, height), (w, h));
        let (rw, rh, rgb) = render_rgb(&c).unwrap();
        assert_eq!((rw, rh), (w, h));
        // Background, grid, text, and one colour per series at least.
        assert!(distinct_colours(&rgb) > 5);
        for colour in [[0xE6, 0x9F, 0x00], [0x56, 0xB4, 0xE9], [0x00, 0x9E, 0x73]] {
            assert!(rgb.chunks_exact(3).any(|p| p == colour), "{colour:?}");
        }
    }
    // Only the final file is left: the write went through a renamed temporary.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn csv_holds_exactly_the_points() {
    let c = chart();
    let csv = points_csv(&c);
    let expected = "series,x,y,low,high\n\
        LE-Malpani,10,1.5,1.2,1.8\n\
        LE-Malpani,20,2.5,2,3\n\
        LE-Malpani,40,4,3.1,4.9\n\
        ME-RL,10,0.5,,\n\
        ME-RL,20,0.75,,\n\
        ME-RL,40,1.25,1,1.5\n\
        ME-Raymond,10,3,,\n\
        ME-Raymond,40,6,,\n";
    assert_eq!(csv, expected);
    // Numbers read back exactly.
    let third = csv.lines().nth(3).unwrap();
    let y: f64 = third.split(',').nth(2).unwrap().parse().unwrap();
    assert_eq!(y, 4.0);
}

#[test]
fn csv_quotes_labels_with_commas() {
    let c = LineChart {
        series: vec![Series {
            label: "a, \"b\"".into(),
            points: vec![Point::new(1.0, 2.0)],
        }],
        ..LineChart::default()
    };
    assert_eq!(
        points_csv(&c),
        "series,x,y,low,high\n\"a, \"\"b\"\"\",1,2,,\n"
    );
}

#[test]
fn tex_has_one_addplot_per_series() {
    let mut c = chart();
    c.series[0].label = "LE_50%".into();
    c.log_y = true;
    let tex = pgfplots_tex(&c);
    assert!(tex.contains("\\begin{tikzpicture}") && tex.contains("\\end{tikzpicture}"));
    assert!(tex.contains("\\begin{axis}") && tex.contains("\\end{axis}"));
    assert_eq!(tex.matches("\\addplot[color=").count(), 3);
    // The figure's colours and markers, filled with the series' colour: orange circles,
    // sky-blue triangles.
    let orange = "{rgb,255:red,230;green,159;blue,0}";
    assert!(tex.contains(&format!(
        "\\addplot[color={orange}, line width=1.08bp, solid, mark=*, mark options={{solid, draw={orange}, fill={orange}}}"
    )));
    assert!(tex.contains(
        "color={rgb,255:red,86;green,180;blue,233}, line width=1.08bp, solid, mark=triangle*,"
    ));
    // The legend, drawn from the SVG's box: one entry per series.
    assert_eq!(tex.matches("\\node[anchor=west").count(), 3);
    assert!(tex.contains("{LE\\_50\\%};"));
    assert!(tex.contains("ymode=log") && !tex.contains("xmode=log"));
    assert!(tex.contains("xlabel={Number of nodes}"));
    // Asymmetric explicit errors, as distances from y: 1.8 - 1.5 and 1.5 - 1.2.
    let (up, down) = (1.8 - 1.5, 1.5 - 1.2);
    // Points that share an x are drawn a little apart, as in the SVG; the exact x is
    // in a comment (and in the CSV).
    assert!(tex.contains(&format!(
        "1.5) += (0, {up}) -= (0, {down}) % x = 10 (drawn beside its neighbours)\n"
    )));
    // The middle series of three stays where it is.
    assert!(tex.contains("(20, 0.75)\n"));
}

#[test]
fn tick_labels_are_short() {
    use linkrev::plot::line::tick_label;
    assert_eq!(tick_label(10.0), "10");
    assert_eq!(tick_label(2.5), "2.5");
    assert_eq!(tick_label(0.75), "0.75");
    assert_eq!(tick_label(0.30000000000000004), "0.3");
    assert_eq!(tick_label(0.0), "0");
    assert_eq!(tick_label(-1.5), "-1.5");
    assert_eq!(tick_label(1e6), "1e6");
    assert_eq!(tick_label(2.5e-5), "2.5e-5");
}

#[test]
fn log_ticks_label_short_and_long_ranges() {
    use linkrev::plot::line::log_ticks;
    assert_eq!(log_ticks(&(9.5..45.0)), vec![10.0, 20.0, 30.0, 40.0]);
    assert_eq!(log_ticks(&(0.4..7.0)), vec![0.5, 1.0, 2.0, 5.0]);
    assert_eq!(log_ticks(&(1.0..1000.0)), vec![1.0, 10.0, 100.0, 1000.0]);
    let many = log_ticks(&(1e-6..1e9));
    assert!(many.len() >= 3 && many.len() <= 8, "{many:?}");
}

/// Palette polylines with their point counts, in drawing order.
fn series_polyline_points(svg: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .map(|el| &el[..el.find("/>").unwrap_or(el.len())])
        .filter(|el| {
            ["#E69F00", "#56B4E9", "#009E73"]
                .iter()
                .any(|c| el.to_uppercase().contains(c))
        })
        .map(|el| {
            let points = el.split("points=\"").nth(1).unwrap_or("");
            points[..points.find('"').unwrap_or(0)]
                .split_whitespace()
                .count()
        })
        .collect()
}

#[test]
fn ecdf_staircases_hold_each_value_until_the_next() {
    let c = LineChart {
        title: "ECDF".into(),
        kind: LineKind::Steps,
        series: vec![Series {
            label: "me-rl".into(),
            points: vec![
                Point::new(1.0, 0.25),
                Point::new(2.0, 0.5),
                Point::new(4.0, 0.75),
                Point::new(8.0, 1.0),
            ],
        }],
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    // 4 points become a staircase of 2·4 − 1 vertices (one line per series).
    assert_eq!(series_polyline_points(&svg), [7]);
    let tex = pgfplots_tex(&c);
    // pgfplots' staircase, with marks on the points the SVG marks.
    assert!(
        tex.contains("\\addplot[const plot, ") && tex.contains("mark indices={"),
        "{tex}"
    );
    assert_eq!(points_csv(&c).lines().count(), 1 + 4);
}

#[test]
fn bands_replace_error_bars_and_reference_lines_are_drawn() {
    let mut c = chart();
    c.intervals = IntervalStyle::Band;
    c.reference_y = Some(0.0);
    let svg = render_svg(&c).unwrap();
    // Series 0 has three bounded points: a translucent band.
    let translucent = |colour: &str| {
        svg.split("<polygon")
            .skip(1)
            .map(|el| &el[..el.find("/>").unwrap_or(el.len())])
            .filter(|el| el.contains(colour) && el.contains("opacity=\"0.22\""))
            .count()
    };
    assert_eq!(translucent("#E69F00"), 1, "{svg}");
    // Series 1 has a single bounded point: no band, so it keeps its error bar.
    assert_eq!(translucent("#56B4E9"), 0);
    // The reference line spans the plot in grey, and y = 0 is inside the axis.
    assert!(svg.contains("stroke=\"#777777\""), "reference line");
    let tex = pgfplots_tex(&c);
    // The same band and reference line in the .tex.
    assert!(
        tex.contains("\\fill[fill={rgb,255:red,230;green,159;blue,0}, fill opacity=0.22]"),
        "{tex}"
    );
    assert!(
        tex.contains("\\draw[draw={rgb,255:red,119;green,119;blue,119}") && tex.contains(",0});"),
        "{tex}"
    );
    // One line per series still.
    assert_eq!(count_series_polylines(&svg), 3);
}

#[test]
fn snapped_ticks_never_show_rounding_noise() {
    let c = LineChart {
        series: vec![Series {
            label: "d".into(),
            points: vec![Point::new(1.0, -0.3), Point::new(2.0, 0.2)],
        }],
        reference_y: Some(0.0),
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    assert!(!svg.contains("e-1"), "a tick printed as rounding noise");
    assert!(svg.contains(">\n0\n</text>"), "zero tick");
}

#[test]
fn error_bars_do_not_cover_the_marker_shapes() {
    // Series 1 (sky blue) is drawn with triangles and has a CI at x = 40: no circle of
    // its colour may appear (plotters' ErrorBar draws one at the mean).
    let svg = render_svg(&chart()).unwrap();
    let circles_of = |colour: &str| {
        svg.split("<circle")
            .skip(1)
            .map(|el| &el[..el.find("/>").unwrap_or(el.len())])
            .filter(|el| el.to_uppercase().contains(colour))
            .count()
    };
    assert_eq!(circles_of("#56B4E9"), 0, "triangles only");
    // Series 0 (orange): one filled circle per point, plus one in the legend.
    assert_eq!(circles_of("#E69F00"), 3 + 1);
}

/// `<line>` elements stroked in `colour` (whiskers and caps; the legend adds one).
fn lines_of(svg: &str, colour: &str) -> usize {
    svg.split("<line")
        .skip(1)
        .map(|el| &el[..el.find("/>").unwrap_or(el.len())])
        .filter(|el| el.to_uppercase().contains(colour))
        .count()
}

#[test]
fn intervals_below_a_log_axis_are_drawn_open_not_dropped() {
    let c = LineChart {
        log_y: true,
        series: vec![Series {
            label: "rl".into(),
            points: vec![
                Point::with_ci(1.0, 10.0, 5.0, 15.0),
                Point::with_ci(2.0, 8.0, -4.0, 20.0),
            ],
        }],
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    // Legend 1; first point: bar + 2 caps; second: bar + top cap only (open below).
    assert_eq!(lines_of(&svg, "#E69F00"), 1 + 3 + 2, "{svg}");
    // The CSV keeps the exact bound; pgfplots says why it draws none.
    assert!(
        points_csv(&c).contains("rl,2,8,-4,20"),
        "{}",
        points_csv(&c)
    );
    assert!(pgfplots_tex(&c).contains("lower bound -4 is off the log axis"));
}

#[test]
fn a_band_breaks_at_points_without_an_interval() {
    let c = LineChart {
        intervals: IntervalStyle::Band,
        series: vec![Series {
            label: "rl".into(),
            points: vec![
                Point::with_ci(1.0, 1.0, 0.5, 1.5),
                Point::new(2.0, 2.0),
                Point::with_ci(3.0, 3.0, 2.5, 3.5),
                Point::with_ci(4.0, 4.0, 3.5, 4.5),
            ],
        }],
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    let bands = svg
        .split("<polygon")
        .skip(1)
        .filter(|el| el[..el.find("/>").unwrap()].contains("opacity=\"0.22\""))
        .count();
    assert_eq!(bands, 1, "one band over points 3–4, none across point 2");
    // The lone bounded point 1 keeps a whisker (bar + 2 caps); the legend has 1 line.
    assert_eq!(lines_of(&svg, "#E69F00"), 1 + 3);
}

#[test]
fn banded_series_have_no_whiskers() {
    let mut c = chart();
    let bars = lines_of(&render_svg(&c).unwrap(), "#E69F00");
    c.intervals = IntervalStyle::Band;
    let band = lines_of(&render_svg(&c).unwrap(), "#E69F00");
    assert_eq!((bars, band), (1 + 3 * 3, 1));
}

#[test]
fn series_keep_their_style_index() {
    let mut c = chart();
    c.series.truncate(1);
    c.looks = vec![linkrev::plot::Look::nth(2)];
    let svg = render_svg(&c).unwrap();
    // Style 2 is the third palette colour (bluish green) and square markers.
    assert!(svg.contains("#009E73") && !svg.contains("#E69F00"));
    assert!(!svg.contains("<circle"), "squares, not circles");
}

#[test]
fn cdf_axes_always_span_zero_to_one() {
    let c = LineChart {
        kind: LineKind::Steps,
        reference_y: Some(1.0),
        series: vec![Series {
            label: "rl".into(),
            points: vec![Point::new(1.0, 0.4), Point::new(2.0, 0.6)],
        }],
        ..LineChart::default()
    };
    let svg = render_svg(&c).unwrap();
    for tick in ["0", "1"] {
        assert!(svg.contains(&format!(">\n{tick}\n</text>")), "tick {tick}");
    }
}

/// The pgfplots file is laid out like the SVG: a paired figure whose differences all lie
/// below zero keeps its zero line inside the y range (pgfplots would fit the axis to the
/// data and drop it), the legend sits in the corner the SVG measured free, and a log
/// axis gets the SVG's ticks as plain numbers.
#[test]
fn pgfplots_keeps_the_reference_line_legend_corner_and_log_ticks() {
    let paired = LineChart {
        title: "RL - Raymond".into(),
        series: vec![Series {
            label: "difference".into(),
            // Falling from just below zero at the left: the upper left is taken.
            points: vec![
                Point::with_ci(0.02, -0.3, -0.5, -0.1),
                Point::with_ci(0.05, -2.0, -2.5, -1.5),
                Point::with_ci(0.1, -4.0, -4.5, -3.5),
            ],
        }],
        reference_y: Some(0.0),
        log_x: true,
        ..LineChart::default()
    };
    let tex = pgfplots_tex(&paired);
    let value = |key: &str| -> f64 {
        let start = tex.find(&format!("{key}=")).unwrap() + key.len() + 1;
        let end = start + tex[start..].find(',').unwrap();
        tex[start..end].parse().unwrap()
    };
    assert!(value("ymax") > 0.0, "zero must be inside the axis:\n{tex}");
    assert!(value("ymin") < -4.5, "{tex}");
    assert!(
        tex.contains("xtick={0.02,0.05,0.1}, xticklabels={{0.02},{0.05},{0.1}}"),
        "{tex}"
    );
    // The data take the upper left, where the legend would otherwise go; the upper
    // right is free, and both the SVG and the .tex put it there: the legend box's
    // left edge lies right of the middle of the plot area.
    let bp = |text: &str| -> f64 { text.trim_end_matches("bp").parse().unwrap() };
    let width = bp(tex
        .split("width=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap());
    let corner = tex.split(" rectangle ").next().unwrap();
    let nw = corner
        .rsplit("] (")
        .next()
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert!(bp(nw) > width / 2.0, "{tex}");
}

#[test]
fn linear_ticks_take_the_coarsest_step_with_four_ticks() {
    use linkrev::plot::line::linear_ticks;
    assert_eq!(linear_ticks(&(8.5..41.5)), [10.0, 20.0, 30.0, 40.0]);
    assert_eq!(linear_ticks(&(0.0..1.1)), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    // Every tick inside the range, evenly spaced, at least four.
    for (lo, hi) in [
        (0.013, 0.27),
        (3.0, 3.4),
        (-250.0, 1234.0),
        (1e-4, 9e-4),
        (-0.125, 0.005),
    ] {
        let t = linear_ticks(&(lo..hi));
        assert!(t.len() >= 4 && t.len() <= 10, "{lo}..{hi}: {t:?}");
        assert!(t.iter().all(|&v| v >= lo && v <= hi), "{lo}..{hi}: {t:?}");
        let step = t[1] - t[0];
        assert!(
            t.windows(2)
                .all(|w| ((w[1] - w[0]) - step).abs() < 1e-9 * step.abs().max(1e-12))
        );
    }
}
