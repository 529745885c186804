//! Figure specs: `[[figure]]` tables in a TOML file next to the experiment spec
//! (`analysis/me_load.figures.toml` beside `analysis/me_load.toml`).
//!
//! ```toml
//! [[figure]]
//! name = "wait-vs-rate"        # file name of the figure: letters, digits, `_`, `-`
//! kind = "line"                # line (default) | ecdf | paired | breakdown
//! experiment = "me-load"       # which results directory, when the report has several
//! x = "rate"                   # a parameter; for ecdf the per-event column (wait_s)
//! y = "wait_mean"              # a metric of the runs table (line, paired)
//! series = "algorithm"         # column(s) whose values make the lines
//! facet = "speed_max"          # one panel per value of this column
//! filter = { algorithm = ["me-rl", "me-raymond"], changes = "overlap" }
//! statistic = "mean"           # mean (with its CI) | pooled | median | p95 (line)
//! interval = "bars"            # bars | band | none
//! interval_method = "t"        # t | bootstrap-percentile | bootstrap-bca | wilson |
//!                              # clopper-pearson | delta (default: the metric's own)
//! confidence = 0.95            # the intervals' level
//! simultaneous = "sidak"       # or "bonferroni": all the figure's intervals hold together
//! log_x = true
//! log_y = false
//! title = "CS waiting time"
//! x_label = "request rate λ (1/s per node)"
//! y_label = "mean waiting time (s)"
//! size = "one-column"          # or "two-column"
//! a = "me-rl"                  # paired: the difference a − b per replication
//! b = "me-raymond"              # (an algorithm, or a variant: "me-krl k=2")
//! ```
//!
//! A `breakdown` figure draws several metrics of the runs table as lines of one chart,
//! `y = ["msgs_request_per_cs", "msgs_token_per_cs", "msgs_link_info_per_cs"]`: the
//! parts of a whole (messages per CS entry by kind), one line per metric (and per
//! series value, if any), each the mean over runs with its interval.
//!
//! Decisions:
//! - **Figures live in their own file**, not in the experiment spec: the spec copy in a
//!   results directory must stay byte-identical for a sweep to resume, and retitling a
//!   figure must not invalidate finished runs.
//! - **Facets are separate panels** (one SVG each, shown side by side in the report),
//!   so each panel can go into a paper as a subfigure with its own caption.
//! - **Syntax is checked here; columns are checked against the results** (in
//!   [`super::figures`]) before anything is written: a spec is only meaningful with the
//!   tables it is applied to.

use super::legend::{Legend, LookChoice, parse_color};
use crate::input::{InputError, Location};
use crate::plot::{Dash, MarkerShape};
use crate::plot::{FigureSize, IntervalStyle};
use crate::stats::IntervalMethod;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// What a figure shows.
#[derive(Debug, Clone, PartialEq)]
pub enum FigureKind {
    /// A statistic of a runs-table metric `y` over the parameter `x`, one line per series.
    Line {
        /// The runs-table metric plotted.
        y: String,
        /// What each point summarises the replications with.
        statistic: Statistic,
    },
    /// The empirical CDF of the per-event column `x` (a `requests` or `changes` column),
    /// pooled over the runs of each series.
    Ecdf,
    /// Several runs-table metrics `ys` over the parameter `x`, one line per metric (and
    /// series value): the parts of a whole, such as messages per CS entry by kind.
    Breakdown {
        /// The metrics, drawn and listed in this order.
        ys: Vec<String>,
    },
    /// Mean paired difference `y(a) − y(b)` over the parameter `x`, with its 95% CI.
    Paired {
        /// The runs-table metric differenced.
        y: String,
        /// Algorithm (or variant, `me-krl k=2`) of the first term, `y(a)`.
        a: String,
        /// Algorithm (or variant) subtracted, `y(b)`; never equal to `a`.
        b: String,
    },
}

/// The summary a line figure plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// Mean over replications, with its interval (the metric's method unless the
    /// figure names one; a proportion of runs for the 0/1 indicators).
    Mean,
    /// A per-run ratio pooled over the runs, Σ numerator / Σ denominator (metrics that
    /// declare their parts: messages per CS entry), with a delta-method interval.
    Pooled,
    /// Median over replications (no interval).
    Median,
    /// 95th percentile over replications (no interval).
    P95,
}

impl Statistic {
    /// The column of [`crate::results::aggregate::summarize`]'s output.
    pub fn column(self) -> &'static str {
        match self {
            Statistic::Mean | Statistic::Pooled => "mean",
            Statistic::Median => "median",
            Statistic::P95 => "p95",
        }
    }
}

/// One accepted value of a filter.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterValue {
    /// A number (TOML integers are converted to `f64`).
    Number(f64),
    /// A string (TOML booleans arrive as `true` or `false`).
    Text(String),
}

impl std::fmt::Display for FilterValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterValue::Number(v) => write!(f, "{v}"),
            FilterValue::Text(s) => write!(f, "{s}"),
        }
    }
}

/// One validated `[[figure]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureSpec {
    /// Unique in its file; letters, digits, `_` and `-`; the stem of its files.
    pub name: String,
    /// What is plotted, with the fields only that kind uses.
    pub kind: FigureKind,
    /// The experiment (results directory) it draws from; `None`: the only one.
    pub experiment: Option<String>,
    /// Column on the x axis: a parameter, or the per-event column of an ECDF.
    pub x: String,
    /// Columns whose value combinations make the lines (may be empty: one line).
    pub series: Vec<String>,
    /// Column with one panel per value; `None`: a single panel.
    pub facet: Option<String>,
    /// Keep rows whose column equals one of the values.
    pub filter: Vec<(String, Vec<FilterValue>)>,
    /// `None`: no confidence intervals drawn.
    pub intervals: Option<IntervalStyle>,
    /// The interval's method; `None`: the metric's own ([`crate::family::def::Metric`]).
    pub method: Option<IntervalMethod>,
    /// The intervals' confidence level, in (0, 1).
    pub confidence: f64,
    /// Make all the figure's intervals hold together at `confidence` rather than each
    /// on its own; `None`: each on its own.
    pub simultaneous: Option<crate::stats::multiple::Simultaneous>,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Chart title; `None`: one made from the column labels.
    pub title: Option<String>,
    /// x-axis label; `None`: the column's label, with its unit.
    pub x_label: Option<String>,
    /// y-axis label; `None`: made from the metric's label and the statistic.
    pub y_label: Option<String>,
    /// Width class the figure is drawn for (one column unless given).
    pub size: FigureSize,
    /// Series labels and looks: the file's entries with the figure's own over them.
    pub legend: Legend,
    /// The figure's own `labels` and `styles` entries (each must name a series of it).
    pub own_legend: Legend,
    /// The file's top-level entries (each must name a series of some figure).
    pub file_legend: Legend,
    /// Where the figure is defined (file and line), for errors found later.
    pub origin: Location,
    /// The line of each key of the figure's table, so that an error found later points
    /// at the key rather than at the `[[figure]]` line.
    pub key_lines: BTreeMap<String, usize>,
}

impl FigureSpec {
    /// An error about `field` of this figure, at the line of its key (`filter.routing`
    /// at the line of `filter`), or of the `[[figure]]` table when the key is not
    /// written.
    pub fn error(&self, field: &str, message: impl Into<String>) -> InputError {
        let key = field.split('.').next().unwrap_or(field);
        let mut at = self.origin.clone();
        if let Some(&line) = self.key_lines.get(key) {
            at.line = Some(line);
        }
        InputError::new(at.with_field(format!("figure.{field}")), message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    figure: Vec<Spanned<RawFigure>>,
    /// Labels for every figure of the file ([`super::legend`]).
    #[serde(default)]
    labels: BTreeMap<String, String>,
    /// Looks for every figure of the file.
    #[serde(default)]
    styles: BTreeMap<String, RawLook>,
}

/// A `styles` entry: `{ color = "#0072B2", marker = "square", line = "dashed" }`.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawLook {
    color: Option<String>,
    marker: Option<String>,
    line: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawKind {
    Line,
    Ecdf,
    Paired,
    Breakdown,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawInterval {
    Bars,
    Band,
    None,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum RawSize {
    OneColumn,
    TwoColumn,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFigure {
    name: String,
    kind: Option<RawKind>,
    experiment: Option<String>,
    x: String,
    y: Option<OneOrMany>,
    series: Option<OneOrMany>,
    facet: Option<String>,
    #[serde(default)]
    filter: BTreeMap<String, toml::Value>,
    statistic: Option<Statistic>,
    interval: Option<RawInterval>,
    interval_method: Option<IntervalMethod>,
    confidence: Option<f64>,
    simultaneous: Option<crate::stats::multiple::Simultaneous>,
    #[serde(default)]
    log_x: bool,
    #[serde(default)]
    log_y: bool,
    title: Option<String>,
    x_label: Option<String>,
    y_label: Option<String>,
    size: Option<RawSize>,
    a: Option<String>,
    b: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    styles: BTreeMap<String, RawLook>,
}

/// One documented key of a `[[figure]]` table, for the reference page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureKey {
    /// The key.
    pub key: &'static str,
    /// The values it takes.
    pub values: &'static str,
    /// What an omitted key means.
    pub default: &'static str,
    /// Which kinds of figure use it.
    pub kinds: &'static str,
    /// What it sets.
    pub doc: &'static str,
}

/// Every key of a `[[figure]]` table, in the order the reference lists them. A test
/// holds this list equal to the keys the parser accepts.
pub const FIGURE_KEYS: &[FigureKey] = &[
    FigureKey {
        key: "name",
        values: "letters, digits, `_`, `-`; not starting with `_`, no `--`",
        default: "required",
        kinds: "all",
        doc: "Unique in the file: the stem of the figure's files (`NAME.svg`, `NAME.png`, \
              `NAME.csv`, `NAME.tex`; a facet panel is `NAME--COLUMN-VALUE`).",
    },
    FigureKey {
        key: "kind",
        values: "`\"line\"`, `\"ecdf\"`, `\"paired\"` or `\"breakdown\"`",
        default: "`\"line\"`",
        kinds: "all",
        doc: "line: a statistic of `y` over `x`, one line per series; ecdf: the empirical \
              CDF of a per-event column; paired: the mean difference `y(a) − y(b)` per \
              replication; breakdown: several metrics (the parts of a whole) as lines.",
    },
    FigureKey {
        key: "experiment",
        values: "an experiment name",
        default: "the only experiment of the report",
        kinds: "all",
        doc: "The results directory the figure draws from, when the report reads several.",
    },
    FigureKey {
        key: "x",
        values: "a column",
        default: "required",
        kinds: "all",
        doc: "The x axis: a parameter of the runs table; for ecdf, the per-event column \
              (`wait_s`, `convergence_time_s`, …).",
    },
    FigureKey {
        key: "y",
        values: "a metric; for breakdown, a list of metrics",
        default: "required (not for ecdf)",
        kinds: "line, paired, breakdown",
        doc: "The runs-table metric(s) drawn.",
    },
    FigureKey {
        key: "series",
        values: "a column or a list of columns",
        default: "`\"algorithm\"` (paired: none)",
        kinds: "all",
        doc: "Columns whose value combinations make the lines.",
    },
    FigureKey {
        key: "facet",
        values: "a column",
        default: "none: one panel",
        kinds: "all",
        doc: "One panel (its own files) per value of this column.",
    },
    FigureKey {
        key: "filter",
        values: "a table of column = value or list of values",
        default: "none: every run",
        kinds: "all",
        doc: "Keeps only the runs whose columns take these values.",
    },
    FigureKey {
        key: "statistic",
        values: "`\"mean\"`, `\"pooled\"`, `\"median\"` or `\"p95\"`",
        default: "`\"mean\"`",
        kinds: "line",
        doc: "What a point summarises the replications with: the mean with its interval; \
              pooled: Σ numerator / Σ denominator for ratio metrics that declare their \
              parts, with a delta-method interval; median and p95 carry no interval.",
    },
    FigureKey {
        key: "interval",
        values: "`\"bars\"`, `\"band\"` or `\"none\"`",
        default: "`\"bars\"`",
        kinds: "line, paired, breakdown",
        doc: "How intervals are drawn.",
    },
    FigureKey {
        key: "interval_method",
        values: "`\"t\"`, `\"bootstrap-percentile\"`, `\"bootstrap-bca\"`, `\"wilson\"`, \
                 `\"clopper-pearson\"` or `\"delta\"`",
        default: "the metric's own method",
        kinds: "line, paired, breakdown",
        doc: "The interval's method; refused where the estimate cannot use it (wilson and \
              clopper-pearson need a 0/1 metric, delta a pooled ratio).",
    },
    FigureKey {
        key: "confidence",
        values: "number between 0 and 1",
        default: "`0.95`",
        kinds: "line, paired, breakdown",
        doc: "The intervals' confidence level.",
    },
    FigureKey {
        key: "simultaneous",
        values: "`\"sidak\"` or `\"bonferroni\"`",
        default: "none: each interval on its own",
        kinds: "line, paired, breakdown",
        doc: "Draw every interval of the figure (all panels) at the level that makes them \
              all hold together with the `confidence` (Šidák: confidence^(1/m) each; \
              Bonferroni: 1 − (1 − confidence)/m), and say so in the caption. For claims \
              such as \"A is lower at every point\".",
    },
    FigureKey {
        key: "log_x",
        values: "`true` or `false`",
        default: "`false`",
        kinds: "all",
        doc: "A logarithmic x axis.",
    },
    FigureKey {
        key: "log_y",
        values: "`true` or `false`",
        default: "`false`",
        kinds: "all",
        doc: "A logarithmic y axis.",
    },
    FigureKey {
        key: "title",
        values: "text",
        default: "made from the metric and x",
        kinds: "all",
        doc: "The figure's title (and the report's caption heading).",
    },
    FigureKey {
        key: "x_label",
        values: "text",
        default: "the column's name and unit",
        kinds: "all",
        doc: "The x axis label.",
    },
    FigureKey {
        key: "y_label",
        values: "text",
        default: "the metric's name and unit",
        kinds: "all",
        doc: "The y axis label.",
    },
    FigureKey {
        key: "size",
        values: "`\"one-column\"` or `\"two-column\"`",
        default: "`\"one-column\"`",
        kinds: "all",
        doc: "The figure's width: one column or the full width of a two-column paper.",
    },
    FigureKey {
        key: "a",
        values: "an algorithm, or a variant (`\"me-krl k=2\"`)",
        default: "required",
        kinds: "paired",
        doc: "The first term of the difference, `y(a)`.",
    },
    FigureKey {
        key: "b",
        values: "an algorithm or a variant, not `a`",
        default: "required",
        kinds: "paired",
        doc: "The term subtracted, `y(b)`.",
    },
    FigureKey {
        key: "labels",
        values: "a table: series key or key part → legend text",
        default: "paper names: `RL`, `Raymond (route discovery)`, `max. speed 2 m/s`",
        kinds: "all",
        doc: "What the legend calls each series. A key is written as results name things: \
              `\"me-rl\"`, `\"me-raymond routing=discovery\"`, `\"speed_max=2.0\"`, a \
              paired series `\"me-rl − me-raymond\"`, several series columns joined \
              by `, `; an entry for a whole key wins over entries for its parts. A \
              top-level `[labels]` table applies to every figure of the file. An entry \
              that names no series is an error.",
    },
    FigureKey {
        key: "styles",
        values: "a table: series key or key part → `{ color = \"#RRGGBB\", marker = \
                 \"square\", line = \"dashed\" }`",
        default: "the palette's colours and markers in turn, solid lines",
        kinds: "all",
        doc: "How each series is drawn, keyed like `labels` (the whole key's entry first, \
              then its parts'). Markers: circle, triangle, square, cross, hollow-circle, \
              hollow-triangle, hollow-square; lines: solid, dashed, dotted. A top-level \
              `[styles]` table applies to every figure of the file.",
    },
];

/// Reads and checks a figure spec file.
pub fn load(path: &Path) -> Result<Vec<FigureSpec>, InputError> {
    parse(&read(path)?, &path.display().to_string())
}

/// Reads a labels file (`linkrev report --labels`): top-level `[labels]` and `[styles]`
/// tables, as in a figure spec file, and nothing else.
pub fn load_legend(path: &Path) -> Result<Legend, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::file(path, format!("cannot read the labels file: {e}")))?;
    let file = path.display().to_string();
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RawLegend {
        #[serde(default)]
        labels: BTreeMap<String, String>,
        #[serde(default)]
        styles: BTreeMap<String, RawLook>,
    }
    let raw: RawLegend = toml::from_str(&text).map_err(|e| {
        let at = match e.span() {
            Some(span) => Location::line(file.as_str(), line_of(&text, span.start)),
            None => Location::file(file.as_str()),
        };
        InputError::new(at, e.message().trim().to_string())
    })?;
    let lines = key_lines(&text, 1, text.lines().count().max(1));
    legend(raw.labels, raw.styles, &|field| {
        let key = field.split('.').next().unwrap_or(field);
        let mut at = Location::file(file.as_str());
        at.line = lines.get(key).copied();
        at.with_field(field.to_string())
    })
}

/// The text of a figure spec file (the report shows it verbatim).
pub fn read(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path)
        .map_err(|e| InputError::file(path, format!("cannot read the figure spec: {e}")))
}

fn line_of(text: &str, offset: usize) -> usize {
    1 + text[..offset.min(text.len())].matches('\n').count()
}

/// Checks figure spec `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<FigureSpec>, InputError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let location = match e.span() {
            Some(span) => {
                let line = line_of(text, span.start);
                // A type error points at the value: the key before its `=` is the field.
                let key = text
                    .lines()
                    .nth(line.saturating_sub(1))
                    .and_then(|l| l.split_once('='))
                    .map(|(key, _)| key.trim())
                    .filter(|k| {
                        !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
                    });
                // Inside a `[[figure]]` table the field is `figure.KEY`; above the first
                // one it is a top-level key.
                let in_figure = text
                    .lines()
                    .take(line.saturating_sub(1))
                    .any(|l| l.trim_start().starts_with("[[figure]]"));
                match key {
                    Some(key) if in_figure => {
                        Location::line(file, line).with_field(format!("figure.{key}"))
                    }
                    Some(key) => Location::line(file, line).with_field(key),
                    None => Location::line(file, line),
                }
            }
            None => Location::file(file),
        };
        InputError::new(location, e.message().trim().to_string())
    })?;
    if raw.figure.is_empty() {
        return Err(InputError::new(
            Location::file(file),
            "no [[figure]] tables: nothing to draw",
        ));
    }
    let first_figure = text
        .lines()
        .position(|l| l.trim_start().starts_with("[[figure]]"))
        .map_or(1, |i| i + 1);
    let top_lines = key_lines(text, 1, first_figure);
    let top = |key: &str| {
        let mut at = Location::line(file, first_figure);
        if let Some(&line) = top_lines.get(key) {
            at.line = Some(line);
        }
        at
    };
    let file_legend = legend(raw.labels, raw.styles, &|field| {
        top(field.split('.').next().unwrap_or(field)).with_field(field.to_string())
    })?;
    let mut figures: Vec<FigureSpec> = Vec::new();
    for spanned in raw.figure {
        let first = line_of(text, spanned.span().start);
        let origin = Location::line(file, first);
        // The figure's table runs to the next table header or the end of the file.
        let last = text
            .lines()
            .enumerate()
            .skip(first)
            .find(|(_, l)| l.trim_start().starts_with('['))
            .map_or(text.lines().count(), |(i, _)| i);
        let lines = key_lines(text, first, last.max(first));
        let mut figure = check(spanned.into_inner(), origin, lines)?;
        figure.legend = Legend::over(&file_legend, &figure.own_legend);
        figure.file_legend = file_legend.clone();
        if let Some(first) = figures.iter().find(|f| f.name == figure.name) {
            return Err(figure.error(
                "name",
                format!(
                    "`{}` is used twice (first at line {}): names become file names",
                    figure.name,
                    first.origin.line.unwrap_or(0)
                ),
            ));
        }
        figures.push(figure);
    }
    Ok(figures)
}

/// The line of each `key =` in lines `from..=to` of `text` (1-based), first one wins.
fn key_lines(text: &str, from: usize, to: usize) -> BTreeMap<String, usize> {
    let mut lines = BTreeMap::new();
    for (i, line) in text.lines().enumerate().skip(from - 1).take(to + 1 - from) {
        // A table header (`[labels]`) locates its table's entries.
        if let Some(header) = line
            .trim()
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            && !header.starts_with('[')
        {
            lines.entry(header.trim().to_string()).or_insert(i + 1);
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            lines.entry(key.to_string()).or_insert(i + 1);
        }
    }
    lines
}

/// The `labels` and `styles` entries, checked; `at(field)` locates an error.
fn legend(
    labels: BTreeMap<String, String>,
    styles: BTreeMap<String, RawLook>,
    at: &dyn Fn(&str) -> Location,
) -> Result<Legend, InputError> {
    let mut looks = BTreeMap::new();
    for (key, raw) in styles {
        let field = |name: &str| at(&format!("styles.{name}"));
        let color = match &raw.color {
            None => None,
            Some(c) => Some(parse_color(c).ok_or_else(|| {
                InputError::new(
                    field("color"),
                    format!("`{c}` (for \"{key}\") is not a colour: write it as #RRGGBB"),
                )
            })?),
        };
        let marker = match &raw.marker {
            None => None,
            Some(m) => Some(MarkerShape::from_name(m).ok_or_else(|| {
                let names: Vec<&str> = MarkerShape::NAMED.iter().map(|(n, _)| *n).collect();
                InputError::new(
                    field("marker"),
                    format!(
                        "`{m}` (for \"{key}\") is not a marker: one of {}",
                        names.join(", ")
                    ),
                )
            })?),
        };
        let dash = match &raw.line {
            None => None,
            Some(l) => Some(Dash::from_name(l).ok_or_else(|| {
                InputError::new(
                    field("line"),
                    format!("`{l}` (for \"{key}\") is not a line: solid, dashed or dotted"),
                )
            })?),
        };
        looks.insert(
            key,
            LookChoice {
                color,
                marker,
                dash,
            },
        );
    }
    Ok(Legend { labels, looks })
}

fn check(
    raw: RawFigure,
    origin: Location,
    key_lines: BTreeMap<String, usize>,
) -> Result<FigureSpec, InputError> {
    let at = |field: &str| {
        let key = field.split('.').next().unwrap_or(field);
        let mut at = origin.clone();
        if let Some(&line) = key_lines.get(key) {
            at.line = Some(line);
        }
        at.with_field(format!("figure.{field}"))
    };
    let err = |field: &str, message: String| InputError::new(at(field), message);
    let own_legend = legend(raw.labels.clone(), raw.styles.clone(), &at)?;
    if raw.name.is_empty()
        || !raw
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || raw.name.starts_with('_')
        || raw.name.contains("--")
    {
        return Err(err(
            "name",
            format!(
                "`{}` is not a valid figure name: use letters, digits, `_` and `-`, not \
                 starting with `_` and without `--` (it becomes a file name; `--` separates \
                 facet panels, `_` starts the report's own files)",
                raw.name
            ),
        ));
    }
    let kind = raw.kind.unwrap_or(RawKind::Line);
    let not_for = |field: &str, kind: &str| err(field, format!("not used by {kind} figures"));
    let one_y = |what: &str| match &raw.y {
        None => Err(err("y", format!("missing: {what}"))),
        Some(OneOrMany::One(y)) => Ok(y.clone()),
        Some(OneOrMany::Many(_)) => Err(err(
            "y",
            "one metric here; several go in a kind = \"breakdown\" figure".into(),
        )),
    };
    let kind = match kind {
        RawKind::Line => {
            if raw.a.is_some() || raw.b.is_some() {
                return Err(not_for(if raw.a.is_some() { "a" } else { "b" }, "line"));
            }
            FigureKind::Line {
                y: one_y("the metric to plot")?,
                statistic: raw.statistic.unwrap_or(Statistic::Mean),
            }
        }
        RawKind::Breakdown => {
            for (field, set) in [
                ("a", raw.a.is_some()),
                ("b", raw.b.is_some()),
                ("statistic", raw.statistic.is_some()),
            ] {
                if set {
                    return Err(not_for(field, "breakdown (always the mean)"));
                }
            }
            let ys = match &raw.y {
                None => return Err(err("y", "missing: the list of metrics".into())),
                Some(OneOrMany::One(y)) => vec![y.clone()],
                Some(OneOrMany::Many(ys)) => ys.clone(),
            };
            if ys.is_empty() {
                return Err(err("y", "an empty list draws nothing".into()));
            }
            if let Some(twice) = ys.iter().enumerate().find(|(i, y)| ys[..*i].contains(y)) {
                return Err(err("y", format!("`{}` is listed twice", twice.1)));
            }
            FigureKind::Breakdown { ys }
        }
        RawKind::Ecdf => {
            for (field, set) in [
                ("y", raw.y.is_some()),
                ("statistic", raw.statistic.is_some()),
                ("a", raw.a.is_some()),
                ("b", raw.b.is_some()),
                ("interval", raw.interval.is_some()),
                ("interval_method", raw.interval_method.is_some()),
                ("confidence", raw.confidence.is_some()),
                ("simultaneous", raw.simultaneous.is_some()),
            ] {
                if set {
                    return Err(err(
                        field,
                        "not used by ecdf figures (x is the per-event column, y the \
                         fraction of events)"
                            .into(),
                    ));
                }
            }
            FigureKind::Ecdf
        }
        RawKind::Paired => {
            if raw.statistic.is_some() {
                return Err(not_for("statistic", "paired (always the mean difference)"));
            }
            let a = raw
                .a
                .ok_or_else(|| err("a", "missing: the first algorithm".into()))?;
            let b = raw
                .b
                .ok_or_else(|| err("b", "missing: the second algorithm".into()))?;
            if a == b {
                return Err(err("b", format!("equals a (`{a}`): nothing to difference")));
            }
            for (field, name) in [("a", &a), ("b", &b)] {
                let algorithm = name.split(' ').next().unwrap_or_default();
                if crate::registry::Algorithm::parse(algorithm).is_none() {
                    return Err(err(
                        field,
                        format!("`{name}` is not an algorithm or a variant of one"),
                    ));
                }
            }
            FigureKind::Paired {
                y: one_y("the metric to difference")?,
                a,
                b,
            }
        }
    };
    let series = match raw.series {
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
        // Comparing algorithms is what nearly every figure does; a paired figure
        // already differences them.
        None if matches!(kind, FigureKind::Paired { .. }) => Vec::new(),
        None => vec!["algorithm".to_string()],
    };
    if series.contains(&raw.x) {
        return Err(err(
            "series",
            format!("`{}` is already x: a column cannot make both", raw.x),
        ));
    }
    if let Some(facet) = &raw.facet {
        if *facet == raw.x {
            return Err(err(
                "facet",
                format!("`{facet}` is already x: a column cannot make both"),
            ));
        }
        if series.contains(facet) {
            return Err(err(
                "facet",
                format!("`{facet}` is already a series column: a column cannot make both"),
            ));
        }
    }
    if matches!(kind, FigureKind::Paired { .. }) {
        // The pairing keys: a paired difference is taken across them.
        for key in ["algorithm", "variant", "replication", "seed"] {
            let (field, used) = if series.iter().any(|s| s == key) {
                ("series", true)
            } else {
                ("facet", raw.facet.as_deref() == Some(key))
            };
            if used || raw.x == key {
                return Err(err(
                    if used { field } else { "x" },
                    format!(
                        "a paired figure pairs runs by variant, replication and seed; `{key}` \
                         cannot also be its x, series or facet"
                    ),
                ));
            }
        }
    }
    let confidence = raw.confidence.unwrap_or(0.95);
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(err(
            "confidence",
            format!("{confidence} is not a level between 0 and 1 (0.95 for 95%)"),
        ));
    }
    let mut filter = Vec::new();
    for (column, value) in raw.filter {
        let field = format!("filter.{column}");
        let one = |v: &toml::Value| match v {
            toml::Value::String(s) => Ok(FilterValue::Text(s.clone())),
            toml::Value::Integer(i) => Ok(FilterValue::Number(*i as f64)),
            toml::Value::Float(x) => Ok(FilterValue::Number(*x)),
            toml::Value::Boolean(b) => Ok(FilterValue::Text(b.to_string())),
            _ => Err(err(
                &field,
                "expected a string, a number or a list of them".into(),
            )),
        };
        let values = match &value {
            toml::Value::Array(items) if items.is_empty() => {
                return Err(err(&field, "an empty list keeps nothing".into()));
            }
            toml::Value::Array(items) => items.iter().map(one).collect::<Result<Vec<_>, _>>()?,
            v => vec![one(v)?],
        };
        filter.push((column, values));
    }
    Ok(FigureSpec {
        name: raw.name,
        kind,
        experiment: raw.experiment,
        x: raw.x,
        series,
        facet: raw.facet,
        filter,
        intervals: match raw.interval {
            None | Some(RawInterval::Bars) => Some(IntervalStyle::Bars),
            Some(RawInterval::Band) => Some(IntervalStyle::Band),
            Some(RawInterval::None) => None,
        },
        method: raw.interval_method,
        confidence,
        simultaneous: raw.simultaneous,
        log_x: raw.log_x,
        log_y: raw.log_y,
        title: raw.title,
        x_label: raw.x_label,
        y_label: raw.y_label,
        size: match raw.size {
            None | Some(RawSize::OneColumn) => FigureSize::OneColumn,
            Some(RawSize::TwoColumn) => FigureSize::TwoColumn,
        },
        legend: own_legend.clone(),
        own_legend,
        file_legend: Legend::default(),
        origin,
        key_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented keys are exactly those the parser accepts, in its order: serde
    /// lists the accepted keys when it refuses an unknown one.
    #[test]
    fn documented_keys_are_the_accepted_keys() {
        let error = parse(
            "[[figure]]\nname = \"f\"\nx = \"rate\"\nno_such_key = 1\n",
            "f",
        )
        .expect_err("an unknown key is refused");
        let message = error.to_string();
        let accepted: Vec<&str> = message
            .split_once("expected one of")
            .expect("serde names the accepted keys")
            .1
            .split(',')
            .map(|k| k.trim().trim_matches('`'))
            .collect();
        let documented: Vec<&str> = FIGURE_KEYS.iter().map(|k| k.key).collect();
        assert_eq!(accepted, documented);
    }
}
