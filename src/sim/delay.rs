//! Per-hop message delay distributions.
//!
//! Written on the command line as `const:2ms`, `uniform:1ms:5ms` or `exp:1ms:5ms` (an
//! exponential with a minimum: `min + Exp` with overall mean `mean`, so the minimum models
//! transmission time and the tail models contention). Units: `ns`, `us`, `ms`, `s`.

use super::time::Duration;
use rand::RngExt;
use std::fmt;
use std::str::FromStr;

/// How long one hop takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelayModel {
    /// Always this long.
    Constant(Duration),
    /// Uniform on `[min, max]` nanoseconds.
    Uniform {
        /// Shortest delay.
        min: Duration,
        /// Longest delay.
        max: Duration,
    },
    /// `min + Exp(mean − min)`.
    Exponential {
        /// Shortest delay (the exponential part is added to it).
        min: Duration,
        /// Overall mean delay, `min` included.
        mean: Duration,
    },
}

impl Default for DelayModel {
    /// 1–5 ms uniform: a few 802.11 transmissions with backoff.
    fn default() -> Self {
        DelayModel::Uniform {
            min: Duration(1_000_000),
            max: Duration(5_000_000),
        }
    }
}

impl DelayModel {
    /// Draws one delay (at least 1 ns, so that a reply never precedes its cause).
    pub fn sample(&self, rng: &mut impl rand::Rng) -> Duration {
        let ns = match *self {
            DelayModel::Constant(d) => d.0,
            DelayModel::Uniform { min, max } => rng.random_range(min.0..=max.0),
            DelayModel::Exponential { min, mean } => {
                let extra = (mean.0 - min.0) as f64;
                let u: f64 = rng.random();
                min.0 + (-extra * (1.0 - u).ln()).round() as u64
            }
        };
        Duration(ns.max(1))
    }

    /// The mean delay, seconds.
    pub fn mean_secs(&self) -> f64 {
        match *self {
            DelayModel::Constant(d) => d.as_secs_f64(),
            DelayModel::Uniform { min, max } => (min.as_secs_f64() + max.as_secs_f64()) / 2.0,
            DelayModel::Exponential { mean, .. } => mean.as_secs_f64(),
        }
    }
}

/// Parses `12ms`, `3us`, `0.5s`, `700ns`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("`{text}` has no unit (ns, us, ms, s)"))?;
    let (number, unit) = text.split_at(split);
    // `soon` splits as "" and "soon", `nans` as "" and "nans": name the whole text.
    let value: f64 = number.parse().map_err(|_| {
        format!("`{text}` is not a duration: expected a number and a unit (ns, us, ms, s)")
    })?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("`{text}` must be a non-negative duration"));
    }
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return Err(format!("unknown unit `{unit}` (use ns, us, ms or s)")),
    };
    if let Some(problem) = crate::input::span_problem(value * scale, false) {
        return Err(format!("`{text}`: {problem}"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

impl FromStr for DelayModel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            ["const", d] => Ok(DelayModel::Constant(parse_duration(d)?)),
            ["uniform", a, b] => {
                let (min, max) = (parse_duration(a)?, parse_duration(b)?);
                if min > max {
                    return Err(format!("uniform delay needs min <= max, got {a} > {b}"));
                }
                Ok(DelayModel::Uniform { min, max })
            }
            ["exp", a, b] => {
                let (min, mean) = (parse_duration(a)?, parse_duration(b)?);
                if min > mean {
                    return Err(format!(
                        "exponential delay needs min <= mean, got {a} > {b}"
                    ));
                }
                Ok(DelayModel::Exponential { min, mean })
            }
            _ => Err(format!(
                "expected const:D, uniform:MIN:MAX or exp:MIN:MEAN, got `{s}`"
            )),
        }
    }
}

impl fmt::Display for DelayModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| format!("{}ms", d.as_secs_f64() * 1e3);
        match *self {
            DelayModel::Constant(d) => write!(f, "const:{}", ms(d)),
            DelayModel::Uniform { min, max } => write!(f, "uniform:{}:{}", ms(min), ms(max)),
            DelayModel::Exponential { min, mean } => write!(f, "exp:{}:{}", ms(min), ms(mean)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_instead_of_a_duration_is_named_whole() {
        for text in ["soon", "nans", "ms"] {
            let err = parse_duration(text).unwrap_err();
            assert!(
                err.contains(&format!("`{text}` is not a duration")),
                "{err}"
            );
        }
        assert_eq!(parse_duration("5ms"), Ok(Duration::from_secs_f64(0.005)));
    }
    use rand::SeedableRng;

    #[test]
    fn parses_and_samples_within_bounds() {
        let m: DelayModel = "uniform:1ms:5ms".parse().unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let d = m.sample(&mut rng).0;
            assert!((1_000_000..=5_000_000).contains(&d));
        }
        assert_eq!(
            "const:250us".parse::<DelayModel>().unwrap(),
            DelayModel::Constant(Duration(250_000))
        );
        assert!("uniform:5ms:1ms".parse::<DelayModel>().is_err());
        assert!("gauss:1ms".parse::<DelayModel>().is_err());
        assert!("const:1parsec".parse::<DelayModel>().is_err());
    }

    #[test]
    fn exponential_mean_matches() {
        let m: DelayModel = "exp:1ms:3ms".parse().unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let n = 200_000;
        let mean = (0..n)
            .map(|_| m.sample(&mut rng).as_secs_f64())
            .sum::<f64>()
            / n as f64;
        assert!((mean - 3e-3).abs() < 3e-3 * 0.01, "{mean}");
    }
}
