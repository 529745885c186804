//! Confidence intervals that fit their metric, and the sequential stopping rule.
//!
//! A number in a paper carries an interval, and the interval must say something true
//! about the metric: a count's interval never reaches below zero, a proportion's never
//! leaves `[0, 1]`. Each metric declares where its values lie ([`Support`]) and which
//! interval suits it ([`IntervalMethod`]); a figure may choose another method. Every
//! method here returns an interval inside the support: see [`intervals`] for each
//! method, its formula and its reference.
//!
//! - [`quantiles`]: the distribution quantiles (Student t, normal, beta) the intervals
//!   need, from `statrs`.
//! - [`intervals`]: Student-t, bootstrap percentile and BCa, Wilson, Clopper–Pearson and
//!   the delta-method interval of a ratio of sums.
//! - [`sequential`]: when a point of a sweep has enough replications (Law & Kelton's
//!   sequential procedure for a relative or absolute precision, with the guards that
//!   keep it from stopping early on heavy tails).
//! - [`multiple`]: many intervals or tests at once (Bonferroni, Šidák, Holm).
//! - [`survival`]: waits some of which never end (Kaplan–Meier, restricted mean).
//!
//! Nothing here knows about runs, tables or families: these are functions of numbers,
//! tested against closed forms and, in `tests/interval_coverage.rs`, by simulation.

pub mod coverage;
pub mod intervals;
pub mod moments;
pub mod multiple;
pub mod quantiles;
pub mod sequential;
pub mod survival;

pub use intervals::{Interval, IntervalMethod, Sample};
pub use sequential::{MetricTarget, Precision, Replications, StoppingRule, Target};

use serde::Serialize;

/// Where a metric's values can lie: an interval around its mean must not leave it (a
/// count's interval never goes below zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// `>= 0`: counts, times, messages per event.
    NonNegative,
    /// `[0, 1]`: fractions.
    UnitInterval,
    /// Any real number.
    Any,
}

impl Support {
    /// Whether `x` lies in the support.
    pub fn contains(self, x: f64) -> bool {
        match self {
            Support::NonNegative => x >= 0.0,
            Support::UnitInterval => (0.0..=1.0).contains(&x),
            Support::Any => !x.is_nan(),
        }
    }

    /// The support's lower and upper ends (infinite where open).
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Support::NonNegative => (0.0, f64::INFINITY),
            Support::UnitInterval => (0.0, 1.0),
            Support::Any => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// `x` moved to the nearest point of the support.
    pub fn clamp(self, x: f64) -> f64 {
        let (lo, hi) = self.bounds();
        x.clamp(lo, hi)
    }
}
