//! Figure specs applied to stored results: the aggregated numbers and the charts drawn
//! from them.
//!
//! Each figure becomes one [`Panel`] per facet value. A panel holds the chart (plain
//! data, rendered by [`crate::plot`]) and the table of the numbers behind it, so the
//! report can show, and write next to the figure, exactly what was plotted.
//!
//! Honesty rules that apply to every kind:
//! - A line is a statistic over replications at one parameter point; nothing is pooled
//!   over a parameter the figure does not name: a swept column that is neither `x`,
//!   `series`, `facet` nor fixed by `filter` is an error, not silently averaged over.
//! - An empirical CDF counts every event in its denominator, including requests never
//!   served and changes that never converged before the run ended, so the curve tops
//!   out at the fraction that finished instead of pretending everything did.
//! - A paired difference pairs runs of one replication (same trace, same requests);
//!   runs without a partner are counted and reported, not mixed in.

use super::Experiment;
use super::figspec::{FigureKind, FigureSpec, FilterValue, Statistic};
use crate::family::{EventTable, metric_label};
use crate::input::InputError;
use crate::plot::{LineChart, LineKind, Look, Point, Series};
use crate::registry::Algorithm;
use crate::results::aggregate::{
    IntervalSpec, float_values, paired_difference, summarize, summarize_ratio, summarize_share,
};
use crate::results::tables::RUN_COLUMNS;
use crate::stats::intervals::SampleKind;
use crate::stats::{IntervalMethod, Support};
use polars::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// Most points an ECDF is drawn with: beyond a few hundred steps a curve looks the same,
/// and the figure's CSV and SVG stay small for sweeps with millions of requests.
pub const MAX_ECDF_POINTS: usize = 400;

/// The column of a breakdown figure's table naming the metric of each row.
const BREAKDOWN: &str = "metric";

/// One drawn chart of a figure (one facet value) and the numbers behind it.
pub struct Panel {
    /// File stem: the figure name, plus the facet value when faceted.
    pub stem: String,
    /// The facet value the panel shows (`None` when not faceted).
    pub facet: Option<String>,
    /// The chart as data, rendered to SVG, PNG, CSV and pgfplots.
    pub chart: LineChart,
    /// Aggregated rows behind the chart (`data/<stem>.csv`).
    pub table: DataFrame,
    /// One sentence on what is plotted (the caption's second half).
    pub note: String,
}

/// A figure spec with the panels built from the results.
pub struct Figure {
    /// The spec the figure was built from.
    pub spec: FigureSpec,
    /// One panel per facet value (a single panel when not faceted).
    pub panels: Vec<Panel>,
    /// Every series key drawn ([`super::legend`]), for checking that each `labels` and
    /// `styles` entry names one.
    pub series_keys: BTreeSet<String>,
}

/// Axis label of a known column, with its unit; otherwise the column name itself.
/// Metrics are labelled as their families declare them, algorithm parameters by their
/// registry description.
pub fn column_label(name: &str) -> String {
    if let Some(m) = declared_metric(name) {
        return m.label.to_string();
    }
    if let Some(label) = metric_label(name) {
        return label.to_string();
    }
    if let Some((_, label)) = super::INDICATORS.iter().find(|(c, _)| *c == name) {
        return label.to_string();
    }
    if let Some(ratio) = crate::family::message_ratios()
        .into_iter()
        .find(|r| r.column == name)
    {
        return ratio.label;
    }
    if name == super::VARIANT {
        return "algorithm variant".to_string();
    }
    let label = match name {
        "rate" => "request rate λ (1/s per node)",
        "speed_max" => "maximum speed (m/s)",
        "speed_min" => "minimum speed (m/s)",
        "nodes" => "number of nodes",
        "pause" => "pause time (s)",
        "range" => "radio range (m)",
        "duration" => "simulated time (s)",
        "cs_time" => "CS duration",
        _ => Algorithm::all()
            .flat_map(|a| a.params().iter())
            .find(|p| p.name == name)
            .map_or(name, |p| p.description),
    };
    label.to_string()
}

/// Builds every panel of `spec` from `experiment`'s tables. Errors name the figure
/// spec's file, line and field.
pub fn build(spec: &FigureSpec, experiment: &Experiment) -> anyhow::Result<Figure> {
    let mut notes: Vec<String> = Vec::new();
    let (mut panels, used) = match &spec.kind {
        FigureKind::Line { y, statistic } => {
            let df = prepare(spec, experiment, "runs", &experiment.runs, &[y], &mut notes)?;
            (line_panels(spec, &df, y, *statistic)?, df)
        }
        FigureKind::Breakdown { ys } => {
            let metrics: Vec<&String> = ys.iter().collect();
            let df = prepare(
                spec,
                experiment,
                "runs",
                &experiment.runs,
                &metrics,
                &mut notes,
            )?;
            (breakdown_panels(spec, &df, ys)?, df)
        }
        FigureKind::Paired { y, a, b } => {
            let df = prepare(spec, experiment, "runs", &experiment.runs, &[y], &mut notes)?;
            let pair: BooleanChunked = df
                .column(super::VARIANT)?
                .str()?
                .iter()
                .map(|v| v == Some(a.as_str()) || v == Some(b.as_str()))
                .collect();
            let used = df.filter(&pair)?;
            (paired_panels(spec, &df, y, a, b)?, used)
        }
        FigureKind::Ecdf => {
            let table = event_table(spec, experiment)?;
            let mut needed: Vec<&str> = vec![spec.x.as_str()];
            needed.extend(spec.series.iter().map(String::as_str));
            needed.extend(spec.facet.as_deref());
            needed.extend(spec.filter.iter().map(|(c, _)| c.as_str()));
            // The axes and the algorithm too, to refuse pooling over them (see `prepare`).
            needed.extend(experiment.plan.axes.iter().map(|(a, _)| a.as_str()));
            needed.push("algorithm");
            let columns = experiment.store.columns(table.name())?;
            needed.retain(|c| columns.iter().any(|k| k == c) || *c == spec.x);
            let df = experiment.store.read_columns(table.name(), &needed)?;
            let df = with_variant(only_committed(df, &experiment.runs)?, &experiment.runs)?;
            let df = prepare(spec, experiment, table.name(), &df, &[], &mut notes)?;
            (ecdf_panels(spec, &df, table)?, df)
        }
    };
    if !matches!(spec.kind, FigureKind::Ecdf) && !experiment.short_runs.is_empty() {
        ring_short_points(spec, &used, experiment, &mut panels)?;
    }
    let mut series_keys = name_series(spec, &mut panels)?;
    // Facet values are named in panel titles, so label entries may name them too.
    if let Some(facet) = &spec.facet
        && used.column(facet).is_ok()
    {
        let bare = ["algorithm", super::VARIANT].contains(&facet.as_str());
        for v in distinct_text(&used, facet)? {
            series_keys.insert(super::legend::key_part(facet, &v, bare));
        }
    }
    polish(&mut panels);
    for panel in &mut panels {
        for note in &notes {
            panel.note.push(' ');
            panel.note.push_str(note);
        }
    }
    // Mobility covariates come from the trajectories alone, whatever the algorithm did.
    let covariate = match &spec.kind {
        FigureKind::Line { y, .. } | FigureKind::Paired { y, .. } => y.starts_with("mob_"),
        FigureKind::Breakdown { ys } => ys.iter().all(|y| y.starts_with("mob_")),
        FigureKind::Ecdf => false,
    };
    let warning = match covariate {
        true => None,
        false => incidents_note(&used, &experiment.runs)?,
    };
    if let Some(warning) = warning {
        for panel in &mut panels {
            panel.note.push(' ');
            panel.note.push_str(&warning);
        }
    }
    Ok(Figure {
        spec: spec.clone(),
        panels,
        series_keys,
    })
}

/// Rings the points that rest on runs of sweep points short of their precision target
/// (`short_runs`), and counts them in the caption. A chart point is (facet, series key,
/// x); a run of `used` belongs to it when it has the same facet and x and its series
/// columns make the key or its start (a breakdown adds the metric, a paired figure
/// without series columns has none). Runs at the ECDF's event values have no point.
fn ring_short_points(
    spec: &FigureSpec,
    used: &DataFrame,
    experiment: &Experiment,
    panels: &mut [Panel],
) -> anyhow::Result<()> {
    let short_runs = &experiment.short_runs;
    let index = used.column("run_index")?.u64()?;
    let rows: Vec<usize> = (0..used.height())
        .filter(|&i| index.get(i).is_some_and(|r| short_runs.contains_key(&r)))
        .collect();
    // The sweep point of each short row, for the caption's list of precisions reached.
    let point_of: Vec<usize> = rows
        .iter()
        .filter_map(|&i| index.get(i).and_then(|r| short_runs.get(&r).copied()))
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let short = take_rows(used, &rows)?;
    let keys = series_labels(&short, &spec.series)?;
    let xs = float_values(&short, &spec.x)?;
    let facets: Vec<Option<String>> = match &spec.facet {
        Some(f) => column_text(&short, f)?,
        None => vec![None; short.height()],
    };
    let part = super::legend::PART_SEPARATOR;
    let decision = experiment.sequential.as_ref();
    for panel in panels.iter_mut() {
        let (mut ringed, mut points) = (0, 0);
        let mut behind: BTreeSet<usize> = BTreeSet::new();
        for s in &mut panel.chart.series {
            for p in &mut s.points {
                points += 1;
                let rows: Vec<usize> = (0..short.height())
                    .filter(|&i| {
                        facets[i] == panel.facet
                            && xs[i] == Some(p.x)
                            && (keys[i].is_empty()
                                || s.label == keys[i]
                                || s.label.starts_with(&format!("{}{part}", keys[i])))
                    })
                    .collect();
                p.short = !rows.is_empty();
                behind.extend(rows.iter().map(|&i| point_of[i]));
                ringed += usize::from(p.short);
            }
        }
        if ringed == 0 {
            continue;
        }
        // The precision each sweep point behind them reached, its least precise
        // interval first.
        let reached: Vec<String> = behind
            .iter()
            .filter_map(|&i| decision.and_then(|d| d.points.get(i)))
            .filter_map(|p| {
                let w = p.worst.as_ref()?;
                Some(format!(
                    "{} at n = {}: {} of {} {} against {}",
                    p.label,
                    p.n,
                    w.metric,
                    spec.legend.label(&w.algorithm),
                    w.target.format(w.estimate, w.half_width),
                    w.target.words()
                ))
            })
            .collect();
        let shown = reached.len().min(4);
        let more = match reached.len() - shown {
            0 => String::new(),
            k => format!("; {k} more in the report's precision table"),
        };
        panel.note.push_str(&format!(
            " Ringed: {ringed} of the {points} points rest on sweep points that stopped at \
             their replication maximum short of the precision target ({}{more}).",
            reached[..shown].join("; ")
        ));
    }
    Ok(())
}

/// Times below this many seconds are drawn in milliseconds.
const MILLISECONDS_BELOW: f64 = 0.1;

/// What a paper needs before printing a chart, done here rather than by hand: a series
/// that is zero at every point (RL's route-discovery messages) is left out and named in
/// the caption (the table keeps it), and an axis in seconds whose values all lie below
/// 0.1 s is drawn in milliseconds (3.2 ms, not 0.0032 s), in every panel of the figure
/// alike. The tables keep the stored unit.
fn polish(panels: &mut [Panel]) {
    for panel in panels.iter_mut() {
        let zero = |s: &Series| {
            s.points.iter().all(|p| {
                p.y == 0.0 && p.low.is_none_or(|l| l == 0.0) && p.high.is_none_or(|h| h == 0.0)
            })
        };
        let series = std::mem::take(&mut panel.chart.series);
        let (dropped, kept): (Vec<Series>, Vec<Series>) = series
            .into_iter()
            .partition(|s| zero(s) && !s.points.is_empty());
        if kept.is_empty() || dropped.is_empty() {
            panel.chart.series = kept.into_iter().chain(dropped).collect();
            continue;
        }
        panel.chart.series = kept;
        let names: Vec<&str> = dropped.iter().map(|s| s.label.as_str()).collect();
        panel.note.push_str(&format!(
            " Left out of the chart, being zero at every point: {} (the table has them).",
            names.join(", ")
        ));
    }
    let largest = |panels: &[Panel], of: &dyn Fn(&Point) -> [Option<f64>; 3]| {
        panels
            .iter()
            .flat_map(|p| p.chart.series.iter())
            .flat_map(|s| s.points.iter())
            .flat_map(|p| of(p).into_iter().flatten())
            .fold(0.0_f64, |m, v| m.max(v.abs()))
    };
    let in_seconds = |label: &str| label.contains("(s)");
    let y_largest = largest(panels, &|p| [Some(p.y), p.low, p.high]);
    if panels.iter().all(|p| in_seconds(&p.chart.y_label))
        && y_largest > 0.0
        && y_largest < MILLISECONDS_BELOW
    {
        for panel in panels.iter_mut() {
            let chart = &mut panel.chart;
            chart.y_label = chart.y_label.replace("(s)", "(ms)");
            chart.reference_y = chart.reference_y.map(|r| r * 1e3);
            for p in chart.series.iter_mut().flat_map(|s| s.points.iter_mut()) {
                p.y *= 1e3;
                p.low = p.low.map(|v| v * 1e3);
                p.high = p.high.map(|v| v * 1e3);
            }
        }
    }
    let x_largest = largest(panels, &|p| [Some(p.x), None, None]);
    if panels.iter().all(|p| in_seconds(&p.chart.x_label))
        && x_largest > 0.0
        && x_largest < MILLISECONDS_BELOW
    {
        for panel in panels.iter_mut() {
            let chart = &mut panel.chart;
            chart.x_label = chart.x_label.replace("(s)", "(ms)");
            for p in chart.series.iter_mut().flat_map(|s| s.points.iter_mut()) {
                p.x *= 1e3;
            }
        }
    }
}

/// Turns the series keys the panels were built with into the legend's labels and
/// gives each series its look ([`super::legend`]): one look per key across all panels
/// of a figure, in order of first appearance, so a series looks the same in every
/// panel. Returns every key drawn. Two keys the legend would give one label are an
/// error: their series could not be told apart.
fn name_series(spec: &FigureSpec, panels: &mut [Panel]) -> anyhow::Result<BTreeSet<String>> {
    let mut keys: Vec<String> = Vec::new();
    for panel in panels.iter() {
        for s in &panel.chart.series {
            if !keys.contains(&s.label) {
                keys.push(s.label.clone());
            }
        }
    }
    let legend = &spec.legend;
    let mut by_label: BTreeMap<String, &str> = BTreeMap::new();
    for key in &keys {
        let label = legend.label(key);
        if let Some(other) = by_label.insert(label.clone(), key) {
            return Err(spec
                .error(
                    "labels",
                    format!(
                        "the series \"{other}\" and \"{key}\" would both be labelled \
                         \"{label}\": give one of them its own label"
                    ),
                )
                .into());
        }
    }
    for panel in panels.iter_mut() {
        let chart = &mut panel.chart;
        chart.looks = chart
            .series
            .iter()
            .map(|s| {
                let index = keys.iter().position(|k| *k == s.label).unwrap_or(0);
                legend.look(&s.label, Look::nth(index))
            })
            .collect();
        for s in &mut chart.series {
            s.label = legend.label(&s.label);
        }
    }
    Ok(keys.into_iter().collect())
}

/// A warning for the caption when runs behind a figure violated safety or were stopped
/// by the message-storm guard: their numbers are plotted like the others, and a reader
/// of the figure alone must know.
pub fn incidents_note(used: &DataFrame, runs: &DataFrame) -> anyhow::Result<Option<String>> {
    let behind: std::collections::HashSet<u64> =
        used.column("run_index")?.u64()?.iter().flatten().collect();
    let index = runs.column("run_index")?.u64()?;
    let violations = runs.column("safety_violations")?.u64()?;
    let aborted = runs.column("aborted")?.str()?;
    let (mut violating, mut stopped) = (0, 0);
    for i in 0..runs.height() {
        if index.get(i).is_some_and(|r| behind.contains(&r)) {
            violating += usize::from(violations.get(i).unwrap_or(0) > 0);
            stopped += usize::from(aborted.get(i).is_some());
        }
    }
    Ok((violating + stopped > 0).then(|| {
        format!(
            "Of the {} runs behind this figure, {violating} had safety violations and \
             {stopped} were stopped by the message-storm guard (see Safety).",
            behind.len()
        )
    }))
}

/// Per-event columns an ECDF can show, with their tables, as the families declare them.
fn ecdf_columns() -> impl Iterator<Item = (&'static str, EventTable)> {
    crate::family::EVENT_TABLES
        .into_iter()
        .flat_map(|t| t.distribution_columns().iter().map(move |(c, _)| (*c, t)))
}

/// Which per-event table holds the ECDF's column.
fn event_table(spec: &FigureSpec, experiment: &Experiment) -> anyhow::Result<EventTable> {
    if !ecdf_columns().any(|(c, _)| c == spec.x) {
        return Err(spec
            .error(
                "x",
                format!(
                    "`{}` is not a per-event metric: ecdf figures take {}",
                    spec.x,
                    ecdf_columns()
                        .map(|(c, t)| format!("{c} ({})", t.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .into());
    }
    for table in crate::family::EVENT_TABLES {
        if experiment.store.columns(table.name())?.contains(&spec.x) {
            return Ok(table);
        }
    }
    Err(spec
        .error(
            "x",
            format!(
                "no per-event column `{}` in the {} tables of `{}` (no run of that kind is \
                 stored)",
                spec.x,
                crate::family::EVENT_TABLES
                    .map(EventTable::name)
                    .join(" or "),
                experiment.name
            ),
        )
        .into())
}

/// Rows of `df` whose run is committed (has its `runs` row): a sweep killed between the
/// writes of one batch can leave per-event chunks without their runs.
fn only_committed(df: DataFrame, runs: &DataFrame) -> anyhow::Result<DataFrame> {
    let committed: std::collections::HashSet<u64> = runs
        .column("run_index")?
        .u64()?
        .into_no_null_iter()
        .collect();
    let mask: BooleanChunked = df
        .column("run_index")?
        .u64()?
        .iter()
        .map(|i| Some(i.is_some_and(|i| committed.contains(&i))))
        .collect();
    Ok(df.filter(&mask)?)
}

/// `df` (a per-event table) with each row's run's [`super::VARIANT`], from the runs
/// table.
fn with_variant(df: DataFrame, runs: &DataFrame) -> anyhow::Result<DataFrame> {
    let variant_of: std::collections::HashMap<u64, String> = runs
        .column("run_index")?
        .u64()?
        .into_no_null_iter()
        .zip(column_text(runs, super::VARIANT)?)
        .map(|(i, v)| (i, v.unwrap_or_default()))
        .collect();
    let variants: Vec<Option<&str>> = df
        .column("run_index")?
        .u64()?
        .iter()
        .map(|i| i.and_then(|i| variant_of.get(&i)).map(String::as_str))
        .collect();
    let mut df = df;
    df.with_column(Column::new(super::VARIANT.into(), variants))?;
    Ok(df)
}

/// Checks the figure's columns against `df` (a table of `experiment`), applies the
/// filter, and refuses swept columns the figure would silently pool over.
fn prepare(
    spec: &FigureSpec,
    experiment: &Experiment,
    table: &str,
    df: &DataFrame,
    metrics: &[&String],
    notes: &mut Vec<String>,
) -> anyhow::Result<DataFrame> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let has = |field: &str, column: &str| -> Result<(), InputError> {
        if names.iter().any(|n| n == column) {
            return Ok(());
        }
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        let hint = crate::sweep::specs::closest(column, &known)
            .map(|k| format!("; did you mean `{k}`?"))
            .unwrap_or_default();
        Err(spec.error(
            field,
            format!(
                "no column `{column}` in the {table} table of `{}`{hint}",
                experiment.name
            ),
        ))
    };
    has("x", &spec.x)?;
    for m in metrics {
        has("y", m)?;
    }
    for s in &spec.series {
        has("series", s)?;
    }
    if let Some(f) = &spec.facet {
        has("facet", f)?;
    }
    let numeric = |column: &str| {
        df.column(column)
            .is_ok_and(|c| c.dtype().is_primitive_numeric())
    };
    if !numeric(&spec.x) {
        let what = if matches!(spec.kind, FigureKind::Ecdf) {
            "a numeric per-event column"
        } else {
            "a numeric parameter (use a text column as series or facet)"
        };
        return Err(spec
            .error(
                "x",
                format!("`{}` is not numeric: x must be {what}", spec.x),
            )
            .into());
    }
    for m in metrics {
        if !numeric(m) {
            return Err(spec
                .error("y", format!("`{m}` is not a numeric metric"))
                .into());
        }
    }

    // Naming the variant names every algorithm parameter, as pairing variants does.
    let algorithm_param =
        |axis: &str| Algorithm::all().any(|a| a.params().iter().any(|p| p.name == axis));
    let mut kept = df.clone();
    for (column, values) in &spec.filter {
        let field = format!("filter.{column}");
        has(&field, column)?;
        // A filter on a parameter that some algorithms lack (RL has no `routing`) picks
        // among the variants of those that have it and keeps the others whole; the
        // caption says so.
        let lacking: Vec<String> = if algorithm_param(column) {
            let nulls = kept.column(column)?.is_null();
            let without = kept.filter(&nulls)?;
            distinct_text(&without, "algorithm")?
        } else {
            Vec::new()
        };
        let is_text = kept.column(column)?.dtype() == &DataType::String;
        let (mut wanted_texts, mut wanted_numbers) = (Vec::new(), Vec::new());
        for v in values {
            match (v, is_text) {
                (FilterValue::Text(s), true) => wanted_texts.push(s.as_str()),
                (FilterValue::Number(x), false) => wanted_numbers.push(*x),
                (FilterValue::Text(s), false) => {
                    return Err(spec
                        .error(
                            &field,
                            format!("`{column}` is numeric, got the text \"{s}\""),
                        )
                        .into());
                }
                (FilterValue::Number(x), true) => {
                    return Err(spec
                        .error(
                            &field,
                            format!("`{column}` holds text, got the number {x}: quote it"),
                        )
                        .into());
                }
            };
        }
        let before = distinct_text(&kept, column)?;
        if !values.is_empty() {
            // A row stays if its value is one of the listed ones; a null matches none.
            let keep_null = !lacking.is_empty();
            let keep: BooleanChunked = if is_text {
                let column_values = kept.column(column)?.str()?.clone();
                column_values
                    .iter()
                    .map(|t| t.map_or(keep_null, |t| wanted_texts.contains(&t)))
                    .collect()
            } else {
                float_values(&kept, column)?
                    .into_iter()
                    .map(|x| x.map_or(keep_null, |x| wanted_numbers.contains(&x)))
                    .collect()
            };
            kept = kept.filter(&keep)?;
            if keep_null {
                let names: Vec<String> = lacking.iter().map(|a| spec.legend.label(a)).collect();
                let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                notes.push(format!(
                    "The filter {column} = {} applies to the algorithms with that parameter; \
                     {} ({}), which {} no `{column}`, {} kept whole.",
                    shown.join(" or "),
                    names.join(", "),
                    lacking.join(", "),
                    if lacking.len() == 1 { "has" } else { "have" },
                    if lacking.len() == 1 { "is" } else { "are" },
                ));
            }
        }
        let after = distinct_text(&kept, column)?;
        if let Some(v) = values.iter().find(|v| !after.contains(&v.to_string())) {
            return Err(spec
                .error(
                    &field,
                    format!(
                        "no row has {column} = {v} (values left by the other filters: {})",
                        before.join(", ")
                    ),
                )
                .into());
        }
    }
    if kept.height() == 0 {
        return Err(spec.error("filter", "keeps no rows of the results").into());
    }

    // Parameters that still vary but that the figure does not name would be pooled.
    let named: Vec<&str> = std::iter::once(spec.x.as_str())
        .chain(spec.series.iter().map(String::as_str))
        .chain(spec.facet.as_deref())
        .collect();
    let by_variant =
        named.contains(&super::VARIANT) || matches!(spec.kind, FigureKind::Paired { .. });
    for (axis, _) in &experiment.plan.axes {
        if named.contains(&axis.as_str())
            || kept.column(axis).is_err()
            || (by_variant && algorithm_param(axis))
        {
            continue;
        }
        let values = distinct_text(&kept, axis)?;
        let values: Vec<&String> = values.iter().filter(|v| !v.is_empty()).collect();
        if values.len() > 1 {
            return Err(spec
                .error(
                    "filter",
                    format!(
                        "the sweep axis `{axis}` still takes {} values here ({}): name it as \
                         series or facet, or fix it with filter = {{ {axis} = ... }}, rather \
                         than average over it",
                        values.len(),
                        values
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .into());
        }
    }
    if !matches!(spec.kind, FigureKind::Paired { .. })
        && !named.contains(&"algorithm")
        && !named.contains(&super::VARIANT)
    {
        let algorithms = distinct_text(&kept, "algorithm")?;
        if algorithms.len() > 1 {
            return Err(spec
                .error(
                    "series",
                    format!(
                        "the rows mix the algorithms {}: add `algorithm` to series or facet, \
                         or filter one",
                        algorithms.join(", ")
                    ),
                )
                .into());
        }
    }
    Ok(kept)
}

/// The distinct values of `column` as text (null as ""), in sorted order.
fn distinct_text(df: &DataFrame, column: &str) -> anyhow::Result<Vec<String>> {
    let mut v: Vec<String> = column_text(df, column)?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    v.sort();
    v.dedup();
    Ok(v)
}

/// A column's values as display text: numbers in their shortest exact form (`20`,
/// `0.05`), so labels match what the spec says.
pub fn column_text(df: &DataFrame, column: &str) -> anyhow::Result<Vec<Option<String>>> {
    let c = anyhow::Context::with_context(df.column(column), || format!("no column `{column}`"))?;
    Ok(match c.dtype() {
        DataType::String => c.str()?.iter().map(|s| s.map(str::to_string)).collect(),
        DataType::Boolean => c.bool()?.iter().map(|b| b.map(|b| b.to_string())).collect(),
        // Seeds are full-range u64: through i64 the upper half would be lost.
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => c
            .cast(&DataType::UInt64)?
            .u64()?
            .iter()
            .map(|v| v.map(|v| v.to_string()))
            .collect(),
        DataType::Float32 | DataType::Float64 => c
            .cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.map(|v| format!("{v}")))
            .collect(),
        _ => c
            .cast(&DataType::Int64)?
            .i64()?
            .iter()
            .map(|v| v.map(|v| v.to_string()))
            .collect(),
    })
}

/// The series key of each row ([`super::legend`]): the values of the series columns,
/// `algorithm` and variants bare and other columns as `name=value`; a column without a
/// value in the row (a parameter its algorithm lacks) adds nothing.
fn series_labels(df: &DataFrame, series: &[String]) -> anyhow::Result<Vec<String>> {
    let parts: Vec<(String, Vec<Option<String>>)> = series
        .iter()
        .map(|s| Ok((s.clone(), column_text(df, s)?)))
        .collect::<anyhow::Result<_>>()?;
    Ok((0..df.height())
        .map(|row| {
            parts
                .iter()
                .filter_map(|(name, values)| {
                    let bare = [BREAKDOWN, "algorithm", super::VARIANT].contains(&name.as_str());
                    values[row]
                        .as_deref()
                        .map(|v| super::legend::key_part(name, v, bare))
                })
                .collect::<Vec<_>>()
                .join(super::legend::PART_SEPARATOR)
        })
        .collect())
}

/// Row indices of `df` grouped by facet value, facets in first-appearance order
/// (tables arrive sorted by their group columns, so that is sorted order).
fn facets(spec: &FigureSpec, df: &DataFrame) -> anyhow::Result<Vec<(Option<String>, Vec<usize>)>> {
    let Some(facet) = &spec.facet else {
        return Ok(vec![(None, (0..df.height()).collect())]);
    };
    let values = column_text(df, facet)?;
    let mut out: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for (row, v) in values.into_iter().enumerate() {
        let v = v.unwrap_or_else(|| "none".into());
        match out
            .iter_mut()
            .find(|(k, _)| k.as_deref() == Some(v.as_str()))
        {
            Some((_, rows)) => rows.push(row),
            None => out.push((Some(v), vec![row])),
        }
    }
    Ok(out)
}

/// File stem and title of one facet panel.
fn panel_names(spec: &FigureSpec, title: &str, facet: &Option<String>) -> (String, String) {
    match (facet, &spec.facet) {
        (Some(v), Some(column)) => {
            let safe: String = v
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            // The facet in the legend's words: "(max. speed 2 m/s)", "(Raymond (route
            // discovery))".
            let bare = ["algorithm", super::VARIANT].contains(&column.as_str());
            let facet = spec.legend.label(&super::legend::key_part(column, v, bare));
            (
                format!("{}--{column}-{safe}", spec.name),
                format!("{title} ({facet})"),
            )
        }
        _ => (spec.name.clone(), title.to_string()),
    }
}

fn take_rows(df: &DataFrame, rows: &[usize]) -> anyhow::Result<DataFrame> {
    let idx = IdxCa::from_vec("idx".into(), rows.iter().map(|&r| r as IdxSize).collect());
    Ok(df.take(&idx)?)
}

/// Groups `(label, point)` pairs into series, in first-appearance order.
fn collect_series(points: impl IntoIterator<Item = (String, Point)>) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for (label, p) in points {
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(p),
            None => series.push(Series {
                label,
                points: vec![p],
            }),
        }
    }
    series
}

fn base_chart(spec: &FigureSpec, title: String, x_label: String, y_label: String) -> LineChart {
    LineChart {
        title,
        x_label: spec.x_label.clone().unwrap_or(x_label),
        y_label: spec.y_label.clone().unwrap_or(y_label),
        series: Vec::new(),
        log_x: spec.log_x,
        log_y: spec.log_y,
        size: spec.size,
        kind: LineKind::Markers,
        intervals: spec.intervals.unwrap_or_default(),
        reference_y: None,
        looks: Vec::new(),
    }
}

/// How the values of a runs-table column are summarized into an interval: where they
/// lie, the interval the column's definition asks for, whether they are 0/1
/// indicators (a proportion of runs) and, for a per-run ratio, its parts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ColumnStats {
    support: Support,
    method: IntervalMethod,
    indicator: bool,
    pooled: Option<(&'static str, &'static str)>,
}

/// The declaration of a `runs` column: a family's metric, or a column every run has.
fn declared_metric(name: &str) -> Option<&'static crate::family::def::Metric> {
    crate::family::ALL
        .iter()
        .find_map(|f| f.metric(name))
        .or_else(|| RUN_COLUMNS.iter().find(|m| m.column == name))
}

/// The [`ColumnStats`] of `name`: a family metric's declaration, the report's
/// indicators and message ratios, or a t interval on any real for anything else.
fn column_stats(name: &str) -> ColumnStats {
    if let Some(m) = declared_metric(name) {
        return ColumnStats {
            support: m.support,
            method: m.interval,
            indicator: false,
            pooled: m.pooled,
        };
    }
    if super::INDICATORS.iter().any(|(c, _)| *c == name) {
        return ColumnStats {
            support: Support::UnitInterval,
            method: IntervalMethod::ClopperPearson,
            indicator: true,
            pooled: None,
        };
    }
    let ratio = crate::family::message_ratios()
        .into_iter()
        .find(|r| r.column == name);
    ColumnStats {
        support: if ratio.is_some() {
            Support::NonNegative
        } else {
            Support::Any
        },
        method: IntervalMethod::StudentT,
        indicator: false,
        pooled: ratio.map(|r| (r.count, r.per)),
    }
}

/// The interval `spec` draws for `y` summarized as `kind`: the figure's method or the
/// column's own, checked to fit.
fn interval_for(spec: &FigureSpec, y: &str, kind: SampleKind) -> Result<IntervalSpec, InputError> {
    let stats = column_stats(y);
    let (default, support, what) = match kind {
        SampleKind::Values => (stats.method, stats.support, "a mean over runs"),
        SampleKind::Proportion => (
            IntervalMethod::ClopperPearson,
            Support::UnitInterval,
            "a proportion of runs",
        ),
        SampleKind::Ratio => (
            IntervalMethod::Delta,
            stats.support,
            "a ratio pooled over runs",
        ),
    };
    let method = spec.method.unwrap_or(default);
    if !method.fits(kind) {
        let fitting: Vec<&str> = IntervalMethod::ALL
            .into_iter()
            .filter(|m| m.fits(kind))
            .map(IntervalMethod::name)
            .collect();
        return Err(spec.error(
            "interval_method",
            format!(
                "`{}` does not fit {what} (`{y}`): use {}",
                method.name(),
                fitting.join(", ")
            ),
        ));
    }
    Ok(IntervalSpec {
        method,
        support,
        confidence: spec.confidence,
        least_runs: declared_metric(y).map_or(0, |m| m.least_runs),
    })
}

/// "95%", "97.5%".
fn percent(level: f64) -> String {
    let p = level * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p}%")
    }
}

/// "its 95% Student-t confidence interval" for a caption.
fn interval_words(ci: IntervalSpec) -> String {
    format!(
        "its {} {} confidence interval",
        percent(ci.confidence),
        ci.method.describe()
    )
}

/// The fewest runs an interval is drawn from: one from two runs says next to nothing
/// (a Student-t interval from two values is ±12.7 standard deviations), so the figure
/// leaves it out and its caption says so; the CSV keeps it.
pub const LEAST_RUNS_DRAWN: u64 = 3;

/// The series of a summary table (one row per point, as [`summarize`] and
/// [`paired_difference`] give): `y` at `x`, labelled by `labels[row]`, with the CI when
/// asked for and drawn from at least [`LEAST_RUNS_DRAWN`] runs.
fn summary_series(
    table: &DataFrame,
    x: &str,
    y: &str,
    labels: &[String],
    with_ci: bool,
) -> anyhow::Result<Vec<Series>> {
    let xs = float_values(table, x)?;
    let ys = float_values(table, y)?;
    let lows = float_values(table, "ci_low")?;
    let highs = float_values(table, "ci_high")?;
    let n = table.column("n")?.u64()?;
    let points = (0..table.height()).filter_map(|i| {
        let (x, y) = (xs[i]?, ys[i]?);
        let drawn = with_ci && n.get(i).is_some_and(|n| n >= LEAST_RUNS_DRAWN);
        let p = match (drawn, lows[i], highs[i]) {
            (true, Some(l), Some(h)) => Point::with_ci(x, y, l, h),
            _ => Point::new(x, y),
        };
        Some((labels[i].clone(), p))
    });
    Ok(collect_series(points))
}

/// What a caption must say about some of a figure's intervals.
#[derive(Clone, Copy, Debug, Default)]
struct Caveats {
    /// The method a bootstrap figure's points from fewer than
    /// [`crate::stats::intervals::BOOTSTRAP_LEAST_RUNS`] runs carry instead, in words.
    fallback: Option<&'static str>,
    /// The metric's least runs ([`crate::family::Metric::least_runs`]): an interval
    /// from fewer is drawn but not trusted to keep its level.
    least: u32,
}

impl Caveats {
    /// The caveats of intervals by `ci` on samples of `kind`.
    fn of(ci: IntervalSpec, kind: SampleKind) -> Caveats {
        let used = ci.method.used_for(2, kind);
        Caveats {
            fallback: (used != ci.method).then(|| used.describe()),
            least: ci.least_runs,
        }
    }

    /// Both sets of caveats: a figure of several metrics.
    fn and(self, other: Caveats) -> Caveats {
        Caveats {
            fallback: self.fallback.or(other.fallback),
            least: self.least.max(other.least),
        }
    }
}

/// The caption's sentence on the points of a share figure where no run had the
/// property: the exact one-sided bound on the share there
/// ([`crate::stats::intervals::zero_of_n_upper_bound`]), which the two-sided interval's
/// upper end overstates.
fn zero_of_n_note(table: &DataFrame, confidence: f64) -> anyhow::Result<String> {
    let with = table.column("runs_with")?.u64()?;
    let n = table.column("n")?.u64()?;
    let zero: Vec<u64> = with
        .iter()
        .zip(n.iter())
        .filter_map(|(w, n)| match (w, n) {
            (Some(0), Some(n)) if n > 0 => Some(n),
            _ => None,
        })
        .collect();
    let Some(&fewest) = zero.iter().min() else {
        return Ok(String::new());
    };
    let bound = crate::stats::intervals::zero_of_n_upper_bound(fewest, confidence);
    Ok(format!(
        " At {} no run had it: the fraction there is below {bound:.3} with {} confidence \
         (the exact one-sided bound 1 − α^(1/n) for n = {fewest}{}).",
        match zero.len() {
            1 => "1 point".to_string(),
            k => format!("{k} points"),
        },
        percent(confidence),
        if zero.iter().any(|&n| n != fewest) {
            ", the fewest runs among them"
        } else {
            ""
        }
    ))
}

/// How many intervals a figure draws: the points of its summary from at least
/// [`LEAST_RUNS_DRAWN`] runs.
fn drawn_intervals(summary: &DataFrame) -> anyhow::Result<usize> {
    let n = summary.column("n")?.u64()?;
    Ok(n.iter()
        .filter(|n| n.is_some_and(|n| n >= LEAST_RUNS_DRAWN))
        .count())
}

/// With the spec's `simultaneous`, `ci` at the level that makes the `m` intervals of
/// the figure hold together at the spec's confidence, and the caption's sentence on it;
/// otherwise `ci` and no sentence.
fn simultaneous_ci(spec: &FigureSpec, ci: IntervalSpec, m: usize) -> (IntervalSpec, String) {
    let Some(how) = spec.simultaneous else {
        return (ci, String::new());
    };
    let level = how.per_interval(spec.confidence, m);
    let words = format!(
        " The figure's {m} intervals are simultaneous ({}): each is drawn at {}, so all \
         {m} hold together with {} confidence.",
        how.name(),
        percent(level),
        percent(spec.confidence)
    );
    (
        IntervalSpec {
            confidence: level,
            ..ci
        },
        words,
    )
}

/// Caption sentences on intervals that are not drawn as usual: points resting on
/// fewer than [`LEAST_RUNS_DRAWN`] runs have none drawn; a bootstrap figure's points
/// from fewer than 10 runs carry the `fallback` method's interval; on a log axis a
/// lower bound at or below zero is drawn open-ended at the bottom (the CSV keeps the
/// exact bound).
fn interval_notes(
    spec: &FigureSpec,
    table: &DataFrame,
    caveats: Caveats,
) -> anyhow::Result<String> {
    let fallback = caveats.fallback;
    let n = table.column("n")?.u64()?;
    let lows = float_values(table, "ci_low")?;
    let single = n.iter().filter(|n| n.is_some_and(|n| n == 1)).count();
    let two = n
        .iter()
        .filter(|n| n.is_some_and(|n| (2..LEAST_RUNS_DRAWN).contains(&n)))
        .count();
    let few = n
        .iter()
        .filter(|n| {
            n.is_some_and(|n| {
                (LEAST_RUNS_DRAWN..crate::stats::intervals::BOOTSTRAP_LEAST_RUNS).contains(&n)
            })
        })
        .count();
    let open = lows
        .iter()
        .filter(|l| spec.log_y && l.is_some_and(|l| l <= 0.0))
        .count();
    let cut = table.column("ci_cut")?.bool()?.sum().unwrap_or(0);
    let mut out = String::new();
    let count = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        _ => format!("{n} {many}"),
    };
    if cut > 0 {
        out.push_str(&format!(
            " {} past the metric's possible values and {} at its bound (0, or 1 for a \
             fraction).",
            count(cut as usize, "interval reached", "intervals reached"),
            if cut == 1 { "ends" } else { "end" }
        ));
    }
    if single > 0 {
        out.push_str(&format!(
            " {} on a single run and {} no interval.",
            count(single, "point rests", "points rest"),
            if single == 1 { "has" } else { "have" }
        ));
    }
    if two > 0 {
        out.push_str(&format!(
            " {} on two runs: {} interval is not drawn, as one from two values says \
             next to nothing (the CSV keeps it).",
            count(two, "point rests", "points rest"),
            if two == 1 { "its" } else { "their" }
        ));
    }
    if let Some(method) = fallback.filter(|_| few > 0) {
        out.push_str(&format!(
            " {} fewer than 10 runs {} a {method} interval instead: a bootstrap from so \
             few values takes few distinct values.",
            count(few, "point from", "points from"),
            if few == 1 { "carries" } else { "carry" }
        ));
    }
    let rough = table
        .column("ci_rough")?
        .bool()?
        .iter()
        .zip(n.iter())
        .filter(|(r, n)| *r == Some(true) && n.is_some_and(|n| n >= LEAST_RUNS_DRAWN))
        .count();
    if rough > 0 {
        let least = match caveats.least {
            0 => String::new(),
            k => format!("fewer than the {k} runs this metric needs, or "),
        };
        out.push_str(&format!(
            " {} rough: {}a sample too skewed for its size (Cochran's n > 25·g₁²: a \
             heavy tail); on \
             linkrev's own runs such intervals cover the truth less often than they \
             claim (`linkrev bench coverage`, statistics page).",
            count(rough, "interval is", "intervals are"),
            least
        ));
    }
    if open > 0 {
        out.push_str(&format!(
            " {} below zero, off the logarithmic axis: drawn open at the bottom (exact \
             bounds in the CSV).",
            count(open, "interval reaches", "intervals reach")
        ));
    }
    Ok(out)
}

/// The sample sizes of a summary table's points: "10", or "8–10" when they differ.
fn n_range(table: &DataFrame) -> anyhow::Result<String> {
    let n = table.column("n")?.u64()?;
    let (lo, hi) = (n.min().unwrap_or(0), n.max().unwrap_or(0));
    Ok(if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}–{hi}")
    })
}

fn line_panels(
    spec: &FigureSpec,
    df: &DataFrame,
    y: &str,
    statistic: Statistic,
) -> anyhow::Result<Vec<Panel>> {
    let mut keys: Vec<&str> = spec.facet.iter().map(String::as_str).collect();
    keys.extend(spec.series.iter().map(String::as_str));
    keys.push(&spec.x);
    keys.dedup();
    let stats = column_stats(y);
    let (nominal, ci, kind) = match statistic {
        Statistic::Pooled => {
            let Some(parts) = stats.pooled else {
                return Err(spec
                    .error(
                        "statistic",
                        format!(
                            "`{y}` is not a per-run ratio with declared parts, so it cannot \
                             be pooled: pooled applies to {}",
                            pooled_columns().join(", ")
                        ),
                    )
                    .into());
            };
            let ci = interval_for(spec, y, SampleKind::Ratio)?;
            (
                summarize_ratio(df, &keys, parts, ci)?,
                ci,
                SampleKind::Ratio,
            )
        }
        Statistic::Mean if stats.indicator => {
            let ci = interval_for(spec, y, SampleKind::Proportion)?;
            (
                summarize_share(df, &keys, y, ci)?,
                ci,
                SampleKind::Proportion,
            )
        }
        _ => {
            let ci = interval_for(spec, y, SampleKind::Values)?;
            (summarize(df, &keys, y, ci)?, ci, SampleKind::Values)
        }
    };
    let column = statistic.column();
    let with_ci =
        matches!(statistic, Statistic::Mean | Statistic::Pooled) && spec.intervals.is_some();
    let (ci, together) = match with_ci {
        true => simultaneous_ci(spec, ci, drawn_intervals(&nominal)?),
        false => (ci, String::new()),
    };
    let summary = match (&together[..], kind) {
        ("", _) => nominal,
        (_, SampleKind::Ratio) => {
            let parts = stats.pooled.expect("a pooled summary has its parts");
            summarize_ratio(df, &keys, parts, ci)?
        }
        (_, SampleKind::Proportion) => summarize_share(df, &keys, y, ci)?,
        (_, SampleKind::Values) => summarize(df, &keys, y, ci)?,
    };
    let y_label = match statistic {
        Statistic::Mean => column_label(y),
        Statistic::Pooled => format!("{} (pooled)", column_label(y)),
        Statistic::Median => format!("median {}", column_label(y)),
        Statistic::P95 => format!("95th percentile of {}", column_label(y)),
    };
    let default_title = format!("{} vs {}", column_label(y), column_label(&spec.x));
    let title = spec.title.clone().unwrap_or(default_title);
    let mut panels = Vec::new();
    for (facet, rows) in facets(spec, &summary)? {
        let table = take_rows(&summary, &rows)?;
        let labels = series_labels(&table, &spec.series)?;
        let (stem, chart, intervals) = summary_chart(
            spec,
            (&title, &facet),
            &y_label,
            &table,
            (column, &labels),
            (with_ci, Caveats::of(ci, kind)),
        )?;
        let reps = format!("n = {}", n_range(&table)?);
        let estimate = match statistic {
            Statistic::Mean if stats.indicator => "fraction of runs".to_string(),
            Statistic::Mean => "mean over runs".to_string(),
            Statistic::Pooled => {
                let (num, den) = stats.pooled.expect("checked above");
                format!("Σ {num} / Σ {den} pooled over runs")
            }
            Statistic::Median => "median over runs".to_string(),
            Statistic::P95 => "95th percentile over runs".to_string(),
        };
        let what = if with_ci {
            format!("{estimate} with {}", interval_words(ci))
        } else {
            estimate
        };
        let none_seen = match kind {
            SampleKind::Proportion => zero_of_n_note(&table, spec.confidence)?,
            _ => String::new(),
        };
        panels.push(Panel {
            stem,
            facet,
            chart,
            table,
            note: format!(
                "{what} ({reps} runs per point; runs without a value are left out).\
                 {together}{intervals}{none_seen}"
            ),
        });
    }
    Ok(panels)
}

/// The metrics a figure can pool (`statistic = "pooled"`).
fn pooled_columns() -> Vec<&'static str> {
    crate::family::ALL
        .iter()
        .flat_map(|f| f.metrics())
        .filter(|m| m.pooled.is_some())
        .map(|m| m.column)
        .collect()
}

/// One panel's file stem, chart and interval notes, from its summary table: a line per
/// label, plotting the summary column `statistic` (with its interval when `with_ci`).
fn summary_chart(
    spec: &FigureSpec,
    (title, facet): (&str, &Option<String>),
    y_label: &str,
    table: &DataFrame,
    (statistic, labels): (&str, &[String]),
    (with_ci, caveats): (bool, Caveats),
) -> anyhow::Result<(String, LineChart, String)> {
    let (stem, panel_title) = panel_names(spec, title, facet);
    let mut chart = base_chart(
        spec,
        panel_title,
        column_label(&spec.x),
        y_label.to_string(),
    );
    chart.series = summary_series(table, &spec.x, statistic, labels, with_ci)?;
    let intervals = match with_ci {
        true => interval_notes(spec, table, caveats)?,
        false => String::new(),
    };
    Ok((stem, chart, intervals))
}

fn breakdown_panels(
    spec: &FigureSpec,
    df: &DataFrame,
    ys: &[String],
) -> anyhow::Result<Vec<Panel>> {
    let mut keys: Vec<&str> = spec.facet.iter().map(String::as_str).collect();
    keys.extend(spec.series.iter().map(String::as_str));
    keys.push(&spec.x);
    keys.dedup();
    let with_ci = spec.intervals.is_some();
    // The breakdown's summary with each metric's interval at `level` (or its own).
    let breakdown = |level: Option<f64>| -> anyhow::Result<(DataFrame, Vec<String>)> {
        let mut summary: Option<DataFrame> = None;
        let mut methods: Vec<String> = Vec::new();
        for y in ys {
            let mut ci = interval_for(spec, y, SampleKind::Values)?;
            ci.confidence = level.unwrap_or(ci.confidence);
            let words = interval_words(ci);
            if !methods.contains(&words) {
                methods.push(words);
            }
            let mut part = summarize(df, &keys, y, ci)?;
            let label = vec![column_label(y); part.height()];
            part.with_column(Column::new(BREAKDOWN.into(), label))?;
            summary = Some(match summary {
                None => part,
                Some(all) => all.vstack(&part)?,
            });
        }
        Ok((
            summary.expect("a breakdown has at least one metric"),
            methods,
        ))
    };
    let mut caveats = Caveats::default();
    for y in ys {
        let ci = interval_for(spec, y, SampleKind::Values)?;
        caveats = caveats.and(Caveats::of(ci, SampleKind::Values));
    }
    let (nominal, nominal_methods) = breakdown(None)?;
    let (summary, methods, together) = match (with_ci, spec.simultaneous) {
        (true, Some(_)) => {
            let first = interval_for(spec, &ys[0], SampleKind::Values)?;
            let (ci, together) = simultaneous_ci(spec, first, drawn_intervals(&nominal)?);
            let (summary, methods) = breakdown(Some(ci.confidence))?;
            (summary, methods, together)
        }
        _ => (nominal, nominal_methods, String::new()),
    };
    let mut series: Vec<String> = spec.series.clone();
    series.push(BREAKDOWN.to_string());
    let default_title = format!("Breakdown vs {}", column_label(&spec.x));
    let title = spec.title.clone().unwrap_or(default_title);
    let y_label = spec
        .y_label
        .clone()
        .unwrap_or_else(|| "mean per run".into());
    let mut panels = Vec::new();
    for (facet, rows) in facets(spec, &summary)? {
        let table = take_rows(&summary, &rows)?;
        let labels = series_labels(&table, &series)?;
        let (stem, chart, intervals) = summary_chart(
            spec,
            (&title, &facet),
            &y_label,
            &table,
            ("mean", &labels),
            (with_ci, caveats),
        )?;
        panels.push(Panel {
            stem,
            facet,
            chart,
            note: format!(
                "one line per metric, each the mean over runs{} (n = {} runs per point); \
                 the lines are the parts of a whole, so at each x they add up to the mean of \
                 their sum.{together}{intervals}",
                if with_ci {
                    format!(" with {}", methods.join(" or "))
                } else {
                    String::new()
                },
                n_range(&table)?
            ),
            table,
        });
    }
    Ok(panels)
}

/// The caption's count of where `a` is below and above `b` over the paired summary's
/// points, by paired t tests Holm-adjusted at family-wise level `alpha`
/// ([`crate::stats::multiple`]): a figure of many points invites "lower at every
/// point", which uncorrected intervals do not support.
fn holm_verdict(summary: &DataFrame, (a, b): (&str, &str), alpha: f64) -> anyhow::Result<String> {
    let means = float_values(summary, "mean")?;
    let sds = float_values(summary, "sd")?;
    let n = summary.column("n")?.u64()?;
    let mut signs = Vec::new();
    let mut p = Vec::new();
    for i in 0..summary.height() {
        let (Some(mean), Some(sd), Some(n)) = (means[i], sds[i], n.get(i)) else {
            continue;
        };
        if let Some(pv) = crate::stats::multiple::t_test_p_value(mean, sd, n) {
            p.push(pv);
            signs.push(mean < 0.0);
        }
    }
    if p.is_empty() {
        return Ok(String::new());
    }
    let rejected = crate::stats::multiple::holm(&p, alpha);
    let below = rejected
        .iter()
        .zip(&signs)
        .filter(|(r, s)| **r && **s)
        .count();
    let above = rejected
        .iter()
        .zip(&signs)
        .filter(|(r, s)| **r && !**s)
        .count();
    let m = p.len();
    Ok(format!(
        " Over the figure's {m} points, {a} is below {b} at {below} and above at {above}; \
         the other {} show no difference at family-wise level {} (paired t tests, Holm's \
         step-down).",
        m - below - above,
        percent(alpha)
    ))
}

fn paired_panels(
    spec: &FigureSpec,
    df: &DataFrame,
    y: &str,
    a: &str,
    b: &str,
) -> anyhow::Result<Vec<Panel>> {
    // Runs are paired by variant (`me-raymond routing=discovery`), which is the
    // algorithm's name when its parameters are fixed: the variant stands in for the
    // algorithm column that the pairing reads.
    let mut df = df.clone();
    if let Ok(variant) = df.column(super::VARIANT) {
        let variant = variant.clone().with_name("algorithm".into());
        df.with_column(variant)?;
    }
    let df = &df;
    let present = distinct_text(df, "algorithm")?;
    for (field, algo) in [("a", a), ("b", b)] {
        if !present.iter().any(|p| p == algo) {
            return Err(spec
                .error(
                    field,
                    format!(
                        "no runs of `{algo}` here (variants present: {})",
                        present.join(", ")
                    ),
                )
                .into());
        }
    }
    let mut keys: Vec<&str> = spec.facet.iter().map(String::as_str).collect();
    keys.extend(spec.series.iter().map(String::as_str));
    keys.push(&spec.x);
    keys.dedup();
    let ci = interval_for(spec, y, SampleKind::Values)?;
    let nominal = paired_difference(df, &keys, y, a, b, ci)?;
    let (ci, together) = match spec.intervals {
        Some(_) => simultaneous_ci(spec, ci, drawn_intervals(&nominal)?),
        None => (ci, String::new()),
    };
    let summary = match together.is_empty() {
        true => nominal,
        false => paired_difference(df, &keys, y, a, b, ci)?,
    };
    let key = format!("{a}{}{b}", super::legend::DIFFERENCE);
    let (a_name, b_name) = (spec.legend.label(a), spec.legend.label(b));
    let verdict = holm_verdict(&summary, (&a_name, &b_name), 1.0 - spec.confidence)?;
    let y_label = format!("Δ {} ({a_name} − {b_name})", column_label(y));
    let default_title = format!("{a_name} − {b_name}: {}", column_label(y));
    let title = spec.title.clone().unwrap_or(default_title);
    let mut panels = Vec::new();
    for (facet, rows) in facets(spec, &summary)? {
        let table = take_rows(&summary, &rows)?;
        let labels = if spec.series.is_empty() {
            vec![key.clone(); table.height()]
        } else {
            series_labels(&table, &spec.series)?
        };
        let (stem, panel_title) = panel_names(spec, &title, &facet);
        let mut chart = base_chart(spec, panel_title, column_label(&spec.x), y_label.clone());
        chart.series = summary_series(&table, &spec.x, "mean", &labels, spec.intervals.is_some())?;
        chart.reference_y = Some(0.0);
        let unpaired: u64 = table.column("unpaired")?.u64()?.sum().unwrap_or(0);
        let mut note = format!(
            "mean of the per-replication differences {a_name} − {b_name}{} ({} pairs per \
             point); below zero, {a_name} is lower.",
            if spec.intervals.is_some() {
                format!(" with {}", interval_words(ci))
            } else {
                String::new()
            },
            n_range(&table)?
        );
        note.push_str(&together);
        note.push_str(&verdict);
        if spec.intervals.is_some() {
            note.push_str(&interval_notes(
                spec,
                &table,
                Caveats::of(ci, SampleKind::Values),
            )?);
        }
        if unpaired > 0 {
            note.push_str(&format!(
                " {unpaired} runs had no partner (not finished, or failed) and are left out."
            ));
        }
        panels.push(Panel {
            stem,
            facet,
            chart,
            table,
            note,
        });
    }
    Ok(panels)
}

/// Quantile `q` of all `total` events, of which `finished` (sorted) have a value and the
/// rest never finished (counted as +∞, as the plotted ECDF does): `None` when the
/// quantile falls among the unfinished events, so a table never quotes a p95 that the
/// curve does not reach.
pub fn quantile_of_all(finished: &[f64], total: usize, q: f64) -> Option<f64> {
    let mut all = finished.to_vec();
    all.resize(total.max(finished.len()), f64::INFINITY);
    crate::family::def::quantile(&all, q).filter(|v| v.is_finite())
}

/// The ECDF's plotted points for sorted values `sorted` of `total` events (the rest
/// never finished): one point per distinct value, F = (events ≤ value) / total, thinned
/// evenly to at most [`MAX_ECDF_POINTS`] with the last one always kept.
pub fn ecdf_points(sorted: &[f64], total: usize) -> Vec<Point> {
    let mut steps: Vec<(f64, usize)> = Vec::new();
    for (i, &v) in sorted.iter().enumerate() {
        match steps.last_mut() {
            Some(last) if last.0 == v => last.1 = i + 1,
            _ => steps.push((v, i + 1)),
        }
    }
    let keep = steps.len().min(MAX_ECDF_POINTS);
    let mut out = Vec::with_capacity(keep);
    for k in 0..keep {
        // k-th of `keep` evenly spaced indices, from the first step to the last.
        let i = if keep == 1 {
            steps.len() - 1
        } else {
            k * (steps.len() - 1) / (keep - 1)
        };
        let (v, count) = steps[i];
        out.push(Point::new(v, count as f64 / total as f64));
    }
    out
}

fn ecdf_panels(spec: &FigureSpec, df: &DataFrame, table: EventTable) -> anyhow::Result<Vec<Panel>> {
    let (events, unfinished) = (table.events(), table.unfinished());
    let title = spec
        .title
        .clone()
        .unwrap_or_else(|| format!("Distribution of {}", column_label(&spec.x)));
    let labels = series_labels(df, &spec.series)?;
    let values = float_values(df, &spec.x)?;
    let runs = df.column("run_index")?.u64()?.clone();
    let mut panels = Vec::new();
    for (facet, rows) in facets(spec, df)? {
        // Series in sorted label order: the rows are in run order, not label order.
        let mut groups: BTreeMap<&str, (Vec<f64>, usize, std::collections::BTreeSet<u64>)> =
            BTreeMap::new();
        for &row in &rows {
            let g = groups.entry(labels[row].as_str()).or_default();
            g.1 += 1;
            if let Some(v) = values[row].filter(|v| v.is_finite()) {
                g.0.push(v);
            }
            if let Some(r) = runs.get(row) {
                g.2.insert(r);
            }
        }
        let mut series = Vec::new();
        let mut t_label = Vec::new();
        let mut t_runs = Vec::new();
        let mut t_events = Vec::new();
        let mut t_done = Vec::new();
        let mut t_frac = Vec::new();
        let mut t_median = Vec::new();
        let mut t_p95 = Vec::new();
        let mut t_max = Vec::new();
        for (label, (mut v, total, run_set)) in groups {
            v.sort_by(f64::total_cmp);
            series.push(Series {
                label: label.to_string(),
                points: ecdf_points(&v, total),
            });
            t_label.push(label.to_string());
            t_runs.push(run_set.len() as u64);
            t_events.push(total as u64);
            t_done.push(v.len() as u64);
            t_frac.push(v.len() as f64 / total as f64);
            t_median.push(quantile_of_all(&v, total, 0.5));
            t_p95.push(quantile_of_all(&v, total, 0.95));
            t_max.push(v.last().copied());
        }
        let table = DataFrame::new(
            t_label.len(),
            vec![
                Column::new("series".into(), t_label),
                Column::new("runs".into(), t_runs),
                Column::new("events".into(), t_events),
                Column::new("finished".into(), t_done),
                Column::new("fraction_finished".into(), t_frac),
                Column::new("median".into(), t_median),
                Column::new("p95".into(), t_p95),
                Column::new("max_finished".into(), t_max),
            ],
        )?;
        let (stem, panel_title) = panel_names(spec, &title, &facet);
        let mut chart = base_chart(
            spec,
            panel_title,
            column_label(&spec.x),
            format!("fraction of {events} ≤ x"),
        );
        chart.kind = LineKind::Steps;
        chart.series = series;
        // Where "every event finished" would be: a curve ending below it is visibly short.
        chart.reference_y = Some(1.0);
        let mut note = format!(
            "empirical CDF of all {events} of all runs of each series; {events} \
             {unfinished} before the run ended count in the denominator, so a curve ends at \
             the fraction that finished."
        );
        let not_drawn = rows
            .iter()
            .filter(|&&r| values[r].is_some_and(|v| v <= 0.0))
            .count();
        if spec.log_x && not_drawn > 0 {
            note.push_str(&format!(
                " {not_drawn} {events} took no time: counted, but not drawn on the \
                 logarithmic axis, so curves start above zero."
            ));
        }
        panels.push(Panel {
            stem,
            facet,
            chart,
            table,
            note,
        });
    }
    Ok(panels)
}
