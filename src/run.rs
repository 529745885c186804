//! One simulation run: an algorithm, a link timeline and a configuration in; records and
//! a summary out. This is the unit a sweep repeats; the CLI's `linkrev run` prints it.

use crate::observe::le::{ChangeRecord, LeMonitor};
use crate::observe::me::MeMonitor;
use crate::observe::safety::{SafetyLog, Violation};
use crate::protocol::le_malpani::LeMalpani;
use crate::protocol::me_raymond::Raymond;
use crate::protocol::me_rl::Rl;
use crate::protocol::{LeaderView, Protocol, TokenView};
use crate::sim::{Observer, RequestRecord, RunConfig, RunCounters, Simulation};
use crate::topology::events::LinkTimeline;
use serde::Serialize;
use std::time::Instant;

/// The algorithms linkrev simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, Serialize)]
pub enum Algorithm {
    /// Leader election by link reversal (Malpani, Welch, Vaidya).
    #[value(name = "le-malpani")]
    #[serde(rename = "le-malpani")]
    LeMalpani,
    /// Token mutual exclusion by link reversal (Walter, Welch, Vaidya: RL).
    #[value(name = "me-rl")]
    #[serde(rename = "me-rl")]
    MeRl,
    /// Raymond's tree token algorithm over an ideal routing layer (the baseline).
    #[value(name = "me-raymond")]
    #[serde(rename = "me-raymond")]
    MeRaymond,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed to users.
    pub const ALL: [Algorithm; 3] = [Algorithm::LeMalpani, Algorithm::MeRl, Algorithm::MeRaymond];

    /// The algorithm named `name` (as in [`Algorithm::name`]).
    pub fn parse(name: &str) -> Option<Algorithm> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::LeMalpani => "le-malpani",
            Algorithm::MeRl => "me-rl",
            Algorithm::MeRaymond => "me-raymond",
        }
    }

    pub fn is_mutual_exclusion(self) -> bool {
        !matches!(self, Algorithm::LeMalpani)
    }
}

/// The run summary (`linkrev run --json`). Metrics that do not apply to the algorithm
/// (convergence for mutual exclusion, waiting time for leader election) are `null`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    pub algorithm: &'static str,
    pub seed: u64,
    pub nodes: usize,
    pub duration_s: f64,
    pub events: u64,
    pub messages: u64,
    pub topology_changes: u64,
    /// `serialize` mode: trace changes never applied because the protocol never went
    /// quiet (non-zero means the run's topology froze; see README).
    pub changes_pending_at_end: u64,
    pub msgs_per_change: Option<f64>,
    pub conv_time_mean: Option<f64>,
    pub conv_time_p95: Option<f64>,
    pub converged_fraction: Option<f64>,
    pub censored_changes: Option<u64>,
    pub leaderless_fraction: Option<f64>,
    pub leader_changes: Option<u64>,
    pub cs_requests: Option<u64>,
    pub cs_entries: Option<u64>,
    /// Requests still waiting when the run ended (reported, not dropped).
    pub cs_waiting_at_end: Option<u64>,
    pub wait_mean: Option<f64>,
    pub wait_p95: Option<f64>,
    pub msgs_per_cs: Option<f64>,
    pub safety_violations: u64,
    pub first_violation: Option<Violation>,
    /// Set when the run was stopped early (a message storm); its metrics then cover the
    /// run only up to that point.
    pub aborted: Option<String>,
    pub tokens_lost: u64,
    pub messages_lost: u64,
    pub wall_time_s: f64,
}

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub summary: RunSummary,
    /// Leader election: one record per topology change.
    pub changes: Vec<ChangeRecord>,
    /// Mutual exclusion: one record per CS request.
    pub requests: Vec<RequestRecord>,
}

/// The `q` quantile of sorted data, linear interpolation between order statistics
/// (Hyndman and Fan's type 7, the default of R and NumPy).
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn base_summary(
    algorithm: Algorithm,
    config: &RunConfig,
    nodes: usize,
    counters: &RunCounters,
    safety: &SafetyLog,
) -> RunSummary {
    RunSummary {
        algorithm: algorithm.name(),
        seed: config.seed,
        nodes,
        duration_s: config.duration.as_secs_f64(),
        events: counters.events,
        messages: counters.messages,
        topology_changes: counters.topology_changes,
        changes_pending_at_end: counters.changes_pending_at_end,
        msgs_per_change: None,
        conv_time_mean: None,
        conv_time_p95: None,
        converged_fraction: None,
        censored_changes: None,
        leaderless_fraction: None,
        leader_changes: None,
        cs_requests: None,
        cs_entries: None,
        cs_waiting_at_end: None,
        wait_mean: None,
        wait_p95: None,
        msgs_per_cs: None,
        safety_violations: safety.count,
        first_violation: safety.first.clone(),
        aborted: counters.aborted.clone(),
        tokens_lost: counters.tokens_lost,
        messages_lost: counters.messages_lost,
        wall_time_s: 0.0,
    }
}

/// Sets up and runs one simulation under `observer`.
fn simulate_observed<'t, P: Protocol, O: Observer<P>>(
    timeline: &'t LinkTimeline,
    config: RunConfig,
    observer: &mut O,
) -> Simulation<'t, P> {
    let mut sim = Simulation::<P>::new(timeline, config);
    sim.run(observer);
    sim
}

/// Runs a leader-election protocol with its monitor.
pub fn run_leader_election<P: Protocol + LeaderView>(
    algorithm: Algorithm,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    let started = Instant::now();
    let mut monitor = LeMonitor::new();
    let sim = simulate_observed::<P, _>(timeline, config, &mut monitor);
    let counters = sim.counters();
    let n = sim.nodes().len();
    let mut summary = base_summary(algorithm, &config, n, counters, &monitor.safety);
    let mut times: Vec<f64> = monitor
        .records
        .iter()
        .filter_map(|r| r.convergence_time_s)
        .collect();
    times.sort_by(f64::total_cmp);
    let converged = monitor.records.iter().filter(|r| r.converged).count() as u64;
    summary.msgs_per_change = ratio(counters.messages, counters.topology_changes);
    summary.conv_time_mean = mean(&times);
    summary.conv_time_p95 = quantile(&times, 0.95);
    summary.converged_fraction = ratio(converged, monitor.records.len() as u64);
    summary.censored_changes = Some(monitor.records.iter().filter(|r| r.censored).count() as u64);
    summary.leaderless_fraction = Some(
        monitor.leaderless_node_time
            / (n as f64 * config.duration.as_secs_f64()).max(f64::MIN_POSITIVE),
    );
    summary.leader_changes = Some(monitor.leader_changes);
    summary.wall_time_s = started.elapsed().as_secs_f64();
    RunOutput {
        summary,
        changes: monitor.records,
        requests: Vec::new(),
    }
}

/// Runs a mutual-exclusion protocol with its monitor.
pub fn run_mutual_exclusion<P: Protocol + TokenView>(
    algorithm: Algorithm,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    let started = Instant::now();
    let mut monitor = MeMonitor::new();
    let sim = simulate_observed::<P, _>(timeline, config, &mut monitor);
    let counters = sim.counters();
    let mut summary = base_summary(
        algorithm,
        &config,
        sim.nodes().len(),
        counters,
        &monitor.safety,
    );
    let requests = sim.requests().to_vec();
    let mut waits: Vec<f64> = requests
        .iter()
        .filter_map(|r| r.entered.map(|e| e.since(r.requested).as_secs_f64()))
        .collect();
    waits.sort_by(f64::total_cmp);
    summary.cs_requests = Some(requests.len() as u64);
    summary.cs_entries = Some(counters.cs_entries);
    summary.cs_waiting_at_end =
        Some(requests.iter().filter(|r| r.entered.is_none()).count() as u64);
    summary.wait_mean = mean(&waits);
    summary.wait_p95 = quantile(&waits, 0.95);
    summary.msgs_per_cs = ratio(counters.messages, counters.cs_entries);
    summary.wall_time_s = started.elapsed().as_secs_f64();
    RunOutput {
        summary,
        changes: Vec::new(),
        requests,
    }
}

/// Runs `algorithm` on a timeline with its monitors.
pub fn simulate(algorithm: Algorithm, timeline: &LinkTimeline, config: RunConfig) -> RunOutput {
    match algorithm {
        Algorithm::LeMalpani => run_leader_election::<LeMalpani>(algorithm, timeline, config),
        Algorithm::MeRl => run_mutual_exclusion::<Rl>(algorithm, timeline, config),
        Algorithm::MeRaymond => run_mutual_exclusion::<Raymond>(algorithm, timeline, config),
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
    }
}
