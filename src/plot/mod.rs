//! Publication figures from aggregated results.
//!
//! A [`LineChart`] is plain data (series of points with optional confidence bounds, as
//! produced by [`crate::results::aggregate::summarize`]); the renderers in `line` turn
//! it into SVG, PNG, the CSV of exactly the plotted numbers, or a pgfplots figure.
//! Keeping the chart as data means every output of one figure shows the same numbers,
//! and a figure can be re-typeset in LaTeX without re-running anything.

pub mod line;

use plotters::style::RGBColor;

pub use line::{PALETTE, pgfplots_tex, points_csv, render_png, render_svg, tex_escape};

/// A colour as red, green and blue bytes.
pub type Rgb = (u8, u8, u8);

/// A marker's shape. Filled shapes are filled with the series' colour; hollow ones are
/// drawn in it on white.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerShape {
    /// A filled circle.
    Circle,
    /// A filled triangle, point up.
    Triangle,
    /// A filled square.
    Square,
    /// A cross (×).
    Cross,
    /// An open circle.
    HollowCircle,
    /// An open triangle.
    HollowTriangle,
    /// An open square.
    HollowSquare,
}

impl MarkerShape {
    /// Every shape with the name figure specs give it.
    pub const NAMED: [(&'static str, MarkerShape); 7] = [
        ("circle", MarkerShape::Circle),
        ("triangle", MarkerShape::Triangle),
        ("square", MarkerShape::Square),
        ("cross", MarkerShape::Cross),
        ("hollow-circle", MarkerShape::HollowCircle),
        ("hollow-triangle", MarkerShape::HollowTriangle),
        ("hollow-square", MarkerShape::HollowSquare),
    ];

    /// The shape named `name` in a figure spec.
    pub fn from_name(name: &str) -> Option<MarkerShape> {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }

    /// The open version of the shape (a cross stays a cross).
    pub fn hollow(self) -> MarkerShape {
        match self {
            MarkerShape::Circle => MarkerShape::HollowCircle,
            MarkerShape::Triangle => MarkerShape::HollowTriangle,
            MarkerShape::Square => MarkerShape::HollowSquare,
            other => other,
        }
    }
}

/// A series' line pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dash {
    /// Unbroken.
    #[default]
    Solid,
    /// Dashes of 4 px (2.88 pt) with gaps as long.
    Dashed,
    /// Dots: 1.5 px on, 3 px off.
    Dotted,
}

impl Dash {
    /// Every pattern with the name figure specs give it.
    pub const NAMED: [(&'static str, Dash); 3] = [
        ("solid", Dash::Solid),
        ("dashed", Dash::Dashed),
        ("dotted", Dash::Dotted),
    ];

    /// The pattern named `name` in a figure spec.
    pub fn from_name(name: &str) -> Option<Dash> {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| *d)
    }

    /// Length on and off in SVG pixels (100 per inch); `None` for a solid line.
    pub fn pattern(self) -> Option<(f64, f64)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((4.0, 4.0)),
            Dash::Dotted => Some((1.5, 3.0)),
        }
    }
}

/// How one series is drawn. Panels of one figure give a series the same look, so it
/// reads the same in every panel even where another panel lacks some series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Line, marker and interval colour.
    pub color: Rgb,
    /// Marker shape.
    pub marker: MarkerShape,
    /// Line pattern.
    pub dash: Dash,
}

impl Look {
    /// The default look of the `index`-th series: the palette's colours and the marker
    /// shapes cycled independently (8 colours against 7 shapes), solid lines.
    pub fn nth(index: usize) -> Look {
        let RGBColor(r, g, b) = PALETTE[index % PALETTE.len()];
        Look {
            color: (r, g, b),
            marker: line::MARKERS[index % line::MARKERS.len()],
            dash: Dash::Solid,
        }
    }
}

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
    /// The point rests on a sweep point that stopped at its `max` short of its
    /// precision target: drawn with a grey ring around its marker.
    pub short: bool,
}

impl Point {
    /// A point without confidence bounds.
    pub fn new(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            low: None,
            high: None,
            short: false,
        }
    }

    /// A point with a confidence interval `[low, high]`.
    pub fn with_ci(x: f64, y: f64, low: f64, high: f64) -> Self {
        Point {
            x,
            y,
            low: Some(low),
            high: Some(high),
            short: false,
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
    /// The look of each series; a series without one takes [`Look::nth`] of its
    /// position.
    pub looks: Vec<Look>,
}

impl LineChart {
    /// How series `i` is drawn.
    pub fn look(&self, i: usize) -> Look {
        self.looks.get(i).copied().unwrap_or_else(|| Look::nth(i))
    }
}
