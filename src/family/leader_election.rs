//! Leader election: the metrics it declares and how a run is watched and summarised.
//!
//! The definitions (convergence, censoring, leaderless node-time, legality) are in the
//! docs of [`crate::observe::le`], whose monitor watches every run through the
//! [`LeaderView`] trait.

use super::{
    Extra, Family, FamilyMetrics, Metric, MetricValue, count, fraction, message_counts, messages,
    real,
};
use crate::observe::le::LeMonitor;
use crate::protocol::{AlgoParams, LeaderView, Protocol, ProtocolConfig};
use crate::run::{EventRecords, RunOutput, base_summary, mean, quantile, ratio};
use crate::sim::{Observer, RunConfig, Simulation};
use crate::topology::events::LinkTimeline;

/// The per-run metrics, in column order.
pub const METRICS: &[Metric] = &[
    real("msgs_per_change", "messages per topology change"),
    real("conv_time_mean", "convergence time (s)"),
    real("conv_time_p95", "95th-percentile convergence time (s)"),
    fraction("converged_fraction", "fraction of changes converged"),
    count("censored_changes", "censored topology changes"),
    fraction("leaderless_fraction", "fraction of time without a leader"),
    count("leader_changes", "leader changes"),
    count("elections", "leader elections"),
    count(
        "unnecessary_elections",
        "elections while a leader was reachable",
    ),
    messages("msgs_update", "Update messages", &["Update"]),
];

/// Runs a leader-election protocol, configured by `params`, with its monitor.
pub fn run<P: Protocol + LeaderView>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    run_with::<P, ()>(params, timeline, config, Extra::none())
}

/// [`run`], with `extra`'s observer told everything after the monitor.
pub fn run_with<P: Protocol + LeaderView, O: Observer<P>>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    extra: Extra<'_, P, O>,
) -> RunOutput {
    let protocol = P::Config::from_params(params);
    let mut sim = Simulation::<P>::starting(timeline, config.clone(), &protocol, extra.states);
    let mut monitor = LeMonitor::new();
    monitor.safety.keep = extra.keep_violations;
    monitor.safety.keep_from_s = extra.keep_from.as_secs_f64();
    sim.run(&mut (&mut monitor, extra.observer));
    let counters = sim.counters();
    let n = sim.nodes().len();
    let records = &monitor.records;
    let mut times: Vec<f64> = records
        .iter()
        .filter_map(|r| r.convergence_time_s)
        .collect();
    times.sort_by(f64::total_cmp);
    let converged = records.iter().filter(|r| r.converged).count() as u64;
    let mut values = vec![
        (
            "msgs_per_change",
            MetricValue::Real(ratio(counters.messages, counters.topology_changes)),
        ),
        ("conv_time_mean", MetricValue::Real(mean(&times))),
        ("conv_time_p95", MetricValue::Real(quantile(&times, 0.95))),
        (
            "converged_fraction",
            MetricValue::Real(ratio(converged, records.len() as u64)),
        ),
        (
            "censored_changes",
            MetricValue::Count(records.iter().filter(|r| r.censored).count() as u64),
        ),
        (
            "leaderless_fraction",
            MetricValue::Real(Some(
                monitor.leaderless_node_time
                    / (n as f64 * config.duration.as_secs_f64()).max(f64::MIN_POSITIVE),
            )),
        ),
        ("leader_changes", MetricValue::Count(monitor.leader_changes)),
        ("elections", MetricValue::Count(monitor.elections)),
        (
            "unnecessary_elections",
            MetricValue::Count(monitor.unnecessary_elections),
        ),
    ];
    values.extend(message_counts::<P::Msg>(METRICS, counters));
    let metrics = FamilyMetrics::new(Family::LeaderElection, values);
    let summary = base_summary(&config, n, counters, &monitor.safety, metrics);
    RunOutput {
        summary,
        violations: std::mem::take(&mut monitor.safety.kept),
        events: EventRecords::Changes(monitor.records),
    }
}
