//! Leader election: one leader per connected component, kept through topology changes
//! (Malpani, Welch and Vaidya's problem). Everything linkrev knows about the family:
//! its definition ([`DEFINITION`]: metrics, per-change table, report defaults, check
//! policy) and how it watches, summarises, checks and draws runs ([`LeaderElection`]).
//!
//! The definitions (convergence, censoring, leaderless node-time, legality) are in the
//! docs of [`crate::observe::le`], whose monitor watches every run through the
//! [`LeaderView`] trait.

use super::def::{
    CellKind, Cells, CheckPolicy, EventRecord, EventTableDef, Family, FamilyDef, FinishedRun,
    Metric, MetricValue, PerEvent, Roles, RolesOf, Summary, Watches, mean, message_counts,
    quantile, ratio,
};
use crate::NodeId;
use crate::check::model::{CheckProperty, Judge, ProtocolModel, When};
use crate::check::{CheckSetup, family_model};
use crate::observe;
use crate::observe::le::{ChangeRecord, LeMonitor};
use crate::observe::safety::SafetyLog;
use crate::protocol::{LeaderView, Protocol};
use crate::sim::ChangeMode;
use crate::stats::IntervalMethod;

/// The per-run metrics, in column order.
pub const METRICS: &[Metric] = &[
    // le-malpani's storms make it bimodal: the delta interval of the pooled ratio
    // covers 0.79 at 20 runs and 0.84 at 100 (`linkrev bench coverage`, "storms").
    Metric::real("msgs_per_change", "messages per topology change")
        .pooled_from("messages", "topology_changes")
        .judged_from(100),
    Metric::real("conv_time_mean", "convergence time (s)"),
    Metric::real("conv_time_p95", "95th-percentile convergence time (s)")
        .with_interval(IntervalMethod::BootstrapBca),
    Metric::fraction("converged_fraction", "fraction of changes converged"),
    Metric::count("censored_changes", "censored topology changes"),
    Metric::fraction("leaderless_fraction", "fraction of time without a leader"),
    Metric::count("leader_changes", "leader changes"),
    Metric::count("elections", "leader elections"),
    Metric::count(
        "unnecessary_elections",
        "elections while a leader was reachable",
    ),
    Metric::messages("msgs_update", "Update messages", &["Update"]),
];

/// The columns of a topology-change record ([`ChangeRecord`]), shared with the route
/// family's table.
pub const CHANGE_COLUMNS: &[(&str, CellKind)] = &[
    ("time_s", CellKind::Real),
    ("kind", CellKind::Word),
    ("a", CellKind::Node),
    ("b", CellKind::Node),
    ("converged", CellKind::Flag),
    ("convergence_time_s", CellKind::OptionalReal),
    ("messages", CellKind::Count),
    ("censored", CellKind::Flag),
];

/// Leader election.
pub const DEFINITION: FamilyDef = FamilyDef {
    name: "leader-election",
    needs_workload: false,
    metrics: METRICS,
    events: EventTableDef {
        name: "changes",
        events: "topology changes",
        unfinished: "never converged",
        columns: CHANGE_COLUMNS,
        distribution_columns: &[
            ("convergence_time_s", "convergence time (s)"),
            ("messages", "messages"),
        ],
        unfinished_count: (
            "censored_changes",
            "censored_changes",
            "topology changes whose convergence the run's end cut off",
        ),
    },
    headline: &["conv_time_mean", "msgs_per_change"],
    paired: None,
    per_event: PerEvent {
        count: "topology_changes",
        suffix: "per_change",
        what: "per topology change",
    },
    // The paper's setting: one change at a time.
    check: CheckPolicy {
        table_changes: ChangeMode::Serialize,
    },
};

/// The cells of topology-change records, in [`CHANGE_COLUMNS`] order.
pub fn change_cells<'r>(rows: impl Iterator<Item = &'r ChangeRecord> + Clone) -> Vec<Cells> {
    vec![
        Cells::Real(rows.clone().map(|c| c.time_s).collect()),
        Cells::Word(rows.clone().map(|c| c.kind).collect()),
        Cells::Node(rows.clone().map(|c| c.a).collect()),
        Cells::Node(rows.clone().map(|c| c.b).collect()),
        Cells::Flag(rows.clone().map(|c| c.converged).collect()),
        Cells::OptionalReal(rows.clone().map(|c| c.convergence_time_s).collect()),
        Cells::Count(rows.clone().map(|c| c.messages).collect()),
        Cells::Flag(rows.map(|c| c.censored).collect()),
    ]
}

impl EventRecord for ChangeRecord {
    fn columns(rows: &[Self]) -> Vec<Cells> {
        change_cells(rows.iter())
    }
}

/// The leader-election family's marker: [`Watches`] for every [`LeaderView`] protocol.
#[derive(Clone, Copy, Debug)]
pub struct LeaderElection;

impl<P: Protocol + LeaderView> Watches<P> for LeaderElection {
    const FAMILY: Family = Family(&DEFINITION);

    type Monitor = LeMonitor<P::Height>;

    fn monitor(_: &P::Config) -> Self::Monitor {
        LeMonitor::new()
    }

    fn safety(monitor: &mut Self::Monitor) -> &mut SafetyLog {
        &mut monitor.safety
    }

    fn summarise(monitor: &mut Self::Monitor, run: &FinishedRun<'_, P>) -> Summary {
        let counters = run.counters;
        let n = run.nodes.len();
        let records = std::mem::take(&mut monitor.records);
        let mut times: Vec<f64> = records
            .iter()
            .filter_map(|r| r.convergence_time_s)
            .collect();
        times.sort_by(f64::total_cmp);
        let converged = records.iter().filter(|r| r.converged).count() as u64;
        let node_time = n as f64 * run.config.duration.as_secs_f64();
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
                    monitor.leaderless_node_time / node_time.max(f64::MIN_POSITIVE),
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
        (values, Box::new(records))
    }

    fn model(config: P::Config, setup: &CheckSetup) -> ProtocolModel<P> {
        // Every component legal, by the monitor's own judgement.
        let legal: Judge<P> = |_, s| {
            let graph = s.graph();
            for members in observe::components(&graph) {
                observe::le::check_component(&s.nodes, &graph, &members).map_err(|(why, _)| why)?;
            }
            Ok(())
        };
        family_model(
            config,
            setup,
            0,
            vec![
                CheckProperty {
                    name: "legal_when_quiescent",
                    description: "with nothing in flight and no change left, every component \
                                  has one leader all agree on, the only sink, and up-to-date \
                                  views",
                    when: When::Quiescent,
                    judge: legal,
                },
                CheckProperty {
                    name: "eventually_legal",
                    description: "once changes stop, every component becomes legal, on every \
                                  fair execution (a livelock or a stuck illegal state is a \
                                  violation)",
                    when: When::Eventually,
                    judge: legal,
                },
            ],
        )
    }

    fn roles(_: &P::Config) -> RolesOf<P> {
        Box::new(|p: &P, id: NodeId| Roles {
            leader: Some(p.leader()),
            leads: p.leader() == id,
            ..Roles::default()
        })
    }
}
