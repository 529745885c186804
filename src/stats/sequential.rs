//! When a point of a sweep has run enough: the sequential procedure for a precision
//! target, and the guards that keep it from stopping early on a heavy tail.
//!
//! Law & Kelton ("Simulation Modeling and Analysis", 3rd ed. 2000, §9.4.1) add
//! replications to a point until its confidence interval is narrow enough: for a
//! relative precision γ, until the half-width δ satisfies δ / |x̄| ≤ γ′ = γ / (1 + γ).
//! The correction γ′ makes the *actual* relative error |x̄ − μ| / |μ| at most γ with
//! the interval's confidence: from |x̄ − μ| ≤ γ′|x̄| ≤ γ′(|x̄ − μ| + |μ|) follows
//! |x̄ − μ| ≤ γ′/(1 − γ′)·|μ| = γ|μ|. An absolute target β stops when δ ≤ β.
//!
//! linkrev adds runs a batch at a time (every algorithm of the point, so paired
//! comparisons keep their pairs), from `min` up to `max`, and decides from the stored
//! runs only: the first `n` replications of the point, never more, so the decision
//! after a batch is the same whichever process or wave makes it.
//!
//! **Why the published rule is not the default.** Stopping when an interval first looks
//! narrow favours samples whose spread happens to be small. Law & Kelton report
//! coverage close to nominal for γ ≤ 0.15 with normal-like data, and
//! `tests/interval_coverage.rs` confirms it on textbook distributions. linkrev's own
//! metrics are not normal-like: a low-load waiting time is mostly small with rare huge
//! values (a request waits out a partition), and a few runs that have not met a huge
//! value yet look precise. Measured on real replications (`linkrev bench coverage`,
//! the book's statistics page), the first-look rule covers far less than its nominal
//! level there. [`StoppingRule::Guarded`], the default, stops a point only when
//! three things hold:
//!
//! 1. **Enough runs for the metric.** A family declares the fewest runs a metric is
//!    judged on ([`crate::family::Metric::least_runs`]); a spec's `min` may only raise
//!    it. A fixed first stage large enough to see the rare values is the classical
//!    defence of a two-stage procedure (Stein 1945; Law & Kelton §9.4.1 ask for
//!    n₀ ≥ 10 even for normal-like data).
//! 2. **The target at consecutive looks** ([`CONSECUTIVE_LOOKS`]): the point must meet
//!    the target at one look and again after the next batch. A sample that met it by
//!    the luck of a small spread rarely keeps it when a batch is added; Pawlikowski
//!    ("Steady-state simulation of queueing processes: a survey of problems and
//!    solutions", ACM Computing Surveys 22(2), 1990) warns that sequential stopping
//!    rules stop prematurely and recommends against trusting a single look.
//! 3. **A sample no more skewed than its size can carry** ([`skewness`],
//!    [`cochran_runs`]): Cochran's rule for the normal approximation of a mean,
//!    n > 25·g₁² with g₁ the skewness (Cochran, "Sampling Techniques", 3rd ed. 1977,
//!    §2.15). A sample in which one run holds a share s of Σ(xᵢ − x̄)² has g₁ of about
//!    s^{3/2}·√n, so the rule holds back any sample one run holds more than about a
//!    third of ([`tail_share`], the ratio Embrechts, Klüppelberg & Mikosch, "Modelling
//!    Extremal Events", 1997, §6.2.6, use to diagnose an infinite variance), at every
//!    n; a skewed but finite-variance sample (exponential, g₁ = 2) passes once n > 100,
//!    where its t interval keeps its level. The first version of this guard compared
//!    the share with Grubbs's critical value for normal data; that bound shrinks like
//!    log n / n, so it held back every skewed metric at large n, the well-behaved
//!    ones too (messages per CS entry at 1,000 runs, ±0.5%).
//!
//! A metric bounded in [0, 1] that the third check holds back still meets an
//! interval target when the empirical Bernstein interval, which needs no normal
//! approximation, meets it ([`met_without_normality`]): a fraction of time that is
//! mostly zero with a rare long stretch is skewed at any n, and that interval holds
//! whatever the skew.
//!
//! A point that reaches `max` without passing all three stops "short", and says which
//! guard held it back. [`StoppingRule::FirstLook`] keeps the published rule for
//! comparison and for reproducing older sweeps.
use super::Interval;
use std::fmt;

/// How many looks in a row must meet the target under [`StoppingRule::Guarded`].
pub const CONSECUTIVE_LOOKS: u32 = 2;

/// Cochran's factor: a mean's normal approximation needs n > this × g₁².
pub const COCHRAN_FACTOR: f64 = 25.0;

/// Which stopping rule a sequential sweep applies (`[precision] rule`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoppingRule {
    /// The target at [`CONSECUTIVE_LOOKS`] looks in a row, with each metric's least
    /// runs and the skewness guard (module docs).
    #[default]
    Guarded,
    /// Law & Kelton's rule as published: stop at the first look that meets the target.
    FirstLook,
}

impl StoppingRule {
    /// Every rule, default first.
    pub const ALL: [StoppingRule; 2] = [StoppingRule::Guarded, StoppingRule::FirstLook];

    /// The name in specs (`guarded`, `first-look`).
    pub fn name(self) -> &'static str {
        match self {
            StoppingRule::Guarded => "guarded",
            StoppingRule::FirstLook => "first-look",
        }
    }

    /// The rule named `name`, if any.
    pub fn from_name(name: &str) -> Option<StoppingRule> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Looks in a row that must meet the target.
    pub fn looks(self) -> u32 {
        match self {
            StoppingRule::Guarded => CONSECUTIVE_LOOKS,
            StoppingRule::FirstLook => 1,
        }
    }
}

/// Why an interval that is narrow enough does not count as meeting the target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeldBack {
    /// Fewer runs than the metric is judged on.
    FewRuns {
        /// The runs it had.
        n: usize,
        /// The fewest its family allows.
        least: u32,
    },
    /// Too skewed for its size: n ≤ 25·g₁² (Cochran's rule, [`cochran_runs`]).
    Skewed {
        /// The sample's skewness g₁.
        skewness: f64,
        /// The runs Cochran's rule asks for: the least n above 25·g₁².
        needs: u64,
        /// The largest squared deviation's share of their sum ([`tail_share`]).
        share: f64,
    },
}

impl fmt::Display for HeldBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HeldBack::FewRuns { n, least } => {
                write!(
                    f,
                    "{n} runs, fewer than the {least} this metric is judged on"
                )
            }
            HeldBack::Skewed {
                skewness,
                needs,
                share,
            } => write!(
                f,
                "skewness {skewness:.1} asks for more than 25·g₁² = {needs} runs (Cochran); \
                 one run holds {:.0}% of the spread",
                100.0 * share,
            ),
        }
    }
}

/// The largest squared deviation's share of Σ(xᵢ − x̄)²: 1/n for a sample with every
/// deviation alike, near 1 when one value holds the spread; `None` below 3 values or
/// without spread.
pub fn tail_share(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let mean = super::moments::compensated_mean(values)?;
    let (mut largest, mut sum) = (0.0_f64, 0.0_f64);
    for x in values {
        let d2 = (x - mean) * (x - mean);
        largest = largest.max(d2);
        sum += d2;
    }
    (sum > 0.0).then(|| largest / sum)
}

/// The sample skewness g₁ = m₃ / m₂^{3/2}, with mₖ = Σ(xᵢ − x̄)ᵏ / n (the moment
/// estimator Cochran's rule reads); `None` below 3 values or without spread.
pub fn skewness(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let mean = super::moments::compensated_mean(values)?;
    let n = values.len() as f64;
    let (mut m2, mut m3) = (0.0_f64, 0.0_f64);
    for x in values {
        let d = x - mean;
        m2 += d * d;
        m3 += d * d * d;
    }
    let (m2, m3) = (m2 / n, m3 / n);
    (m2 > 0.0).then(|| m3 / m2.powf(1.5))
}

/// The runs Cochran's rule asks of a sample with skewness `g1`: the least whole n
/// with n > 25·g₁².
pub fn cochran_runs(g1: f64) -> u64 {
    let bound = COCHRAN_FACTOR * g1 * g1;
    if bound.is_finite() {
        bound.floor() as u64 + 1
    } else {
        u64::MAX
    }
}

/// The half-width of the empirical Bernstein interval for the mean of `values` in
/// [0, 1] (Maurer & Pontil, "Empirical Bernstein bounds and sample variance
/// penalization", COLT 2009, Theorem 4; two-sided at `confidence` from the two
/// one-sided bounds at δ/2 each): √(2·V·ln(4/δ)/n) + 7·ln(4/δ)/(3(n − 1)), with V the
/// unbiased sample variance and δ = 1 − confidence. It holds for any distribution on
/// [0, 1], however skewed; `None` below 2 values.
pub fn bernstein_half_width(values: &[f64], confidence: f64) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = super::moments::compensated_mean(values)?;
    let variance = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let log = (4.0 / (1.0 - confidence)).ln();
    Some((2.0 * variance * log / n).sqrt() + 7.0 * log / (3.0 * (n - 1.0)))
}

/// Whether a sample the skewness guard holds back meets its target anyway by an
/// interval that needs no normal approximation: for a metric in [0, 1] (a fraction
/// of time, mostly zero with a rare long stretch), the empirical Bernstein interval
/// ([`bernstein_half_width`]) no wider than `allowed`.
pub fn met_without_normality(
    values: &[f64],
    support: super::Support,
    confidence: f64,
    allowed: f64,
) -> bool {
    support == super::Support::UnitInterval
        && bernstein_half_width(values, confidence).is_some_and(|h| h <= allowed)
}

/// Whether an interval of `sample` is not trusted to keep its level (a figure marks it
/// rough): fewer runs than `least`, or a sample too skewed for its size (for a
/// ratio of sums, its residuals yᵢ − R·xᵢ, whose spread the delta method reads).
/// Never for a proportion.
pub fn rough(sample: super::Sample<'_>, least: u32) -> bool {
    match sample {
        super::Sample::Values(values) => held_back(values, least).is_some(),
        super::Sample::Ratio {
            numerators,
            denominators,
        } => {
            let Some(ratio) = sample.estimate() else {
                return false;
            };
            let residuals: Vec<f64> = numerators
                .iter()
                .zip(denominators)
                .map(|(y, x)| y - ratio * x)
                .collect();
            held_back(&residuals, least).is_some()
        }
        super::Sample::Proportion { .. } => false,
    }
}

/// Whether `values` pass the guarded rule's checks for a metric judged on at least
/// `least` runs: `None` if they do, or why not.
pub fn held_back(values: &[f64], least: u32) -> Option<HeldBack> {
    if values.len() < least as usize {
        return Some(HeldBack::FewRuns {
            n: values.len(),
            least,
        });
    }
    let g1 = skewness(values)?;
    let needs = cochran_runs(g1);
    ((values.len() as u64) < needs).then(|| HeldBack::Skewed {
        skewness: g1,
        needs,
        share: tail_share(values).unwrap_or(0.0),
    })
}

/// How narrow an interval must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// Relative precision γ > 0: stop when δ / |x̄| ≤ γ / (1 + γ).
    Relative(f64),
    /// Absolute precision β > 0, in the metric's unit: stop when δ ≤ β.
    Absolute(f64),
    /// Either of the two, whichever allows more: δ ≤ max(γ/(1+γ)·|x̄|, β). For a metric
    /// large for some algorithms and near zero for others (unnecessary elections): a
    /// relative target with an absolute floor, as numerical tolerances pair rtol with
    /// atol.
    Either {
        /// γ.
        relative: f64,
        /// β.
        absolute: f64,
    },
}

impl Target {
    /// The widest half-width the target allows around a mean of `estimate`.
    pub fn allowed(self, estimate: f64) -> f64 {
        let relative = |gamma: f64| gamma / (1.0 + gamma) * estimate.abs();
        match self {
            Target::Relative(gamma) => relative(gamma),
            Target::Absolute(beta) => beta,
            Target::Either {
                relative: g,
                absolute: b,
            } => relative(g).max(b),
        }
    }

    /// Whether `interval` is precise enough.
    pub fn met_by(self, interval: &Interval) -> bool {
        interval.half_width <= self.allowed(interval.estimate)
    }

    /// How far an interval of half-width `half_width` around `estimate` is from the
    /// target: `half_width` over [`Self::allowed`], at most 1 when met. Metrics with
    /// different targets compare on this scale.
    pub fn share(self, estimate: f64, half_width: f64) -> f64 {
        let allowed = self.allowed(estimate);
        if half_width == 0.0 {
            0.0
        } else if allowed > 0.0 {
            half_width / allowed
        } else {
            f64::INFINITY
        }
    }

    /// An interval's precision in the target's terms: "±4.1%" of the mean for a
    /// relative target, the half-width "±0.0040" for an absolute one, both for
    /// either; "no interval" for an infinite half-width.
    pub fn format(self, estimate: f64, half_width: f64) -> String {
        if !half_width.is_finite() {
            return "no interval".to_string();
        }
        let percent = || {
            if estimate == 0.0 {
                "±∞%".to_string()
            } else {
                format!("±{:.1}%", 100.0 * half_width / estimate.abs())
            }
        };
        match self {
            Target::Relative(_) => percent(),
            Target::Absolute(_) => format!("±{half_width:.4}"),
            Target::Either { .. } => format!("±{half_width:.4} ({})", percent()),
        }
    }

    /// The target as a spec states it: "±5%", "±0.01", "±10% or ±1".
    pub fn words(self) -> String {
        match self {
            Target::Relative(gamma) => format!("±{}%", 100.0 * gamma),
            Target::Absolute(beta) => format!("±{beta}"),
            Target::Either { relative, absolute } => {
                format!("±{}% or ±{absolute}", 100.0 * relative)
            }
        }
    }
}

/// One metric a point must bring to its own target: a relative one for a mean away
/// from zero, an absolute one (in the metric's unit) for a proportion or a mean near
/// zero, where a relative half-width grows without bound.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricTarget {
    /// The metric (a runs-table column).
    pub metric: String,
    /// How narrow its intervals must be.
    pub target: Target,
}

/// A sweep's precision target (`[precision]` in a spec).
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// The metrics (runs-table columns) that must each meet their target, in the
    /// spec's order.
    pub targets: Vec<MetricTarget>,
    /// Confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Target the paired difference against this algorithm (a spec algorithm) instead
    /// of each algorithm's own mean.
    pub paired: Option<String>,
    /// When a point that meets the target may stop.
    pub rule: StoppingRule,
}

impl Precision {
    /// The targeted metrics' names, in order.
    pub fn metrics(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(|t| t.metric.as_str())
    }
}

/// How many replications a point may have, and how they grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replications {
    /// Replications every point gets.
    pub min: u32,
    /// Replications no point exceeds.
    pub max: u32,
    /// Replications added at a time to a point short of its target.
    pub batch: u32,
}

impl Replications {
    /// A fixed count: `min == max`.
    pub fn fixed(n: u32) -> Replications {
        Replications {
            min: n,
            max: n,
            batch: 1,
        }
    }

    /// Whether the count can grow.
    pub fn is_sequential(&self) -> bool {
        self.min < self.max
    }

    /// The next count after `n` for a point short of its target, `None` at `max`.
    pub fn next(&self, n: u32) -> Option<u32> {
        (n < self.max).then(|| n.saturating_add(self.batch).min(self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, half_width: f64) -> Interval {
        Interval {
            estimate,
            low: estimate - half_width,
            high: estimate + half_width,
            half_width,
            cut: false,
        }
    }

    #[test]
    fn relative_target_uses_the_corrected_gamma() {
        // γ = 0.05: γ′ = 0.047619…, so 4.7% passes and 4.9% does not.
        let t = Target::Relative(0.05);
        assert!(t.met_by(&interval(100.0, 4.7)));
        assert!(!t.met_by(&interval(100.0, 4.9)));
        assert!(!t.met_by(&interval(0.0, 0.1)));
        assert!(t.met_by(&interval(0.0, 0.0)));
        assert!(
            t.met_by(&interval(-100.0, 4.7)),
            "the mean's size, not its sign"
        );
        let a = Target::Absolute(0.002);
        assert!(a.met_by(&interval(5.0, 0.002)) && !a.met_by(&interval(5.0, 0.0021)));
        // Either: the relative bound far from zero, the absolute floor near it.
        let e = Target::Either {
            relative: 0.1,
            absolute: 1.0,
        };
        assert!(e.met_by(&interval(100.0, 9.0)) && !e.met_by(&interval(100.0, 9.2)));
        assert!(e.met_by(&interval(0.5, 1.0)) && !e.met_by(&interval(0.5, 1.01)));
        assert_eq!(t.share(100.0, 0.05 / 1.05 * 100.0 / 2.0), 0.5);
        assert_eq!(t.share(0.0, 0.1), f64::INFINITY);
        assert_eq!(t.share(0.0, 0.0), 0.0);
        assert_eq!(t.format(100.0, 4.7), "±4.7%");
        assert_eq!(a.format(5.0, 0.0021), "±0.0021");
        assert_eq!(e.format(0.5, 0.25), "±0.2500 (±50.0%)");
        assert_eq!(a.format(5.0, f64::INFINITY), "no interval");
        assert_eq!(
            (t.words(), a.words(), e.words()),
            (
                "±5%".to_string(),
                "±0.002".to_string(),
                "±10% or ±1".to_string()
            )
        );
    }

    #[test]
    fn the_tail_share_is_the_largest_squared_deviations_part() {
        assert_eq!(tail_share(&[1.0, 2.0]), None);
        assert_eq!(tail_share(&[4.0, 4.0, 4.0]), None);
        // Deviations −1, 0, 1: shares 1/2, 0, 1/2.
        assert_eq!(tail_share(&[1.0, 2.0, 3.0]), Some(0.5));
        // One value far out: deviations (−1, −1, −1, 3) squared: 9 of 12.
        assert_eq!(tail_share(&[0.0, 0.0, 0.0, 4.0]), Some(0.75));
    }

    /// Skewness against values worked by hand, and Cochran's count: an exponential
    /// sample's g₁ = 2 asks for 101 runs.
    #[test]
    fn skewness_and_cochrans_count() {
        assert_eq!(skewness(&[1.0, 2.0]), None);
        assert_eq!(skewness(&[3.0, 3.0, 3.0]), None);
        assert_eq!(skewness(&[1.0, 2.0, 3.0]), Some(0.0));
        // Deviations (−1, −1, −1, 3): m₂ = 3, m₃ = 6, g₁ = 6 / 3^{3/2} = 2/√3.
        let g = skewness(&[0.0, 0.0, 0.0, 4.0]).unwrap();
        assert!((g - 2.0 / 3.0_f64.sqrt()).abs() < 1e-12, "{g}");
        assert!(skewness(&[0.0, 4.0, 4.0, 4.0]).unwrap() < 0.0);
        assert_eq!(cochran_runs(2.0), 101);
        assert_eq!(cochran_runs(0.0), 1);
        assert_eq!(cochran_runs(f64::INFINITY), u64::MAX);
    }

    #[test]
    fn a_lone_outlier_holds_a_point_back_and_a_few_runs_do_too() {
        let mut values = vec![1.0, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98, 1.01, 0.99, 1.0];
        assert_eq!(held_back(&values, 10), None);
        assert!(matches!(
            held_back(&values, 20),
            Some(HeldBack::FewRuns { n: 10, least: 20 })
        ));
        values.push(30.0);
        match held_back(&values, 10) {
            Some(HeldBack::Skewed {
                skewness,
                needs,
                share,
            }) => {
                assert!(
                    skewness > 2.5 && needs > 11 && share > 0.9,
                    "{skewness} {share}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// The bound worked by hand, and its use: a [0, 1] sample of 999 zeros and one
    /// 0.5, which no skewness rule lets pass, meets ±0.02 without normality and a
    /// metric that is not bounded does not.
    #[test]
    fn bernstein_bounds_a_skewed_fraction() {
        let values = [0.0, 1.0, 0.0, 1.0];
        // V = 1/3, ln(4/0.05) = ln 80.
        let log = 80.0_f64.ln();
        let expected = (2.0 / 3.0 * log / 4.0).sqrt() + 7.0 * log / 9.0;
        assert!((bernstein_half_width(&values, 0.95).unwrap() - expected).abs() < 1e-12);
        assert_eq!(bernstein_half_width(&[0.3], 0.95), None);
        let mut rare = vec![0.0; 999];
        rare.push(0.5);
        assert!(matches!(held_back(&rare, 2), Some(HeldBack::Skewed { .. })));
        let unit = super::super::Support::UnitInterval;
        assert!(met_without_normality(&rare, unit, 0.95, 0.02));
        assert!(!met_without_normality(&rare, unit, 0.95, 0.005));
        assert!(!met_without_normality(
            &rare,
            super::super::Support::NonNegative,
            0.95,
            0.02
        ));
    }

    #[test]
    fn rules_are_named_as_in_specs() {
        for rule in StoppingRule::ALL {
            assert_eq!(StoppingRule::from_name(rule.name()), Some(rule));
        }
        assert_eq!(StoppingRule::default(), StoppingRule::Guarded);
        assert_eq!(StoppingRule::Guarded.looks(), 2);
        assert_eq!(StoppingRule::FirstLook.looks(), 1);
    }

    #[test]
    fn replications_grow_by_batches_up_to_max() {
        let r = Replications {
            min: 5,
            max: 12,
            batch: 5,
        };
        assert_eq!(r.next(5), Some(10));
        assert_eq!(r.next(10), Some(12));
        assert_eq!(r.next(12), None);
        assert!(!Replications::fixed(30).is_sequential());
    }
}
