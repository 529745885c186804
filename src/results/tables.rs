//! Records → polars DataFrames, in long format: one row per run (`runs`), per topology
//! change (`changes`), per CS request (`requests`). Every row carries the run index and
//! key, the experiment, algorithm, replication, seed, tool version and every parameter
//! value, so any table can be grouped or joined without a second source.
//!
//! Wall-clock time is deliberately not stored: it differs between machines and thread
//! counts, and the stored tables must be byte-identical for the same spec.

use crate::family::{self, Cells, EventTable, MetricKind, MetricValue};
use crate::protocol::ParamValue;
use crate::run::RunOutput;
use crate::topology::stats::MobilityStats;
use polars::prelude::*;

/// The columns every `runs` row has besides its family's metrics that a figure may
/// plot, declared as families declare theirs (label with unit, kind, support): the
/// run's own counts and its mobility covariates (`crate::topology::stats`).
pub const RUN_COLUMNS: &[family::def::Metric] = &[
    family::def::Metric::count("events", "events simulated"),
    family::def::Metric::count("messages", "messages sent"),
    family::def::Metric::count("topology_changes", "topology changes"),
    family::def::Metric::count("safety_violations", "safety violations"),
    family::def::Metric::count("tokens_lost", "tokens lost"),
    family::def::Metric::count("messages_lost", "messages lost"),
    family::def::Metric::count("mob_link_changes", "link changes"),
    family::def::Metric::real("mob_link_change_rate", "link changes per second"),
    family::def::Metric::real("mob_mean_degree", "mean node degree"),
    family::def::Metric::real("mob_mean_link_duration", "mean link duration (s)"),
    family::def::Metric::real("mob_mean_components", "mean number of components"),
    family::def::Metric::fraction("mob_frac_time_connected", "fraction of time connected"),
    family::def::Metric::real("mob_mean_speed", "mean node speed (m/s)"),
];

/// The columns that identify a run, first in every table's rows (runs and per-event
/// tables alike), then one column per spec parameter: (column, type, meaning).
pub const IDENTITY_COLUMNS: &[(&str, &str, &str)] = &[
    (
        "run_index",
        "count",
        "the run's position in the plan's canonical order",
    ),
    (
        "run_key",
        "text",
        "the run's stable key: experiment, algorithm, parameters and replication \
         (`me-load/algo=me-rl/rate=0.02/speed_max=20.0/rep=3`)",
    ),
    ("experiment", "text", "the spec's `name`"),
    ("algorithm", "text", "the algorithm's registry name"),
    ("replication", "count", "the replication, from 0"),
    (
        "seed",
        "count",
        "the run's seed, derived from `master_seed`, the replication and the parameters \
         other than the algorithm and its own, so a point's algorithms share their \
         mobility and workload",
    ),
    (
        "tool_version",
        "text",
        "the linkrev version that ran it (Cargo.toml's, see CHANGELOG.md)",
    ),
];

/// The `runs` columns that describe how a run went rather than measure it: (column,
/// type, meaning).
pub const OUTCOME_COLUMNS: &[(&str, &str, &str)] = &[
    ("nodes", "count", "nodes in the run"),
    ("duration_s", "real", "simulated time (s)"),
    (
        "first_violation",
        "text or null",
        "the first safety violation: kind, event index, time, nodes and detail",
    ),
    (
        "aborted",
        "text or null",
        "why the run stopped early (a message storm, time that stopped advancing, or \
         its event budget), or null",
    ),
];

/// Everything one finished run contributes to the store.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The experiment's name, repeated in every row.
    pub experiment: String,
    /// Which run it is: index, key, algorithm, replication, seed and parameters.
    pub run: RunIdentity,
    /// What the simulation produced: summary, change and request records.
    pub output: RunOutput,
    /// Mobility covariates of the run's trace at its range.
    pub mobility: MobilityStats,
}

/// Which run of a study a record is: what every stored row repeats to identify it. The
/// sweep's planned run says this and more (how to run it); the store needs only this.
#[derive(Clone, Debug, PartialEq)]
pub struct RunIdentity {
    /// Position in the plan's canonical order.
    pub index: usize,
    /// Stable key, e.g. `me-load/algo=me-rl/rate=0.02/speed_max=20.0/rep=3`.
    pub key: String,
    /// The algorithm's registry name.
    pub algorithm: &'static str,
    /// Replication number, from 0.
    pub replication: u32,
    /// Run seed.
    pub seed: u64,
    /// Every parameter value, sorted by name.
    pub params: Vec<(String, ParamValue)>,
}

/// The parameter columns of a sweep: every parameter name of any run, in name order,
/// with a sample value giving its type. Built once per plan ([`param_schema`]).
pub type ParamSchema = Vec<(String, ParamValue)>;

/// The parameter schema of a set of runs (normally a whole plan), from each run's
/// parameter values.
pub fn param_schema<'a>(runs: impl IntoIterator<Item = &'a [(String, ParamValue)]>) -> ParamSchema {
    let mut schema: ParamSchema = Vec::new();
    for params in runs {
        for (name, value) in params {
            if !schema.iter().any(|(n, _)| n == name) {
                schema.push((name.clone(), value.clone()));
            }
        }
    }
    schema.sort_by(|a, b| a.0.cmp(&b.0));
    schema
}

/// linkrev's version, stored in every row so results of different versions are never
/// silently mixed.
pub fn tool_version() -> String {
    format!("linkrev {}", env!("CARGO_PKG_VERSION"))
}

/// Builds the identifying columns, repeating each record's values `counts[i]` times.
fn id_columns(records: &[RunRecord], counts: &[usize], schema: &ParamSchema) -> Vec<Column> {
    let repeat = |f: &dyn Fn(&RunRecord) -> String| -> Vec<String> {
        records
            .iter()
            .zip(counts)
            .flat_map(|(r, &n)| std::iter::repeat_n(f(r), n))
            .collect()
    };
    let index: Vec<u64> = records
        .iter()
        .zip(counts)
        .flat_map(|(r, &n)| std::iter::repeat_n(r.run.index as u64, n))
        .collect();
    let replication: Vec<u32> = records
        .iter()
        .zip(counts)
        .flat_map(|(r, &n)| std::iter::repeat_n(r.run.replication, n))
        .collect();
    let seed: Vec<u64> = records
        .iter()
        .zip(counts)
        .flat_map(|(r, &n)| std::iter::repeat_n(r.run.seed, n))
        .collect();
    let mut columns = vec![
        Column::new("run_index".into(), index),
        Column::new("run_key".into(), repeat(&|r| r.run.key.clone())),
        Column::new("experiment".into(), repeat(&|r| r.experiment.clone())),
        Column::new("algorithm".into(), repeat(&|r| r.run.algorithm.to_string())),
        Column::new("replication".into(), replication),
        Column::new("seed".into(), seed),
        Column::new("tool_version".into(), repeat(&|_| tool_version())),
    ];
    // Parameters: one column each, typed by the plan's schema, so every chunk of one
    // sweep has the same columns (leader-election runs have no workload: null there).
    for (name, sample) in schema.iter().map(|(n, v)| (n.as_str(), v)) {
        let values = records.iter().zip(counts).flat_map(|(r, &n)| {
            let v = r.run.params.iter().find(|(k, _)| k == name).map(|(_, v)| v);
            std::iter::repeat_n(v, n)
        });
        let column = match sample {
            ParamValue::Int(_) => Column::new(
                name.into(),
                values
                    .map(|v| {
                        if let Some(ParamValue::Int(x)) = v {
                            Some(*x)
                        } else {
                            None
                        }
                    })
                    .collect::<Vec<_>>(),
            ),
            ParamValue::Float(_) => Column::new(
                name.into(),
                values
                    .map(|v| match v {
                        Some(ParamValue::Float(x)) => Some(*x),
                        Some(ParamValue::Int(x)) => Some(*x as f64),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
            ),
            ParamValue::Text(_) => Column::new(
                name.into(),
                values
                    .map(|v| v.map(ToString::to_string))
                    .collect::<Vec<_>>(),
            ),
        };
        columns.push(column);
    }
    columns
}

fn frame(columns: Vec<Column>) -> PolarsResult<DataFrame> {
    let height = columns.first().map_or(0, Column::len);
    DataFrame::new(height, columns)
}

/// One row per run: identification, parameters, metrics and mobility covariates.
pub fn runs_frame(records: &[RunRecord], schema: &ParamSchema) -> PolarsResult<DataFrame> {
    let ones = vec![1; records.len()];
    let mut columns = id_columns(records, &ones, schema);
    let s = |f: &dyn Fn(&RunRecord) -> Option<f64>| records.iter().map(f).collect::<Vec<_>>();
    let u = |f: &dyn Fn(&RunRecord) -> u64| records.iter().map(f).collect::<Vec<_>>();
    let ou = |f: &dyn Fn(&RunRecord) -> Option<u64>| records.iter().map(f).collect::<Vec<_>>();
    columns.extend([
        Column::new("nodes".into(), u(&|r| r.output.summary.nodes as u64)),
        Column::new(
            "duration_s".into(),
            s(&|r| Some(r.output.summary.duration_s)),
        ),
        Column::new("events".into(), u(&|r| r.output.summary.events)),
        Column::new("messages".into(), u(&|r| r.output.summary.messages)),
        Column::new(
            "topology_changes".into(),
            u(&|r| r.output.summary.topology_changes),
        ),
    ]);
    // Every family's metrics, null in runs of other families: one schema for every sweep.
    for family in family::ALL {
        for metric in family.metrics() {
            let value = |r: &RunRecord| r.output.summary.metrics.get(metric.column);
            columns.push(match metric.kind {
                MetricKind::Real => Column::new(
                    metric.column.into(),
                    s(&|r| match value(r) {
                        Some(MetricValue::Real(x)) => x,
                        _ => None,
                    }),
                ),
                MetricKind::Count => Column::new(
                    metric.column.into(),
                    ou(&|r| match value(r) {
                        Some(MetricValue::Count(c)) => Some(c),
                        _ => None,
                    }),
                ),
            });
        }
    }
    columns.extend([
        Column::new(
            "safety_violations".into(),
            u(&|r| r.output.summary.safety_violations),
        ),
        Column::new(
            "first_violation".into(),
            records
                .iter()
                .map(|r| {
                    r.output.summary.first_violation.as_ref().map(|v| {
                        format!(
                            "{} at event {} ({:.9} s), nodes {:?}: {}",
                            v.kind, v.event_index, v.time_s, v.nodes, v.detail
                        )
                    })
                })
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "aborted".into(),
            records
                .iter()
                .map(|r| r.output.summary.aborted.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new("tokens_lost".into(), u(&|r| r.output.summary.tokens_lost)),
        Column::new(
            "messages_lost".into(),
            u(&|r| r.output.summary.messages_lost),
        ),
        Column::new(
            "mob_link_changes".into(),
            u(&|r| r.mobility.link_changes as u64),
        ),
        Column::new(
            "mob_link_change_rate".into(),
            s(&|r| Some(r.mobility.link_change_rate)),
        ),
        Column::new(
            "mob_mean_degree".into(),
            s(&|r| Some(r.mobility.mean_degree)),
        ),
        Column::new(
            "mob_mean_link_duration".into(),
            s(&|r| r.mobility.mean_link_duration),
        ),
        Column::new(
            "mob_mean_components".into(),
            s(&|r| Some(r.mobility.mean_components)),
        ),
        Column::new(
            "mob_frac_time_connected".into(),
            s(&|r| Some(r.mobility.frac_time_connected)),
        ),
        Column::new("mob_mean_speed".into(), s(&|r| Some(r.mobility.mean_speed))),
    ]);
    // What the run stored in each per-event table: `merge`, compaction, resume and
    // `report` check the tables against these counts, so rows lost to a damaged or
    // half-written directory are found instead of silently missing from a figure.
    for table in family::EVENT_TABLES {
        columns.push(Column::new(
            stored_rows_column(table).into(),
            u(&|r| event_rows(table, &r.output) as u64),
        ));
    }
    // A parameter column (e.g. `nodes` when swept) already holds what a same-named
    // metric would repeat; keep the first.
    let mut seen = std::collections::HashSet::new();
    columns.retain(|c| seen.insert(c.name().clone()));
    frame(columns)
}

/// The `runs` column recording how many rows a run stored in `table`.
pub fn stored_rows_column(table: EventTable) -> String {
    format!("rows_{}", table.name())
}

/// How many rows one run contributes to a per-event table: its records' if the run's
/// family fills `table`, none otherwise.
pub fn event_rows(table: EventTable, output: &RunOutput) -> usize {
    if output.summary.family.event_table() == table {
        output.events.len()
    } else {
        0
    }
}

/// The rows of a per-event table: the identifying columns, then the table's own
/// ([`EventTable::columns`]), filled from the records of the runs whose family fills it.
pub fn event_frame(
    table: EventTable,
    records: &[RunRecord],
    schema: &ParamSchema,
) -> PolarsResult<DataFrame> {
    let counts: Vec<usize> = records
        .iter()
        .map(|r| event_rows(table, &r.output))
        .collect();
    let mut columns = id_columns(records, &counts, schema);
    let mut cells: Vec<Cells> = table
        .columns()
        .iter()
        .map(|&(_, k)| Cells::empty(k))
        .collect();
    for (record, _) in records.iter().zip(&counts).filter(|(_, n)| **n > 0) {
        let more = record.output.events.columns();
        assert_eq!(
            more.len(),
            cells.len(),
            "{}: the rows do not have the columns the table declares",
            table.name()
        );
        for (column, more) in cells.iter_mut().zip(more) {
            column.append(more);
        }
    }
    for (&(name, _), values) in table.columns().iter().zip(cells) {
        columns.push(match values {
            Cells::Real(v) => Column::new(name.into(), v),
            Cells::OptionalReal(v) => Column::new(name.into(), v),
            Cells::Count(v) => Column::new(name.into(), v),
            Cells::Node(v) => Column::new(name.into(), v),
            Cells::Flag(v) => Column::new(name.into(), v),
            Cells::Word(v) => Column::new(name.into(), v),
        });
    }
    frame(columns)
}
