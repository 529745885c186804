//! Aggregation of the `runs` table: per-group summaries and paired differences.
//!
//! Every summary reports `n`, `mean`, `sd`, a 95% Student-t confidence interval,
//! `median` and `p95` (DESIGN.md, "Determinism and statistics"). The sample sizes of a
//! sweep are small (a handful of replications), so the normal 1.96 would make the
//! intervals visibly too narrow; the Student-t quantile is computed here exactly.
//!
//! Comparing two algorithms by their separate intervals wastes the design: every
//! algorithm of one replication sees the same trace and the same requests (common
//! random numbers), so most of the run-to-run noise is shared. [`paired_difference`]
//! differences the two algorithms replication by replication and summarizes those
//! differences, which is the right test for "RL beats Raymond".
//!
//! Output rows are sorted by the group columns, so the same table always gives the same
//! frame.
//!
//! The grouping and the statistics are computed here, on plain vectors, rather than by
//! polars' query engine: a handful of numbers per group does not need one, and leaving
//! it out (with its cloud-storage stack) takes about a third off the clean build. The
//! mean and the variance use the same summation orders and formulas as polars' grouped
//! aggregations did, so the numbers are the ones earlier versions reported, bit for bit.

use anyhow::{Context as _, bail};
use polars::prelude::*;
use std::collections::HashMap;

/// Quantile reported next to the median: the tail that users of mutual exclusion feel.
const P95: f64 = 0.95;

/// Quantile `p` (0 < p < 1) of Student's t distribution with `df` ≥ 1 degrees of freedom.
///
/// Inverts the exact finite-series form of the t CDF for integer degrees of freedom
/// (Abramowitz & Stegun 26.7.3–26.7.4) by bisection on θ = atan(t/√df), in which the
/// two-sided probability is monotone and bounded on (0, π/2). Bisection to the last
/// bit is slower than Newton but cannot fail, and integer `df` is all a CI over
/// `n` samples needs. Costs O(df) per evaluation.
///
/// # Panics
/// If `df` is 0 or `p` is not strictly between 0 and 1 (programming errors: callers
/// only ask for fixed quantiles of groups with n ≥ 2).
pub fn student_t_quantile(p: f64, df: u64) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    assert!(p > 0.0 && p < 1.0, "quantile level {p} outside (0, 1)");
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    if p == 0.5 {
        return 0.0;
    }
    // P(|T| < t) = 2p - 1.
    let target = 2.0 * p - 1.0;
    let (mut lo, mut hi) = (0.0_f64, std::f64::consts::FRAC_PI_2);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if two_sided_probability(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (df as f64).sqrt() * (0.5 * (lo + hi)).tan()
}

/// P(|T| < √df·tan θ) for T ~ t(df): the A(t|ν) series of Abramowitz & Stegun.
fn two_sided_probability(theta: f64, df: u64) -> f64 {
    let (sin, cos) = theta.sin_cos();
    let cos2 = cos * cos;
    if df % 2 == 1 {
        // (2/π)(θ + sinθ·cosθ·Σ_{k=0}^{(ν-3)/2} a_k cos^{2k}θ), a_k = a_{k-1}·2k/(2k+1).
        let mut sum = 0.0;
        if df >= 3 {
            let (mut term, mut k) = (1.0, 0u64);
            loop {
                sum += term;
                k += 1;
                if 2 * k + 1 > df - 2 {
                    break;
                }
                term *= cos2 * (2 * k) as f64 / (2 * k + 1) as f64;
            }
        }
        std::f64::consts::FRAC_2_PI * (theta + sin * cos * sum)
    } else {
        // sinθ·Σ_{k=0}^{(ν-2)/2} b_k cos^{2k}θ, b_k = b_{k-1}·(2k-1)/(2k).
        let (mut sum, mut term, mut k) = (0.0, 1.0, 0u64);
        loop {
            sum += term;
            k += 1;
            if 2 * k > df - 2 {
                break;
            }
            term *= cos2 * (2 * k - 1) as f64 / (2 * k) as f64;
        }
        sin * sum
    }
}

/// One row per group of `df` (sorted by the group columns) summarizing `metric`:
/// `n`, `mean`, `sd` (sample, n − 1), `ci_low`, `ci_high` (95% Student-t; null for
/// n < 2, as is `sd`), `median`, `p95` (linear interpolation, like [`crate::family::def::quantile`]).
///
/// Null metric values are ignored: a run that never measured the metric (no CS entry,
/// no topology change) says nothing about it, and `n` counts only measured values.
/// An empty `group_by` summarizes the whole table in one row.
pub fn summarize(df: &DataFrame, group_by: &[&str], metric: &str) -> anyhow::Result<DataFrame> {
    check_columns(df, group_by, &[metric])?;
    summarize_checked(df, group_by, metric)
        .with_context(|| format!("summarizing {metric} by {group_by:?}"))
}

fn summarize_checked(df: &DataFrame, group_by: &[&str], metric: &str) -> anyhow::Result<DataFrame> {
    let values = float_values(df, metric)?;
    let groups = Groups::of(df, group_by)?;
    let mut stats = StatColumns::default();
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
/// of pairs with both values present, plus `mean_a`, `mean_b` (over those same pairs, so
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
    pair_checked(df, group_by, metric, a, b)
        .with_context(|| format!("pairing {metric} of {a} and {b} by {group_by:?}"))
}

fn pair_checked(
    df: &DataFrame,
    group_by: &[&str],
    metric: &str,
    a: &str,
    b: &str,
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

    let mut stats = StatColumns::default();
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

/// The per-group statistics, one entry per group; the CI is derived in [`finish`].
#[derive(Default)]
struct StatColumns {
    n: Vec<u64>,
    mean: Vec<Option<f64>>,
    sd: Vec<Option<f64>>,
    median: Vec<Option<f64>>,
    p95: Vec<Option<f64>>,
}

impl StatColumns {
    /// Adds the statistics of one group's measured values (in table order).
    fn push(&mut self, values: &[f64]) {
        let mut sorted = values.to_vec();
        sorted.sort_by(|x, y| match (x.is_nan(), y.is_nan()) {
            (false, false) => x.partial_cmp(y).expect("neither is NaN"),
            (x_nan, y_nan) => x_nan.cmp(&y_nan),
        });
        self.n.push(values.len() as u64);
        self.mean.push(compensated_mean(values));
        self.sd.push(sample_variance(values).map(f64::sqrt));
        self.median.push(crate::family::def::quantile(&sorted, 0.5));
        self.p95.push(crate::family::def::quantile(&sorted, P95));
    }

    fn append_to(self, out: &mut DataFrame) -> PolarsResult<()> {
        out.with_column(Column::new("n".into(), self.n))?;
        out.with_column(Column::new("mean".into(), self.mean))?;
        out.with_column(Column::new("sd".into(), self.sd))?;
        out.with_column(Column::new("median".into(), self.median))?;
        out.with_column(Column::new("p95".into(), self.p95))?;
        Ok(())
    }
}

/// The mean by compensated (Kahan) summation in the given order, `None` for no values.
///
/// Kahan's sum carries the rounding error of each addition into the next, so the error
/// of a mean of many runs stays near one rounding instead of growing with the count of
/// its terms. It is also what polars' grouped mean computes, which the tables of
/// earlier versions were made with.
fn compensated_mean(values: &[f64]) -> Option<f64> {
    match values {
        [] => None,
        [only] => Some(*only),
        _ => {
            let (mut sum, mut carry) = (0.0_f64, 0.0_f64);
            for &v in values {
                let y = v - carry;
                let next = sum + y;
                let lost = (next - sum) - y;
                sum = next;
                // An infinite term makes `lost` NaN; keep the last finite carry so one
                // infinity gives an infinite mean rather than NaN.
                if lost.is_finite() {
                    carry = lost;
                }
            }
            Some(sum / values.len() as f64)
        }
    }
}

/// The sample variance (n − 1 in the denominator) by Welford's one-pass update (1962),
/// which does not lose the small differences a sum of squares minus a squared sum
/// would; `None` below two values.
fn sample_variance(values: &[f64]) -> Option<f64> {
    let (mut mean, mut m2) = (0.0_f64, 0.0_f64);
    for (i, &v) in values.iter().enumerate() {
        let delta = v - mean;
        mean += delta / (i + 1) as f64;
        m2 += delta * (v - mean);
    }
    (values.len() >= 2).then(|| m2 / (values.len() - 1) as f64)
}

/// Adds the Student-t interval, blanks `sd` where n < 2 (one value has no spread) and
/// puts the columns in their documented order.
fn finish(mut out: DataFrame, group_by: &[&str], extra: &[&str]) -> anyhow::Result<DataFrame> {
    let n = out.column("n")?.u64()?.clone();
    let mean = out.column("mean")?.f64()?.clone();
    let sd = out.column("sd")?.f64()?.clone();
    let mut sd_out = Vec::with_capacity(out.height());
    let mut low = Vec::with_capacity(out.height());
    let mut high = Vec::with_capacity(out.height());
    for ((n, mean), sd) in n.iter().zip(mean.iter()).zip(sd.iter()) {
        let n = n.unwrap_or(0);
        match (mean, sd) {
            (Some(mean), Some(sd)) if n >= 2 => {
                let half = student_t_quantile(0.975, n - 1) * sd / (n as f64).sqrt();
                sd_out.push(Some(sd));
                low.push(Some(mean - half));
                high.push(Some(mean + half));
            }
            _ => {
                sd_out.push(None);
                low.push(None);
                high.push(None);
            }
        }
    }
    out.replace("sd", Column::new("sd".into(), sd_out))?;
    out.with_column(Column::new("ci_low".into(), low))?;
    out.with_column(Column::new("ci_high".into(), high))?;
    let stats = ["n", "mean", "sd", "ci_low", "ci_high", "median", "p95"];
    let order: Vec<&str> = group_by
        .iter()
        .chain(&stats)
        .chain(extra)
        .copied()
        .collect();
    Ok(out.select(order)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Closed forms: ν = 1 is Cauchy, ν = 2 has t = (2p−1)·√(2 / (4p(1−p))).
        let t1 = (0.475 * std::f64::consts::PI).tan();
        assert!((student_t_quantile(0.975, 1) - t1).abs() < 1e-9);
        let t2 = 0.95 * (2.0 / (4.0 * 0.975 * 0.025_f64)).sqrt();
        assert!((student_t_quantile(0.975, 2) - t2).abs() < 1e-12);
        for (df, table) in [
            (1, 12.7062),
            (2, 4.3027),
            (3, 3.1824),
            (4, 2.7764),
            (9, 2.2622),
            (29, 2.0452),
        ] {
            let t = student_t_quantile(0.975, df);
            assert!((t - table).abs() < 5e-5, "df {df}: {t} vs {table}");
        }
        assert!((student_t_quantile(0.975, 100_000) - 1.96).abs() < 1e-4);
    }

    #[test]
    fn compensated_mean_keeps_what_a_plain_sum_rounds_away() {
        // Near 1e16 the spacing of doubles is 2: a plain sum drops both ones.
        let values = [1e16, 1.0, 1.0, -1e16];
        assert_eq!(values.iter().sum::<f64>(), 0.0);
        assert_eq!(compensated_mean(&values), Some(0.5));
        assert_eq!(compensated_mean(&[]), None);
        assert_eq!(compensated_mean(&[-3.5]), Some(-3.5));
        assert_eq!(compensated_mean(&[1.0, f64::INFINITY]), Some(f64::INFINITY));
    }

    #[test]
    fn welford_variance_survives_a_large_offset() {
        // 4, 7, 13, 16 have variance 30; shifted by 1e9 the textbook
        // E[x²] − E[x]² loses it to cancellation, the one-pass update does not.
        let values = [4.0, 7.0, 13.0, 16.0].map(|v: f64| v + 1e9);
        let var = sample_variance(&values).unwrap();
        assert!((var - 30.0).abs() < 1e-6, "{var}");
        assert_eq!(sample_variance(&[2.0]), None);
        assert_eq!(sample_variance(&[2.0, 4.0]), Some(2.0));
    }

    #[test]
    fn t_quantile_is_symmetric_and_monotone() {
        assert_eq!(student_t_quantile(0.5, 7), 0.0);
        assert_eq!(student_t_quantile(0.025, 5), -student_t_quantile(0.975, 5));
        let mut last = f64::INFINITY;
        for df in 1..60 {
            let t = student_t_quantile(0.975, df);
            assert!(t < last, "t must shrink with df");
            last = t;
        }
        // ν = 4: A = sinθ(1 + cos²θ/2) at the quantile gives back 0.95.
        let t = student_t_quantile(0.975, 4);
        let theta = (t / 2.0).atan();
        let a = theta.sin() * (1.0 + 0.5 * theta.cos().powi(2));
        assert!((a - 0.95).abs() < 1e-14);
    }
}
