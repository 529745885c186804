//! Many intervals or tests at once: simultaneous intervals over a figure's points and
//! Holm's step-down procedure for a paired figure's "A below B at k of m points".
//!
//! A figure of m points with a 95% interval each invites reading them together ("RL
//! waits less at every rate"), but the chance that all m hold is only about 0.95^m.
//! Bonferroni's inequality makes all m hold with probability at least 1 − α when each
//! is drawn at 1 − α/m; Šidák's level (1 − α)^(1/m) is exact for independent
//! intervals, and the points of a figure are independent replications. Holm's
//! procedure (Holm, Scand. J. Statist. 6(2), 1979) tests m hypotheses with family-wise
//! error at most α and rejects at least as many as Bonferroni.

use super::quantiles;
use serde::{Deserialize, Serialize};

/// How a figure's intervals are made to hold together (`simultaneous` in figure specs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Simultaneous {
    /// Each interval at 1 − α/m.
    Bonferroni,
    /// Each interval at (1 − α)^(1/m).
    Sidak,
}

impl Simultaneous {
    /// The level each of `m` ≥ 1 intervals is drawn at so that all hold together with
    /// probability `level`.
    pub fn per_interval(self, level: f64, m: usize) -> f64 {
        let m = m.max(1) as f64;
        match self {
            Simultaneous::Bonferroni => 1.0 - (1.0 - level) / m,
            Simultaneous::Sidak => level.powf(1.0 / m),
        }
    }

    /// The name for captions.
    pub fn name(self) -> &'static str {
        match self {
            Simultaneous::Bonferroni => "Bonferroni",
            Simultaneous::Sidak => "Šidák",
        }
    }
}

/// The two-sided p-value of a one-sample t test of mean 0, from the sample's mean,
/// standard deviation and size (a paired t test on the differences); `None` below two
/// values. Zero spread gives 0 for a nonzero mean and 1 for a zero one.
pub fn t_test_p_value(mean: f64, sd: f64, n: u64) -> Option<f64> {
    if n < 2 || !mean.is_finite() || !sd.is_finite() {
        return None;
    }
    if sd == 0.0 {
        return Some(if mean == 0.0 { 1.0 } else { 0.0 });
    }
    let t = mean / (sd / (n as f64).sqrt());
    Some(2.0 * (1.0 - quantiles::student_t_cdf(t.abs(), n - 1)))
}

/// Holm's step-down procedure at family-wise level `alpha`: which of the hypotheses
/// with p-values `p` are rejected. Sorted ascending, p₍ᵢ₎ is rejected while
/// p₍ᵢ₎ ≤ α/(m − i + 1) for it and every smaller one.
pub fn holm(p: &[f64], alpha: f64) -> Vec<bool> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut rejected = vec![false; m];
    for (i, &k) in order.iter().enumerate() {
        if p[k] <= alpha / (m - i) as f64 {
            rejected[k] = true;
        } else {
            break;
        }
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_interval_levels_are_bonferronis_and_sidaks() {
        let b = Simultaneous::Bonferroni.per_interval(0.95, 10);
        assert!((b - 0.995).abs() < 1e-12);
        let s = Simultaneous::Sidak.per_interval(0.95, 10);
        assert!((s.powi(10) - 0.95).abs() < 1e-12);
        assert!(s < b, "Šidák is the narrower of the two");
        assert_eq!(Simultaneous::Sidak.per_interval(0.95, 1), 0.95);
    }

    /// Holm (1979), checked by hand: p = 0.01, 0.04, 0.03, 0.005 at α = 0.05.
    /// Sorted 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: stop. Bonferroni (α/4 =
    /// 0.0125) rejects the same two here.
    #[test]
    fn holm_steps_down_and_stops_at_the_first_acceptance() {
        assert_eq!(
            holm(&[0.01, 0.04, 0.03, 0.005], 0.05),
            [true, false, false, true]
        );
        // Here Holm rejects all three where Bonferroni (α/3) would reject one.
        assert_eq!(holm(&[0.012, 0.02, 0.04], 0.05), [true, true, true]);
        assert!(holm(&[], 0.05).is_empty());
    }

    /// The t test's p-value against a printed t table: t = 2.262 on 9 degrees of
    /// freedom is the two-sided 5% point.
    #[test]
    fn the_t_test_p_value_matches_the_table() {
        // mean / (sd / √10) = 2.262157.
        let p = t_test_p_value(2.262157, 10f64.sqrt(), 10).unwrap();
        assert!((p - 0.05).abs() < 1e-5, "{p}");
        assert_eq!(t_test_p_value(1.0, 0.0, 5), Some(0.0));
        assert_eq!(t_test_p_value(1.0, 1.0, 1), None);
    }
}
