//! Quantiles of the Student t, standard normal and beta distributions, from `statrs`.
//!
//! Earlier versions inverted Abramowitz & Stegun's finite series for the t CDF by
//! bisection; the tests below, written for that code from printed tables and closed
//! forms, now check the crate's quantiles.

use statrs::distribution::{Beta, ContinuousCDF, Normal, StudentsT};

/// Quantile `p` (0 < p < 1) of Student's t distribution with `df` ≥ 1 degrees of freedom.
///
/// # Panics
/// If `df` is 0 or `p` is not strictly between 0 and 1 (programming errors: callers
/// only ask for fixed quantiles of groups with n ≥ 2).
pub fn student_t(p: f64, df: u64) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    assert!(p > 0.0 && p < 1.0, "quantile level {p} outside (0, 1)");
    if p == 0.5 {
        return 0.0;
    }
    // Computed for the upper tail and mirrored, so the quantiles are exactly symmetric.
    if p < 0.5 {
        return -student_t(1.0 - p, df);
    }
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("df >= 1 is a valid t distribution")
        .inverse_cdf(p)
}

/// The distribution function of Student's t with `df` ≥ 1 degrees of freedom at `t`.
pub fn student_t_cdf(t: f64, df: u64) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("df >= 1 is a valid t distribution")
        .cdf(t)
}

/// Quantile `p` (0 < p < 1) of the standard normal distribution.
pub fn normal(p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile level {p} outside (0, 1)");
    Normal::standard().inverse_cdf(p)
}

/// The standard normal distribution function Φ(x).
pub fn normal_cdf(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

/// Quantile `p` (0 < p < 1) of the beta distribution with shapes `a`, `b` > 0.
pub fn beta(p: f64, a: f64, b: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile level {p} outside (0, 1)");
    Beta::new(a, b)
        .expect("positive shapes make a beta distribution")
        .inverse_cdf(p)
}

/// The `q` quantile of sorted data, linear interpolation between order statistics
/// (Hyndman and Fan's type 7, the default of R and NumPy).
///
/// A whole rank, or two equal neighbours, give that value as it is: between two
/// infinities the interpolation would be ∞ + (∞ − ∞)·0 = NaN, where the quantile of
/// data that run that long is ∞.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let (lower, upper) = (sorted[lo], sorted[hi]);
    Some(if lo == hi || lower == upper {
        lower
    } else {
        lower + (upper - lower) * (pos - lo as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Closed forms: ν = 1 is Cauchy, ν = 2 has t = (2p−1)·√(2 / (4p(1−p))).
        let t1 = (0.475 * std::f64::consts::PI).tan();
        assert!((student_t(0.975, 1) - t1).abs() < 1e-9);
        let t2 = 0.95 * (2.0 / (4.0 * 0.975 * 0.025_f64)).sqrt();
        assert!((student_t(0.975, 2) - t2).abs() < 1e-12);
        for (df, table) in [
            (1, 12.7062),
            (2, 4.3027),
            (3, 3.1824),
            (4, 2.7764),
            (9, 2.2622),
            (29, 2.0452),
        ] {
            let t = student_t(0.975, df);
            assert!((t - table).abs() < 5e-5, "df {df}: {t} vs {table}");
        }
        assert!((student_t(0.975, 100_000) - 1.96).abs() < 1e-4);
    }

    #[test]
    fn t_quantile_is_symmetric_and_monotone() {
        assert_eq!(student_t(0.5, 7), 0.0);
        assert_eq!(student_t(0.025, 5), -student_t(0.975, 5));
        let mut last = f64::INFINITY;
        for df in 1..60 {
            let t = student_t(0.975, df);
            assert!(t < last, "t must shrink with df");
            last = t;
        }
        // ν = 4: A = sinθ(1 + cos²θ/2) at the quantile gives back 0.95 (A&S 26.7.4).
        let t = student_t(0.975, 4);
        let theta = (t / 2.0).atan();
        let a = theta.sin() * (1.0 + 0.5 * theta.cos().powi(2));
        assert!((a - 0.95).abs() < 1e-12);
    }

    #[test]
    fn normal_and_beta_quantiles_match_closed_forms() {
        assert!((normal(0.975) - 1.959_963_984_540_054).abs() < 1e-9);
        assert!((normal_cdf(normal(0.9)) - 0.9).abs() < 1e-9);
        // Beta(1, b): F(x) = 1 − (1 − x)^b, so the quantile is 1 − (1 − p)^(1/b).
        let q = beta(0.025, 1.0, 20.0);
        assert!(
            (q - (1.0 - 0.975_f64.powf(1.0 / 20.0))).abs() < 1e-12,
            "{q}"
        );
        // Beta(a, 1): x^a.
        let q = beta(0.975, 20.0, 1.0);
        assert!((q - 0.975_f64.powf(1.0 / 20.0)).abs() < 1e-12, "{q}");
    }
}
