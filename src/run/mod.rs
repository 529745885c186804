//! One simulation run's output: the summary every run has (common fields plus its
//! family's metrics) and its per-event records. The unit a sweep repeats; the CLI's
//! `linkrev run` prints it. How a family watches and summarises a run is in
//! [`crate::family`]; the generic run that fills this is [`runner::run_with`].

pub mod runner;

use crate::family::def::{EventRows, Family, FamilyMetrics};
use crate::observe::le::ChangeRecord;
use crate::observe::route::RouteChangeRecord;
use crate::observe::safety::Violation;
use crate::sim::RequestRecord;
use serde::Serialize;

/// The run summary (`linkrev run --json`): the fields every run has, and the metrics its
/// family declares ([`Family::metrics`]). The algorithm's name and the wall time are
/// filled in by the registry, which knows them.
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
    /// quiet (non-zero means the run's topology froze; see the book's design page, "Topology
    /// changes: overlap and serialize").
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

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The per-run summary.
    pub summary: RunSummary,
    /// The per-event records: the rows of the family's per-event table.
    pub events: Box<dyn EventRows>,
    /// The first violations, whole, as many as the run was asked to keep
    /// ([`crate::family::Extra::keep_violations`]; none in a plain run).
    pub violations: Vec<crate::observe::safety::Violation>,
}

impl RunOutput {
    /// The per-event records as `R`, if the family's records are of that type.
    pub fn records<R: 'static>(&self) -> Option<&R> {
        self.events.as_any().downcast_ref::<R>()
    }

    /// The topology-change records (none for a family without them).
    pub fn changes(&self) -> &[ChangeRecord] {
        self.records::<Vec<ChangeRecord>>()
            .map_or(&[], Vec::as_slice)
    }

    /// The route-change records (none for a family without them).
    pub fn route_changes(&self) -> &[RouteChangeRecord] {
        self.records::<Vec<RouteChangeRecord>>()
            .map_or(&[], Vec::as_slice)
    }

    /// The CS-request records (none for a family without them).
    pub fn requests(&self) -> &[RequestRecord] {
        self.records::<Vec<RequestRecord>>()
            .map_or(&[], Vec::as_slice)
    }
}
