//! Problem families: what an algorithm solves, and so how it is run, watched and
//! measured.
//!
//! A family owns its view trait (what its monitors read from a node:
//! [`LeaderView`](crate::protocol::LeaderView), [`TokenView`](crate::protocol::TokenView)),
//! its monitors (in [`crate::observe`]), whether its runs need a CS workload, and the
//! metrics it declares: one [`Metric`] per column of the `runs` table (name, label with
//! unit) and one [`EventTable`] of per-event rows. Everything downstream — the tables,
//! `linkrev run`'s printout, figure labels, the report's default figures and its health
//! table — loops over these declarations, so a new family is one module here and a
//! variant of Family [`Family`] that the compiler then asks about wherever it matters.
//!
//! - [`leader_election`]: one leader per component (Malpani, Welch and Vaidya's
//!   problem).
//! - [`mutual_exclusion`]: a token that grants the critical section (RL, Raymond).
//! - [`route`]: a destination-oriented DAG: a route from every node to one
//!   destination (Gafni–Bertsekas link reversal).

pub mod leader_election;
pub mod mutual_exclusion;
pub mod route;

use crate::protocol::Message;
use crate::sim::RunCounters;
use serde::Serialize;
use serde::ser::SerializeMap;

/// What a caller adds to one run of a family: an observer told everything after the
/// family's monitors (the replay recorder), how many safety violations to keep whole
/// ([`crate::run::RunOutput::violations`]), and the nodes' states at t = 0 when they
/// are not the protocol's initial ones (the slides' examples start mid-run).
pub struct Extra<'a, P, O> {
    /// Told of every event after the monitors.
    pub observer: &'a mut O,
    /// Violations kept whole, from the first (0: only the first, in the summary).
    pub keep_violations: usize,
    /// Only violations from this time on are kept whole.
    pub keep_from: crate::sim::SimTime,
    /// Every node's state at t = 0; `None`: the protocol's initial states.
    pub states: Option<Vec<P>>,
}

impl<P> Extra<'static, P, ()> {
    /// Nothing extra: a plain run.
    pub fn none() -> Self {
        // A unit observer holds no state, so leaking one allocates nothing.
        Extra {
            observer: Box::leak(Box::new(())),
            keep_violations: 0,
            keep_from: crate::sim::SimTime::ZERO,
            states: None,
        }
    }
}

/// A problem with its own correctness notion and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Elect one leader per connected component and keep it through topology changes.
    LeaderElection,
    /// Grant the critical section to one node at a time, on request.
    MutualExclusion,
    /// Keep a route from every node to one destination (a destination-oriented DAG).
    Route,
}

/// Whether a metric is a real number or a count (its column's type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// `f64`, null when undefined (a mean over no events).
    Real,
    /// `u64`.
    Count,
}

/// Where a metric's values can lie: an interval around its mean must not leave it (a
/// count's interval never goes below zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// `>= 0`: counts, times, messages per event.
    NonNegative,
    /// `[0, 1]`: fractions.
    UnitInterval,
    /// Any real number.
    Any,
}

impl Support {
    /// Whether `x` lies in the support.
    pub fn contains(self, x: f64) -> bool {
        match self {
            Support::NonNegative => x >= 0.0,
            Support::UnitInterval => (0.0..=1.0).contains(&x),
            Support::Any => !x.is_nan(),
        }
    }
}

/// One per-run metric a family declares: a column of the `runs` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Column name (`wait_mean`).
    pub column: &'static str,
    /// Axis label with its unit (`CS waiting time (s)`).
    pub label: &'static str,
    /// Column type.
    pub kind: MetricKind,
    /// Where its values lie.
    pub support: Support,
    /// For a count of messages by kind: the kinds it sums, by the names protocols give
    /// them ([`Message::KINDS`]) or the routing layer's [`ROUTE_REQUEST`] and
    /// [`ROUTE_REPLY`]. Empty for every other metric.
    pub messages: &'static [&'static str],
    /// Whether the report divides it by the family's events for a breakdown of the
    /// messages per event ([`message_ratios`]): every by-kind count, and other message
    /// counts a family marks ([`Metric::per_event_ratio`]).
    pub ratio: bool,
}

impl Metric {
    /// The metric, also shown per event of its family in message breakdowns.
    pub const fn per_event_ratio(self) -> Self {
        Metric {
            ratio: true,
            ..self
        }
    }
}

/// A real metric `>= 0` (a time, a mean count).
const fn real(column: &'static str, label: &'static str) -> Metric {
    Metric {
        column,
        label,
        kind: MetricKind::Real,
        support: Support::NonNegative,
        messages: &[],
        ratio: false,
    }
}

/// A real metric in `[0, 1]`.
const fn fraction(column: &'static str, label: &'static str) -> Metric {
    Metric {
        support: Support::UnitInterval,
        ..real(column, label)
    }
}

/// A count.
const fn count(column: &'static str, label: &'static str) -> Metric {
    Metric {
        column,
        label,
        kind: MetricKind::Count,
        support: Support::NonNegative,
        messages: &[],
        ratio: false,
    }
}

/// A count of the messages of the named kinds sent in a run.
const fn messages(
    column: &'static str,
    label: &'static str,
    kinds: &'static [&'static str],
) -> Metric {
    Metric {
        messages: kinds,
        ratio: true,
        ..count(column, label)
    }
}

/// The kind of the routing layer's route-discovery flood messages (`me-raymond` with
/// `routing = discovery`; [`crate::sim::network`]).
pub const ROUTE_REQUEST: &str = "RouteRequest";
/// The kind of the routing layer's route-discovery replies.
pub const ROUTE_REPLY: &str = "RouteReply";

/// The values of `metrics`' message counts ([`Metric::messages`]), by column, from a
/// run of a protocol whose messages are `M`.
fn message_counts<M: Message>(
    metrics: &[Metric],
    counters: &RunCounters,
) -> Vec<(&'static str, MetricValue)> {
    let of_kind = |name: &str| match name {
        ROUTE_REQUEST => counters.route_requests,
        ROUTE_REPLY => counters.route_replies,
        name => M::KINDS
            .iter()
            .position(|k| *k == name)
            .and_then(|i| counters.messages_by_kind.get(i).copied())
            .unwrap_or(0),
    };
    metrics
        .iter()
        .filter(|m| !m.messages.is_empty())
        .map(|m| {
            let sum = m.messages.iter().map(|k| of_kind(k)).sum();
            (m.column, MetricValue::Count(sum))
        })
        .collect()
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
    Family::ALL
        .iter()
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

/// A per-event table: one row per event a family measures (a CS request, a topology
/// change), so figures can show distributions, not only per-run means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventTable {
    /// Mutual exclusion: one row per CS request.
    Requests,
    /// Leader election: one row per topology change.
    Changes,
    /// Routes: one row per topology change, with its reversal steps.
    RouteChanges,
}

impl EventTable {
    /// Every per-event table, in the order they are searched and listed.
    pub const ALL: [EventTable; 3] = [
        EventTable::Requests,
        EventTable::Changes,
        EventTable::RouteChanges,
    ];

    /// The table's name in the store (`requests`).
    pub fn name(self) -> &'static str {
        match self {
            EventTable::Requests => "requests",
            EventTable::Changes => "changes",
            EventTable::RouteChanges => "route_changes",
        }
    }

    /// What one row is, in the plural (`topology changes`), for captions.
    pub fn events(self) -> &'static str {
        match self {
            EventTable::Requests => "requests",
            EventTable::Changes | EventTable::RouteChanges => "topology changes",
        }
    }

    /// What an event that never finished did (`never served`), for captions.
    pub fn unfinished(self) -> &'static str {
        match self {
            EventTable::Requests => "never served",
            EventTable::Changes | EventTable::RouteChanges => "never converged",
        }
    }

    /// The per-event columns an empirical CDF can show, with their labels.
    pub fn distribution_columns(self) -> &'static [(&'static str, &'static str)] {
        match self {
            EventTable::Requests => &[("wait_s", "CS waiting time (s)")],
            EventTable::Changes => &[
                ("convergence_time_s", "convergence time (s)"),
                ("messages", "messages"),
            ],
            EventTable::RouteChanges => &[
                ("convergence_time_s", "convergence time (s)"),
                ("messages", "messages"),
                ("reversals", "reversal steps"),
                ("nodes_reversed", "nodes that reversed"),
            ],
        }
    }

    /// The report's health column for events cut off by a run's end: (health column,
    /// the `runs` column it sums, what it means).
    pub fn unfinished_count(self) -> (&'static str, &'static str, &'static str) {
        match self {
            EventTable::Requests => (
                "requests_unserved_at_end",
                "cs_waiting_at_end",
                "CS requests still waiting when a run ended (reported, not dropped)",
            ),
            EventTable::Changes => (
                "censored_changes",
                "censored_changes",
                "topology changes whose convergence the run's end cut off",
            ),
            EventTable::RouteChanges => (
                "route_censored_changes",
                "route_censored_changes",
                "topology changes whose convergence the run's end cut off",
            ),
        }
    }
}

impl Family {
    /// Every family. The order is the order of their metric columns in the `runs`
    /// table, which every sweep writes whole (null where a metric does not apply), so
    /// the tables of different studies have one schema.
    pub const ALL: [Family; 3] = [
        Family::LeaderElection,
        Family::MutualExclusion,
        Family::Route,
    ];

    /// The family's name in listings (`leader-election`).
    pub fn name(self) -> &'static str {
        match self {
            Family::LeaderElection => "leader-election",
            Family::MutualExclusion => "mutual-exclusion",
            Family::Route => "route",
        }
    }

    /// Whether runs need a CS workload (`[workload]` in specs, `--rate`/`--cs-time`).
    pub fn needs_workload(self) -> bool {
        match self {
            Family::LeaderElection | Family::Route => false,
            Family::MutualExclusion => true,
        }
    }

    /// The per-run metrics, in column order.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Family::LeaderElection => leader_election::METRICS,
            Family::MutualExclusion => mutual_exclusion::METRICS,
            Family::Route => route::METRICS,
        }
    }

    /// The per-event table the family fills.
    pub fn event_table(self) -> EventTable {
        match self {
            Family::LeaderElection => EventTable::Changes,
            Family::MutualExclusion => EventTable::Requests,
            Family::Route => EventTable::RouteChanges,
        }
    }

    /// The metrics a report draws by default against each numeric sweep axis.
    pub fn headline_metrics(self) -> &'static [&'static str] {
        match self {
            Family::LeaderElection => &["conv_time_mean", "msgs_per_change"],
            Family::MutualExclusion => &["wait_mean", "msgs_per_cs"],
            Family::Route => &["reversals_per_change", "route_conv_time_mean"],
        }
    }

    /// The metric a report compares pairwise by default (mean per-replication
    /// difference) when exactly two algorithms of the family ran.
    pub fn paired_metric(self) -> Option<&'static str> {
        match self {
            Family::LeaderElection | Family::Route => None,
            Family::MutualExclusion => Some("wait_mean"),
        }
    }

    /// What the family's per-run counts are divided by to compare runs of different
    /// lengths: (the `runs` column counting events, the ratio columns' suffix, what the
    /// ratio is per). Used for the messages-by-kind ratios ([`message_ratios`]).
    pub fn per_event(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Family::LeaderElection | Family::Route => {
                ("topology_changes", "per_change", "per topology change")
            }
            Family::MutualExclusion => ("cs_entries", "per_cs", "per CS entry"),
        }
    }

    /// The family's metric named `column`, if it declares one.
    pub fn metric(self, column: &str) -> Option<&'static Metric> {
        self.metrics().iter().find(|m| m.column == column)
    }
}

/// The label of any family's metric `column`, or of a per-event column.
pub fn metric_label(column: &str) -> Option<&'static str> {
    Family::ALL
        .iter()
        .find_map(|f| f.metric(column))
        .map(|m| m.label)
        .or_else(|| {
            EventTable::ALL.iter().find_map(|t| {
                t.distribution_columns()
                    .iter()
                    .find(|(c, _)| *c == column)
                    .map(|(_, l)| *l)
            })
        })
}

/// One metric's value in one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MetricValue {
    /// A [`MetricKind::Real`] metric; `None` when undefined (no event to average).
    Real(Option<f64>),
    /// A [`MetricKind::Count`] metric.
    Count(u64),
}

/// The values of a family's declared metrics in one run, in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyMetrics {
    family: Family,
    values: Vec<MetricValue>,
}

impl FamilyMetrics {
    /// The values of `family`'s metrics, each given with its column, in any order.
    ///
    /// # Panics
    /// If a declared metric has no value, or one of the wrong kind, or a value names no
    /// declared metric or one twice: a family module computing other metrics than it
    /// declares is a programming error.
    pub fn new(family: Family, mut named: Vec<(&'static str, MetricValue)>) -> Self {
        let declared = family.metrics();
        let mut values = Vec::with_capacity(declared.len());
        for m in declared {
            let at = named
                .iter()
                .position(|(column, _)| *column == m.column)
                .unwrap_or_else(|| panic!("{}: no value for {}", family.name(), m.column));
            let (_, value) = named.swap_remove(at);
            let kind = match value {
                MetricValue::Real(_) => MetricKind::Real,
                MetricValue::Count(_) => MetricKind::Count,
            };
            assert_eq!(m.kind, kind, "metric {} has the wrong kind", m.column);
            values.push(value);
        }
        assert!(
            named.is_empty(),
            "{}: values for undeclared or repeated metrics {:?}",
            family.name(),
            named.iter().map(|(c, _)| c).collect::<Vec<_>>()
        );
        Self { family, values }
    }

    /// The family these metrics belong to.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Each declared metric with its value.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Metric, MetricValue)> + '_ {
        self.family
            .metrics()
            .iter()
            .zip(self.values.iter().copied())
    }

    /// The value of `column`, if the family declares it.
    pub fn get(&self, column: &str) -> Option<MetricValue> {
        self.iter()
            .find(|(m, _)| m.column == column)
            .map(|(_, v)| v)
    }

    /// The real metric `column` (`None` if undefined or not declared).
    pub fn real(&self, column: &str) -> Option<f64> {
        match self.get(column) {
            Some(MetricValue::Real(v)) => v,
            Some(MetricValue::Count(c)) => Some(c as f64),
            None => None,
        }
    }

    /// The count metric `column` (`None` if not declared).
    pub fn count(&self, column: &str) -> Option<u64> {
        match self.get(column) {
            Some(MetricValue::Count(c)) => Some(c),
            _ => None,
        }
    }
}

/// As a map from column name to value (flattened into `linkrev run --json`).
impl Serialize for FamilyMetrics {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.values.len()))?;
        for (m, v) in self.iter() {
            match v {
                MetricValue::Real(x) => map.serialize_entry(m.column, &x)?,
                MetricValue::Count(c) => map.serialize_entry(m.column, &c)?,
            }
        }
        map.end()
    }
}

impl Serialize for Family {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_columns_are_unique_across_families_and_tables() {
        let mut seen = std::collections::HashSet::new();
        for f in Family::ALL {
            for m in f.metrics() {
                assert!(seen.insert(m.column), "{} declared twice", m.column);
            }
            for h in f.headline_metrics().iter().chain(f.paired_metric().iter()) {
                assert!(f.metric(h).is_some(), "{h} is not a metric of {}", f.name());
            }
        }
        for t in EventTable::ALL {
            let (_, runs_column, _) = t.unfinished_count();
            assert!(
                Family::ALL
                    .iter()
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
        let family = Family::MutualExclusion;
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
        let family = Family::MutualExclusion;
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
        for f in Family::ALL {
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
