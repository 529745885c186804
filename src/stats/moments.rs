//! The mean and variance of a sample, computed so that their rounding does not grow
//! with the sample: every summary and interval starts from these two.

/// The mean by compensated (Kahan) summation in the given order, `None` for no values.
///
/// Kahan's sum carries the rounding error of each addition into the next, so the error
/// of a mean of many runs stays near one rounding instead of growing with the count of
/// its terms. It is also what polars' grouped mean computes, which the tables of
/// earlier versions were made with.
pub fn compensated_mean(values: &[f64]) -> Option<f64> {
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
pub fn sample_variance(values: &[f64]) -> Option<f64> {
    let (mut mean, mut m2) = (0.0_f64, 0.0_f64);
    for (i, &v) in values.iter().enumerate() {
        let delta = v - mean;
        mean += delta / (i + 1) as f64;
        m2 += delta * (v - mean);
    }
    (values.len() >= 2).then(|| m2 / (values.len() - 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
