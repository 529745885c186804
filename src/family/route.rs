//! Routes to one destination (Gafni–Bertsekas link reversal): the metrics the family
//! declares and how a run is watched and summarised.
//!
//! The definitions (legality, convergence, reversal steps, route availability,
//! partitioned components) are in the docs of [`crate::observe::route`], whose monitor
//! watches every run through the [`RouteView`] trait.

use super::{
    Extra, Family, FamilyMetrics, Metric, MetricValue, count, fraction, message_counts, messages,
    real,
};
use crate::observe::route::RouteMonitor;
use crate::protocol::{AlgoParams, Protocol, ProtocolConfig, RouteView};
use crate::run::{EventRecords, RunOutput, base_summary, mean, quantile, ratio};
use crate::sim::{Observer, RunConfig, Simulation};
use crate::topology::events::LinkTimeline;

/// The per-run metrics, in column order. The per-change means are over the changes
/// that converged.
pub const METRICS: &[Metric] = &[
    real("reversals_per_change", "reversal steps per topology change"),
    real(
        "nodes_reversed_per_change",
        "nodes that reversed per topology change",
    ),
    real("route_msgs_per_change", "messages per topology change"),
    real("route_conv_time_mean", "convergence time (s)"),
    real(
        "route_conv_time_p95",
        "95th-percentile convergence time (s)",
    ),
    fraction(
        "route_converged_fraction",
        "fraction of changes converged (outside partitions)",
    ),
    count("route_censored_changes", "censored topology changes"),
    count("partitioned_changes", "topology changes inside a partition"),
    fraction(
        "route_availability",
        "fraction of node-time with a route to the destination",
    ),
    count("reversals", "reversal steps"),
    count(
        "partitioned_reversals",
        "reversal steps in components without the destination",
    ),
    messages("msgs_height", "Height messages", &["Height"]),
];

/// Runs a route-family protocol, configured by `params`, with its monitor.
pub fn run<P: Protocol + RouteView>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    run_with::<P, ()>(params, timeline, config, Extra::none())
}

/// [`run`], with `extra`'s observer told everything after the monitor.
pub fn run_with<P: Protocol + RouteView, O: Observer<P>>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    extra: Extra<'_, P, O>,
) -> RunOutput {
    let protocol = P::Config::from_params(params);
    let mut sim = Simulation::<P>::starting(timeline, config.clone(), &protocol, extra.states);
    let mut monitor = RouteMonitor::<P::Height>::new(P::destination(&protocol));
    monitor.safety.keep = extra.keep_violations;
    monitor.safety.keep_from_s = extra.keep_from.as_secs_f64();
    sim.run(&mut (&mut monitor, extra.observer));
    let counters = sim.counters();
    let n = sim.nodes().len();
    let records = &monitor.records;
    let converged: Vec<_> = records.iter().filter(|r| r.change.converged).collect();
    let per_change = |f: fn(&crate::observe::route::RouteChangeRecord) -> u64| {
        let values: Vec<f64> = converged.iter().map(|r| f(r) as f64).collect();
        MetricValue::Real(mean(&values))
    };
    let mut times: Vec<f64> = converged
        .iter()
        .filter_map(|r| r.change.convergence_time_s)
        .collect();
    times.sort_by(f64::total_cmp);
    let outside = records.iter().filter(|r| !r.partitioned).count() as u64;
    let mut values = vec![
        ("reversals_per_change", per_change(|r| r.reversals)),
        (
            "nodes_reversed_per_change",
            per_change(|r| r.nodes_reversed),
        ),
        ("route_msgs_per_change", per_change(|r| r.change.messages)),
        ("route_conv_time_mean", MetricValue::Real(mean(&times))),
        (
            "route_conv_time_p95",
            MetricValue::Real(quantile(&times, 0.95)),
        ),
        (
            "route_converged_fraction",
            MetricValue::Real(ratio(converged.len() as u64, outside)),
        ),
        (
            "route_censored_changes",
            MetricValue::Count(records.iter().filter(|r| r.change.censored).count() as u64),
        ),
        (
            "partitioned_changes",
            MetricValue::Count(records.iter().filter(|r| r.partitioned).count() as u64),
        ),
        (
            "route_availability",
            MetricValue::Real(Some(
                monitor.routed_node_time
                    / (n as f64 * config.duration.as_secs_f64()).max(f64::MIN_POSITIVE),
            )),
        ),
        ("reversals", MetricValue::Count(monitor.reversals)),
        (
            "partitioned_reversals",
            MetricValue::Count(monitor.partitioned_reversals),
        ),
    ];
    values.extend(message_counts::<P::Msg>(METRICS, counters));
    let metrics = FamilyMetrics::new(Family::Route, values);
    let summary = base_summary(&config, n, counters, &monitor.safety, metrics);
    RunOutput {
        summary,
        violations: std::mem::take(&mut monitor.safety.kept),
        events: EventRecords::RouteChanges(monitor.records),
    }
}
