//! Problem families: what an algorithm solves, and so how it is run, watched, measured,
//! checked and drawn.
//!
//! A family is one value. Its file holds everything linkrev knows about it: the
//! definition ([`FamilyDef`]: name, workload need, metrics with their support, per-event
//! table with its columns, report defaults, check policy) and a marker type
//! implementing [`Watches`] (its monitors from [`crate::observe`], the summary of a run,
//! the checker's properties, the replay's roles) for every protocol with the family's
//! view trait. Everything downstream — the tables, `linkrev run`'s printout, figure
//! labels, the report's defaults and health table, the checker's table — reads these;
//! one generic run ([`crate::run::runner`]), one generic check ([`check`]) and one
//! generic replay ([`crate::replay::record`]) serve every family. A new family is one file here (its
//! definition and `Watches`), its monitor, its view trait, one line in [`ALL`] and a
//! conformance suite.
//!
//! - [`leader_election`]: one leader per component (Malpani, Welch and Vaidya's
//!   problem).
//! - [`mutual_exclusion`]: a token that grants the critical section (RL, Raymond).
//! - [`route`]: a destination-oriented DAG: a route from every node to one
//!   destination (Gafni–Bertsekas link reversal).
//!
//! The types are in [`def`], which imports no family, so the family files and the run's
//! output build on it without an import circle.

pub mod def;
pub mod leader_election;
pub mod mutual_exclusion;
pub mod route;

pub use def::{
    CellKind, Cells, CheckPolicy, EventRecord, EventRows, EventTable, EventTableDef, Extra, Family,
    FamilyDef, FamilyMetrics, FinishedRun, Metric, MetricKind, MetricValue, PerEvent, ROUTE_REPLY,
    ROUTE_REQUEST, Roles, Support, Watches,
};
pub use leader_election::LeaderElection;
pub use mutual_exclusion::MutualExclusion;
pub use route::Route;

/// Leader election ([`leader_election`]).
pub const LEADER_ELECTION: Family = Family(&leader_election::DEFINITION);
/// Mutual exclusion ([`mutual_exclusion`]).
pub const MUTUAL_EXCLUSION: Family = Family(&mutual_exclusion::DEFINITION);
/// Routes to a destination ([`route`]).
pub const ROUTE: Family = Family(&route::DEFINITION);

/// Every family. The order is the order of their metric columns in the `runs` table,
/// which every sweep writes whole (null where a metric does not apply), so the tables of
/// different studies have one schema.
pub const ALL: [Family; 3] = [LEADER_ELECTION, MUTUAL_EXCLUSION, ROUTE];

/// Every family's per-event table, in the order they are searched, listed and stored
/// (the `runs` table's `rows_*` columns follow it).
pub const EVENT_TABLES: [EventTable; 3] = [
    EventTable(&mutual_exclusion::DEFINITION.events),
    EventTable(&leader_election::DEFINITION.events),
    EventTable(&route::DEFINITION.events),
];

/// Checks `P`, configured by `params`, exhaustively with family `F`'s properties.
pub fn check<F: Watches<P>, P: crate::protocol::Protocol>(
    params: &crate::protocol::AlgoParams,
    name: &str,
    setup: &crate::check::CheckSetup,
) -> crate::check::CheckReport {
    let config = <P::Config as crate::protocol::ProtocolConfig>::from_params(params);
    crate::check::run(name, F::model(config, setup), setup)
}

/// Replays `steps` (a scenario's execution) through family `F`'s model of `P`,
/// configured by `params`, on `nodes` nodes with `links` at the start: `Err((k, why))`
/// for the first step `k` (from 0) that is impossible in the state it is applied to (a
/// delivery with nothing in flight, a release by a node outside its critical section, a
/// request in a family without a workload). The simulator replays only executions that
/// pass, so a malformed file cannot report a bogus violation.
pub fn check_steps<F: Watches<P>, P: crate::protocol::Protocol>(
    params: &crate::protocol::AlgoParams,
    nodes: usize,
    links: &[(crate::NodeId, crate::NodeId)],
    steps: &[crate::check::model::Step],
) -> Result<(), (usize, String)> {
    use crate::check::model::Step;
    use stateright::Model as _;
    let count = |f: fn(&Step) -> bool| u8::try_from(steps.iter().filter(|s| f(s)).count());
    let (Ok(changes), Ok(requests)) = (
        count(|s| matches!(s, Step::Link { .. })),
        count(|s| matches!(s, Step::Request { .. })),
    ) else {
        return Err((0, "more than 255 link or request steps".into()));
    };
    let setup = crate::check::CheckSetup {
        changes,
        requests,
        max_depth: steps.len(),
        max_states: 0,
        ..crate::check::CheckSetup::plain(crate::check::graph::SmallGraph {
            name: "scenario".into(),
            nodes,
            edges: links.to_vec(),
        })
    };
    let config = <P::Config as crate::protocol::ProtocolConfig>::from_params(params);
    let model = F::model(config, &setup);
    let mut state = model.initial();
    let mut enabled = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        enabled.clear();
        model.actions(&state, &mut enabled);
        let why = match *step {
            _ if enabled.contains(step) => None,
            Step::Deliver { from, to } => Some(format!("nothing in flight from {from} to {to}")),
            Step::DeliverRouted { origin, dest } => Some(format!(
                "no routed message from {origin} to {dest} can be delivered now"
            )),
            Step::Link { a, b, up } => Some(format!(
                "link {a} - {b} is already {}",
                if up { "up" } else { "down" }
            )),
            Step::Request { .. } if model.requests == 0 => Some(format!(
                "a {} algorithm takes no CS requests",
                F::FAMILY.name()
            )),
            Step::Request { node } => Some(format!(
                "node {node} already waits for or holds its critical section"
            )),
            Step::Release { node } => Some(format!("node {node} is not in its critical section")),
        };
        if let Some(why) = why {
            return Err((k, why));
        }
        state = model.step(&state, step.clone()).expect("an enabled step");
    }
    Ok(())
}

/// The family named `name`.
pub fn by_name(name: &str) -> Option<Family> {
    ALL.into_iter().find(|f| f.name() == name)
}

/// A per-run ratio of a messages-by-kind count to its family's events: computed by
/// the report, not stored ([`message_ratios`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRatio {
    /// Column name (`msgs_link_info_per_cs`).
    pub column: String,
    /// Axis label (`LinkInfo messages per CS entry`).
    pub label: String,
    /// The count divided (`msgs_link_info`).
    pub count: &'static str,
    /// The events it is divided by (`cs_entries`).
    pub per: &'static str,
}

/// Every family's messages-by-kind counts (and the tokenless messages of mutual
/// exclusion) per event of the family ([`Family::per_event`]), so that a figure can
/// show where the messages per CS entry or per topology change go.
pub fn message_ratios() -> Vec<MessageRatio> {
    ALL.iter()
        .flat_map(|&family| {
            let (per, suffix, what) = family.per_event();
            family
                .metrics()
                .iter()
                .filter(|m| m.ratio)
                .map(move |m| MessageRatio {
                    column: format!("{}_{suffix}", m.column),
                    label: format!("{} {what}", m.label),
                    count: m.column,
                    per,
                })
        })
        .collect()
}

/// Every message kind some metric of `family` counts.
pub fn counted_kinds(family: Family) -> impl Iterator<Item = &'static str> {
    family
        .metrics()
        .iter()
        .flat_map(|m| m.messages.iter().copied())
}

/// The label of any family's metric `column`, or of a per-event column.
pub fn metric_label(column: &str) -> Option<&'static str> {
    ALL.iter()
        .find_map(|f| f.metric(column))
        .map(|m| m.label)
        .or_else(|| {
            EVENT_TABLES.iter().find_map(|t| {
                t.distribution_columns()
                    .iter()
                    .find(|(c, _)| *c == column)
                    .map(|(_, l)| *l)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_its_table_listed_once() {
        for f in ALL {
            let listed = EVENT_TABLES
                .iter()
                .filter(|t| **t == f.event_table())
                .count();
            assert_eq!(listed, 1, "{}", f.name());
            assert_eq!(by_name(f.name()), Some(f));
        }
        assert_eq!(by_name("nobody"), None);
    }

    #[test]
    fn metric_columns_are_unique_across_families_and_tables() {
        let mut seen = std::collections::HashSet::new();
        for f in ALL {
            for m in f.metrics() {
                assert!(seen.insert(m.column), "{} declared twice", m.column);
            }
            for h in f.headline_metrics().iter().chain(f.paired_metric().iter()) {
                assert!(f.metric(h).is_some(), "{h} is not a metric of {}", f.name());
            }
        }
        for t in EVENT_TABLES {
            let (_, runs_column, _) = t.unfinished_count();
            assert!(
                ALL.iter()
                    .any(|f| f.event_table() == t && f.metric(runs_column).is_some()),
                "{runs_column} is no metric of the family filling {}",
                t.name()
            );
        }
    }

    /// Every declared metric of `family` with a value of its kind (counts 1, reals 0.5).
    fn complete(family: Family) -> Vec<(&'static str, MetricValue)> {
        family
            .metrics()
            .iter()
            .map(|m| match m.kind {
                MetricKind::Count => (m.column, MetricValue::Count(1)),
                MetricKind::Real => (m.column, MetricValue::Real(Some(0.5))),
            })
            .collect()
    }

    #[test]
    fn metrics_are_matched_to_their_declarations_by_name() {
        let family = MUTUAL_EXCLUSION;
        let mut values = complete(family);
        values.reverse();
        values[0].1 = MetricValue::Count(7);
        let last = values[0].0;
        let metrics = FamilyMetrics::new(family, values);
        assert_eq!(metrics.get(last), Some(MetricValue::Count(7)));
        let columns: Vec<_> = metrics.iter().map(|(m, _)| m.column).collect();
        let declared: Vec<_> = family.metrics().iter().map(|m| m.column).collect();
        assert_eq!(columns, declared, "stored in declaration order");
    }

    #[test]
    fn metrics_must_match_their_declarations() {
        let family = MUTUAL_EXCLUSION;
        let short = || FamilyMetrics::new(family, vec![("cs_entries", MetricValue::Count(1))]);
        let extra = || {
            let mut v = complete(family);
            v.push(("elections", MetricValue::Count(1)));
            FamilyMetrics::new(family, v)
        };
        let twice = || {
            let mut v = complete(family);
            v.push(v[0]);
            FamilyMetrics::new(family, v)
        };
        let wrong_kind = || {
            let mut v = complete(family);
            let at = v.iter().position(|(c, _)| *c == "wait_mean").unwrap();
            v[at].1 = MetricValue::Count(1);
            FamilyMetrics::new(family, v)
        };
        for bad in [
            &short as &dyn Fn() -> FamilyMetrics,
            &extra,
            &twice,
            &wrong_kind,
        ] {
            let quiet = std::panic::catch_unwind(std::panic::AssertUnwindSafe(bad));
            assert!(quiet.is_err());
        }
        FamilyMetrics::new(family, complete(family));
    }

    #[test]
    fn supports_hold_what_their_metrics_can_take() {
        for f in ALL {
            for m in f.metrics() {
                if m.kind == MetricKind::Count || m.column.contains("fraction") {
                    assert_ne!(m.support, Support::Any, "{}", m.column);
                }
                if m.column.contains("fraction") || m.column == "route_availability" {
                    assert_eq!(m.support, Support::UnitInterval, "{}", m.column);
                }
            }
        }
        assert!(Support::UnitInterval.contains(1.0) && !Support::UnitInterval.contains(1.01));
        assert!(Support::NonNegative.contains(0.0) && !Support::NonNegative.contains(-1e-9));
        assert!(Support::Any.contains(-5.0) && !Support::Any.contains(f64::NAN));
    }
}
