//! Aggregation of the `runs` table: per-group summaries and paired differences.
//!
//! Every summary reports `n`, `mean`, `sd`, a confidence interval (`ci_low`, `ci_high`,
//! its `half_width` before any cut at the support, whether it was cut, and the method's
//! name in `interval`), `median` and `p95`. The interval's method, support and level
//! come from an [`IntervalSpec`]: by default the metric's own (declared with the
//! family's metrics), or what a figure asks for; the methods are in
//! [`crate::stats::intervals`].
//!
//! Comparing two algorithms by their separate intervals wastes the design: every
//! algorithm of one replication sees the same trace and the same requests (common
//! random numbers), so most of the run-to-run noise is shared. [`paired_difference`]
//! differences the two algorithms replication by replication and summarizes those
//! differences, which is the right test for "RL beats Raymond".
//!
//! Besides means: [`summarize_share`] gives the proportion of runs in which a count is
//! positive (runs with a safety violation), with a binomial interval, and
//! [`summarize_ratio`] a ratio of sums over runs (messages per CS entry pooled over the
//! runs).
//!
//! Output rows are sorted by the group columns, so the same table always gives the same
//! frame.
//!
//! The grouping and the statistics are computed here, on plain vectors, rather than by
//! polars' query engine: a handful of numbers per group does not need one, and leaving
//! it out (with its cloud-storage stack) takes about a third off the clean build. The
//! mean and the variance use the same summation orders and formulas as polars' grouped
//! aggregations did, so the numbers are the ones earlier versions reported, bit for bit.

use crate::stats::intervals::interval;
use crate::stats::moments::{compensated_mean, sample_variance};
use crate::stats::quantiles::quantile;
use crate::stats::{IntervalMethod, Sample, Support};
use anyhow::{Context as _, bail};
use polars::prelude::*;
use std::collections::HashMap;

/// Quantile reported next to the median: the tail that users of mutual exclusion feel.
const P95: f64 = 0.95;

/// One row per group of `df` (sorted by the group columns) summarizing `metric`:
/// `n`, `mean`, `sd` (sample, n − 1), the interval `ci_low`, `ci_high` (by `ci`; null
/// for n < 2, as is `sd`), `median`, `p95` (linear interpolation, like
/// [`quantile`]), `half_width`, `ci_cut` and `interval`.
///
/// Null metric values are ignored: a run that never measured the metric (no CS entry,
/// no topology change) says nothing about it, and `n` counts only measured values.
/// An empty `group_by` summarizes the whole table in one row.
pub fn summarize(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    check_columns(df, group_by, &[metric])?;
    summarize_checked(df, group_by, metric, ci)
        .with_context(|| format!("summarizing {metric} by {group_by:?}"))
}

/// One row per group: the proportion of runs whose `metric` is above zero (`mean`),
/// of `n` runs with a value, with a binomial interval by `ci` (Wilson or
/// Clopper–Pearson), and the count in `runs_with`.
pub fn summarize_share(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    check_columns(df, group_by, &[metric])?;
    let summary = || -> anyhow::Result<DataFrame> {
        let values = float_values(df, metric)?;
        let groups = Groups::of(df, group_by)?;
        let mut stats = StatColumns::new(ci);
        let mut with = Vec::new();
        for rows in &groups.rows {
            let measured: Vec<f64> = rows.iter().filter_map(|&r| values[r]).collect();
            let successes = measured.iter().filter(|&&v| v > 0.0).count() as u64;
            with.push(successes);
            stats.push_other(Sample::Proportion {
                successes,
                n: measured.len() as u64,
            });
        }
        let mut out = groups.keys;
        stats.append_to(&mut out)?;
        out.with_column(Column::new("runs_with".into(), with))?;
        finish(out, group_by, &["runs_with"])
    };
    summary().with_context(|| format!("summarizing the share of runs with {metric} > 0"))
}

/// One row per group: the ratio of sums Σ`numerator` / Σ`denominator` over the runs
/// with both values (`mean`; `n` such runs), with an interval by `ci` (delta method or
/// bootstrap over runs).
pub fn summarize_ratio(
    df: &DataFrame,
    group_by: &[&str],
    (numerator, denominator): (&str, &str),
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    check_columns(df, group_by, &[numerator, denominator])?;
    let summary = || -> anyhow::Result<DataFrame> {
        let ys = float_values(df, numerator)?;
        let xs = float_values(df, denominator)?;
        let groups = Groups::of(df, group_by)?;
        let mut stats = StatColumns::new(ci);
        for rows in &groups.rows {
            let (mut y, mut x) = (Vec::new(), Vec::new());
            for &r in rows {
                if let (Some(a), Some(b)) = (ys[r], xs[r]) {
                    y.push(a);
                    x.push(b);
                }
            }
            stats.push_other(Sample::Ratio {
                numerators: &y,
                denominators: &x,
            });
        }
        let mut out = groups.keys;
        stats.append_to(&mut out)?;
        finish(out, group_by, &[])
    };
    summary().with_context(|| format!("summarizing Σ{numerator} / Σ{denominator}"))
}

fn summarize_checked(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    let values = float_values(df, metric)?;
    let groups = Groups::of(df, group_by)?;
    let mut stats = StatColumns::new(ci);
    for rows in &groups.rows {
        let measured: Vec<f64> = rows.iter().filter_map(|&r| values[r]).collect();
        stats.push(&measured);
    }
    let mut out = groups.keys;
    stats.append_to(&mut out)?;
    finish(out, group_by, &[])
}

/// Paired differences d = metric(`a`) − metric(`b`) between two algorithms, one row per
/// group (sorted by the group columns), summarized like [`summarize`] with `n` the number
/// of pairs with both values present and the interval by `ci` (its support is ignored:
/// a difference can have either sign), plus `mean_a`, `mean_b` (over those same pairs, so
/// `mean = mean_a − mean_b`) and `unpaired`.
///
/// A pair is one row of each algorithm with the same group values, `replication` and
/// (where the table has it) `seed`: the same trace and requests under both algorithms.
/// Rows without a partner (a run that failed or is not yet done) cannot be differenced
/// and are counted in `unpaired` rather than silently mixed in. A pair whose metric is
/// null on either side is a pair, but contributes nothing to `n`.
///
/// Errors if `group_by` contains `algorithm` or `replication` (the pairing keys), if
/// `a` and `b` are the same algorithm, or if one algorithm has two rows for the same
/// pairing key (the pairing would be ambiguous: group by the columns that tell them
/// apart, e.g. `experiment`).
pub fn paired_difference(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    a: &str,
    b: &str,
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    for key in ["algorithm", "replication"] {
        if group_by.contains(&key) {
            bail!("cannot group a paired difference by its pairing column `{key}`");
        }
    }
    if a == b {
        bail!("a paired difference needs two different algorithms, got `{a}` twice");
    }
    check_columns(df, group_by, &[metric, "algorithm", "replication"])?;
    let ci = IntervalSpec {
        support: Support::Any,
        ..ci
    };
    pair_checked(df, group_by, metric, (a, b), ci)
        .with_context(|| format!("pairing {metric} of {a} and {b} by {group_by:?}"))
}

fn pair_checked(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    (a, b): (&str, &str),
    ci: IntervalSpec,
) -> anyhow::Result<DataFrame> {
    let algorithm = df.column("algorithm")?.cast(&DataType::String)?;
    let side: Vec<Option<Side>> = algorithm
        .str()?
        .iter()
        .map(|name| match name {
            Some(name) if name == a => Some(Side::A),
            Some(name) if name == b => Some(Side::B),
            _ => None,
        })
        .collect();
    let mask: BooleanChunked = side.iter().map(|s| s.is_some()).collect();
    let both = df.filter(&mask)?;
    let side: Vec<Side> = side.into_iter().flatten().collect();

    let mut pair_columns = vec!["replication"];
    if both.column("seed").is_ok() {
        pair_columns.push("seed");
    }
    let pair_keys = both.select(pair_columns.iter().copied())?;
    let values = float_values(&both, metric)?;
    let groups = Groups::of(&both, group_by)?;

    let mut stats = StatColumns::new(ci);
    let (mut mean_a, mut mean_b, mut unpaired) = (Vec::new(), Vec::new(), Vec::new());
    for rows in &groups.rows {
        // Each side's row for each pairing key, which must be unique per side, and
        // `a`'s rows with their keys in table order.
        let mut row_by_key: [HashMap<Vec<AnyValue>, usize>; 2] = Default::default();
        let mut rows_of_a: Vec<(usize, Vec<AnyValue>)> = Vec::new();
        for &row in rows {
            let key = row_values(&pair_keys, row)?;
            let s = side[row];
            if s == Side::A {
                rows_of_a.push((row, key.clone()));
            }
            if let Some(previous) = row_by_key[s as usize].insert(key, row) {
                let which = if s == Side::A { a } else { b };
                let key: Vec<String> = pair_columns
                    .iter()
                    .zip(row_values(&pair_keys, previous)?)
                    .map(|(column, value)| format!("{column} = {value}"))
                    .collect();
                bail!(
                    "ambiguous pairing: {which} has two rows with {} in one group \
                     (group by the columns that tell them apart)",
                    key.join(" and ")
                );
            }
        }
        // Pairs in the order of `a`'s rows; a pair counts even when a value is null.
        let mut pairs = 0usize;
        let (mut d, mut of_a, mut of_b) = (Vec::new(), Vec::new(), Vec::new());
        for (row_a, key) in &rows_of_a {
            let Some(&row_b) = row_by_key[Side::B as usize].get(key) else {
                continue;
            };
            pairs += 1;
            if let (Some(va), Some(vb)) = (values[*row_a], values[row_b]) {
                d.push(va - vb);
                of_a.push(va);
                of_b.push(vb);
            }
        }
        stats.push(&d);
        mean_a.push(compensated_mean(&of_a));
        mean_b.push(compensated_mean(&of_b));
        let sides = row_by_key[0].len() + row_by_key[1].len();
        unpaired.push((sides - 2 * pairs) as u64);
    }
    let mut out = groups.keys;
    stats.append_to(&mut out)?;
    out.with_column(Column::new("mean_a".into(), mean_a))?;
    out.with_column(Column::new("mean_b".into(), mean_b))?;
    out.with_column(Column::new("unpaired".into(), unpaired))?;
    finish(out, group_by, &["mean_a", "mean_b", "unpaired"])
}

/// Which of the two algorithms of a paired difference a row belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    A = 0,
    B = 1,
}

/// Errors naming the first missing column, so a typo in a parameter name fails with
/// the name instead of a polars error.
fn check_columns(df: &DataFrame, group_by: &[&str], others: &[&str]) -> anyhow::Result<()> {
    for name in group_by.iter().chain(others) {
        if df.column(name).is_err() {
            bail!("the table has no column `{name}`");
        }
    }
    Ok(())
}

/// The values of row `row` of `df`, one per column, comparable and hashable.
fn row_values(df: &DataFrame, row: usize) -> PolarsResult<Vec<AnyValue<'_>>> {
    df.columns().iter().map(|c| c.get(row)).collect()
}

/// `column` of `df` as numbers, one per row (null where unmeasured; numeric columns
/// only).
pub(crate) fn float_values(df: &DataFrame, column: &str) -> anyhow::Result<Vec<Option<f64>>> {
    let values = df.column(column)?.cast(&DataType::Float64)?;
    Ok(values.f64()?.iter().collect())
}

/// The rows of a table split by the values of its group columns.
struct Groups {
    /// One row per group: its values of the group columns, sorted by them (no
    /// columns when grouping by nothing).
    keys: DataFrame,
    /// Each group's row numbers in the table, in table order, so the sums below add
    /// values in the order the table holds them.
    rows: Vec<Vec<usize>>,
}

impl Groups {
    /// Sorts the row numbers by the group columns (stably, so each group keeps table
    /// order) and cuts where the group values change. No columns: one group of all
    /// rows (none for an empty table).
    fn of(df: &DataFrame, group_by: &[&str]) -> anyhow::Result<Groups> {
        if group_by.is_empty() {
            let rows: Vec<usize> = (0..df.height()).collect();
            let rows = if rows.is_empty() { vec![] } else { vec![rows] };
            return Ok(Groups {
                keys: DataFrame::empty_with_height(rows.len()),
                rows,
            });
        }
        const ROW: &str = "__linkrev_row";
        let sorted = df
            .select(group_by.iter().copied())?
            .with_row_index(ROW.into(), None)?
            .sort(
                group_by.iter().copied(),
                SortMultipleOptions::default().with_maintain_order(true),
            )?;
        let order: Vec<usize> = sorted
            .column(ROW)?
            .idx()?
            .into_no_null_iter()
            .map(|r| r as usize)
            .collect();
        let keys = sorted.select(group_by.iter().copied())?;
        let mut firsts: Vec<IdxSize> = Vec::new();
        let mut rows: Vec<Vec<usize>> = Vec::new();
        let mut previous: Option<Vec<AnyValue>> = None;
        for (i, &row) in order.iter().enumerate() {
            let key = row_values(&keys, i)?;
            if previous.as_ref() != Some(&key) {
                firsts.push(i as IdxSize);
                rows.push(Vec::new());
                previous = Some(key);
            }
            rows.last_mut().expect("a group was started").push(row);
        }
        let firsts = IdxCa::from_vec("".into(), firsts);
        Ok(Groups {
            keys: keys.take(&firsts)?,
            rows,
        })
    }
}

/// How a summary's interval is computed: the method, the support it must stay in and
/// its confidence level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalSpec {
    /// The method ([`IntervalMethod::fits`] the summary's kind of estimate).
    pub method: IntervalMethod,
    /// Where the estimated quantity lies; every interval is kept inside it.
    pub support: Support,
    /// Confidence level, in (0, 1).
    pub confidence: f64,
    /// The metric's least runs ([`crate::family::Metric::least_runs`]): an interval
    /// from fewer, or from a sample the skewness guard holds back
    /// ([`crate::stats::sequential::held_back`]), is marked `ci_rough`.
    pub least_runs: u32,
}

impl IntervalSpec {
    /// A 95% Student-t interval inside `support`.
    pub const fn t95(support: Support) -> IntervalSpec {
        IntervalSpec {
            method: IntervalMethod::StudentT,
            support,
            confidence: 0.95,
            least_runs: 0,
        }
    }
}

/// The per-group statistics, one entry per group.
struct StatColumns {
    interval: IntervalSpec,
    n: Vec<u64>,
    mean: Vec<Option<f64>>,
    sd: Vec<Option<f64>>,
    low: Vec<Option<f64>>,
    high: Vec<Option<f64>>,
    median: Vec<Option<f64>>,
    p95: Vec<Option<f64>>,
    half_width: Vec<Option<f64>>,
    cut: Vec<bool>,
    rough: Vec<bool>,
    method: Vec<&'static str>,
}

impl StatColumns {
    fn new(interval: IntervalSpec) -> StatColumns {
        StatColumns {
            interval,
            n: Vec::new(),
            mean: Vec::new(),
            sd: Vec::new(),
            low: Vec::new(),
            high: Vec::new(),
            median: Vec::new(),
            p95: Vec::new(),
            half_width: Vec::new(),
            cut: Vec::new(),
            rough: Vec::new(),
            method: Vec::new(),
        }
    }

    /// Adds the statistics of one group's measured values (in table order).
    fn push(&mut self, values: &[f64]) {
        let mut sorted = values.to_vec();
        sorted.sort_by(|x, y| match (x.is_nan(), y.is_nan()) {
            (false, false) => x.partial_cmp(y).expect("neither is NaN"),
            (x_nan, y_nan) => x_nan.cmp(&y_nan),
        });
        self.push_sample(Sample::Values(values));
        self.sd.push(sample_variance(values).map(f64::sqrt));
        self.median.push(quantile(&sorted, 0.5));
        self.p95.push(quantile(&sorted, P95));
    }

    /// Adds a group's estimate of another kind (a proportion, a ratio), which has no
    /// spread or quantiles of its own.
    fn push_other(&mut self, sample: Sample<'_>) {
        self.push_sample(sample);
        self.sd.push(None);
        self.median.push(None);
        self.p95.push(None);
    }

    fn push_sample(&mut self, sample: Sample<'_>) {
        let spec = self.interval;
        let found = interval(sample, spec.method, spec.confidence, spec.support);
        self.n.push(sample.n());
        self.mean.push(sample.estimate());
        self.low.push(found.map(|i| i.low));
        self.high.push(found.map(|i| i.high));
        self.half_width.push(found.map(|i| i.half_width));
        self.cut.push(found.is_some_and(|i| i.cut));
        self.rough
            .push(found.is_some() && crate::stats::sequential::rough(sample, spec.least_runs));
        self.method
            .push(spec.method.used_for(sample.n(), sample.kind()).name());
    }

    /// Appends the columns in their documented order after the group columns and
    /// before `extra` (columns the caller adds).
    fn append_to(self, out: &mut DataFrame) -> PolarsResult<()> {
        let rows = self.n.len();
        out.with_column(Column::new("n".into(), self.n))?;
        out.with_column(Column::new("mean".into(), self.mean))?;
        out.with_column(Column::new("sd".into(), self.sd))?;
        out.with_column(Column::new("ci_low".into(), self.low))?;
        out.with_column(Column::new("ci_high".into(), self.high))?;
        out.with_column(Column::new("median".into(), self.median))?;
        out.with_column(Column::new("p95".into(), self.p95))?;
        out.with_column(Column::new("half_width".into(), self.half_width))?;
        out.with_column(Column::new("ci_cut".into(), self.cut))?;
        out.with_column(Column::new("ci_rough".into(), self.rough))?;
        debug_assert_eq!(self.method.len(), rows);
        out.with_column(Column::new("interval".into(), self.method))?;
        Ok(())
    }
}

/// The statistics columns, in order, after the group columns.
pub const STAT_COLUMNS: [&str; 11] = [
    "n",
    "mean",
    "sd",
    "ci_low",
    "ci_high",
    "median",
    "p95",
    "half_width",
    "ci_cut",
    "ci_rough",
    "interval",
];

/// Puts the columns in their documented order: group columns, statistics, `extra`.
fn finish(out: DataFrame, group_by: &[&str], extra: &[&str]) -> anyhow::Result<DataFrame> {
    let order: Vec<&str> = group_by
        .iter()
        .chain(&STAT_COLUMNS)
        .chain(extra)
        .copied()
        .collect();
    Ok(out.select(order)?)
}
