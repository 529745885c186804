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

use anyhow::{Context as _, bail};
use polars::prelude::*;

/// Name of the constant key used when the caller groups by nothing: polars needs at
/// least one key to group and join on, and one constant key gives exactly one group.
const ALL: &str = "__linkrev_all";

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
/// n < 2, as is `sd`), `median`, `p95` (linear interpolation, like [`crate::run::quantile`]).
///
/// Null metric values are ignored: a run that never measured the metric (no CS entry,
/// no topology change) says nothing about it, and `n` counts only measured values.
/// An empty `group_by` summarizes the whole table in one row.
pub fn summarize(df: &DataFrame, group_by: &[&str], metric: &str) -> anyhow::Result<DataFrame> {
    check_columns(df, group_by, &[metric])?;
    let (lf, keys) = with_keys(df.clone().lazy(), group_by);
    let out = lf
        .group_by(keys.iter().map(|k| col(k.as_str())).collect::<Vec<_>>())
        .agg(stat_exprs(col(metric).cast(DataType::Float64)))
        .sort(
            keys.clone(),
            SortMultipleOptions::default().with_maintain_order(true),
        )
        .collect()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("summarizing {metric} by {group_by:?}"))?;
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
/// Errors if `group_by` contains `algorithm` or `replication` (the pairing keys), or
/// if one algorithm has two rows for the same pairing key (the pairing would be
/// ambiguous: group by the columns that tell them apart, e.g. `experiment`).
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
    check_columns(df, group_by, &[metric, "algorithm", "replication"])?;
    let (lf, keys) = with_keys(df.clone().lazy(), group_by);
    let mut pair_keys: Vec<String> = keys.clone();
    pair_keys.push("replication".into());
    if df.column("seed").is_ok() {
        pair_keys.push("seed".into());
    }
    let pair_exprs: Vec<Expr> = pair_keys.iter().map(|k| col(k.as_str())).collect();
    let key_exprs: Vec<Expr> = keys.iter().map(|k| col(k.as_str())).collect();
    let side = |algorithm: &str, name: &str| {
        lf.clone()
            .filter(col("algorithm").eq(lit(algorithm.to_string())))
            .select(
                pair_exprs
                    .iter()
                    .cloned()
                    .chain([col(metric).cast(DataType::Float64).alias(name)])
                    .collect::<Vec<_>>(),
            )
    };
    let mut join_args = JoinArgs::new(JoinType::Inner);
    join_args.validation = JoinValidation::OneToOne;
    join_args.nulls_equal = true;
    let pairs = side(a, "__a")
        .join(side(b, "__b"), &pair_exprs, &pair_exprs, join_args)
        .with_column((col("__a") - col("__b")).alias("__d"));
    let both = col("__d").is_not_null();
    let mut aggs = stat_exprs(col("__d"));
    aggs.extend([
        col("__a").filter(both.clone()).mean().alias("mean_a"),
        col("__b").filter(both).mean().alias("mean_b"),
        len().cast(DataType::Int64).alias("__pairs"),
    ]);
    let summary = pairs.group_by(key_exprs.clone()).agg(aggs);

    // Every group where either algorithm ran, so a group with no pair still shows up
    // (with n = 0) and its unpaired rows are reported.
    let is = |algorithm: &str| col("algorithm").eq(lit(algorithm.to_string()));
    let groups = lf.filter(is(a).or(is(b))).group_by(key_exprs.clone()).agg([
        is(a).cast(DataType::Int64).sum().alias("__rows_a"),
        is(b).cast(DataType::Int64).sum().alias("__rows_b"),
    ]);
    let mut group_join = JoinArgs::new(JoinType::Left);
    group_join.nulls_equal = true;
    let out = groups
        .join(summary, &key_exprs, &key_exprs, group_join)
        .with_columns([
            col("n").fill_null(lit(0u64)),
            (col("__rows_a") + col("__rows_b") - lit(2i64) * col("__pairs").fill_null(lit(0i64)))
                .cast(DataType::UInt64)
                .alias("unpaired"),
        ])
        .sort(
            keys.clone(),
            SortMultipleOptions::default().with_maintain_order(true),
        )
        .collect()
        .map_err(anyhow::Error::from)
        .with_context(|| format!("pairing {metric} of {a} and {b} by {group_by:?}"))?;
    finish(out, group_by, &["mean_a", "mean_b", "unpaired"])
}

/// Errors naming the first missing column, so a typo in a parameter name fails with
/// the name instead of a polars plan error.
fn check_columns(df: &DataFrame, group_by: &[&str], others: &[&str]) -> anyhow::Result<()> {
    for name in group_by.iter().chain(others) {
        if df.column(name).is_err() {
            bail!("the table has no column `{name}`");
        }
    }
    Ok(())
}

/// The lazy frame and its group keys; a constant key stands in for an empty `group_by`.
fn with_keys(lf: LazyFrame, group_by: &[&str]) -> (LazyFrame, Vec<String>) {
    if group_by.is_empty() {
        (lf.with_column(lit(true).alias(ALL)), vec![ALL.to_string()])
    } else {
        (lf, group_by.iter().map(|s| s.to_string()).collect())
    }
}

/// The per-group statistics polars computes itself; the CI is derived in [`finish`].
fn stat_exprs(value: Expr) -> Vec<Expr> {
    vec![
        value.clone().count().cast(DataType::UInt64).alias("n"),
        value.clone().mean().alias("mean"),
        value.clone().std(1).alias("sd"),
        value.clone().median().alias("median"),
        value
            .quantile(lit(P95), QuantileMethod::Linear)
            .alias("p95"),
    ]
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
