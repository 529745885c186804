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
use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
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
        ..
    } = layout(chart, scale);
    match (chart.log_x, chart.log_y) {
        (false, false) => draw_on(root, chart, &series, lin_axis(xr), lin_axis(yr), &frame),
        (true, false) => draw_on(root, chart, &series, log_axis(xr), lin_axis(yr), &frame),
        (false, true) => draw_on(root, chart, &series, lin_axis(xr), log_axis(yr), &frame),
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
    /// The plot area's size in pixels at 100 per inch ([`plot_area`]).
    plot: (f64, f64),
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
    let plot = plot_area(chart);
    let mut frame = Frame {
        x_span: (xr.start, xr.end),
        y_span: (yr.start, yr.end),
        log_x: chart.log_x,
        log_y: chart.log_y,
        reference,
        scale,
        legend: None,
    };
    let mut yr = yr;
    if !chart.series.is_empty() {
        let size = legend_size(chart);
        let (corner, covered) = legend_corner(&series, &frame, size, plot);
        let mut corner = corner;
        if covered > 0 {
            // Every corner holds data: raise the top of the y axis so the legend gets a
            // band of its own above the data.
            let f = ((size.1 + 2.0 * LEGEND_INSET + 4.0) / plot.1).min(0.6);
            yr = if chart.log_y {
                let (lo, hi) = (yr.start.ln(), yr.end.ln());
                yr.start..(lo + (hi - lo) / (1.0 - f)).exp()
            } else {
                yr.start..yr.start + (yr.end - yr.start) / (1.0 - f)
            };
            frame.y_span = (yr.start, yr.end);
            corner = Corner::UpperRight;
        }
        frame.legend = Some(LegendBox::at(corner, size, plot));
    }
    Layout {
        series,
        x: xr,
        y: yr,
        frame,
        plot,
    }
}

/// The plot area's size (pixels at 100 per inch): the figure less its margins, title
/// and axis-label areas, as plotters lays them out. pgfplots draws its axis at exactly
/// this size (`scale only axis`), so data sit at the same place in both outputs.
fn plot_area(chart: &LineChart) -> (f64, f64) {
    register_fonts();
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, chart.size.pixels()).into_drawing_area();
    let built = frame_builder(&root, chart, 1.0).build_cartesian_2d(0.0..1.0, 0.0..1.0);
    match built {
        Ok(ctx) => {
            let (xs, ys) = ctx.plotting_area().get_pixel_range();
            (f64::from(xs.end - xs.start), f64::from(ys.end - ys.start))
        }
        // Only a figure too small for its labels fails; it fails to draw as well.
        Err(_) => (1.0, 1.0),
    }
}

/// The chart's frame as both [`plot_area`] and [`draw_on`] build it.
fn frame_builder<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    chart: &'b LineChart,
    scale: f64,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(
            &chart.title,
            ("sans-serif", title_px(chart) * scale).into_font(),
        )
        .margin(px(6.0, scale))
        .x_label_area_size(px(34.0, scale))
        .y_label_area_size(px(48.0, scale));
    builder
}

/// The title's font size: [`TITLE_PX`], or smaller (down to 8 px) for a title that
/// would not fit the figure's width, which would otherwise be cut at both ends.
fn title_px(chart: &LineChart) -> f64 {
    register_fonts();
    let room = f64::from(chart.size.pixels().0) - 2.0 * 8.0;
    let width = ("sans-serif", TITLE_PX)
        .into_font()
        .box_size(&chart.title)
        .map_or(0.0, |(w, _)| f64::from(w));
    if width <= room {
        TITLE_PX
    } else {
        (TITLE_PX * room / width).max(8.0)
    }
}

/// Font sizes in pixels (100 per inch); pgfplots gets the same in big points (× 0.72).
const TITLE_PX: f64 = 13.0;
const AXIS_LABEL_PX: f64 = 11.0;
const TICK_PX: f64 = 10.0;
const LEGEND_PX: f64 = 10.0;

/// The legend's geometry in pixels: its inset from the plot area's corner, inner
/// padding, row pitch, the width of the line-and-marker sample and the gap before the
/// text.
const LEGEND_INSET: f64 = 5.0;
const LEGEND_PAD: f64 = 6.0;
const LEGEND_ROW: f64 = 14.0;
const LEGEND_SAMPLE: f64 = 18.0;
const LEGEND_GAP: f64 = 5.0;

/// A corner of the plot area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Corner {
    UpperLeft,
    UpperRight,
    LowerRight,
    LowerLeft,
}

/// Where the legend box goes, in pixels from the plot area's top left corner (at 100
/// per inch): the one description both outputs draw the legend from.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LegendBox {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl LegendBox {
    fn at(corner: Corner, (w, h): (f64, f64), (plot_w, plot_h): (f64, f64)) -> LegendBox {
        let x = match corner {
            Corner::UpperLeft | Corner::LowerLeft => LEGEND_INSET,
            Corner::UpperRight | Corner::LowerRight => plot_w - LEGEND_INSET - w,
        };
        let y = match corner {
            Corner::UpperLeft | Corner::UpperRight => LEGEND_INSET,
            Corner::LowerLeft | Corner::LowerRight => plot_h - LEGEND_INSET - h,
        };
        LegendBox { x, y, w, h }
    }

    /// The vertical centre of entry `k`.
    fn row(&self, k: usize) -> f64 {
        self.y + LEGEND_PAD + LEGEND_PX / 2.0 + k as f64 * LEGEND_ROW
    }

    /// The line sample's ends.
    fn sample(&self) -> (f64, f64) {
        (self.x + LEGEND_PAD, self.x + LEGEND_PAD + LEGEND_SAMPLE)
    }

    /// Where an entry's text starts.
    fn text_x(&self) -> f64 {
        self.x + LEGEND_PAD + LEGEND_SAMPLE + LEGEND_GAP
    }
}

/// The legend's width and height in pixels: its labels measured in the legend font
/// (DejaVu Sans, which the SVG and PNG use; a paper's font is usually narrower), the
/// sample, padding and rows.
fn legend_size(chart: &LineChart) -> (f64, f64) {
    register_fonts();
    let font = ("sans-serif", LEGEND_PX).into_font();
    let widest = chart
        .series
        .iter()
        .map(|s| {
            font.box_size(&s.label)
                .map_or(7.0 * s.label.chars().count() as f64, |(w, _)| f64::from(w))
        })
        .fold(0.0_f64, f64::max);
    let rows = chart.series.len().max(1) as f64;
    (
        2.0 * LEGEND_PAD + LEGEND_SAMPLE + LEGEND_GAP + widest,
        2.0 * LEGEND_PAD + LEGEND_PX + (rows - 1.0) * LEGEND_ROW,
    )
}

/// A linear axis with our own ticks ([`linear_ticks`]), which pgfplots gets too.
fn lin_axis(r: Range<f64>) -> Ticked {
    let ticks = linear_ticks(&r);
    Ticked {
        inner: r.into(),
        ticks,
    }
}

/// A linear axis whose ticks are given: plotters' own choice differs from pgfplots',
/// so both get [`linear_ticks`]. (plotters' `with_key_points` on a linear range gives
/// up its default label formatting, which the mesh needs even with a formatter set.)
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// Ticks on a linear axis: multiples of the coarsest step of 1, 2 or 5 times a power of
/// ten that gives at least four ticks inside `r` (at most ten).
pub fn linear_ticks(r: &Range<f64>) -> Vec<f64> {
    let span = r.end - r.start;
    if !(span.is_finite() && span > 0.0) {
        return vec![r.start];
    }
    // Steps of m·10^e; a tick is k·m·10^e, computed as k·m / 10^−e below 1 so that it
    // is the decimal it names (0.6, not 0.6000000000000001).
    let mut exponent = span.log10().ceil() as i32;
    loop {
        let tick = |units: f64| {
            if exponent < 0 {
                units / 10f64.powi(-exponent)
            } else {
                units * 10f64.powi(exponent)
            }
        };
        for m in [5.0, 2.0, 1.0] {
            let step = tick(m);
            let first = (r.start / step).ceil() as i64;
            let last = (r.end / step).floor() as i64;
            if last - first + 1 >= 4 {
                return (first..=last)
                    .map(|k| snap(tick(k as f64 * m), (r.start, r.end)))
                    .filter(|v| *v >= r.start && *v <= r.end)
                    .collect();
            }
        }
        exponent -= 1;
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
    /// The legend box at scale 1; `None` without series.
    legend: Option<LegendBox>,
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

/// The corner whose legend box covers the fewest plotted points and intervals (and
/// how many), for the legend to hide none if it can. Positions are compared in pixels
/// of the plot area (log axes in log space), with a margin for the markers.
fn legend_corner(
    series: &[Vec<Point>],
    frame: &Frame,
    size: (f64, f64),
    plot: (f64, f64),
) -> (Corner, usize) {
    let frac = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    // A marker's reach beyond its centre, and a little air.
    let margin = 5.0;
    let mut best = (usize::MAX, Corner::UpperLeft);
    for corner in [
        Corner::UpperLeft,
        Corner::UpperRight,
        Corner::LowerRight,
        Corner::LowerLeft,
    ] {
        let b = LegendBox::at(corner, size, plot);
        let (x0, x1) = (b.x - margin, b.x + b.w + margin);
        let (y0, y1) = (b.y - margin, b.y + b.h + margin);
        let count = series
            .iter()
            .flatten()
            .filter(|p| {
                let px = frac(p.x, frame.x_span, frame.log_x) * plot.0;
                if px < x0 || px > x1 {
                    return false;
                }
                // The marker, or any part of its interval, inside the box.
                let to_px = |y: f64| (1.0 - frac(y, frame.y_span, frame.log_y)) * plot.1;
                let ys: Vec<f64> = [Some(p.y), p.low, p.high]
                    .into_iter()
                    .flatten()
                    .filter(|&y| !(frame.log_y && y <= 0.0))
                    .map(to_px)
                    .collect();
                let (top, bottom) = ys
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(t, b), &y| {
                        (t.min(y), b.max(y))
                    });
                bottom >= y0 && top <= y1
            })
            .count();
        if count < best.0 {
            best = (count, corner);
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
    let mut ctx = frame_builder(root, chart, scale)
        .build_cartesian_2d(x, y)
        .map_err(|e| err(&e))?;
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .label_style(font(TICK_PX))
        .axis_desc_style(font(AXIS_LABEL_PX))
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
    // Bands first, so no band covers another series' line.
    let mut whiskered: Vec<Vec<bool>> = Vec::with_capacity(series.len());
    for (i, points) in series.iter().enumerate() {
        let color = rgb(chart.look(i).color);
        let (bands, whiskers) = bands(chart, points, floor);
        for outline in bands {
            ctx.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(BAND_OPACITY).filled(),
            )))
            .map_err(|e| err(&e))?;
        }
        whiskered.push(whiskers);
    }
    for (i, points) in series.iter().enumerate() {
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
        .map_err(|e| err(&e))?;
    }
    // The legend, drawn from its box ([`LegendBox`]) in the plot area's pixels, as
    // pgfplots draws it from the same box.
    if let Some(b) = frame.legend {
        let area = ctx.plotting_area().strip_coord_spec();
        let at = |x: f64, y: f64| ((x * scale).round() as i32, (y * scale).round() as i32);
        area.draw(&Rectangle::new(
            [at(b.x, b.y), at(b.x + b.w, b.y + b.h)],
            WHITE.mix(0.85).filled(),
        ))
        .map_err(|e| err(&e))?;
        area.draw(&Rectangle::new(
            [at(b.x, b.y), at(b.x + b.w, b.y + b.h)],
            LEGEND_BORDER.stroke_width(1),
        ))
        .map_err(|e| err(&e))?;
        let (s0, s1) = b.sample();
        for (i, s) in chart.series.iter().enumerate() {
            let look = chart.look(i);
            let dash = look
                .dash
                .pattern()
                .map(|(on, off)| (px(on, scale).max(1) as i32, px(off, scale).max(1) as i32));
            let y = b.row(i);
            area.draw(&Glyph {
                at: at((s0 + s1) / 2.0, y),
                kind: look.marker,
                size,
                color: rgb(look.color),
                stroke,
                line: (((s1 - s0) / 2.0) * scale).round() as i32,
                dash,
            })
            .map_err(|e| err(&e))?;
            let style = font(LEGEND_PX)
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            area.draw(&Text::new(s.label.as_str(), at(b.text_x(), y), style))
                .map_err(|e| err(&e))?;
        }
    }
    Ok(())
}

/// How opaque an interval band is.
const BAND_OPACITY: f64 = 0.22;

/// The interval bands of one series' points and which points get a whisker instead.
/// Under [`IntervalStyle::Band`], a band runs through consecutive points with an
/// interval; a point without one breaks it, and a point with one but no bounded
/// neighbour gets a whisker. Under bars, every point with an interval gets a whisker.
/// A lower bound off a log axis is drawn down to `floor`, the axis' bottom.
fn bands(chart: &LineChart, points: &[Point], floor: f64) -> (Vec<Vec<(f64, f64)>>, Vec<bool>) {
    let mut whiskered = vec![chart.intervals == IntervalStyle::Bars; points.len()];
    let mut outlines = Vec::new();
    if chart.intervals != IntervalStyle::Band {
        return (outlines, whiskered);
    }
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
            whiskered[start] = true;
        } else {
            let low = |p: &Point| {
                let l = p.low.unwrap_or(p.y);
                if below_log_axis(chart, l) { floor } else { l }
            };
            outlines.push(
                run.iter()
                    .filter_map(|p| Some((p.x, p.high?)))
                    .chain(run.iter().rev().map(|p| (p.x, low(p))))
                    .collect(),
            );
        }
        start = end;
    }
    (outlines, whiskered)
}

/// The legend box's border.
const LEGEND_BORDER: RGBColor = RGBColor(0xAA, 0xAA, 0xAA);

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
            '…' => out.push_str("\\ldots{}"),
            '‘' | '’' => out.push('\''),
            '“' => out.push_str("``"),
            '”' => out.push_str("''"),
            'Š' => out.push_str("\\v{S}"),
            'š' => out.push_str("\\v{s}"),
            '∞' => out.push_str("$\\infty$"),
            '≠' => out.push_str("$\\neq$"),
            '√' => out.push_str("$\\surd$"),
            '₀'..='₉' => {
                let d = c as u32 - '₀' as u32;
                out.push_str(&format!("$_{d}$"));
            }
            '⁰' | '¹' | '²' | '³' | '⁴'..='⁹' => {
                let d = match c {
                    '¹' => 1,
                    '²' => 2,
                    '³' => 3,
                    _ => c as u32 - '⁰' as u32,
                };
                out.push_str(&format!("$^{d}$"));
            }
            _ => match greek(c) {
                Some(name) => out.push_str(&format!("$\\{name}$")),
                None => out.push(c),
            },
        }
    }
    out
}

/// A length in pixels (100 per inch) as TeX big points (72 per inch).
fn bp(px: f64) -> String {
    format!("{}bp", num((px * 0.72 * 1000.0).round() / 1000.0))
}

/// A colour as pgfplots writes it.
fn tex_color((r, g, b): super::Rgb) -> String {
    format!("{{rgb,255:red,{r};green,{g};blue,{b}}}")
}

/// A font size as plotters takes it as a TeX font switch of the same printed size:
/// plotters draws a font of size `s` at `s / 1.24` pixels (its SVG says so), and a pixel
/// is 0.72 bp.
fn tex_font(size: f64) -> String {
    let pt = (size / 1.24 * 0.72 * 100.0).round() / 100.0;
    format!(
        "\\fontsize{{{}bp}}{{{}bp}}\\selectfont",
        num(pt),
        num((pt * 1.2 * 100.0).round() / 100.0)
    )
}

/// The pgfplots mark of a marker shape, with its fill.
fn tex_mark(marker: Marker, color: &str) -> String {
    let (mark, fill) = match marker {
        Marker::Circle => ("*", color),
        Marker::Triangle => ("triangle*", color),
        Marker::Square => ("square*", color),
        Marker::Cross => ("x", color),
        Marker::HollowCircle => ("*", "white"),
        Marker::HollowTriangle => ("triangle*", "white"),
        Marker::HollowSquare => ("square*", "white"),
    };
    format!("mark={mark}, mark options={{solid, draw={color}, fill={fill}}}")
}

/// The TeX name of a Greek letter our labels and captions may hold.
fn greek(c: char) -> Option<&'static str> {
    Some(match c {
        'α' => "alpha",
        'β' => "beta",
        'γ' => "gamma",
        'ε' => "varepsilon",
        'θ' => "theta",
        'κ' => "kappa",
        'ν' => "nu",
        'π' => "pi",
        'ρ' => "rho",
        'σ' => "sigma",
        'φ' => "varphi",
        'χ' => "chi",
        'ψ' => "psi",
        'ω' => "omega",
        'Γ' => "Gamma",
        'Λ' => "Lambda",
        'Σ' => "Sigma",
        'Φ' => "Phi",
        'Ω' => "Omega",
        _ => return None,
    })
}

/// The chart as a pgfplots `tikzpicture` (needs `\usepackage{pgfplots}`), so a paper can
/// typeset the figure in its own fonts. It is drawn from the SVG's own layout
/// ([`layout`]): the plot area at the SVG's size (`scale only axis`), the same axis
/// ranges and ticks, the same dodged x positions, colours, markers (filled or white),
/// lines, bands and rings, and the legend box at the same place and size, drawn by
/// TikZ from the same geometry rather than by pgfplots' own legend. Confidence bounds
/// are explicit asymmetric error bars (`+= (0,high-y) -= (0,y-low)`); the exact x of a
/// dodged point is in a comment and in the figure's CSV.
pub fn pgfplots_tex(chart: &LineChart) -> String {
    let Layout {
        series,
        x,
        y,
        frame,
        plot,
    } = layout(chart, 1.0);
    let size = 3.0;
    let mut out = String::new();
    out.push_str(
        "% Requires \\usepackage{pgfplots}. Drawn from the same layout as the SVG: \
         plot area, ranges, ticks, legend.\n\\begin{tikzpicture}\n\\begin{axis}[\n",
    );
    let _ = writeln!(
        out,
        "  scale only axis, width={}, height={},",
        bp(plot.0),
        bp(plot.1)
    );
    let _ = writeln!(out, "  title={{{}}},", tex_escape(&chart.title));
    let _ = writeln!(out, "  xlabel={{{}}},", tex_escape(&chart.x_label));
    let _ = writeln!(out, "  ylabel={{{}}},", tex_escape(&chart.y_label));
    let _ = writeln!(
        out,
        "  title style={{font={}}}, label style={{font={}}}, tick label style={{font={}}},",
        tex_font((title_px(chart) * 10.0).floor() / 10.0),
        tex_font(AXIS_LABEL_PX),
        tex_font(TICK_PX)
    );
    let _ = writeln!(out, "  xmin={}, xmax={},", num(x.start), num(x.end));
    let _ = writeln!(out, "  ymin={}, ymax={},", num(y.start), num(y.end));
    for (axis, log, range, span) in [
        ("x", chart.log_x, &x, frame.x_span),
        ("y", chart.log_y, &y, frame.y_span),
    ] {
        let ticks = if log {
            log_ticks(range)
        } else {
            linear_ticks(range)
        };
        if log {
            let _ = writeln!(out, "  {axis}mode=log,");
        }
        let values: Vec<String> = ticks.iter().map(|&v| num(v)).collect();
        let labels: Vec<String> = ticks
            .iter()
            .map(|&v| format!("{{{}}}", tex_escape(&tick_label(snap(v, span)))))
            .collect();
        let _ = writeln!(
            out,
            "  {axis}tick={{{}}}, {axis}ticklabels={{{}}},",
            values.join(","),
            labels.join(",")
        );
    }
    let _ = writeln!(
        out,
        "  scaled ticks=false, axis x line*=bottom, axis y line*=left, tick align=outside,\n  \
         grid=major, major grid style={{draw={}}}, legend style={{draw=none}},\n]",
        tex_color((0xDD, 0xDD, 0xDD))
    );
    if let Some(r) = frame.reference {
        // Across the whole axis, whatever its limits turn out to be.
        let _ = writeln!(
            out,
            "\\draw[draw={}, line width={}] ({{rel axis cs:0,0}} |- {{axis cs:{x0},{r}}}) -- ({{rel axis cs:1,0}} |- {{axis cs:{x0},{r}}});",
            tex_color((0x77, 0x77, 0x77)),
            bp(1.0),
            r = num(r),
            x0 = num(x.start)
        );
    }
    for (i, points) in series.iter().enumerate() {
        let look = chart.look(i);
        let color = tex_color(look.color);
        let (outlines, whiskered) = bands(chart, points, y.start);
        for outline in outlines {
            let path: Vec<String> = outline
                .iter()
                .map(|&(a, b)| format!("(axis cs:{},{})", num(a), num(b)))
                .collect();
            let _ = writeln!(
                out,
                "\\fill[fill={color}, fill opacity={}] {} -- cycle;",
                num(BAND_OPACITY),
                path.join(" -- ")
            );
        }
        let dash = match look.dash.pattern() {
            None => "solid".to_string(),
            Some((on, off)) => format!("dash pattern=on {} off {}", bp(on), bp(off)),
        };
        let line = match chart.kind {
            LineKind::Markers => "",
            LineKind::Steps => "const plot, ",
        };
        let marked: Vec<String> = marker_indices(chart.kind, points.len(), i)
            .into_iter()
            .map(|j| (j + 1).to_string())
            .collect();
        let stroke = match chart.kind {
            LineKind::Markers => 1.5,
            LineKind::Steps => 1.0,
        };
        let _ = writeln!(
            out,
            "\\addplot[{line}color={color}, line width={}, {dash}, {}, mark size={}, \
             mark indices={{{}}}, error bars/.cd, y dir=both, y explicit, \
             error bar style={{line width={}, solid}}, \
             error mark options={{rotate=90, mark size={}, line width={}, solid}}] coordinates {{",
            bp(stroke),
            tex_mark(look.marker, &color),
            bp(size),
            marked.join(","),
            bp(1.0),
            bp(size),
            bp(1.0)
        );
        let exact: Vec<Point> = plotted_points(chart, &chart.series[i].points);
        for (k, p) in points.iter().enumerate() {
            let _ = write!(out, "  ({}, {})", num(p.x), num(p.y));
            match (p.low, p.high) {
                _ if !whiskered[k] => {}
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
            if let Some(e) = exact.get(k).filter(|e| e.x != p.x) {
                let _ = write!(out, " % x = {} (drawn beside its neighbours)", num(e.x));
            }
            out.push('\n');
        }
        out.push_str("};\n");
        let rings: Vec<String> = points
            .iter()
            .filter(|p| p.short)
            .map(|p| format!("({}, {})", num(p.x), num(p.y)))
            .collect();
        if !rings.is_empty() {
            let _ = writeln!(
                out,
                "\\addplot[only marks, forget plot, mark=o, mark size={}, mark options={{draw={}, line width={}}}] coordinates {{{}}};",
                bp(2.0 * size + 1.0),
                tex_color((0x66, 0x66, 0x66)),
                bp(1.0),
                rings.join(" ")
            );
        }
    }
    out.push_str("\\end{axis}\n");
    if let Some(b) = frame.legend {
        // The legend, from the SVG's box: offsets from the plot area's top left corner.
        let at = |x: f64, y: f64| format!("({},{})", bp(x), bp(-y));
        let _ = writeln!(
            out,
            "\\begin{{scope}}[shift={{(current axis.north west)}}]\n\
             \\draw[fill=white, fill opacity=0.85, draw={}, line width={}] {} \
             coordinate (linkrev legend nw) rectangle {} coordinate (linkrev legend se);",
            tex_color((0xAA, 0xAA, 0xAA)),
            bp(1.0),
            at(b.x, b.y),
            at(b.x + b.w, b.y + b.h)
        );
        let (s0, s1) = b.sample();
        for (i, s) in chart.series.iter().enumerate() {
            let look = chart.look(i);
            let color = tex_color(look.color);
            let row = b.row(i);
            let dash = match look.dash.pattern() {
                None => "solid".to_string(),
                Some((on, off)) => format!("dash pattern=on {} off {}", bp(on), bp(off)),
            };
            let _ = writeln!(
                out,
                "\\draw[draw={color}, line width={}, {dash}] {} -- {};\n\
                 \\draw[draw={color}, line width={}] plot[{}, mark size={}] coordinates {{{}}};\n\
                 \\node[anchor=west, inner sep=0pt, font={}] at {} {{{}}};",
                bp(1.5),
                at(s0, row),
                at(s1, row),
                bp(1.5),
                tex_mark(look.marker, &color),
                bp(size),
                at((s0 + s1) / 2.0, row),
                tex_font(LEGEND_PX),
                at(b.text_x(), row),
                tex_escape(&s.label)
            );
        }
        out.push_str("\\end{scope}\n");
    }
    out.push_str("\\end{tikzpicture}\n");
    out
}
