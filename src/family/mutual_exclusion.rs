//! Mutual exclusion: a token (or k) that grants the critical section (RL, k-RL,
//! Raymond). Everything linkrev knows about the family: its definition
//! ([`DEFINITION`]: metrics, per-request table, report defaults, check policy) and how
//! it watches, summarises, checks and draws runs ([`MutualExclusion`]).
//!
//! Runs need the CS workload (`sim`'s request process); the monitors of
//! [`crate::observe::me`] watch every run through the [`TokenView`] trait.

use super::def::{
    CellKind, Cells, CheckPolicy, EventRecord, EventTableDef, Family, FamilyDef, FinishedRun,
    Metric, MetricValue, PerEvent, ROUTE_REPLY, ROUTE_REQUEST, Roles, RolesOf, Summary, Watches,
    mean, message_counts, quantile, ratio,
};
use crate::NodeId;
use crate::check::model::{CheckProperty, CheckState, ProtocolModel, When};
use crate::check::{CheckSetup, cut_off, family_model};
use crate::observe::me::MeMonitor;
use crate::observe::safety::SafetyLog;
use crate::protocol::{Protocol, TokenView};
use crate::sim::{ChangeMode, RequestRecord};
use crate::stats::IntervalMethod;
use crate::stats::survival::{Observed, restricted_mean};

/// The per-run metrics, in column order.
pub const METRICS: &[Metric] = &[
    Metric::count("cs_requests", "CS requests"),
    Metric::count("cs_entries", "CS entries"),
    Metric::count("cs_waiting_at_end", "CS requests waiting at the end"),
    // Waits are mostly short with rare huge ones (a request waits out a partition):
    // below 100 runs their t intervals cover 0.60 to 0.88 on me_load's points, measured
    // by `linkrev bench coverage` (the book's statistics page, "The stopping rule").
    Metric::real("wait_mean", "CS waiting time (s)").judged_from(100),
    Metric::real("wait_p95", "95th-percentile CS waiting time (s)")
        .with_interval(IntervalMethod::BootstrapBca)
        .judged_from(100),
    // Every request, served or still waiting at the end (censored there): the
    // Kaplan–Meier restricted mean up to a third of the run (`stats::survival`).
    Metric::real(
        "wait_rmean",
        "CS waiting time, restricted mean to a third of the run (s)",
    )
    .judged_from(100),
    Metric::real("msgs_per_cs", "messages per CS entry").pooled_from("messages", "cs_entries"),
    Metric::count(
        "msgs_tokenless",
        "messages sent in a component without a token",
    )
    .per_event_ratio(),
    Metric::messages("msgs_request", "Request messages", &["Request"]),
    // RL's Token and Raymond's PRIVILEGE: the same role, one column.
    Metric::messages(
        "msgs_token",
        "Token (PRIVILEGE) messages",
        &["Token", "Privilege"],
    ),
    Metric::messages("msgs_link_info", "LinkInfo messages", &["LinkInfo"]),
    Metric::messages(
        "msgs_route_request",
        "RouteRequest messages (discovery)",
        &[ROUTE_REQUEST],
    ),
    Metric::messages(
        "msgs_route_reply",
        "RouteReply messages (discovery)",
        &[ROUTE_REPLY],
    ),
];

/// Mutual exclusion.
pub const DEFINITION: FamilyDef = FamilyDef {
    name: "mutual-exclusion",
    needs_workload: true,
    metrics: METRICS,
    events: EventTableDef {
        name: "requests",
        events: "requests",
        unfinished: "never served",
        // Requests still waiting at the end have null `entered_s`, `exited_s` and
        // `wait_s`.
        columns: &[
            ("node", CellKind::Node),
            ("requested_s", CellKind::Real),
            ("entered_s", CellKind::OptionalReal),
            ("exited_s", CellKind::OptionalReal),
            ("wait_s", CellKind::OptionalReal),
        ],
        distribution_columns: &[("wait_s", "CS waiting time (s)")],
        unfinished_count: (
            "requests_unserved_at_end",
            "cs_waiting_at_end",
            "CS requests still waiting when a run ended (reported, not dropped)",
        ),
    },
    headline: &["wait_mean", "msgs_per_cs"],
    paired: Some("wait_mean"),
    per_event: PerEvent {
        count: "cs_entries",
        suffix: "per_cs",
        what: "per CS entry",
    },
    // Requests and token moves multiply the states: half the depth.
    check: CheckPolicy {
        table_changes: ChangeMode::Overlap,
    },
};

impl EventRecord for RequestRecord {
    fn columns(rows: &[Self]) -> Vec<Cells> {
        let secs = |t: Option<crate::sim::SimTime>| t.map(|t| t.as_secs_f64());
        vec![
            Cells::Node(rows.iter().map(|q| q.node).collect()),
            Cells::Real(rows.iter().map(|q| q.requested.as_secs_f64()).collect()),
            Cells::OptionalReal(rows.iter().map(|q| secs(q.entered)).collect()),
            Cells::OptionalReal(rows.iter().map(|q| secs(q.exited)).collect()),
            Cells::OptionalReal(
                rows.iter()
                    .map(|q| q.entered.map(|t| t.since(q.requested).as_secs_f64()))
                    .collect(),
            ),
        ]
    }
}

/// The mutual-exclusion family's marker: [`Watches`] for every [`TokenView`] protocol.
#[derive(Clone, Copy, Debug)]
pub struct MutualExclusion;

impl<P: Protocol + TokenView> Watches<P> for MutualExclusion {
    const FAMILY: Family = Family(&DEFINITION);

    type Monitor = MeMonitor;

    fn monitor(config: &P::Config) -> MeMonitor {
        MeMonitor::new(P::tokens(config))
    }

    fn safety(monitor: &mut MeMonitor) -> &mut SafetyLog {
        &mut monitor.safety
    }

    fn summarise(monitor: &mut MeMonitor, run: &FinishedRun<'_, P>) -> Summary {
        let counters = run.counters;
        let requests = run.requests.to_vec();
        let mut waits: Vec<f64> = requests
            .iter()
            .filter_map(|r| r.entered.map(|e| e.since(r.requested).as_secs_f64()))
            .collect();
        waits.sort_by(f64::total_cmp);
        let waiting = requests.iter().filter(|r| r.entered.is_none()).count() as u64;
        let mut values = vec![
            ("cs_requests", MetricValue::Count(requests.len() as u64)),
            ("cs_entries", MetricValue::Count(counters.cs_entries)),
            ("cs_waiting_at_end", MetricValue::Count(waiting)),
            ("wait_mean", MetricValue::Real(mean(&waits))),
            ("wait_p95", MetricValue::Real(quantile(&waits, 0.95))),
            (
                "wait_rmean",
                MetricValue::Real(restricted_wait(&requests, run.config.duration)),
            ),
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
        (values, Box::new(requests))
    }

    fn model(config: P::Config, setup: &CheckSetup) -> ProtocolModel<P> {
        let tokens = P::tokens(&config);
        let mut model = family_model(config, setup, setup.requests, properties::<P>());
        model.tokens = tokens;
        model.cut_off = cut_off::CutOff::by(
            Box::new(tokenless_parts::<P>),
            Box::new(tokens_present::<P>),
            setup.graph.nodes,
        );
        model
    }

    fn roles(_: &P::Config) -> RolesOf<P> {
        Box::new(|p: &P, _: NodeId| Roles {
            tokens: p.tokens_held(),
            cs: p.in_cs(),
            ..Roles::default()
        })
    }
}

/// The share of the run's duration up to which `wait_rmean` restricts waits: a request
/// made in the run's first two thirds is followed at least that long, so the
/// Kaplan–Meier curve is known up to the horizon whenever the run has such a request.
pub const WAIT_HORIZON_SHARE: f64 = 1.0 / 3.0;

/// The Kaplan–Meier restricted mean wait of `requests` up to [`WAIT_HORIZON_SHARE`] of
/// `duration`, a request still waiting at the end censored there.
fn restricted_wait(requests: &[RequestRecord], duration: crate::sim::SimTime) -> Option<f64> {
    let waits: Vec<Observed> = requests
        .iter()
        .map(|r| match r.entered {
            Some(e) => Observed {
                time: e.since(r.requested).as_secs_f64(),
                ended: true,
            },
            None => Observed {
                time: duration.since(r.requested).as_secs_f64(),
                ended: false,
            },
        })
        .collect();
    restricted_mean(&waits, WAIT_HORIZON_SHARE * duration.as_secs_f64())
}

/// The checker's three properties.
fn properties<P: Protocol + TokenView>() -> Vec<CheckProperty<P>> {
    vec![
        CheckProperty {
            name: "at_most_k_in_cs",
            description: "at most k nodes in the critical section",
            when: When::Always,
            judge: |m, s| {
                let inside = s.in_cs.len() as u32;
                if inside <= m.tokens {
                    Ok(())
                } else {
                    Err(format!(
                        "{inside} nodes in the critical section ({:?}), at most {} allowed",
                        s.in_cs, m.tokens
                    ))
                }
            },
        },
        CheckProperty {
            name: "token_count",
            description: "tokens held + in flight + lost = k",
            when: When::Always,
            judge: |m, s: &CheckState<P>| {
                let held: u32 = s.nodes.iter().map(TokenView::tokens_held).sum();
                let total = held + s.tokens_in_flight() + s.tokens_lost;
                if total == m.tokens {
                    Ok(())
                } else {
                    Err(format!(
                        "{held} held + {} in flight + {} lost, {} expected",
                        s.tokens_in_flight(),
                        s.tokens_lost,
                        m.tokens
                    ))
                }
            },
        },
        CheckProperty {
            name: "requests_served",
            description: "every request in a component holding a token is served once \
                          changes stop (bounded)",
            when: When::Terminal,
            judge: |_, s: &CheckState<P>| {
                // Nothing is in flight on a link in a terminal state, so every token is
                // held or routed with no path to its destination (no one's).
                let graph = s.graph();
                let holders: Vec<NodeId> = (0..s.nodes.len() as NodeId)
                    .filter(|&v| s.nodes[v as usize].tokens_held() > 0)
                    .collect();
                match s
                    .waiting
                    .iter()
                    .find(|&w| holders.iter().any(|&h| graph.connected(w, h)))
                {
                    None => Ok(()),
                    Some(w) => Err(format!(
                        "nothing left to happen, but node {w} still waits in a component \
                         where a token is held (holders {holders:?})"
                    )),
                }
            },
        },
        CheckProperty {
            name: "requests_eventually_served",
            description: "once changes stop, every request in a component that holds a \
                          token is served, on every fair execution (RL's and k-RL's claim)",
            when: When::Eventually,
            judge: |_, s: &CheckState<P>| match waiting_with_a_token(s) {
                None => Ok(()),
                Some(w) => Err(format!(
                    "node {w} waits in a component that holds a token (held or in flight \
                     to one of its nodes)"
                )),
            },
        },
    ]
}

/// A waiting node whose component holds a token: held by one of its nodes, or in
/// flight to one and bound to arrive ([`cut_off::tokenless`]). A message on a link is
/// delivered even if the link has broken since (`drain`); a routed message only while a
/// path joins its origin and its destination, so one with no path belongs to no
/// component (it waits in the network, and once changes stop it waits for good).
fn waiting_with_a_token<P: Protocol + TokenView>(s: &CheckState<P>) -> Option<NodeId> {
    let tokenless = tokenless_parts(s);
    s.waiting.iter().find(|&w| !tokenless.contains(w))
}

/// Tokens held and in flight (the token count without the lost ones).
fn tokens_present<P: Protocol + TokenView>(s: &CheckState<P>) -> u32 {
    s.nodes.iter().map(TokenView::tokens_held).sum::<u32>() + s.tokens_in_flight()
}

/// Mutual exclusion's parts cut off for good ([`cut_off`]): the components that hold no
/// token once changes stop.
fn tokenless_parts<P: Protocol + TokenView>(s: &CheckState<P>) -> crate::check::sets::NodeSet {
    cut_off::tokenless(s, |p: &P| p.tokens_held() > 0)
}
