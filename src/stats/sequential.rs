//! When a point of a sweep has run enough: the sequential procedure for a precision
//! target.
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
//! **Coverage caveat.** Stopping when an interval first looks narrow favours samples
//! whose spread happens to be small, so the final interval covers the true mean less
//! often than its nominal level, most of all when `min` is small and the metric
//! skewed. Law & Kelton report coverage close to nominal for γ ≤ 0.15 with normal-like
//! data; `tests/interval_coverage.rs` measures it here (the book's statistics page has the numbers).
//! Raising `min` (10 or more) is the remedy.

use super::Interval;

/// How narrow an interval must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// Relative precision γ > 0: stop when δ / |x̄| ≤ γ / (1 + γ).
    Relative(f64),
    /// Absolute precision β > 0, in the metric's unit: stop when δ ≤ β.
    Absolute(f64),
}

impl Target {
    /// Whether `interval` is precise enough.
    pub fn met_by(self, interval: &Interval) -> bool {
        match self {
            Target::Relative(gamma) => {
                interval.half_width <= gamma / (1.0 + gamma) * interval.estimate.abs()
            }
            Target::Absolute(beta) => interval.half_width <= beta,
        }
    }

    /// The achieved precision in this target's terms: δ / |x̄| (relative; infinite at a
    /// zero mean) or δ.
    pub fn achieved(self, interval: &Interval) -> f64 {
        match self {
            Target::Relative(_) if interval.estimate == 0.0 => {
                if interval.half_width == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            }
            Target::Relative(_) => interval.half_width / interval.estimate.abs(),
            Target::Absolute(_) => interval.half_width,
        }
    }

    /// The bound [`Self::achieved`] is compared with: γ / (1 + γ), or β.
    pub fn bound(self) -> f64 {
        match self {
            Target::Relative(gamma) => gamma / (1.0 + gamma),
            Target::Absolute(beta) => beta,
        }
    }
}

/// A sweep's precision target (`[precision]` in a spec).
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// Metrics (runs-table columns) that must each meet the target.
    pub metrics: Vec<String>,
    /// How narrow.
    pub target: Target,
    /// Confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Target the paired difference against this algorithm (a spec algorithm) instead
    /// of each algorithm's own mean.
    pub paired: Option<String>,
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
        assert_eq!(t.achieved(&interval(0.0, 0.0)), 0.0);
        assert!(
            t.met_by(&interval(-100.0, 4.7)),
            "the mean's size, not its sign"
        );
        let a = Target::Absolute(0.002);
        assert!(a.met_by(&interval(5.0, 0.002)) && !a.met_by(&interval(5.0, 0.0021)));
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
