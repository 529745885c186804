//! Closed-form (or numerically integrated) random-waypoint quantities.
//!
//! These are the oracles the generator is tested against and the reference values a later
//! stationarity check compares measured traces with, so they are written from the
//! formulas, never from the generator.

use super::{PauseDist, RwpParams, SpeedDist};

/// Mean length of one random-waypoint leg, `E[L]`, in a `width × height` rectangle.
///
/// A leg joins two independent uniform points of the rectangle, so `E[L]` is the classical
/// mean distance between two uniform points in an a × b rectangle, in the form
/// Bettstetter, Hartenstein and Pérez-Costa (2004) use as the random waypoint's mean
/// transition length:
///
/// ```text
/// E[L] = (1/6)[(b²/a)·ln(a/b + √(a²/b²+1)) + (a²/b)·ln(b/a + √(b²/a²+1))]
///      + (1/15)(a³/b² + b³/a²) − (1/15)·√(a²+b²)·(a²/b² + b²/a² − 3)
/// ```
///
/// 1000 × 1000 gives 521.4 m, 1500 × 300 gives 524.6 m. It is evaluated in an
/// algebraically equal form: with a ≥ b, r = b/a and q = √(1+r²),
/// `E[L]/a = (1/15)[3q − 1/(1+q) + r²(r − q)] + (1/6)[r²·asinh(1/r) + asinh(r)/r]`,
/// because a³/b² and √(a²+b²)·a²/b² cancel catastrophically for elongated rectangles
/// (their difference is exactly −a²/(a+√(a²+b²))). It stays accurate for any aspect
/// ratio and tends to a/3, the mean distance on a segment, as b → 0.
pub fn expected_leg_length(width: f64, height: f64) -> f64 {
    let (a, b) = if width >= height {
        (width, height)
    } else {
        (height, width)
    };
    let r = b / a;
    let q = r.hypot(1.0);
    let algebraic = 3.0 * q - 1.0 / (1.0 + q) + r * r * (r - q);
    let logarithmic = if r == 0.0 {
        1.0 // limits: r²·asinh(1/r) → 0 and asinh(r)/r → 1
    } else {
        r * r * (1.0 / r).asinh() + r.asinh() / r
    };
    a * (algebraic / 15.0 + logarithmic / 6.0)
}

impl SpeedDist {
    /// The `(min, max)` bounds of the speed, m/s.
    pub fn bounds(&self) -> (f64, f64) {
        match *self {
            SpeedDist::Uniform { min, max } | SpeedDist::Normal { min, max } => (min, max),
        }
    }

    /// Mean speed of one leg, `E[V]` (the naive "average speed" a classic run starts at).
    ///
    /// Both distributions are symmetric about the midpoint of `[min, max]` (the normal is
    /// truncated symmetrically), so `E[V]` is the midpoint for both.
    pub fn mean(&self) -> f64 {
        let (min, max) = self.bounds();
        0.5 * min + 0.5 * max
    }

    /// `E[1/V]`: the mean time per metre of a leg, which is what sets how long nodes spend
    /// moving. Infinite when `min` is 0 (the integral of 1/v diverges there: this is why
    /// random waypoint with vmin = 0 has no steady state, Yoon, Liu and Noble 2003).
    ///
    /// Uniform: ln(max/min)/(max − min), or 1/v when min = max. Normal (truncated to
    /// [min, max]): integrated numerically (composite Simpson in log-speed).
    pub fn mean_inverse(&self) -> f64 {
        let (min, max) = self.bounds();
        if min <= 0.0 {
            return f64::INFINITY;
        }
        if min == max {
            return 1.0 / min;
        }
        match self {
            SpeedDist::Uniform { .. } => (max / min).ln() / (max - min),
            SpeedDist::Normal { .. } => truncated_normal_mean_inverse(min, max),
        }
    }
}

impl PauseDist {
    /// Mean pause, `E[P]`, seconds.
    pub fn mean(&self) -> f64 {
        match *self {
            PauseDist::Constant(p) => p,
            PauseDist::Uniform { mean } => mean,
        }
    }
}

/// Probability that a node is paused at a time instant in steady state:
/// `E[P]` / (`E[P]` + `E[L]`·`E[1/V]`) (one cycle is a move of expected duration `E[L]`·`E[1/V]`
/// followed by a pause of expected duration `E[P]`; renewal-reward gives the fraction).
///
/// 1000 × 1000, speed uniform on [1, 19], pause 10 s → 0.105. Zero without pauses, and
/// zero when `E[1/V]` is infinite (vmin = 0: moving time grows without bound).
pub fn paused_probability(params: &RwpParams) -> f64 {
    let pause = params.pause.mean();
    if pause == 0.0 {
        return 0.0;
    }
    pause / (pause + moving_time(params))
}

/// Time-average speed in steady state, pauses included (a pause counts as speed 0).
///
/// Per cycle a node covers `E[L]` metres in `E[L]`·`E[1/V]` + `E[P]` seconds, so by renewal-reward
/// the long-run mean speed is `E[L]` / (`E[L]`·`E[1/V]` + `E[P]`). Equivalently: the fraction of
/// time moving, `E[L]``E[1/V]`/(`E[L]``E[1/V]` + `E[P]`), times the mean speed while moving,
/// 1/`E[1/V]`. Without pauses this is the harmonic mean 1/`E[1/V]`, e.g.
/// (vmax − vmin)/ln(vmax/vmin) for a uniform speed: [1, 20] → 6.34 m/s, far below the
/// naive 10.5 m/s (Yoon, Liu and Noble 2003). 1000 × 1000, [1, 19], pause 10 s → 5.47.
pub fn stationary_mean_speed(params: &RwpParams) -> f64 {
    let length = expected_leg_length(params.area.width, params.area.height);
    let time = moving_time(params) + params.pause.mean();
    if time.is_infinite() {
        return 0.0;
    }
    length / time
}

/// `E[L]`·`E[1/V]`: the expected duration of one move.
fn moving_time(params: &RwpParams) -> f64 {
    expected_leg_length(params.area.width, params.area.height) * params.speed.mean_inverse()
}

/// Number of Simpson intervals for the truncated-normal integral. The integrand is smooth
/// in log-speed, so this is far more than enough for realistic bounds and still costs
/// only microseconds (once per generated trace).
const SIMPSON_INTERVALS: usize = 1 << 14;

/// `E[1/V]` for a normal speed with mean (min+max)/2 and sd (max−min)/4 truncated to
/// [min, max] (0 < min < max).
///
/// `E[1/V]` = ∫ φ(v)/v dv / ∫ φ(v) dv over [min, max]. Substituting v = eˢ turns the steep
/// 1/v near a small `min` into a smooth integrand: ∫ φ(eˢ) ds / ∫ φ(eˢ)·eˢ ds over
/// [ln min, ln max], which composite Simpson integrates accurately. The normal's constant
/// factor cancels in the ratio.
pub(crate) fn truncated_normal_mean_inverse(min: f64, max: f64) -> f64 {
    let density = normal_kernel(min, max);
    let (lo, hi) = (min.ln(), max.ln());
    let numerator = simpson(|s| density(s.exp()), lo, hi, SIMPSON_INTERVALS);
    let denominator = simpson(|s| density(s.exp()) * s.exp(), lo, hi, SIMPSON_INTERVALS);
    numerator / denominator
}

/// The unnormalised normal density exp(−z²/2) of setdest's `-s 2` speed on [min, max].
pub(crate) fn normal_kernel(min: f64, max: f64) -> impl Fn(f64) -> f64 {
    let mean = 0.5 * min + 0.5 * max;
    let sd = (max - min) / 4.0;
    move |v: f64| {
        let z = (v - mean) / sd;
        (-0.5 * z * z).exp()
    }
}

/// Composite Simpson's rule with `intervals` (even) sub-intervals.
pub(crate) fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, intervals: usize) -> f64 {
    let n = intervals + intervals % 2;
    let h = (b - a) / n as f64;
    let mut sum = f(a) + f(b);
    for i in 1..n {
        let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += weight * f(a + h * i as f64);
    }
    sum * h / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simpson_reproduces_the_uniform_closed_form() {
        // The same log-substitution with a flat density must give ln(max/min)/(max−min).
        let (min, max) = (0.01_f64, 20.0_f64);
        let (lo, hi) = (min.ln(), max.ln());
        let numeric = simpson(|_| 1.0, lo, hi, SIMPSON_INTERVALS)
            / simpson(f64::exp, lo, hi, SIMPSON_INTERVALS);
        let exact = (max / min).ln() / (max - min);
        assert!(
            (numeric / exact - 1.0).abs() < 1e-12,
            "{numeric} vs {exact}"
        );
    }

    #[test]
    fn normal_mean_inverse_lies_between_harmonic_bounds() {
        // Jensen: E[1/V] > 1/E[V]; and the normal concentrates nearer the middle than the
        // uniform, so its E[1/V] is below the uniform's on the same bounds.
        let normal = SpeedDist::Normal {
            min: 1.0,
            max: 20.0,
        }
        .mean_inverse();
        let uniform = SpeedDist::Uniform {
            min: 1.0,
            max: 20.0,
        }
        .mean_inverse();
        assert!(
            normal > 1.0 / 10.5 && normal < uniform,
            "{normal} {uniform}"
        );
    }
}
