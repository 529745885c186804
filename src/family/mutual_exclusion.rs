//! Mutual exclusion: the metrics it declares and how a run is watched and summarised.
//!
//! Runs need the CS workload (`sim`'s request process); the monitors of
//! [`crate::observe::me`] watch every run through the [`TokenView`] trait.

use super::{
    Extra, Family, FamilyMetrics, Metric, MetricValue, ROUTE_REPLY, ROUTE_REQUEST, count,
    message_counts, messages, real,
};
use crate::observe::me::MeMonitor;
use crate::protocol::{AlgoParams, Protocol, ProtocolConfig, TokenView};
use crate::run::{EventRecords, RunOutput, base_summary, mean, quantile, ratio};
use crate::sim::{Observer, RunConfig, Simulation};
use crate::topology::events::LinkTimeline;

/// The per-run metrics, in column order.
pub const METRICS: &[Metric] = &[
    count("cs_requests", "CS requests"),
    count("cs_entries", "CS entries"),
    count("cs_waiting_at_end", "CS requests waiting at the end"),
    real("wait_mean", "CS waiting time (s)"),
    real("wait_p95", "95th-percentile CS waiting time (s)"),
    real("msgs_per_cs", "messages per CS entry"),
    count(
        "msgs_tokenless",
        "messages sent in a component without a token",
    )
    .per_event_ratio(),
    messages("msgs_request", "Request messages", &["Request"]),
    // RL's Token and Raymond's PRIVILEGE: the same role, one column.
    messages(
        "msgs_token",
        "Token (PRIVILEGE) messages",
        &["Token", "Privilege"],
    ),
    messages("msgs_link_info", "LinkInfo messages", &["LinkInfo"]),
    messages(
        "msgs_route_request",
        "RouteRequest messages (discovery)",
        &[ROUTE_REQUEST],
    ),
    messages(
        "msgs_route_reply",
        "RouteReply messages (discovery)",
        &[ROUTE_REPLY],
    ),
];

/// Runs a mutual-exclusion protocol, configured by `params`, with its monitors.
pub fn run<P: Protocol + TokenView>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    run_with::<P, ()>(params, timeline, config, Extra::none())
}

/// [`run`], with `extra`'s observer told everything after the monitor.
pub fn run_with<P: Protocol + TokenView, O: Observer<P>>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    extra: Extra<'_, P, O>,
) -> RunOutput {
    let protocol = P::Config::from_params(params);
    let mut sim = Simulation::<P>::starting(timeline, config.clone(), &protocol, extra.states);
    let mut monitor = MeMonitor::new(P::tokens(&protocol));
    monitor.safety.keep = extra.keep_violations;
    monitor.safety.keep_from_s = extra.keep_from.as_secs_f64();
    sim.run(&mut (&mut monitor, extra.observer));
    let counters = sim.counters();
    let requests = sim.requests().to_vec();
    let mut waits: Vec<f64> = requests
        .iter()
        .filter_map(|r| r.entered.map(|e| e.since(r.requested).as_secs_f64()))
        .collect();
    waits.sort_by(f64::total_cmp);
    let mut values = vec![
        ("cs_requests", MetricValue::Count(requests.len() as u64)),
        ("cs_entries", MetricValue::Count(counters.cs_entries)),
        (
            "cs_waiting_at_end",
            MetricValue::Count(requests.iter().filter(|r| r.entered.is_none()).count() as u64),
        ),
        ("wait_mean", MetricValue::Real(mean(&waits))),
        ("wait_p95", MetricValue::Real(quantile(&waits, 0.95))),
        (
            "msgs_per_cs",
            MetricValue::Real(ratio(counters.messages, counters.cs_entries)),
        ),
        (
            "msgs_tokenless",
            MetricValue::Count(monitor.messages_tokenless),
        ),
    ];
    values.extend(message_counts::<P::Msg>(METRICS, counters));
    let metrics = FamilyMetrics::new(Family::MutualExclusion, values);
    let summary = base_summary(
        &config,
        sim.nodes().len(),
        counters,
        &monitor.safety,
        metrics,
    );
    RunOutput {
        summary,
        violations: std::mem::take(&mut monitor.safety.kept),
        events: EventRecords::Requests(requests),
    }
}
