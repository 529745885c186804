//! Publication figures from aggregated results.
//!
//! A [`LineChart`] is plain data (series of points with optional confidence bounds, as
//! produced by [`crate::results::aggregate::summarize`]); the renderers in `line` turn
//! it into SVG, PNG, the CSV of exactly the plotted numbers, or a pgfplots figure.
//! Keeping the chart as data means every output of one figure shows the same numbers,
//! and a figure can be re-typeset in LaTeX without re-running anything.

pub mod line;

pub use line::{PALETTE, pgfplots_tex, points_csv, render_png, render_svg};

/// One point of a line: `y` at `x`, with an optional confidence interval `[low, high]`
/// drawn as an error bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Position on the x axis, in the x variable's unit.
    pub x: f64,
    /// Value plotted at `x`.
    pub y: f64,
    /// Lower confidence bound; an interval is drawn only when `high` is set too.
    pub low: Option<f64>,
    /// Upper confidence bound; an interval is drawn only when `low` is set too.
    pub high: Option<f64>,
}

impl Point {
    /// A point without confidence bounds.
    pub fn new(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            low: None,
            high: None,
        }
    }

    /// A point with a confidence interval `[low, high]`.
    pub fn with_ci(x: f64, y: f64, low: f64, high: f64) -> Self {
        Point {
            x,
            y,
            low: Some(low),
            high: Some(high),
        }
    }
}

/// One labelled line of a chart (one algorithm, one parameter setting, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// The points, joined in this order (so normally by increasing `x`).
    pub points: Vec<Point>,
}

/// Figure width class. Papers are set in one or two columns; sizing figures to the
/// column keeps fonts at the same printed size as the text instead of being scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FigureSize {
    /// 3.5 in wide (one column of a two-column paper).
    #[default]
    OneColumn,
    /// 7 in wide (full page width).
    TwoColumn,
}

impl FigureSize {
    /// Size in SVG pixels at 100 px per inch; PNG output doubles both dimensions.
    pub fn pixels(self) -> (u32, u32) {
        match self {
            FigureSize::OneColumn => (350, 260),
            FigureSize::TwoColumn => (700, 350),
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineKind {
    /// Straight segments between points, a marker on every point (means over a
    /// parameter).
    #[default]
    Markers,
    /// A right-continuous staircase (an empirical CDF): each `y` holds until the next
    /// `x`. Markers go on a few points only, enough to tell series apart in greyscale
    /// without hiding the steps.
    Steps,
}

/// How confidence intervals are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntervalStyle {
    /// A vertical error bar with caps at each point.
    #[default]
    Bars,
    /// A translucent band between the lower and the upper bounds, which reads better
    /// when x values are dense.
    Band,
}

/// A line chart: several series over a shared x axis, optionally logarithmic.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineChart {
    /// Caption above the plot.
    pub title: String,
    /// Label of the x axis, with its unit.
    pub x_label: String,
    /// Label of the y axis, with its unit.
    pub y_label: String,
    /// The lines, drawn and listed in the legend in this order.
    pub series: Vec<Series>,
    /// Logarithmic x axis; points with x ≤ 0 are not plotted.
    pub log_x: bool,
    /// Logarithmic y axis; points with y ≤ 0 are not plotted.
    pub log_y: bool,
    /// Width class the figure is sized for.
    pub size: FigureSize,
    /// Markers on every point, or a staircase (an empirical CDF).
    pub kind: LineKind,
    /// Whether confidence intervals are error bars or a band.
    pub intervals: IntervalStyle,
    /// A horizontal reference line (e.g. y = 0 under paired differences, where "no
    /// difference" must be visible); the y axis is widened to include it.
    pub reference_y: Option<f64>,
    /// Style (colour and marker) index of each series; empty: by position. Panels of
    /// one figure share it, so a series keeps its look in every panel even when another
    /// panel lacks some series.
    pub styles: Vec<usize>,
}

impl LineChart {
    /// The style index of series `i`.
    pub fn style(&self, i: usize) -> usize {
        self.styles.get(i).copied().unwrap_or(i)
    }
}
