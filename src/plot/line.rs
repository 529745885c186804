//! Rendering of [`LineChart`]s.
//!
//! Colours follow the Okabe–Ito palette, which stays distinguishable under the common
//! forms of colour blindness; every series also gets its own marker shape so a figure
//! printed in greyscale can still be read. Text uses DejaVu Sans compiled into the
//! binary (the `dejavu` crate), so output does not depend on the fonts of the machine
//! that renders it, e.g. a cluster node without any installed.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, anyhow};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use plotters_backend::{BackendCoord, DrawingErrorKind};

use super::{IntervalStyle, LineChart, LineKind, MarkerShape as Marker, Point};

/// Okabe & Ito (2008) colour-blind-safe palette. Their yellow is moved last but one:
/// thin yellow lines nearly vanish on white, so it is used only from the seventh series.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x00, 0x00, 0x00),
];

/// Marker shapes, cycled per series independently of colour (7 shapes against 8
/// colours), so no two of the first 56 series look alike even in greyscale.
pub(crate) const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Cross,
    Marker::HollowCircle,
    Marker::HollowTriangle,
    Marker::HollowSquare,
];

/// The ring around a point short of its precision target.
const RING: RGBColor = RGBColor(0x66, 0x66, 0x66);

fn rgb((r, g, b): super::Rgb) -> RGBColor {
    RGBColor(r, g, b)
}

static FONTS: Once = Once::new();

/// Registers DejaVu Sans as the `sans-serif` family, once per process: plotters keeps
/// a global font table, and text measurement fails if no font is registered.
fn register_fonts() {
    FONTS.call_once(|| {
        // The bytes are a known-good font shipped in the `dejavu` crate; a failure
        // here would be a packaging bug, and text rendering would report it anyway.
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

/// The points of a series that are plotted: non-finite values are dropped, and on a
/// logarithmic axis so are non-positive ones (they have no position there). Confidence
/// bounds are kept exactly (both finite, or neither); a lower bound at or below zero on
/// a log axis is drawn open-ended at the bottom of the axis (see [`draw_on`]) but stays
/// exact in the CSV, never silently dropped: the least certain points must not look
/// the most certain.
fn plotted_points(chart: &LineChart, points: &[Point]) -> Vec<Point> {
    let ok_x = |v: f64| v.is_finite() && (!chart.log_x || v > 0.0);
    let ok_y = |v: f64| v.is_finite() && (!chart.log_y || v > 0.0);
    points
        .iter()
        .filter(|p| ok_x(p.x) && ok_y(p.y))
        .map(|p| {
            let (low, high) = match (p.low, p.high) {
                (Some(l), Some(h)) if l.is_finite() && ok_y(h) => (Some(l), Some(h)),
                _ => (None, None),
            };
            Point { low, high, ..*p }
        })
        .collect()
}

/// Whether a plotted lower bound lies off a log axis (drawn open-ended).
fn below_log_axis(chart: &LineChart, low: f64) -> bool {
    chart.log_y && low <= 0.0
}

/// Axis range covering `values`, padded so markers at the extremes are not cut off.
fn axis_range(values: impl Iterator<Item = f64>, log: bool) -> Range<f64> {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return if log { 1.0..10.0 } else { 0.0..1.0 };
    }
    if log {
        if lo == hi {
            lo /= 2.0;
            hi *= 2.0;
        }
        let pad = (hi / lo).powf(0.05);
        lo / pad..hi * pad
    } else {
        if lo == hi {
            let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            lo -= d;
            hi += d;
        }
        let pad = (hi - lo) * 0.05;
        lo - pad..hi + pad
    }
}

/// Renders `chart` as an SVG document (100 px per inch).
pub fn render_svg(chart: &LineChart) -> anyhow::Result<String> {
    register_fonts();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size.pixels()).into_drawing_area();
        draw(&root, chart, 1.0)?;
        root.present().map_err(|e| anyhow!("rendering SVG: {e}"))?;
    }
    Ok(svg)
}

/// Renders `chart` as RGB pixels at twice the SVG resolution (200 px per inch).
/// Returns width, height and the row-major RGB bytes.
pub fn render_rgb(chart: &LineChart) -> anyhow::Result<(u32, u32, Vec<u8>)> {
    register_fonts();
    let (w, h) = chart.size.pixels();
    let (w, h) = (2 * w, 2 * h);
    let mut buf = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(&root, chart, 2.0)?;
        root.present()
            .map_err(|e| anyhow!("rendering bitmap: {e}"))?;
    }
    Ok((w, h, buf))
}

/// Renders `chart` as a PNG file at twice the SVG resolution. The image is encoded in
/// memory and written atomically, so a failed run never leaves a truncated figure.
pub fn render_png(chart: &LineChart, path: &Path) -> anyhow::Result<()> {
    use image::ImageEncoder;
    let (w, h, rgb) = render_rgb(chart)?;
    let mut png = Vec::new();
    // Best compression: figures are written once and committed or mailed many times.
    image::codecs::png::PngEncoder::new_with_quality(
        &mut png,
        image::codecs::png::CompressionType::Best,
        image::codecs::png::FilterType::Adaptive,
    )
    .write_image(&rgb, w, h, image::ColorType::Rgb8)
    .context("encoding PNG")?;
    crate::output::write_atomically(path, |out| out.write_all(&png))
        .with_context(|| format!("writing {}", path.display()))
}

/// Shifts the series of a marker chart sideways by a small step each when they share x
/// values, so that error bars at the same x do not hide each other (the usual "dodge"):
/// at most ±2% of the axis width, in log space on a log axis. Only the drawing moves;
/// the CSV and pgfplots outputs keep the exact x.
fn dodge(chart: &LineChart, mut series: Vec<Vec<Point>>, xr: &Range<f64>) -> Vec<Vec<Point>> {
    let n = series.len();
    let shared = series.iter().enumerate().any(|(i, a)| {
        series[i + 1..]
            .iter()
            .any(|b| a.iter().any(|p| b.iter().any(|q| q.x == p.x)))
    });
    if chart.kind != LineKind::Markers || n < 2 || !shared {
        return series;
    }
    let step = 0.04 / (n - 1).max(1) as f64;
    for (i, points) in series.iter_mut().enumerate() {
        let offset = (i as f64 - (n - 1) as f64 / 2.0) * step.min(0.01);
        for p in points.iter_mut() {
            p.x = if chart.log_x {
                p.x * (xr.end / xr.start).powf(offset)
            } else {
                p.x + (xr.end - xr.start) * offset
            };
        }
    }
    series
}

/// Picks linear or logarithmic coordinates for both axes. Plotters gives them
/// different types, so each combination instantiates [`draw_on`] separately.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    chart: &LineChart,
    scale: f64,
) -> anyhow::Result<()> {
    let Layout {
        series,
        x: xr,
        y: yr,
        frame,
    } = layout(chart, scale);
    match (chart.log_x, chart.log_y) {
        (false, false) => draw_on(root, chart, &series, xr, yr, &frame),
        (true, false) => draw_on(root, chart, &series, log_axis(xr), yr, &frame),
        (false, true) => draw_on(root, chart, &series, xr, log_axis(yr), &frame),
        (true, true) => draw_on(root, chart, &series, log_axis(xr), log_axis(yr), &frame),
    }
}

/// Where everything goes: the points as drawn, the axis ranges and the legend's place.
/// The SVG/PNG and the pgfplots file are laid out by this one function, so a paper's
/// figure has the report's axes and legend.
struct Layout {
    series: Vec<Vec<Point>>,
    x: Range<f64>,
    y: Range<f64>,
    frame: Frame,
}

fn layout(chart: &LineChart, scale: f64) -> Layout {
    let series: Vec<Vec<Point>> = chart
        .series
        .iter()
        .map(|s| plotted_points(chart, &s.points))
        .collect();
    let xr = axis_range(series.iter().flatten().map(|p| p.x), chart.log_x);
    let series = dodge(chart, series, &xr);
    let reference = chart
        .reference_y
        .filter(|v| v.is_finite() && (!chart.log_y || *v > 0.0));
    // A staircase is a CDF: its axis always spans [0, 1], so a curve that stops below
    // 1 is seen to stop below 1.
    let cdf_span = match chart.kind {
        LineKind::Steps if chart.log_y => vec![1.0],
        LineKind::Steps => vec![0.0, 1.0],
        LineKind::Markers => Vec::new(),
    };
    let yr = axis_range(
        series
            .iter()
            .flatten()
            .flat_map(|p| [Some(p.y), p.low, p.high].into_iter().flatten())
            .filter(|&v| !below_log_axis(chart, v))
            .chain(reference)
            .chain(cdf_span),
        chart.log_y,
    );
    let mut frame = Frame {
        x_span: (xr.start, xr.end),
        y_span: (yr.start, yr.end),
        log_x: chart.log_x,
        log_y: chart.log_y,
        reference,
        scale,
        legend: SeriesLabelPosition::UpperLeft,
    };
    let (corner, covered) = legend_corner(chart, &series, &frame);
    frame.legend = corner;
    let mut yr = yr;
    if covered > 0 && !chart.series.is_empty() {
        // Every corner holds data: raise the top of the y axis so the legend gets a
        // band of its own above the data.
        let f = (legend_fraction(chart).1 + 0.06).min(0.6);
        yr = if chart.log_y {
            let (lo, hi) = (yr.start.ln(), yr.end.ln());
            yr.start..(lo + (hi - lo) / (1.0 - f)).exp()
        } else {
            yr.start..yr.start + (yr.end - yr.start) / (1.0 - f)
        };
        frame.y_span = (yr.start, yr.end);
        frame.legend = SeriesLabelPosition::UpperRight;
    }
    Layout {
        series,
        x: xr,
        y: yr,
        frame,
    }
}

/// A logarithmic axis with our own ticks: plotters only labels powers of ten, which
/// leaves an axis spanning less than a decade with one label or none.
fn log_axis(r: Range<f64>) -> WithKeyPoints<LogCoord<f64>> {
    let ticks = log_ticks(&r);
    r.log_scale().with_key_points(ticks)
}

/// Ticks on a log axis: the coarsest of 1, 1-2-5 and 1..9 per decade that gives at
/// least three ticks inside `r`; over many decades, only every k-th power of ten.
pub fn log_ticks(r: &Range<f64>) -> Vec<f64> {
    let (lo, hi) = (r.start.log10().floor() as i32, r.end.log10().ceil() as i32);
    let in_range = |v: &f64| *v >= r.start && *v <= r.end;
    let per_decade = |mults: &[f64]| -> Vec<f64> {
        (lo..=hi)
            .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
            .filter(in_range)
            .collect()
    };
    let decades = per_decade(&[1.0]);
    if decades.len() > 8 {
        let step = decades.len().div_ceil(6);
        return decades.into_iter().step_by(step).collect();
    }
    let mut ticks = decades;
    for mults in [
        &[1.0, 2.0, 5.0][..],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        if ticks.len() >= 3 {
            break;
        }
        ticks = per_decade(mults);
    }
    ticks
}

/// Tick label: at most four significant digits, no trailing zeros, exponent notation
/// only for very large or small magnitudes ("10", "2.5", "0.75", "1e6").
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-3..5).contains(&mag) {
        let s = format!("{v:.3e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{e}", trim_zeros(m));
    }
    let decimals = (3 - mag).max(0) as usize;
    let s = trim_zeros(&format!("{v:.decimals$}")).to_string();
    if s == "-0" { "0".into() } else { s }
}

/// A tick that is zero up to rounding (`2.8e-17` from summing steps) is zero.
fn snap(v: f64, (lo, hi): (f64, f64)) -> f64 {
    if v.abs() < 1e-9 * (hi - lo).abs() {
        0.0
    } else {
        v
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn px(v: f64, scale: f64) -> u32 {
    (v * scale).round() as u32
}

/// A marker glyph centred on one coordinate (data or pixel). A dedicated element
/// rather than a composed `DynElement`, because plotters requires boxed elements in a
/// series to be `'static`, which borrowed SVG/bitmap backends are not.
#[derive(Debug, Clone, Copy)]
struct Glyph<C> {
    at: C,
    kind: Marker,
    size: i32,
    color: RGBColor,
    stroke: u32,
    /// Half-length of a line drawn through the marker (legend entries show the line
    /// style with the marker); 0 for none.
    line: i32,
    /// That line's dashes (on, off) in pixels; `None`: solid.
    dash: Option<(i32, i32)>,
}

impl<'a, C> PointCollection<'a, C> for &'a Glyph<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Glyph<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let s = self.size;
        let filled = self.color.filled();
        let hollow = self.color.stroke_width(self.stroke);
        if self.line > 0 {
            match self.dash {
                None => backend.draw_line((x - self.line, y), (x + self.line, y), &hollow)?,
                Some((on, off)) => {
                    let mut from = x - self.line;
                    while from < x + self.line {
                        let to = (from + on).min(x + self.line);
                        backend.draw_line((from, y), (to, y), &hollow)?;
                        from = to + off;
                    }
                }
            }
        }
        // Triangles get one extra pixel so their area matches the circle's visually.
        let t = s + 1;
        let triangle = [(x, y - t), (x + t, y + t * 2 / 3), (x - t, y + t * 2 / 3)];
        match self.kind {
            Marker::Circle => backend.draw_circle((x, y), s as u32, &filled, true),
            // Open markers are white inside, as pgfplots draws them, so a line under one
            // does not show through.
            Marker::HollowCircle => {
                backend.draw_circle((x, y), s as u32, &WHITE.filled(), true)?;
                backend.draw_circle((x, y), s as u32, &hollow, false)
            }
            Marker::Square => backend.draw_rect((x - s, y - s), (x + s, y + s), &filled, true),
            Marker::HollowSquare => {
                backend.draw_rect((x - s, y - s), (x + s, y + s), &WHITE.filled(), true)?;
                backend.draw_rect((x - s, y - s), (x + s, y + s), &hollow, false)
            }
            Marker::Triangle => backend.fill_polygon(triangle, &filled),
            Marker::HollowTriangle => {
                backend.fill_polygon(triangle, &WHITE.filled())?;
                backend.draw_path(triangle.into_iter().chain([triangle[0]]), &hollow)
            }
            Marker::Cross => {
                backend.draw_line((x - s, y - s), (x + s, y + s), &hollow)?;
                backend.draw_line((x - s, y + s), (x + s, y - s), &hollow)
            }
        }
    }
}

/// What [`draw_on`] needs besides the coordinates, which differ in type per axis kind.
struct Frame {
    /// The axis ranges in data units (for the reference line and the legend).
    x_span: (f64, f64),
    y_span: (f64, f64),
    log_x: bool,
    log_y: bool,
    reference: Option<f64>,
    /// Pixels per SVG pixel (2 for PNG).
    scale: f64,
    legend: SeriesLabelPosition,
}

/// The polyline of one series: the points themselves, or for [`LineKind::Steps`] a
/// staircase that holds each `y` until the next `x`.
fn line_path(kind: LineKind, points: &[Point]) -> Vec<(f64, f64)> {
    match kind {
        LineKind::Markers => points.iter().map(|p| (p.x, p.y)).collect(),
        LineKind::Steps => {
            let mut path = Vec::with_capacity(2 * points.len());
            for (i, p) in points.iter().enumerate() {
                if i > 0 {
                    path.push((p.x, points[i - 1].y));
                }
                path.push((p.x, p.y));
            }
            path
        }
    }
}

/// Indices of the points of series `i` that get a marker: all of them for lines; for
/// staircases five spread along the series, shifted a little per series so markers of
/// overlapping curves do not sit on top of each other.
fn marker_indices(kind: LineKind, len: usize, series_index: usize) -> Vec<usize> {
    match kind {
        LineKind::Markers => (0..len).collect(),
        LineKind::Steps if len == 0 => Vec::new(),
        LineKind::Steps => {
            let shift = 0.5 + 0.15 * (series_index % 4) as f64;
            let mut v: Vec<usize> = (0..5)
                .map(|k| (((k as f64 + shift) / 5.0 * len as f64) as usize).min(len - 1))
                .collect();
            v.dedup();
            v
        }
    }
}

/// The legend's size as fractions of the plot area (width, height): its labels
/// measured in the legend font, plus the marker, padding and border plotters draws
/// around them. The plot area is the figure less its margins, caption and axis areas
/// (the sizes [`draw_on`] gives them).
fn legend_fraction(chart: &LineChart) -> (f64, f64) {
    register_fonts();
    let font = ("sans-serif", 10.0).into_font();
    let widest = chart
        .series
        .iter()
        .map(|s| {
            font.box_size(&s.label)
                .map_or(7.0 * s.label.chars().count() as f64, |(w, _)| f64::from(w))
        })
        .fold(0.0_f64, f64::max);
    let (w, h) = chart.size.pixels();
    let plot_w = (f64::from(w) - 2.0 * 6.0 - 48.0).max(40.0);
    let plot_h = (f64::from(h) - 2.0 * 6.0 - 20.0 - 34.0).max(40.0);
    let legend_w = widest + 40.0;
    let legend_h = 14.0 * chart.series.len() as f64 + 12.0;
    ((legend_w / plot_w).min(1.0), (legend_h / plot_h).min(1.0))
}

/// The corner of the plot whose legend box covers the fewest plotted points (and how
/// many), for the legend to hide none if it can. The box is measured
/// ([`legend_fraction`]) and placed as plotters places it, a few pixels in from the
/// corner; positions are compared in axis fractions (log axes in log space).
fn legend_corner(
    chart: &LineChart,
    series: &[Vec<Point>],
    frame: &Frame,
) -> (SeriesLabelPosition, usize) {
    let frac = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    // A little more than the box, for the markers' own size and the inset.
    let (bw, bh) = legend_fraction(chart);
    let (bw, bh) = ((bw + 0.06).min(1.0), (bh + 0.06).min(1.0));
    let corners = [
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let mut best = (usize::MAX, SeriesLabelPosition::UpperLeft);
    for (position, right, upper) in corners {
        let count = series
            .iter()
            .flatten()
            .flat_map(|p| {
                [Some(p.y), p.low, p.high]
                    .into_iter()
                    .flatten()
                    .map(|y| (p.x, y))
            })
            .filter(|&(x, y)| {
                let fx = frac(x, frame.x_span, frame.log_x);
                let fy = frac(y, frame.y_span, frame.log_y);
                (if right { fx > 1.0 - bw } else { fx < bw })
                    && (if upper { fy > 1.0 - bh } else { fy < bh })
            })
            .count();
        if count < best.0 {
            best = (count, position);
        }
    }
    (best.1, best.0)
}

/// A vertical confidence-interval bar with caps. Plotters' `ErrorBar` also draws a
/// circle at the mean, which would cover the series' own marker shape and make series
/// indistinguishable in greyscale.
struct Whisker<C> {
    /// (x, low) and (x, high).
    ends: [C; 2],
    /// Half the cap width, pixels.
    cap: i32,
    /// False for an interval whose lower end is off the axis (drawn open).
    low_cap: bool,
    style: ShapeStyle,
}

impl<'a, C> PointCollection<'a, C> for &'a Whisker<C> {
    type Point = &'a C;
    type IntoIter = std::slice::Iter<'a, C>;
    fn point_iter(self) -> Self::IntoIter {
        self.ends.iter()
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Whisker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let (Some(low), Some(high)) = (pos.next(), pos.next()) else {
            return Ok(());
        };
        backend.draw_line(low, high, &self.style)?;
        let caps = if self.low_cap {
            &[low, high][..]
        } else {
            &[high][..]
        };
        for &(x, y) in caps {
            backend.draw_line((x - self.cap, y), (x + self.cap, y), &self.style)?;
        }
        Ok(())
    }
}

fn draw_on<'b, DB, X, Y>(
    root: &'b DrawingArea<DB, plotters::coord::Shift>,
    chart: &LineChart,
    series: &[Vec<Point>],
    x: X,
    y: Y,
    frame: &Frame,
) -> anyhow::Result<()>
where
    DB: DrawingBackend + 'b,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let scale = frame.scale;
    let err = |e: &dyn std::fmt::Display| anyhow!("drawing chart: {e}");
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let font = |pt: f64| ("sans-serif", pt * scale).into_font();
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, font(13.0))
        .margin(px(6.0, scale))
        .x_label_area_size(px(34.0, scale))
        .y_label_area_size(px(48.0, scale))
        .build_cartesian_2d(x, y)
        .map_err(|e| err(&e))?;
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .label_style(font(10.0))
        .axis_desc_style(font(11.0))
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|v| tick_label(snap(*v, frame.x_span)))
        .y_label_formatter(&|v| tick_label(snap(*v, frame.y_span)))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .draw()
        .map_err(|e| err(&e))?;

    // Staircases are drawn thinner: their many right-angle corners notch thick lines
    // in the bitmap backend, which joins segments without mitres.
    let stroke = match chart.kind {
        LineKind::Markers => px(1.5, scale).max(1),
        LineKind::Steps => px(1.0, scale).max(1),
    };
    let size = px(3.0, scale) as i32;
    if let Some(r) = frame.reference {
        let (x0, x1) = frame.x_span;
        ctx.draw_series(LineSeries::new(
            [(x0, r), (x1, r)],
            RGBColor(0x77, 0x77, 0x77).stroke_width(px(1.0, scale).max(1)),
        ))
        .map_err(|e| err(&e))?;
    }
    // A lower bound off a log axis is drawn down to the axis' bottom, without a cap.
    let floor = frame.y_span.0;
    let whisker = |p: &Point, color: RGBColor| {
        let (low, high) = (p.low?, p.high?);
        let open = below_log_axis(chart, low);
        Some(Whisker {
            ends: [(p.x, if open { floor } else { low }), (p.x, high)],
            cap: size,
            low_cap: !open,
            style: color.stroke_width(px(1.0, scale).max(1)),
        })
    };
    // Bands first, so no band covers another series' line. A band runs through
    // consecutive points with an interval only; a point without one breaks it, and a
    // point with one but no bounded neighbour gets a whisker instead.
    let mut whiskered: Vec<Vec<bool>> = series
        .iter()
        .map(|points| vec![chart.intervals == IntervalStyle::Bars; points.len()])
        .collect();
    if chart.intervals == IntervalStyle::Band {
        for (i, points) in series.iter().enumerate() {
            let color = rgb(chart.look(i).color);
            let bounded = |p: &Point| p.low.is_some() && p.high.is_some();
            let mut start = 0;
            while start < points.len() {
                if !bounded(&points[start]) {
                    start += 1;
                    continue;
                }
                let end = start + points[start..].iter().take_while(|p| bounded(p)).count();
                let run = &points[start..end];
                if run.len() == 1 {
                    whiskered[i][start] = true;
                } else {
                    let low = |p: &Point| {
                        let l = p.low.unwrap_or(p.y);
                        if below_log_axis(chart, l) { floor } else { l }
                    };
                    let outline: Vec<(f64, f64)> = run
                        .iter()
                        .filter_map(|p| Some((p.x, p.high?)))
                        .chain(run.iter().rev().map(|p| (p.x, low(p))))
                        .collect();
                    ctx.draw_series(std::iter::once(Polygon::new(
                        outline,
                        color.mix(0.22).filled(),
                    )))
                    .map_err(|e| err(&e))?;
                }
                start = end;
            }
        }
    }
    for (i, (s, points)) in chart.series.iter().zip(series).enumerate() {
        let look = chart.look(i);
        let color = rgb(look.color);
        let kind = look.marker;
        let dash = look
            .dash
            .pattern()
            .map(|(on, off)| (px(on, scale).max(1) as i32, px(off, scale).max(1) as i32));
        ctx.draw_series(
            points
                .iter()
                .zip(&whiskered[i])
                .filter(|(_, w)| **w)
                .filter_map(|(p, _)| whisker(p, color)),
        )
        .map_err(|e| err(&e))?;
        match dash {
            None => ctx
                .draw_series(LineSeries::new(
                    line_path(chart.kind, points),
                    color.stroke_width(stroke),
                ))
                .map(|_| ()),
            Some((on, off)) => ctx
                .draw_series(DashedLineSeries::new(
                    line_path(chart.kind, points),
                    on,
                    off,
                    color.stroke_width(stroke),
                ))
                .map(|_| ()),
        }
        .map_err(|e| err(&e))?;
        // A point short of its sweep's precision target gets a grey ring (the caption
        // says so); pgfplots draws the same ring ([`pgfplots_tex`]).
        ctx.draw_series(points.iter().filter(|p| p.short).map(|p| {
            Circle::new(
                (p.x, p.y),
                (2 * size + 1) as u32,
                RING.stroke_width(px(1.0, scale).max(1)),
            )
        }))
        .map_err(|e| err(&e))?;
        let marked = marker_indices(chart.kind, points.len(), i);
        ctx.draw_series(marked.iter().map(|&j| &points[j]).map(|p| Glyph {
            at: (p.x, p.y),
            kind,
            size,
            color,
            stroke,
            line: 0,
            dash: None,
        }))
        .map_err(|e| err(&e))?
        .label(s.label.as_str())
        .legend(move |(lx, ly)| Glyph {
            at: (lx + size * 2, ly),
            kind,
            size,
            color,
            stroke,
            line: size * 2,
            dash,
        });
    }
    if !chart.series.is_empty() {
        ctx.configure_series_labels()
            .position(frame.legend.clone())
            .label_font(font(10.0))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xAA, 0xAA, 0xAA))
            .draw()
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// Formats a number for CSV and TeX: shortest text that reads back to the same `f64`.
fn num(v: f64) -> String {
    format!("{v}")
}

/// The plotted numbers as CSV with header `series,x,y,low,high` (empty cells for absent
/// bounds), so a figure's data can be checked or re-plotted without the raw results.
/// Points dropped from the figure (non-finite, or non-positive on a log axis) are
/// dropped here too.
pub fn points_csv(chart: &LineChart) -> String {
    let mut out = String::from("series,x,y,low,high\n");
    for s in &chart.series {
        let label = csv_field(&s.label);
        for p in plotted_points(chart, &s.points) {
            let opt = |v: Option<f64>| v.map(num).unwrap_or_default();
            let _ = writeln!(
                out,
                "{label},{},{},{},{}",
                num(p.x),
                num(p.y),
                opt(p.low),
                opt(p.high)
            );
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Escapes LaTeX special characters in labels, and writes the non-ASCII symbols our
/// labels use (λ, Δ, −, ≤, …) as math, so the file compiles with plain pdflatex.
pub fn tex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            // Symbols our labels use, which pdflatex's default input encoding lacks.
            'λ' => out.push_str("$\\lambda$"),
            'Δ' => out.push_str("$\\Delta$"),
            'μ' => out.push_str("$\\mu$"),
            'τ' => out.push_str("$\\tau$"),
            'δ' => out.push_str("$\\delta$"),
            '−' => out.push_str("$-$"),
            '≤' => out.push_str("$\\leq$"),
            '≥' => out.push_str("$\\geq$"),
            '×' => out.push_str("$\\times$"),
            '±' => out.push_str("$\\pm$"),
            '·' => out.push_str("$\\cdot$"),
            '≈' => out.push_str("$\\approx$"),
            '→' => out.push_str("$\\rightarrow$"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            _ => out.push(c),
        }
    }
    out
}

/// The chart as a pgfplots `tikzpicture` (needs `\usepackage{pgfplots}`), so a paper can
/// typeset the figure in its own fonts. Confidence bounds become explicit asymmetric
/// error bars (`+= (0,high-y) -= (0,y-low)`).
pub fn pgfplots_tex(chart: &LineChart) -> String {
    let (w, _) = chart.size.pixels();
    let mut out = String::new();
    out.push_str("% Requires \\usepackage{pgfplots}.\n\\begin{tikzpicture}\n\\begin{axis}[\n");
    let _ = writeln!(out, "  width={}in,", w as f64 / 100.0);
    let _ = writeln!(out, "  title={{{}}},", tex_escape(&chart.title));
    let _ = writeln!(out, "  xlabel={{{}}},", tex_escape(&chart.x_label));
    let _ = writeln!(out, "  ylabel={{{}}},", tex_escape(&chart.y_label));
    // The report's own axis ranges, ticks and legend corner (the reference line, such
    // as a paired figure's zero, inside the range even when every point lies on one
    // side of it).
    let Layout { x, y, frame, .. } = layout(chart, 1.0);
    let _ = writeln!(out, "  xmin={}, xmax={},", num(x.start), num(x.end));
    let _ = writeln!(out, "  ymin={}, ymax={},", num(y.start), num(y.end));
    for (axis, log, range) in [("x", chart.log_x, &x), ("y", chart.log_y, &y)] {
        if log {
            let ticks: Vec<String> = log_ticks(range).into_iter().map(num).collect();
            let _ = writeln!(
                out,
                "  {axis}mode=log, log ticks with fixed point, {axis}tick={{{}}},",
                ticks.join(",")
            );
        }
    }
    let corner = match frame.legend {
        SeriesLabelPosition::UpperRight => "north east",
        SeriesLabelPosition::LowerRight => "south east",
        SeriesLabelPosition::LowerLeft => "south west",
        _ => "north west",
    };
    let _ = writeln!(out, "  legend pos={corner},\n]");
    if let Some(r) = chart
        .reference_y
        .filter(|v| v.is_finite() && (!chart.log_y || *v > 0.0))
    {
        // Across the whole axis, whatever its limits turn out to be.
        let _ = writeln!(
            out,
            "\\draw[gray] ({{rel axis cs:0,0}} |- {{axis cs:0,{r}}}) -- ({{rel axis cs:1,0}} |- {{axis cs:0,{r}}});",
            r = num(r)
        );
    }
    // A staircase is pgfplots' `const plot` (hold y until the next x); confidence
    // intervals are explicit error bars for either interval style.
    let options = match chart.kind {
        LineKind::Markers => "error bars/.cd, y dir=both, y explicit",
        LineKind::Steps => "const plot, mark repeat=50",
    };
    for (i, s) in chart.series.iter().enumerate() {
        // The figure's own colour, marker and line, so the LaTeX version matches the
        // report.
        let look = chart.look(i);
        let (r, g, b) = look.color;
        let mark = match look.marker {
            Marker::Circle => "*",
            Marker::Triangle => "triangle*",
            Marker::Square => "square*",
            Marker::Cross => "x",
            Marker::HollowCircle => "o",
            Marker::HollowTriangle => "triangle",
            Marker::HollowSquare => "square",
        };
        let _ = writeln!(
            out,
            "\\addplot+[color={{rgb,255:red,{r};green,{g};blue,{b}}}, mark={mark}, {options}] \
             coordinates {{"
        );
        for p in plotted_points(chart, &s.points) {
            let _ = write!(out, "  ({}, {})", num(p.x), num(p.y));
            match (p.low, p.high) {
                (Some(l), Some(h)) if below_log_axis(chart, l) => {
                    // pgfplots cannot place it; the exact bound is in the CSV.
                    let _ = write!(
                        out,
                        " += (0, {}) -= (0, 0) % lower bound {} is off the log axis",
                        num(h - p.y),
                        num(l)
                    );
                }
                (Some(l), Some(h)) => {
                    let _ = write!(out, " += (0, {}) -= (0, {})", num(h - p.y), num(p.y - l));
                }
                _ => {}
            }
            out.push('\n');
        }
        out.push_str("};\n");
        let _ = writeln!(out, "\\addlegendentry{{{}}}", tex_escape(&s.label));
    }
    out.push_str("\\end{axis}\n\\end{tikzpicture}\n");
    out
}
