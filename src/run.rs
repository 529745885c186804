//! One simulation run's output: the summary every run has (common fields plus its
//! family's metrics) and its per-event records. The unit a sweep repeats; the CLI's
//! `linkrev run` prints it. How each family runs is in [`crate::family`].

use crate::family::{Family, FamilyMetrics};
use crate::observe::le::ChangeRecord;
use crate::observe::route::RouteChangeRecord;
use crate::observe::safety::{SafetyLog, Violation};
use crate::sim::{RequestRecord, RunConfig, RunCounters};
use serde::Serialize;

/// The run summary (`linkrev run --json`): the fields every run has, and the metrics its
/// family declares ([`Family::metrics`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// The algorithm's registry name.
    pub algorithm: &'static str,
    /// Its family.
    pub family: Family,
    /// The run seed.
    pub seed: u64,
    /// Number of nodes.
    pub nodes: usize,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// Events handled by the simulator.
    pub events: u64,
    /// Protocol messages sent, one per hop.
    pub messages: u64,
    /// Topology changes applied.
    pub topology_changes: u64,
    /// `serialize` mode: trace changes never applied because the protocol never went
    /// quiet (non-zero means the run's topology froze; see README).
    pub changes_pending_at_end: u64,
    /// The family's metrics, by column name.
    #[serde(flatten)]
    pub metrics: FamilyMetrics,
    /// Safety violations counted by the family's monitors.
    pub safety_violations: u64,
    /// The first violation, with its event index (a reproducer).
    pub first_violation: Option<Violation>,
    /// Set when the run was stopped early (a message storm); its metrics then cover the
    /// run only up to that point.
    pub aborted: Option<String>,
    /// Tokens lost with their links (`drop`, or a detection delay).
    pub tokens_lost: u64,
    /// Messages lost with their links.
    pub messages_lost: u64,
    /// Wall-clock time of the run (not stored in tables: it is not reproducible).
    pub wall_time_s: f64,
}

/// A run's per-event records: the rows of its family's
/// [`EventTable`](crate::family::EventTable).
#[derive(Clone, Debug)]
pub enum EventRecords {
    /// Leader election: one record per topology change.
    Changes(Vec<ChangeRecord>),
    /// Mutual exclusion: one record per CS request.
    Requests(Vec<RequestRecord>),
    /// Routes: one record per topology change.
    RouteChanges(Vec<RouteChangeRecord>),
}

impl EventRecords {
    /// The number of records (rows of the family's per-event table).
    pub fn len(&self) -> usize {
        match self {
            EventRecords::Changes(c) => c.len(),
            EventRecords::Requests(r) => r.len(),
            EventRecords::RouteChanges(r) => r.len(),
        }
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The per-run summary.
    pub summary: RunSummary,
    /// The per-event records.
    pub events: EventRecords,
    /// The first violations, whole, as many as the run was asked to keep
    /// ([`crate::family::Extra::keep_violations`]; none in a plain run).
    pub violations: Vec<crate::observe::safety::Violation>,
}

impl RunOutput {
    /// The topology-change records (none for a family without them).
    pub fn changes(&self) -> &[ChangeRecord] {
        match &self.events {
            EventRecords::Changes(c) => c,
            _ => &[],
        }
    }

    /// The route-change records (none for a family without them).
    pub fn route_changes(&self) -> &[RouteChangeRecord] {
        match &self.events {
            EventRecords::RouteChanges(r) => r,
            _ => &[],
        }
    }

    /// The CS-request records (none for a family without them).
    pub fn requests(&self) -> &[RequestRecord] {
        match &self.events {
            EventRecords::Requests(r) => r,
            _ => &[],
        }
    }
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

/// The mean, `None` for no values.
pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// `num / den`, `None` when `den` is zero.
pub(crate) fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// The summary's common fields around a family's metrics. The algorithm's name and the
/// wall time are filled in by the caller that knows them (the registry).
pub(crate) fn base_summary(
    config: &RunConfig,
    nodes: usize,
    counters: &RunCounters,
    safety: &SafetyLog,
    metrics: FamilyMetrics,
) -> RunSummary {
    RunSummary {
        algorithm: "",
        family: metrics.family(),
        seed: config.seed,
        nodes,
        duration_s: config.duration.as_secs_f64(),
        events: counters.events,
        messages: counters.messages,
        topology_changes: counters.topology_changes,
        changes_pending_at_end: counters.changes_pending_at_end,
        metrics,
        safety_violations: safety.count,
        first_violation: safety.first.clone(),
        aborted: counters.aborted.clone(),
        tokens_lost: counters.tokens_lost,
        messages_lost: counters.messages_lost,
        wall_time_s: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let data = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile(&data, 0.5), Some(3.0));
        assert!((quantile(&data, 0.95).unwrap() - 8.8).abs() < 1e-12); // numpy.percentile(data, 95)
        assert_eq!(quantile(&data, 0.0), Some(1.0));
        assert_eq!(quantile(&[], 0.5), None);
        let long = [1.0, f64::INFINITY, f64::INFINITY];
        assert_eq!(quantile(&long, 0.5), Some(f64::INFINITY));
        assert_eq!(quantile(&long, 0.95), Some(f64::INFINITY));
    }
}
