//! Routes to one destination (Gafni–Bertsekas link reversal): a destination-oriented
//! DAG, a route from every node to one destination. Everything linkrev knows about the
//! family: its definition ([`DEFINITION`]: metrics, per-change table, report defaults,
//! check policy) and how it watches, summarises, checks and draws runs ([`Route`]).
//!
//! The definitions (legality, convergence, reversal steps, route availability,
//! partitioned components) are in the docs of [`crate::observe::route`], whose monitor
//! watches every run through the [`RouteView`] trait.

use super::def::{
    CellKind, Cells, CheckPolicy, EventRecord, EventTableDef, Family, FamilyDef, FinishedRun,
    Metric, MetricValue, PerEvent, Roles, RolesOf, Summary, Watches, mean, message_counts,
    quantile, ratio,
};
use super::leader_election::change_cells;
use crate::NodeId;
use crate::check::model::{CheckProperty, Judge, ProtocolModel, When};
use crate::check::{CheckSetup, family_model};
use crate::observe;
use crate::observe::route::{RouteChangeRecord, RouteMonitor};
use crate::observe::safety::SafetyLog;
use crate::protocol::{Protocol, RouteView};
use crate::sim::ChangeMode;
use crate::stats::IntervalMethod;

/// The per-run metrics, in column order. The per-change means are over the changes
/// that converged.
pub const METRICS: &[Metric] = &[
    // Reversal work grows with the square of a chain's length: BCa covers 0.55 at 10
    // runs and 0.88 at 100 (`linkrev bench coverage`, "reversals-near-zero").
    Metric::real("reversals_per_change", "reversal steps per topology change")
        .with_interval(IntervalMethod::BootstrapBca)
        .judged_from(100),
    Metric::real(
        "nodes_reversed_per_change",
        "nodes that reversed per topology change",
    ),
    Metric::real("route_msgs_per_change", "messages per topology change"),
    Metric::real("route_conv_time_mean", "convergence time (s)"),
    Metric::real(
        "route_conv_time_p95",
        "95th-percentile convergence time (s)",
    )
    .with_interval(IntervalMethod::BootstrapBca),
    Metric::fraction(
        "route_converged_fraction",
        "fraction of changes converged (outside partitions)",
    ),
    Metric::count(
        "route_censored_changes",
        "censored topology changes (routes)",
    ),
    Metric::count("partitioned_changes", "topology changes inside a partition"),
    Metric::fraction(
        "route_availability",
        "fraction of node-time with a route to the destination",
    ),
    Metric::count("reversals", "reversal steps"),
    Metric::count(
        "partitioned_reversals",
        "reversal steps in components without the destination",
    ),
    Metric::messages("msgs_height", "Height messages", &["Height"]),
];

/// Routes to a destination.
pub const DEFINITION: FamilyDef = FamilyDef {
    name: "route",
    needs_workload: false,
    metrics: METRICS,
    events: EventTableDef {
        name: "route_changes",
        events: "topology changes",
        unfinished: "never converged",
        // The leader-election columns, then `partitioned`, `reversals` and
        // `nodes_reversed`.
        columns: &[
            ("time_s", CellKind::Real),
            ("kind", CellKind::Word),
            ("a", CellKind::Node),
            ("b", CellKind::Node),
            ("converged", CellKind::Flag),
            ("convergence_time_s", CellKind::OptionalReal),
            ("messages", CellKind::Count),
            ("censored", CellKind::Flag),
            ("partitioned", CellKind::Flag),
            ("reversals", CellKind::Count),
            ("nodes_reversed", CellKind::Count),
        ],
        distribution_columns: &[
            ("convergence_time_s", "convergence time (s)"),
            ("messages", "messages"),
            ("reversals", "reversal steps"),
            ("nodes_reversed", "nodes that reversed"),
        ],
        unfinished_count: (
            "route_censored_changes",
            "route_censored_changes",
            "topology changes whose convergence the run's end cut off",
        ),
    },
    headline: &["reversals_per_change", "route_conv_time_mean"],
    paired: None,
    per_event: PerEvent {
        count: "topology_changes",
        suffix: "per_change",
        what: "per topology change",
    },
    check: CheckPolicy {
        table_changes: ChangeMode::Overlap,
    },
};

impl EventRecord for RouteChangeRecord {
    fn columns(rows: &[Self]) -> Vec<Cells> {
        let mut cells = change_cells(rows.iter().map(|r| &r.change));
        cells.extend([
            Cells::Flag(rows.iter().map(|r| r.partitioned).collect()),
            Cells::Count(rows.iter().map(|r| r.reversals).collect()),
            Cells::Count(rows.iter().map(|r| r.nodes_reversed).collect()),
        ]);
        cells
    }
}

/// The route family's marker: [`Watches`] for every [`RouteView`] protocol.
#[derive(Clone, Copy, Debug)]
pub struct Route;

impl<P: Protocol + RouteView> Watches<P> for Route {
    const FAMILY: Family = Family(&DEFINITION);

    type Monitor = RouteMonitor<P::Height>;

    fn monitor(config: &P::Config) -> Self::Monitor {
        RouteMonitor::new(P::destination(config))
    }

    fn safety(monitor: &mut Self::Monitor) -> &mut SafetyLog {
        &mut monitor.safety
    }

    fn summarise(monitor: &mut Self::Monitor, run: &FinishedRun<'_, P>) -> Summary {
        let counters = run.counters;
        let n = run.nodes.len();
        let records = std::mem::take(&mut monitor.records);
        let converged: Vec<_> = records.iter().filter(|r| r.change.converged).collect();
        let per_change = |f: fn(&RouteChangeRecord) -> u64| {
            let values: Vec<f64> = converged.iter().map(|r| f(r) as f64).collect();
            MetricValue::Real(mean(&values))
        };
        let mut times: Vec<f64> = converged
            .iter()
            .filter_map(|r| r.change.convergence_time_s)
            .collect();
        times.sort_by(f64::total_cmp);
        let outside = records.iter().filter(|r| !r.partitioned).count() as u64;
        let node_time = n as f64 * run.config.duration.as_secs_f64();
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
                    monitor.routed_node_time / node_time.max(f64::MIN_POSITIVE),
                )),
            ),
            ("reversals", MetricValue::Count(monitor.reversals)),
            (
                "partitioned_reversals",
                MetricValue::Count(monitor.partitioned_reversals),
            ),
        ];
        values.extend(message_counts::<P::Msg>(METRICS, counters));
        (values, Box::new(records))
    }

    fn model(config: P::Config, setup: &CheckSetup) -> ProtocolModel<P> {
        let destination = P::destination(&config);
        // The destination's component destination oriented, by the monitor's own
        // judgement.
        let oriented: Judge<P> = |m, s| {
            let dest = m.destination.expect("route models have a destination");
            let graph = s.graph();
            let members: Vec<NodeId> = (0..s.nodes.len() as NodeId)
                .filter(|&v| graph.connected(v, dest))
                .collect();
            observe::route::check_component(&s.nodes, &graph, &members, dest)
                .map_err(|(why, _)| why)
        };
        let mut model = family_model(
            config,
            setup,
            0,
            vec![
                CheckProperty {
                    name: "destination_oriented_when_quiescent",
                    description: "with nothing in flight and no change left, every node of the \
                                  destination's component but the destination has a lower \
                                  neighbour, and views are up to date",
                    when: When::Quiescent,
                    judge: oriented,
                },
                CheckProperty {
                    name: "eventually_destination_oriented",
                    description: "once changes stop, the destination's component becomes \
                                  destination oriented, on every fair execution",
                    when: When::Eventually,
                    judge: oriented,
                },
            ],
        );
        model.destination = Some(destination);
        model
    }

    fn roles(config: &P::Config) -> RolesOf<P> {
        let dest = P::destination(config);
        Box::new(move |_: &P, id: NodeId| Roles {
            destination: id == dest,
            ..Roles::default()
        })
    }
}
