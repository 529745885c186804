//! What a family is made of: the types every family definition fills in.
//!
//! A family is one value, [`FamilyDef`] (its name, workload need, metrics with their
//! support, per-event table, report defaults and check policy), reached through the
//! copyable handle [`Family`], plus one marker type implementing [`Watches`] for every
//! protocol with the family's view trait: how its monitors watch a run, how a run is
//! summarised, how it is checked and what the replay draws. Everything downstream
//! (tables, report, `linkrev run`'s printout, the checker's table, the registry) reads
//! these, so no code elsewhere matches on a family.
//!
//! This file imports nothing of the family files, the run's output or the layers
//! above, so every family file and [`crate::run`] with its generic runner
//! ([`crate::run::runner`]) can build on it without an import circle.

use crate::NodeId;
use crate::check::CheckSetup;
use crate::check::model::ProtocolModel;
use crate::observe::safety::SafetyLog;
use crate::protocol::{Message, Protocol};
use crate::sim::{ChangeMode, Observer, RunConfig, RunCounters, SimTime};
use serde::Serialize;
use serde::ser::SerializeMap;
use std::any::Any;
use std::fmt;

// ---------------------------------------------------------------------------------------
// Metrics

/// Whether a metric is a real number or a count (its column's type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// `f64`, null when undefined (a mean over no events).
    Real,
    /// `u64`.
    Count,
}

use crate::stats::IntervalMethod;
pub use crate::stats::Support;

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
    /// messages per event ([`super::message_ratios`]): every by-kind count, and other
    /// message counts a family marks ([`Metric::per_event_ratio`]).
    pub ratio: bool,
    /// The interval a figure draws around the metric's mean unless it asks for another
    /// ([`crate::stats::intervals`]): Student-t by default, a bootstrap for metrics
    /// whose run-to-run spread is heavy-tailed.
    pub interval: IntervalMethod,
    /// For a per-run ratio (messages per CS entry): its numerator and denominator
    /// columns, so a figure can pool it over runs (Σ numerator / Σ denominator, where a
    /// run with more events weighs more) with `statistic = "pooled"`.
    pub pooled: Option<(&'static str, &'static str)>,
    /// The fewest runs the guarded stopping rule judges the metric on
    /// ([`crate::stats::sequential`]): above the spec's `min` for a metric whose
    /// run-to-run spread hides in rare huge values, so a point does not stop before it
    /// has had the chance to see them. 0 leaves it to the spec.
    pub least_runs: u32,
}

impl Metric {
    /// A real metric `>= 0` (a time, a mean count).
    pub const fn real(column: &'static str, label: &'static str) -> Metric {
        Metric {
            column,
            label,
            kind: MetricKind::Real,
            support: Support::NonNegative,
            messages: &[],
            ratio: false,
            interval: IntervalMethod::StudentT,
            pooled: None,
            least_runs: 0,
        }
    }

    /// A real metric in `[0, 1]`.
    pub const fn fraction(column: &'static str, label: &'static str) -> Metric {
        Metric {
            support: Support::UnitInterval,
            ..Metric::real(column, label)
        }
    }

    /// A count.
    pub const fn count(column: &'static str, label: &'static str) -> Metric {
        Metric {
            kind: MetricKind::Count,
            ..Metric::real(column, label)
        }
    }

    /// A count of the messages of the named kinds sent in a run.
    pub const fn messages(
        column: &'static str,
        label: &'static str,
        kinds: &'static [&'static str],
    ) -> Metric {
        Metric {
            messages: kinds,
            ratio: true,
            ..Metric::count(column, label)
        }
    }

    /// The metric, with `method` as its default interval.
    pub const fn with_interval(self, method: IntervalMethod) -> Self {
        Metric {
            interval: method,
            ..self
        }
    }

    /// The metric, a per-run ratio of the runs-table columns `numerator` and
    /// `denominator` that figures can also pool over runs.
    pub const fn pooled_from(self, numerator: &'static str, denominator: &'static str) -> Self {
        Metric {
            pooled: Some((numerator, denominator)),
            ..self
        }
    }

    /// The metric, judged by the guarded stopping rule on at least `runs` runs
    /// ([`Metric::least_runs`]).
    pub const fn judged_from(self, runs: u32) -> Self {
        Metric {
            least_runs: runs,
            ..self
        }
    }

    /// The metric, also shown per event of its family in message breakdowns.
    pub const fn per_event_ratio(self) -> Self {
        Metric {
            ratio: true,
            ..self
        }
    }
}

/// The kind of the routing layer's route-discovery flood messages (`me-raymond` with
/// `routing = discovery`; [`crate::sim::network`]).
pub const ROUTE_REQUEST: &str = "RouteRequest";
/// The kind of the routing layer's route-discovery replies.
pub const ROUTE_REPLY: &str = "RouteReply";

/// The values of `metrics`' message counts ([`Metric::messages`]), by column, from a
/// run of a protocol whose messages are `M`.
pub fn message_counts<M: Message>(
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
    /// declared metric or one twice: a family computing other metrics than it declares
    /// is a programming error.
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

/// The mean, `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// `num / den`, `None` when `den` is zero.
pub fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

pub use crate::stats::quantiles::quantile;

// ---------------------------------------------------------------------------------------
// Per-event tables

/// The type of a per-event column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// `f64`.
    Real,
    /// `f64` or null.
    OptionalReal,
    /// `u64`.
    Count,
    /// A node id (`u32`).
    Node,
    /// `bool`.
    Flag,
    /// Text.
    Word,
}

/// One per-event column's values for some rows.
#[derive(Clone, Debug, PartialEq)]
pub enum Cells {
    /// [`CellKind::Real`].
    Real(Vec<f64>),
    /// [`CellKind::OptionalReal`].
    OptionalReal(Vec<Option<f64>>),
    /// [`CellKind::Count`].
    Count(Vec<u64>),
    /// [`CellKind::Node`].
    Node(Vec<NodeId>),
    /// [`CellKind::Flag`].
    Flag(Vec<bool>),
    /// [`CellKind::Word`].
    Word(Vec<&'static str>),
}

impl Cells {
    /// No values, of `kind`.
    pub fn empty(kind: CellKind) -> Cells {
        match kind {
            CellKind::Real => Cells::Real(Vec::new()),
            CellKind::OptionalReal => Cells::OptionalReal(Vec::new()),
            CellKind::Count => Cells::Count(Vec::new()),
            CellKind::Node => Cells::Node(Vec::new()),
            CellKind::Flag => Cells::Flag(Vec::new()),
            CellKind::Word => Cells::Word(Vec::new()),
        }
    }

    /// The kind of these values.
    pub fn kind(&self) -> CellKind {
        match self {
            Cells::Real(_) => CellKind::Real,
            Cells::OptionalReal(_) => CellKind::OptionalReal,
            Cells::Count(_) => CellKind::Count,
            Cells::Node(_) => CellKind::Node,
            Cells::Flag(_) => CellKind::Flag,
            Cells::Word(_) => CellKind::Word,
        }
    }

    /// Appends `more`, of the same kind.
    ///
    /// # Panics
    /// If the kinds differ (a family's rows disagreeing with its declared columns).
    pub fn append(&mut self, more: Cells) {
        match (self, more) {
            (Cells::Real(a), Cells::Real(b)) => a.extend(b),
            (Cells::OptionalReal(a), Cells::OptionalReal(b)) => a.extend(b),
            (Cells::Count(a), Cells::Count(b)) => a.extend(b),
            (Cells::Node(a), Cells::Node(b)) => a.extend(b),
            (Cells::Flag(a), Cells::Flag(b)) => a.extend(b),
            (Cells::Word(a), Cells::Word(b)) => a.extend(b),
            (a, b) => panic!("cells of {:?} appended to {:?}", b.kind(), a.kind()),
        }
    }
}

/// A run's per-event records, as the rows of its family's per-event table. A family
/// implements it for its record type; the store and the report read only these.
pub trait EventRows: fmt::Debug + Send + Sync + 'static {
    /// The number of rows.
    fn len(&self) -> usize;
    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The columns of the rows, in the order the table declares them
    /// ([`EventTableDef::columns`]).
    fn columns(&self) -> Vec<Cells>;
    /// The records themselves, for callers that know the family's record type.
    fn as_any(&self) -> &dyn Any;
    /// A boxed copy.
    fn boxed_clone(&self) -> Box<dyn EventRows>;
}

/// One record of a family's per-event table (a topology change, a CS request): the
/// family says how its records fill the table's columns, and a `Vec` of them is the
/// run's [`EventRows`].
pub trait EventRecord: Clone + fmt::Debug + Send + Sync + 'static {
    /// The columns of `rows`, in the order the table declares them
    /// ([`EventTableDef::columns`]).
    fn columns(rows: &[Self]) -> Vec<Cells>;
}

impl<R: EventRecord> EventRows for Vec<R> {
    fn len(&self) -> usize {
        self.len()
    }

    fn columns(&self) -> Vec<Cells> {
        R::columns(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn boxed_clone(&self) -> Box<dyn EventRows> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn EventRows> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

/// A per-event table: one row per event a family measures (a CS request, a topology
/// change), so figures can show distributions, not only per-run means.
#[derive(Debug)]
pub struct EventTableDef {
    /// The table's name in the store (`requests`).
    pub name: &'static str,
    /// What one row is, in the plural (`topology changes`), for captions.
    pub events: &'static str,
    /// What an event that never finished did (`never served`), for captions.
    pub unfinished: &'static str,
    /// The family's columns after the run's identifying ones, with their types.
    pub columns: &'static [(&'static str, CellKind)],
    /// The columns an empirical CDF can show, with their labels.
    pub distribution_columns: &'static [(&'static str, &'static str)],
    /// The report's health column for events cut off by a run's end: (health column,
    /// the `runs` column it sums, what it means).
    pub unfinished_count: (&'static str, &'static str, &'static str),
}

/// A family's per-event table: a copyable handle on its [`EventTableDef`].
#[derive(Clone, Copy)]
pub struct EventTable(pub &'static EventTableDef);

impl EventTable {
    /// The table's name in the store (`requests`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What one row is, in the plural (`topology changes`), for captions.
    pub fn events(self) -> &'static str {
        self.0.events
    }

    /// What an event that never finished did (`never served`), for captions.
    pub fn unfinished(self) -> &'static str {
        self.0.unfinished
    }

    /// The family's columns after the identifying ones.
    pub fn columns(self) -> &'static [(&'static str, CellKind)] {
        self.0.columns
    }

    /// The per-event columns an empirical CDF can show, with their labels.
    pub fn distribution_columns(self) -> &'static [(&'static str, &'static str)] {
        self.0.distribution_columns
    }

    /// The report's health column for events cut off by a run's end: (health column,
    /// the `runs` column it sums, what it means).
    pub fn unfinished_count(self) -> (&'static str, &'static str, &'static str) {
        self.0.unfinished_count
    }
}

impl PartialEq for EventTable {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for EventTable {}

impl std::hash::Hash for EventTable {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl fmt::Debug for EventTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

// ---------------------------------------------------------------------------------------
// The family

/// What the family's per-run counts are divided by to compare runs of different
/// lengths (messages per CS entry, per topology change).
#[derive(Clone, Copy, Debug)]
pub struct PerEvent {
    /// The `runs` column counting the events (`cs_entries`).
    pub count: &'static str,
    /// The suffix of the ratio columns (`per_cs`).
    pub suffix: &'static str,
    /// What the ratio is per, in words (`per CS entry`).
    pub what: &'static str,
}

/// How `linkrev check` checks the family's algorithms.
#[derive(Clone, Copy, Debug)]
pub struct CheckPolicy {
    /// Whether topology changes overlap traffic or wait for quiet (leader election is
    /// checked in its paper's setting, one change at a time): the table's mode, and
    /// `check --changes-mode`'s default.
    pub table_changes: ChangeMode,
}

/// Everything linkrev knows about a family that does not depend on the protocol.
#[derive(Debug)]
pub struct FamilyDef {
    /// The family's name in listings (`leader-election`).
    pub name: &'static str,
    /// Whether runs need a CS workload (`[workload]` in specs, `--rate`/`--cs-time`,
    /// requests in the checker).
    pub needs_workload: bool,
    /// The per-run metrics, in column order.
    pub metrics: &'static [Metric],
    /// The per-event table the family fills.
    pub events: EventTableDef,
    /// The metrics a report draws by default against each numeric sweep axis.
    pub headline: &'static [&'static str],
    /// The metric a report compares pairwise by default (mean per-replication
    /// difference) when exactly two algorithms of the family ran.
    pub paired: Option<&'static str>,
    /// What per-run counts are divided by.
    pub per_event: PerEvent,
    /// How the checker's table checks it.
    pub check: CheckPolicy,
}

/// A problem with its own correctness notion and metrics: a copyable handle on its
/// [`FamilyDef`]. Two handles are equal when they name the same family.
#[derive(Clone, Copy)]
pub struct Family(pub &'static FamilyDef);

impl Family {
    /// The family's name in listings (`leader-election`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Whether runs need a CS workload (`[workload]` in specs, `--rate`/`--cs-time`).
    pub fn needs_workload(self) -> bool {
        self.0.needs_workload
    }

    /// The per-run metrics, in column order.
    pub fn metrics(self) -> &'static [Metric] {
        self.0.metrics
    }

    /// The per-event table the family fills.
    pub fn event_table(self) -> EventTable {
        EventTable(&self.0.events)
    }

    /// The metrics a report draws by default against each numeric sweep axis.
    pub fn headline_metrics(self) -> &'static [&'static str] {
        self.0.headline
    }

    /// The metric a report compares pairwise by default when exactly two algorithms of
    /// the family ran.
    pub fn paired_metric(self) -> Option<&'static str> {
        self.0.paired
    }

    /// What the family's per-run counts are divided by: (the `runs` column counting
    /// events, the ratio columns' suffix, what the ratio is per). Used for the
    /// messages-by-kind ratios ([`super::message_ratios`]).
    pub fn per_event(self) -> (&'static str, &'static str, &'static str) {
        let p = self.0.per_event;
        (p.count, p.suffix, p.what)
    }

    /// How the checker's table checks the family.
    pub fn check_policy(self) -> CheckPolicy {
        self.0.check
    }

    /// The family's metric named `column`, if it declares one.
    pub fn metric(self, column: &str) -> Option<&'static Metric> {
        self.metrics().iter().find(|m| m.column == column)
    }
}

impl PartialEq for Family {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Family {}

impl std::hash::Hash for Family {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl fmt::Debug for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for Family {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------
// The typed half: watching, summarising, checking and drawing runs of a protocol

/// A node's roles in its family, as the replay viewer draws them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// The leader it believes in (leader election).
    pub leader: Option<NodeId>,
    /// It believes it leads its component.
    pub leads: bool,
    /// Tokens it holds (mutual exclusion).
    pub tokens: u32,
    /// It is in its critical section.
    pub cs: bool,
    /// It is the routes' destination.
    pub destination: bool,
}

/// A family's reading of a node's roles ([`Watches::roles`]).
pub type RolesOf<P> = Box<dyn Fn(&P, NodeId) -> Roles>;

/// A finished run, as a family's summary reads it.
pub struct FinishedRun<'a, P> {
    /// Every node's final state.
    pub nodes: &'a [P],
    /// The simulator's counters.
    pub counters: &'a RunCounters,
    /// The CS requests the workload made (none without a workload).
    pub requests: &'a [crate::sim::RequestRecord],
    /// The run's configuration.
    pub config: &'a RunConfig,
}

/// What a family's summary of a run is: its metrics' values, by column, and its
/// per-event records.
pub type Summary = (Vec<(&'static str, MetricValue)>, Box<dyn EventRows>);

/// How a family watches, summarises, checks and draws runs of protocol `P`: the typed
/// half of its definition, implemented once per family by a marker type for every
/// protocol with the family's view trait (`impl<P: Protocol + LeaderView>
/// Watches<P> for LeaderElection`). One generic run ([`crate::run::runner::run_with`]), one
/// generic check ([`super::check`]) and one generic replay
/// ([`crate::replay::record`]) serve every family through it.
pub trait Watches<P: Protocol>: 'static {
    /// The family's value.
    const FAMILY: Family;

    /// The monitors that watch a run (metrics and safety).
    type Monitor: Observer<P>;

    /// Fresh monitors for a run configured with `config`.
    fn monitor(config: &P::Config) -> Self::Monitor;

    /// The monitors' safety log (violations counted, the first ones kept whole).
    fn safety(monitor: &mut Self::Monitor) -> &mut SafetyLog;

    /// The metric values and per-event records of a finished run. The metrics may come
    /// in any order: each is matched to its declaration by its column.
    fn summarise(monitor: &mut Self::Monitor, run: &FinishedRun<'_, P>) -> Summary;

    /// The checker's model of `P` with the family's properties.
    fn model(config: P::Config, setup: &CheckSetup) -> ProtocolModel<P>;

    /// What the replay viewer draws of a node of a run configured with `config`.
    fn roles(config: &P::Config) -> RolesOf<P>;
}

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
    pub keep_from: SimTime,
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
            keep_from: SimTime::ZERO,
            states: None,
        }
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
        let long = [1.0, f64::INFINITY, f64::INFINITY];
        assert_eq!(quantile(&long, 0.5), Some(f64::INFINITY));
        assert_eq!(quantile(&long, 0.95), Some(f64::INFINITY));
    }
}
