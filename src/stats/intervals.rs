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

/// Resampled estimates behind a bootstrap interval. 2,000 keeps the Monte-Carlo error of
/// a 2.5% quantile well below the interval's own width (Efron & Tibshirani ch. 19
/// suggest 1,000 or more for percentile intervals).
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

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

    /// Words for a caption: "Student-t", "bootstrap BCa (2,000 resamples)", ….
    pub fn describe(self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "Student-t",
            IntervalMethod::BootstrapPercentile => "bootstrap percentile (2,000 resamples)",
            IntervalMethod::BootstrapBca => "bootstrap BCa (2,000 resamples)",
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
/// proportion needs one), a ratio
/// whose denominators sum to zero, or a method that does not fit the sample's kind
/// (specs are checked against [`IntervalMethod::fits`] before any data is read).
pub fn interval(
    sample: Sample<'_>,
    method: IntervalMethod,
    confidence: f64,
    support: Support,
) -> Option<Interval> {
    interval_resampled(sample, method, confidence, support, BOOTSTRAP_RESAMPLES)
}

/// [`interval`] with `resamples` bootstrap resamples instead of
/// [`BOOTSTRAP_RESAMPLES`]: coverage simulations run thousands of intervals and can
/// afford fewer per interval.
pub fn interval_resampled(
    sample: Sample<'_>,
    method: IntervalMethod,
    confidence: f64,
    support: Support,
    resamples: usize,
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
            bootstrap(sample, estimate, alpha, (bca, resamples.max(1)))?
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

/// The percentile or BCa bootstrap interval at level 1 − α.
fn bootstrap(
    sample: Sample<'_>,
    estimate: f64,
    alpha: f64,
    (bca, resamples): (bool, usize),
) -> Option<(f64, f64)> {
    let n = sample.n() as usize;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed_of(sample));
    let mut replicates: Vec<f64> = Vec::with_capacity(resamples);
    let mut picks = vec![0usize; n];
    for _ in 0..resamples {
        for p in picks.iter_mut() {
            *p = rng.random_range(0..n);
        }
        // A resample of a ratio whose denominators are all zero has no estimate.
        if let Some(e) = estimate_of(sample, picks.iter().copied()) {
            replicates.push(e);
        }
    }
    if replicates.is_empty() {
        return None;
    }
    replicates.sort_by(f64::total_cmp);
    let (mut lo_level, mut hi_level) = (alpha / 2.0, 1.0 - alpha / 2.0);
    if bca {
        // Bias correction: the share of resampled estimates below the estimate (ties
        // count half), kept inside (0, 1) so its normal quantile is finite.
        let b = replicates.len() as f64;
        let below = replicates.iter().filter(|&&r| r < estimate).count() as f64;
        let ties = replicates.iter().filter(|&&r| r == estimate).count() as f64;
        let share = ((below + ties / 2.0) / b).clamp(0.5 / b, 1.0 - 0.5 / b);
        let z0 = quantiles::normal(share);
        // Acceleration from the jackknife: the skew of the leave-one-out estimates.
        let jack: Vec<f64> = (0..n)
            .filter_map(|i| estimate_of(sample, (0..n).filter(move |&j| j != i)))
            .collect();
        let a = if jack.len() == n {
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
        } else {
            0.0
        };
        let adjust = |level: f64| {
            let z = quantiles::normal(level);
            let shifted = z0 + (z0 + z) / (1.0 - a * (z0 + z));
            if shifted.is_finite() {
                quantiles::normal_cdf(shifted)
            } else {
                level
            }
        };
        lo_level = adjust(lo_level);
        hi_level = adjust(hi_level);
    }
    Some((
        quantile(&replicates, lo_level)?,
        quantile(&replicates, hi_level)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
