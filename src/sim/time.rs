//! Simulation time: integer nanoseconds.
//!
//! Integer time makes event order exact and runs reproducible: two events never compare
//! differently because of rounding, and a seed gives the same order on every machine.
//! Trace times (seconds as `f64`) are rounded to the nearest nanosecond on entry.

use std::fmt;

/// A point in simulated time, nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any run ends: when something that never happens is scheduled.
    pub const NEVER: SimTime = SimTime(u64::MAX / 2);
    /// Nanoseconds per second.
    pub const NANOS_PER_SEC: u64 = 1_000_000_000;

    /// Rounds seconds to the nearest nanosecond; negative or NaN inputs clamp to zero.
    pub fn from_secs_f64(seconds: f64) -> Self {
        let ns = (seconds * Self::NANOS_PER_SEC as f64).round();
        SimTime(if ns.is_nan() || ns <= 0.0 {
            0
        } else {
            ns as u64
        })
    }

    /// Seconds since the start.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::NANOS_PER_SEC as f64
    }

    /// Nanoseconds since the start.
    pub fn nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating (a run never gets near 584 years).
    pub fn after(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }

    /// `self − earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

/// A span of simulated time, nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Duration {
    /// Rounds seconds to the nearest nanosecond; negative or NaN inputs clamp to zero.
    pub fn from_secs_f64(seconds: f64) -> Self {
        Duration(SimTime::from_secs_f64(seconds).0)
    }

    /// In seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / SimTime::NANOS_PER_SEC as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_to_the_nearest_nanosecond() {
        assert_eq!(SimTime::from_secs_f64(1.5), SimTime(1_500_000_000));
        assert_eq!(
            SimTime::from_secs_f64(199.233555445137),
            SimTime(199_233_555_445)
        );
        assert_eq!(SimTime::from_secs_f64(-1.0), SimTime::ZERO);
        assert_eq!(SimTime(2_000).since(SimTime(500)), Duration(1_500));
    }
}
