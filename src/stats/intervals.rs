//! Confidence intervals by method, each kept inside its metric's support.
//!
//! | method | for | interval |
//! |---|---|---|
//! | `t` | a mean over runs | x̄ ± t(n−1)·s/√n, cut at the support's ends |
//! | `bootstrap-percentile` | a mean, a ratio of sums | quantiles of 2,000 resampled estimates |
//! | `bootstrap-bca` | the same, skewed | the percentile interval corrected for bias and skew (BCa) |
//! | `wilson` | a proportion of runs | Wilson's score interval |
//! | `clopper-pearson` | a proportion of runs | the exact binomial interval (beta quantiles) |
//! | `delta` | a ratio of sums | R ± t(n−1)·se, se by the delta method, cut at the support |
//!
//! **Cutting a t interval at the support** (a mean time of 3.18 s with a t interval
//! from −4.04 to 10.40 becomes 0 to 10.40) never lowers its coverage: the true mean lies
//! in the support, so whenever the uncut interval held it the cut one does too. It
//! does say that the interval is not symmetric any more; the report names how many
//! were cut. The t interval itself is exact for normal data and approximate otherwise;
//! with few runs of a skewed metric it covers less than its nominal level (see the
//! coverage table in the book's statistics page).
//!
//! **The bootstrap** (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993,
//! ch. 13–14) resamples the runs with replacement. Its generator is seeded from the
//! values themselves, so the same runs give the same interval in any process, thread
//! count or grouping. Percentile and BCa intervals lie inside the range of the
//! resampled estimates, hence inside the support of the values. BCa's bias correction
//! z₀ comes from the share of resampled estimates below the estimate, its acceleration
//! from the jackknife (Efron & Tibshirani eq. 14.15).
//!
//! **Proportions** (Brown, Cai & DasGupta, "Interval Estimation for a Binomial
//! Proportion", Statistical Science 16(2), 2001): the Wald interval p ± z·√(p(1−p)/n)
//! collapses to a point at 0 or n successes; Wilson's score interval does not, and stays
//! in [0, 1]. Clopper–Pearson inverts the binomial tests exactly: conservative (coverage
//! at least nominal), wider.
//!
//! **A ratio of sums** R = Σyᵢ/Σxᵢ (messages per CS entry pooled over runs, so a run
//! with many entries weighs more) has, by the delta method, variance
//! Σ(yᵢ − R·xᵢ)² / ((n − 1)·n·x̄²) (Cochran, "Sampling Techniques", 1977, §6.3).

use super::Support;
use super::moments::{compensated_mean, sample_variance};
use super::quantiles::{self, quantile};
use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

/// Resampled estimates a bootstrap interval starts with. Efron & Tibshirani (ch. 19)
/// suggest 1,000 or more for percentile intervals; that is not enough for a BCa end
/// of a small skewed sample, whose Monte Carlo error at 2,000 reaches a fifth of the
/// half-width. [`interval`] therefore doubles the resamples until each end's Monte
/// Carlo error is within [`BOOTSTRAP_MC_ERROR`] of the half-width (at most
/// [`BOOTSTRAP_MAX_RESAMPLES`]).
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The Monte Carlo standard error each end of a bootstrap interval is held to, as a
/// share of the half-width.
pub const BOOTSTRAP_MC_ERROR: f64 = 0.02;

/// The most resamples a bootstrap interval takes (2,000 doubled eight times).
pub const BOOTSTRAP_MAX_RESAMPLES: usize = 512_000;

/// The fewest runs a bootstrap interval is drawn from: below it the resamples take few
/// distinct values (two runs give an "interval" that is just the two values), and
/// [`interval`] uses Student-t for a mean and the delta method for a ratio instead
/// ([`IntervalMethod::used_for`]).
pub const BOOTSTRAP_LEAST_RUNS: u64 = 10;

/// How an interval is computed (the names are those of figure specs and tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntervalMethod {
    /// Student's t around the mean, cut at the support.
    #[serde(rename = "t")]
    StudentT,
    /// Quantiles of the bootstrap distribution of the estimate.
    #[serde(rename = "bootstrap-percentile")]
    BootstrapPercentile,
    /// Bias-corrected and accelerated bootstrap.
    #[serde(rename = "bootstrap-bca")]
    BootstrapBca,
    /// Wilson's score interval for a proportion.
    #[serde(rename = "wilson")]
    Wilson,
    /// The exact (Clopper–Pearson) interval for a proportion.
    #[serde(rename = "clopper-pearson")]
    ClopperPearson,
    /// The delta-method interval of a ratio of sums.
    #[serde(rename = "delta")]
    Delta,
}

impl IntervalMethod {
    /// Every method, in the order the docs list them.
    pub const ALL: [IntervalMethod; 6] = [
        IntervalMethod::StudentT,
        IntervalMethod::BootstrapPercentile,
        IntervalMethod::BootstrapBca,
        IntervalMethod::Wilson,
        IntervalMethod::ClopperPearson,
        IntervalMethod::Delta,
    ];

    /// The name in specs and tables (`t`, `bootstrap-bca`, …).
    pub fn name(self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "t",
            IntervalMethod::BootstrapPercentile => "bootstrap-percentile",
            IntervalMethod::BootstrapBca => "bootstrap-bca",
            IntervalMethod::Wilson => "wilson",
            IntervalMethod::ClopperPearson => "clopper-pearson",
            IntervalMethod::Delta => "delta",
        }
    }

    /// The method named `name`, if any.
    pub fn from_name(name: &str) -> Option<IntervalMethod> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The method [`interval`] applies for `n` runs of a sample of `kind`: itself,
    /// except a bootstrap below [`BOOTSTRAP_LEAST_RUNS`], which gives way to Student-t
    /// (a mean) or the delta method (a ratio).
    pub fn used_for(self, n: u64, kind: SampleKind) -> IntervalMethod {
        let bootstrap = matches!(
            self,
            IntervalMethod::BootstrapPercentile | IntervalMethod::BootstrapBca
        );
        match kind {
            SampleKind::Values if bootstrap && n < BOOTSTRAP_LEAST_RUNS => IntervalMethod::StudentT,
            SampleKind::Ratio if bootstrap && n < BOOTSTRAP_LEAST_RUNS => IntervalMethod::Delta,
            _ => self,
        }
    }

    /// Words for a caption: "Student-t", "bootstrap BCa", ….
    pub fn describe(self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "Student-t",
            IntervalMethod::BootstrapPercentile => {
                "bootstrap percentile (each end to 2% Monte Carlo error)"
            }
            IntervalMethod::BootstrapBca => "bootstrap BCa (each end to 2% Monte Carlo error)",
            IntervalMethod::Wilson => "Wilson score",
            IntervalMethod::ClopperPearson => "Clopper–Pearson exact",
            IntervalMethod::Delta => "delta-method",
        }
    }

    /// Whether the method can summarise samples of this kind.
    pub fn fits(self, kind: SampleKind) -> bool {
        use IntervalMethod::*;
        match kind {
            SampleKind::Values => matches!(self, StudentT | BootstrapPercentile | BootstrapBca),
            SampleKind::Proportion => matches!(self, Wilson | ClopperPearson),
            SampleKind::Ratio => matches!(self, Delta | BootstrapPercentile | BootstrapBca),
        }
    }
}

/// What is being estimated, which decides the methods that apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// The mean of per-run values.
    Values,
    /// The proportion of runs with some property.
    Proportion,
    /// A ratio of sums over runs.
    Ratio,
}

/// The data of one interval.
#[derive(Clone, Copy, Debug)]
pub enum Sample<'a> {
    /// Per-run values, in table order; the estimate is their mean.
    Values(&'a [f64]),
    /// `successes` of `n` runs; the estimate is their ratio.
    Proportion {
        /// Runs with the property.
        successes: u64,
        /// Runs.
        n: u64,
    },
    /// Per-run numerators and denominators, paired; the estimate is Σy / Σx.
    Ratio {
        /// Numerators yᵢ.
        numerators: &'a [f64],
        /// Denominators xᵢ.
        denominators: &'a [f64],
    },
}

impl Sample<'_> {
    /// Which kind of estimate it is.
    pub fn kind(&self) -> SampleKind {
        match self {
            Sample::Values(_) => SampleKind::Values,
            Sample::Proportion { .. } => SampleKind::Proportion,
            Sample::Ratio { .. } => SampleKind::Ratio,
        }
    }

    /// The sample size (runs).
    pub fn n(&self) -> u64 {
        match self {
            Sample::Values(v) => v.len() as u64,
            Sample::Proportion { n, .. } => *n,
            Sample::Ratio { numerators, .. } => numerators.len() as u64,
        }
    }

    /// The point estimate (`None` without data, or a ratio over a zero sum).
    pub fn estimate(&self) -> Option<f64> {
        match self {
            Sample::Values(v) => compensated_mean(v),
            Sample::Proportion { successes, n } => (*n > 0).then(|| *successes as f64 / *n as f64),
            Sample::Ratio {
                numerators,
                denominators,
            } => {
                let x: f64 = denominators.iter().sum();
                (!numerators.is_empty() && x != 0.0).then(|| numerators.iter().sum::<f64>() / x)
            }
        }
    }
}

/// A confidence interval and what it took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The point estimate (mean, proportion or ratio).
    pub estimate: f64,
    /// Lower end, inside the support.
    pub low: f64,
    /// Upper end, inside the support.
    pub high: f64,
    /// The interval's precision: half its width before any cut at the support (for `t`
    /// and `delta`, t·se), which the sequential rule compares with its target.
    pub half_width: f64,
    /// Whether an end was moved to the support's edge.
    pub cut: bool,
}

/// The `confidence` (0 < c < 1) interval of `sample` by `method`, inside `support`.
///
/// `None` where no interval exists: fewer than two runs (one has no spread; a
/// proportion needs one), a ratio whose denominators sum to zero, or a method that does
/// not fit the sample's kind (specs are checked against [`IntervalMethod::fits`] before
/// any data is read). A bootstrap below [`BOOTSTRAP_LEAST_RUNS`] runs gives way to
/// another method ([`IntervalMethod::used_for`]); a bootstrap above it resamples until
/// each end's Monte Carlo error is within [`BOOTSTRAP_MC_ERROR`] of the half-width.
pub fn interval(
    sample: Sample<'_>,
    method: IntervalMethod,
    confidence: f64,
    support: Support,
) -> Option<Interval> {
    let method = method.used_for(sample.n(), sample.kind());
    interval_by(sample, method, confidence, support, Resamples::Sized)
}

/// [`interval`] with exactly `resamples` bootstrap resamples and no fallback below
/// [`BOOTSTRAP_LEAST_RUNS`]: coverage simulations measure the bare methods, run
/// thousands of intervals and can afford fewer resamples per interval.
pub fn interval_resampled(
    sample: Sample<'_>,
    method: IntervalMethod,
    confidence: f64,
    support: Support,
    resamples: usize,
) -> Option<Interval> {
    interval_by(
        sample,
        method,
        confidence,
        support,
        Resamples::Fixed(resamples.max(1)),
    )
}

/// How many resamples a bootstrap draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resamples {
    /// Exactly this many.
    Fixed(usize),
    /// From [`BOOTSTRAP_RESAMPLES`], doubled until each end's Monte Carlo error is
    /// within [`BOOTSTRAP_MC_ERROR`] of the half-width, or [`BOOTSTRAP_MAX_RESAMPLES`].
    Sized,
}

fn interval_by(
    sample: Sample<'_>,
    method: IntervalMethod,
    confidence: f64,
    support: Support,
    resamples: Resamples,
) -> Option<Interval> {
    assert!(
        confidence > 0.0 && confidence < 1.0,
        "confidence {confidence} outside (0, 1)"
    );
    // A binomial interval exists for one run; a spread needs two.
    let least = if sample.kind() == SampleKind::Proportion {
        1
    } else {
        2
    };
    if !method.fits(sample.kind()) || sample.n() < least {
        return None;
    }
    let estimate = sample.estimate()?;
    let alpha = 1.0 - confidence;
    let raw = match (sample, method) {
        (Sample::Values(values), IntervalMethod::StudentT) => {
            let sd = sample_variance(values)?.sqrt();
            let half = quantiles::student_t(1.0 - alpha / 2.0, values.len() as u64 - 1) * sd
                / (values.len() as f64).sqrt();
            (estimate - half, estimate + half)
        }
        (Sample::Proportion { successes, n }, IntervalMethod::Wilson) => {
            wilson(successes, n, alpha)
        }
        (Sample::Proportion { successes, n }, IntervalMethod::ClopperPearson) => {
            clopper_pearson(successes, n, alpha)
        }
        (
            Sample::Ratio {
                numerators,
                denominators,
            },
            IntervalMethod::Delta,
        ) => {
            let half = delta_half_width(numerators, denominators, estimate, alpha)?;
            (estimate - half, estimate + half)
        }
        (sample, IntervalMethod::BootstrapPercentile | IntervalMethod::BootstrapBca) => {
            let bca = method == IntervalMethod::BootstrapBca;
            let seed = seed_of(sample);
            bootstrap(sample, estimate, alpha, bca, seed, resamples)?.0
        }
        _ => return None,
    };
    let (low, high) = (support.clamp(raw.0), support.clamp(raw.1));
    Some(Interval {
        estimate,
        low,
        high,
        half_width: (raw.1 - raw.0) / 2.0,
        cut: low != raw.0 || high != raw.1,
    })
}

/// Wilson's score interval at level 1 − α.
fn wilson(successes: u64, n: u64, alpha: f64) -> (f64, f64) {
    let z = quantiles::normal(1.0 - alpha / 2.0);
    let (n, p) = (n as f64, successes as f64 / n as f64);
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt();
    // At no or all successes an end is exactly 0 or 1; computed, it is off by a rounding.
    let low = if successes == 0 { 0.0 } else { centre - half };
    let high = if p == 1.0 { 1.0 } else { centre + half };
    (low.max(0.0), high.min(1.0))
}

/// The Clopper–Pearson interval at level 1 − α: beta quantiles, 0 and 1 at the ends.
fn clopper_pearson(successes: u64, n: u64, alpha: f64) -> (f64, f64) {
    let (x, n) = (successes as f64, n as f64);
    let low = if successes == 0 {
        0.0
    } else {
        quantiles::beta(alpha / 2.0, x, n - x + 1.0)
    };
    let high = if successes as f64 == n {
        1.0
    } else {
        quantiles::beta(1.0 - alpha / 2.0, x + 1.0, n - x)
    };
    (low, high)
}

/// The exact one-sided upper bound on a proportion after no success in `n` runs, at
/// `confidence`: 1 − (1 − confidence)^(1/n), every p above it giving no success in n
/// runs with probability below 1 − confidence (≈ 3/n at 95%, the "rule of three";
/// Hanley & Lippman-Hand, JAMA 249(13), 1983). A caption states it beside the two-sided
/// interval, whose upper end at 0 of n uses only half the error.
pub fn zero_of_n_upper_bound(n: u64, confidence: f64) -> f64 {
    assert!(n > 0, "a bound needs runs");
    1.0 - (1.0 - confidence).powf(1.0 / n as f64)
}

/// t(n−1)·se of a ratio of sums, se by the delta method.
fn delta_half_width(y: &[f64], x: &[f64], ratio: f64, alpha: f64) -> Option<f64> {
    let n = y.len();
    let residuals: Vec<f64> = y.iter().zip(x).map(|(y, x)| y - ratio * x).collect();
    let x_mean = compensated_mean(x)?;
    let s2 = residuals.iter().map(|e| e * e).sum::<f64>() / (n - 1) as f64;
    let se = (s2 / n as f64).sqrt() / x_mean.abs();
    Some(quantiles::student_t(1.0 - alpha / 2.0, n as u64 - 1) * se)
}

/// The estimate of `sample` over the runs `picks` (indices into its data, repeats
/// allowed); `None` for a ratio over a zero sum.
fn estimate_of(sample: Sample<'_>, picks: impl Iterator<Item = usize>) -> Option<f64> {
    match sample {
        Sample::Values(v) => {
            let (mut sum, mut count) = (0.0, 0usize);
            for i in picks {
                sum += v[i];
                count += 1;
            }
            Some(sum / count as f64)
        }
        Sample::Ratio {
            numerators,
            denominators,
        } => {
            let (mut y, mut x) = (0.0, 0.0);
            for i in picks {
                y += numerators[i];
                x += denominators[i];
            }
            (x != 0.0).then(|| y / x)
        }
        Sample::Proportion { .. } => None,
    }
}

/// The generator seed of a bootstrap: a hash of the values, so an interval depends on
/// its data only (FNV-1a over the bits, then SplitMix64's finaliser to spread them).
fn seed_of(sample: Sample<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |x: f64| {
        for byte in x.to_bits().to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    match sample {
        Sample::Values(v) => v.iter().copied().for_each(&mut feed),
        Sample::Ratio {
            numerators,
            denominators,
        } => numerators
            .iter()
            .chain(denominators)
            .copied()
            .for_each(&mut feed),
        Sample::Proportion { successes, n } => {
            feed(successes as f64);
            feed(n as f64);
        }
    }
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The percentile or BCa bootstrap interval at level 1 − α from a generator seeded
/// with `seed`, and the resamples it took.
///
/// With [`Resamples::Sized`], the Monte Carlo standard error of each end is read off
/// the sorted replicates: the q quantile of B replicates sits at rank Bq, whose own
/// standard deviation is √(Bq(1 − q)) ranks, so the replicates that many ranks either
/// side span about two standard errors of the end (the order-statistic interval of a
/// quantile; Efron & Tibshirani §19.3 give the same error through the density). While
/// either end's error exceeds [`BOOTSTRAP_MC_ERROR`] of the half-width, the same
/// generator draws as many resamples again.
pub fn bootstrap(
    sample: Sample<'_>,
    estimate: f64,
    alpha: f64,
    bca: bool,
    seed: u64,
    resamples: Resamples,
) -> Option<((f64, f64), usize)> {
    let n = sample.n() as usize;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (first, most) = match resamples {
        Resamples::Fixed(b) => (b, b),
        Resamples::Sized => (BOOTSTRAP_RESAMPLES, BOOTSTRAP_MAX_RESAMPLES),
    };
    let mut replicates: Vec<f64> = Vec::with_capacity(first);
    let mut picks = vec![0usize; n];
    let mut drawn = 0;
    let mut target = first;
    // The jackknife acceleration depends on the data only: computed once.
    let a = if bca { acceleration(sample, n) } else { 0.0 };
    loop {
        while drawn < target {
            for p in picks.iter_mut() {
                *p = rng.random_range(0..n);
            }
            // A resample of a ratio whose denominators are all zero has no estimate.
            if let Some(e) = estimate_of(sample, picks.iter().copied()) {
                replicates.push(e);
            }
            drawn += 1;
        }
        if replicates.is_empty() {
            return None;
        }
        replicates.sort_by(f64::total_cmp);
        let (lo_level, hi_level) = levels(&replicates, estimate, alpha, bca, a);
        let ends = (
            quantile(&replicates, lo_level)?,
            quantile(&replicates, hi_level)?,
        );
        let half = (ends.1 - ends.0) / 2.0;
        let precise = half <= 0.0
            || [lo_level, hi_level]
                .iter()
                .all(|&q| end_error(&replicates, q) <= BOOTSTRAP_MC_ERROR * half);
        if precise || target >= most {
            return Some((ends, drawn));
        }
        target = (2 * target).min(most);
    }
}

/// The levels of the interval's ends among the replicates: α/2 and 1 − α/2, moved by
/// BCa's bias correction and acceleration `a` when `bca`.
fn levels(replicates: &[f64], estimate: f64, alpha: f64, bca: bool, a: f64) -> (f64, f64) {
    let (lo_level, hi_level) = (alpha / 2.0, 1.0 - alpha / 2.0);
    if !bca {
        return (lo_level, hi_level);
    }
    // Bias correction: the share of resampled estimates below the estimate (ties
    // count half), kept inside (0, 1) so its normal quantile is finite.
    let b = replicates.len() as f64;
    let below = replicates.partition_point(|&r| r < estimate) as f64;
    let ties = replicates[below as usize..]
        .iter()
        .take_while(|&&r| r == estimate)
        .count() as f64;
    let share = ((below + ties / 2.0) / b).clamp(0.5 / b, 1.0 - 0.5 / b);
    let z0 = quantiles::normal(share);
    let adjust = |level: f64| {
        let z = quantiles::normal(level);
        let shifted = z0 + (z0 + z) / (1.0 - a * (z0 + z));
        if shifted.is_finite() {
            quantiles::normal_cdf(shifted)
        } else {
            level
        }
    };
    (adjust(lo_level), adjust(hi_level))
}

/// BCa's acceleration from the jackknife: the skew of the leave-one-out estimates
/// (Efron & Tibshirani eq. 14.15); 0 where a leave-one-out estimate does not exist.
fn acceleration(sample: Sample<'_>, n: usize) -> f64 {
    let jack: Vec<f64> = (0..n)
        .filter_map(|i| estimate_of(sample, (0..n).filter(move |&j| j != i)))
        .collect();
    if jack.len() != n {
        return 0.0;
    }
    let mean = jack.iter().sum::<f64>() / n as f64;
    let (mut s2, mut s3) = (0.0, 0.0);
    for j in &jack {
        let d = mean - j;
        s2 += d * d;
        s3 += d * d * d;
    }
    if s2 > 0.0 {
        s3 / (6.0 * s2.powf(1.5))
    } else {
        0.0
    }
}

/// The Monte Carlo standard error of the `q` quantile of the sorted `replicates`: half
/// the span of the replicates one binomial standard deviation of ranks either side.
fn end_error(replicates: &[f64], q: f64) -> f64 {
    let b = replicates.len() as f64;
    let spread = (b * q * (1.0 - q)).sqrt();
    let rank = |r: f64| (r.round().max(0.0) as usize).min(replicates.len() - 1);
    let (lo, hi) = (rank(b * q - spread), rank(b * q + spread));
    (replicates[hi] - replicates[lo]) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact coverage of a proportion interval at p over n runs: the binomial
    /// probability of the successes whose interval holds p.
    fn exact_coverage(method: IntervalMethod, n: u64, p: f64) -> f64 {
        let ln_choose = |k: u64| -> f64 {
            (1..=k)
                .map(|i| ((n - k + i) as f64).ln() - (i as f64).ln())
                .sum()
        };
        (0..=n)
            .filter_map(|x| {
                let i = interval(
                    Sample::Proportion { successes: x, n },
                    method,
                    0.95,
                    Support::UnitInterval,
                )?;
                let pmf =
                    (ln_choose(x) + x as f64 * p.ln() + (n - x) as f64 * (1.0 - p).ln()).exp();
                (i.low <= p && p <= i.high).then_some(pmf)
            })
            .sum()
    }

    /// Brown, Cai & DasGupta (2001) show Wilson's coverage dipping far below nominal
    /// for p near 0; the default proportion interval must not: its exact coverage,
    /// over rare and common p for 5 to 100 runs, stays at or above its nominal 0.95.
    /// (Taking the one-sided bound at 0 of n as the interval's upper end would cost
    /// coverage: its worst case here is 0.927, so the bound goes in the caption.)
    #[test]
    fn the_default_proportion_interval_keeps_its_coverage_for_rare_events() {
        let mut worst_cp: f64 = 1.0;
        let mut worst_wilson: f64 = 1.0;
        for n in [5u64, 10, 20, 40, 100] {
            for k in 1..=400 {
                let p = 0.5 * f64::from(k) / 400.0;
                worst_cp = worst_cp.min(exact_coverage(IntervalMethod::ClopperPearson, n, p));
                worst_wilson = worst_wilson.min(exact_coverage(IntervalMethod::Wilson, n, p));
            }
        }
        assert!(
            worst_cp >= 0.93,
            "Clopper–Pearson's worst coverage {worst_cp}"
        );
        assert!(worst_wilson < 0.90, "Wilson's dip: {worst_wilson}");
    }

    /// The sample standard deviation, over 30 generator seeds, of each end of a
    /// bootstrap interval of `sample`, as a share of the half-width.
    fn end_spread(sample: Sample<'_>, bca: bool, resamples: Resamples) -> (f64, f64) {
        let estimate = sample.estimate().unwrap();
        let ends: Vec<((f64, f64), usize)> = (0..30u64)
            .map(|seed| bootstrap(sample, estimate, 0.05, bca, seed, resamples).unwrap())
            .collect();
        let lows: Vec<f64> = ends.iter().map(|e| e.0.0).collect();
        let highs: Vec<f64> = ends.iter().map(|e| e.0.1).collect();
        let half = (compensated_mean(&highs).unwrap() - compensated_mean(&lows).unwrap()) / 2.0;
        (
            sample_variance(&lows).unwrap().sqrt() / half,
            sample_variance(&highs).unwrap().sqrt() / half,
        )
    }

    /// Measured, not assumed: over 30 seeds, each end of a sized BCa interval varies by
    /// about 2% of the half-width or less (a 30-seed spread is itself uncertain by some
    /// 13%, hence the 3% bound), where 2,000 fixed resamples vary by several times more.
    /// The samples are the cases: the mean of 20 skewed values and the ratio of
    /// sums of 10 runs.
    #[test]
    fn sized_bootstrap_ends_keep_their_monte_carlo_error_within_two_percent() {
        // A skewed sample: mostly near 1, a few large (a partition-driven wait).
        let values: Vec<f64> = (0..20)
            .map(|i| {
                if i % 7 == 3 {
                    12.0 + i as f64
                } else {
                    1.0 + 0.05 * i as f64
                }
            })
            .collect();
        let nums = [3.0, 40.0, 5.0, 7.0, 2.0, 90.0, 4.0, 6.0, 5.0, 8.0];
        let dens = [2.0, 3.0, 4.0, 2.0, 1.0, 5.0, 3.0, 4.0, 2.0, 3.0];
        let ratio = Sample::Ratio {
            numerators: &nums,
            denominators: &dens,
        };
        for (sample, what) in [(Sample::Values(&values), "mean"), (ratio, "ratio")] {
            let (lo, hi) = end_spread(sample, true, Resamples::Sized);
            assert!(
                lo < 0.03 && hi < 0.03,
                "{what}: sized ends vary {lo:.3}, {hi:.3}"
            );
            let (lo2, hi2) = end_spread(sample, true, Resamples::Fixed(BOOTSTRAP_RESAMPLES));
            assert!(
                lo2.max(hi2) > 2.0 * lo.max(hi),
                "{what}: 2,000 resamples vary {lo2:.3}, {hi2:.3}, sized {lo:.3}, {hi:.3}"
            );
        }
    }

    #[test]
    fn a_bootstrap_below_ten_runs_gives_way_to_student_t_or_the_delta_method() {
        let values = [1.0, 2.0, 4.0, 8.0, 3.0];
        let boot = interval(
            Sample::Values(&values),
            IntervalMethod::BootstrapBca,
            0.95,
            Support::NonNegative,
        );
        let t = interval(
            Sample::Values(&values),
            IntervalMethod::StudentT,
            0.95,
            Support::NonNegative,
        );
        assert_eq!(boot, t);
        assert_eq!(
            IntervalMethod::BootstrapPercentile.used_for(9, SampleKind::Ratio),
            IntervalMethod::Delta
        );
        assert_eq!(
            IntervalMethod::BootstrapBca.used_for(10, SampleKind::Values),
            IntervalMethod::BootstrapBca
        );
    }

    #[test]
    fn no_success_in_n_runs_bounds_p_by_the_rule_of_three() {
        // 1 − 0.05^(1/100) = 0.0295…, about 3/100; at n = 1 it is the level itself.
        assert!((zero_of_n_upper_bound(100, 0.95) - 0.029_513).abs() < 1e-6);
        assert!((zero_of_n_upper_bound(1, 0.95) - 0.95).abs() < 1e-12);
        // Exact: at p on the bound, no success in n runs has probability 1 − confidence.
        for n in [5u64, 20, 300] {
            let p = zero_of_n_upper_bound(n, 0.9);
            assert!(((1.0 - p).powf(n as f64) - 0.1).abs() < 1e-12);
        }
    }

    const NN: Support = Support::NonNegative;

    #[test]
    fn t_interval_matches_the_textbook_and_is_cut_at_zero() {
        // 1, 2, 3, 4, 5: mean 3, s = √2.5, t(4) = 2.776445.
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        let i = interval(Sample::Values(&v), IntervalMethod::StudentT, 0.95, NN).unwrap();
        let half = 2.776_445_105_197_8 * 2.5_f64.sqrt() / 5f64.sqrt();
        assert!((i.half_width - half).abs() < 1e-9);
        assert!((i.low - (3.0 - half)).abs() < 1e-9 && !i.cut);
        // A heavy tail: the uncut interval reaches below zero, the cut one does not.
        let v = [0.0, 0.0, 0.0, 0.0, 15.9];
        let i = interval(Sample::Values(&v), IntervalMethod::StudentT, 0.95, NN).unwrap();
        assert_eq!(i.low, 0.0);
        assert!(i.cut && i.high > 15.9 / 5.0);
        let free = interval(
            Sample::Values(&v),
            IntervalMethod::StudentT,
            0.95,
            Support::Any,
        );
        assert!(free.unwrap().low < 0.0);
        assert!(interval(Sample::Values(&[2.0]), IntervalMethod::StudentT, 0.95, NN).is_none());
    }

    #[test]
    fn wilson_and_clopper_pearson_match_published_values() {
        // Brown, Cai & DasGupta's example values, recomputed: x = 0 of n = 20.
        let p = Sample::Proportion {
            successes: 0,
            n: 20,
        };
        let w = interval(p, IntervalMethod::Wilson, 0.95, Support::UnitInterval).unwrap();
        assert_eq!(w.low, 0.0);
        // Wilson's upper end at x = 0: z²/(n + z²).
        let z2 = 1.959_963_984_540_054_f64.powi(2);
        assert!((w.high - z2 / (20.0 + z2)).abs() < 1e-12, "{}", w.high);
        let cp = interval(
            p,
            IntervalMethod::ClopperPearson,
            0.95,
            Support::UnitInterval,
        )
        .unwrap();
        // At x = 0 the exact upper end solves (1 − p)^n = α/2.
        assert!((cp.high - (1.0 - 0.025_f64.powf(1.0 / 20.0))).abs() < 1e-12);
        let all = Sample::Proportion {
            successes: 20,
            n: 20,
        };
        let cp = interval(
            all,
            IntervalMethod::ClopperPearson,
            0.95,
            Support::UnitInterval,
        );
        assert_eq!(cp.unwrap().high, 1.0);
        // Clopper–Pearson contains Wilson here (it is conservative).
        let mid = Sample::Proportion {
            successes: 7,
            n: 30,
        };
        let w = interval(mid, IntervalMethod::Wilson, 0.95, Support::UnitInterval).unwrap();
        let cp = interval(
            mid,
            IntervalMethod::ClopperPearson,
            0.95,
            Support::UnitInterval,
        );
        let cp = cp.unwrap();
        assert!(cp.low < w.low && cp.high > w.high);
        assert!(w.low < 7.0 / 30.0 && 7.0 / 30.0 < w.high);
    }

    #[test]
    fn delta_interval_of_a_ratio_is_exact_for_proportional_data() {
        // y = 3x exactly: no residual, no width.
        let x = [1.0, 2.0, 5.0, 4.0];
        let y = x.map(|x| 3.0 * x);
        let s = Sample::Ratio {
            numerators: &y,
            denominators: &x,
        };
        let i = interval(s, IntervalMethod::Delta, 0.95, NN).unwrap();
        assert_eq!((i.estimate, i.low, i.high), (3.0, 3.0, 3.0));
        // Against the formula by hand: R = 10/10 = 1, residuals 1, −1, 1, −1.
        let (x, y) = ([2.0, 3.0, 2.0, 3.0], [3.0, 2.0, 3.0, 2.0]);
        let s = Sample::Ratio {
            numerators: &y,
            denominators: &x,
        };
        let i = interval(s, IntervalMethod::Delta, 0.95, NN).unwrap();
        let se = (4.0 / 3.0 / 4.0_f64).sqrt() / 2.5;
        assert!((i.half_width - quantiles::student_t(0.975, 3) * se).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_intervals_stay_in_the_range_of_the_data_and_repeat() {
        let v = [0.0, 0.0, 0.0, 0.0, 15.9];
        for m in [
            IntervalMethod::BootstrapPercentile,
            IntervalMethod::BootstrapBca,
        ] {
            let i = interval(Sample::Values(&v), m, 0.95, NN).unwrap();
            assert!(
                i.low >= 0.0 && i.high <= 15.9 && i.low <= i.estimate,
                "{m:?} {i:?}"
            );
            let again = interval(Sample::Values(&v), m, 0.95, NN).unwrap();
            assert_eq!(i, again, "seeded from the data");
        }
        // Constant data: a point.
        let c = [2.0; 6];
        let i = interval(Sample::Values(&c), IntervalMethod::BootstrapBca, 0.95, NN).unwrap();
        assert_eq!((i.low, i.high), (2.0, 2.0));
        // Symmetric data: BCa close to percentile, both close to the t interval.
        let v: Vec<f64> = (0..40).map(|i| f64::from(i % 10)).collect();
        let t = interval(Sample::Values(&v), IntervalMethod::StudentT, 0.95, NN).unwrap();
        let p = interval(
            Sample::Values(&v),
            IntervalMethod::BootstrapPercentile,
            0.95,
            NN,
        );
        let b = interval(Sample::Values(&v), IntervalMethod::BootstrapBca, 0.95, NN);
        for i in [p.unwrap(), b.unwrap()] {
            assert!(
                (i.low - t.low).abs() < 0.15 && (i.high - t.high).abs() < 0.15,
                "{i:?} {t:?}"
            );
        }
    }

    #[test]
    fn methods_refuse_samples_they_do_not_fit() {
        let v = [1.0, 2.0];
        assert!(interval(Sample::Values(&v), IntervalMethod::Wilson, 0.95, NN).is_none());
        let p = Sample::Proportion { successes: 1, n: 4 };
        assert!(interval(p, IntervalMethod::StudentT, 0.95, NN).is_none());
        for m in IntervalMethod::ALL {
            assert_eq!(IntervalMethod::from_name(m.name()), Some(m));
        }
    }
}
