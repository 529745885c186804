//! The plan of a sweep: every run with its parameters, key and seed.
//!
//! A run key names a run by its experiment, algorithm, every parameter value and its
//! replication, in a canonical text form, so it is stable across processes, thread counts
//! and shard splits. The run seed derives from the master seed and the key *without* the
//! algorithm, so every algorithm of one replication sees the same trajectories, delays
//! stream seed and request process (common random numbers: paired comparisons).

use crate::mobility::rwp::RwpParams;
use crate::protocol::AlgoParams;
pub use crate::protocol::ParamValue;
use crate::registry::Algorithm;
use crate::sim::seeds::{self, Purpose};
use crate::sim::{RunConfig, SimTime, WorkloadConfig};
use crate::sweep::specs::point::{Point, point_index};
use crate::sweep::specs::schema::{Choice, MobilityKind, Scope, Spec, SpecParam, SpecValue};
use crate::sweep::specs::seeds::run_seed;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a run's mobility comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MobilitySource {
    /// Generated; `seed` already derived for this run.
    Rwp(RwpParams),
    /// Read from a trace file, with the SUMO activity file when the spec asks for it.
    Trace {
        /// The trace file.
        path: PathBuf,
        /// Its activity file ([`crate::mobility::activity`]).
        activity: Option<PathBuf>,
    },
}

/// One run of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    /// Position in the plan's canonical order (shards split on it).
    pub index: usize,
    /// Stable key, e.g. `me-load/algo=me-rl/rate=0.02/speed_max=20.0/rep=3`.
    pub key: String,
    /// The algorithm run.
    pub algorithm: Algorithm,
    /// Replication number, from 0.
    pub replication: u32,
    /// Run seed (`config.seed`), equal for all algorithms of one parameter point and
    /// replication.
    pub seed: u64,
    /// The text the seed derives from: the key without the algorithm, with every
    /// parameter (fixed ones too), e.g. `me-load/area=1500x300/…/speed_max=20.0/rep=3`.
    /// Kept so that stored results can be matched against the exact parameters.
    pub seed_text: String,
    /// Every parameter value, sorted by name (the algorithm and replication excluded),
    /// the algorithm's own parameters included.
    pub params: Vec<(String, ParamValue)>,
    /// The algorithm's parameters, checked and complete (also in `params`).
    pub algo_params: AlgoParams,
    /// Where the trajectories come from.
    pub mobility: MobilitySource,
    /// Radio range, metres.
    pub range: f64,
    /// Network, workload, duration and seed. For a trace without a `duration` in the spec
    /// `config.duration` is a zero placeholder: the executor sets it to the trace's own
    /// duration once the trace is read (see `duration`).
    pub config: RunConfig,
    /// Simulated duration in seconds, or `None` for a trace's own duration.
    pub duration: Option<f64>,
}

/// A whole sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The spec's `name`.
    pub experiment: String,
    /// The spec file (trace paths in it are relative to its directory).
    pub spec_path: PathBuf,
    /// The sweep axes (parameters given as lists), in name order, with their values.
    pub axes: Vec<(String, Vec<ParamValue>)>,
    /// Replications of every point.
    pub replications: u32,
    /// The spec's algorithms, in the order written.
    pub algorithms: Vec<Algorithm>,
    /// Every run, in canonical order (see [`crate::sweep::specs::expand`]).
    pub runs: RunList,
}

/// The runs of a plan, in canonical order, built one at a time when asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum RunList {
    /// Runs given one by one (plans built by hand, as in tests).
    Listed(Vec<PlannedRun>),
    /// A spec's runs, in compact form ([`Expansion`]).
    Expanded(Arc<Expansion>),
}

/// A spec's runs as (replication, parameter point, algorithm) slots; each run's key,
/// seed and parameters are derived from its slot when it is asked for.
#[derive(Debug, PartialEq)]
pub struct Expansion {
    /// The validated spec.
    pub(crate) spec: Spec,
    /// The directory its trace paths are relative to.
    pub(crate) base_dir: PathBuf,
    /// One per run, in canonical order.
    pub(crate) slots: Vec<Slot>,
}

/// Which run of a spec a plan index holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slot {
    /// Replication number.
    pub(crate) replication: u32,
    /// Index into the spec's algorithms.
    pub(crate) algorithm: u32,
    /// Parameter point: the odometer position over the axes.
    pub(crate) point: u64,
}

impl PlannedRun {
    /// What the store keeps to identify this run.
    pub fn identity(&self) -> crate::results::tables::RunIdentity {
        crate::results::tables::RunIdentity {
            index: self.index,
            key: self.key.clone(),
            algorithm: self.algorithm.name(),
            replication: self.replication,
            seed: self.seed,
            params: self.params.clone(),
        }
    }
}

impl Plan {
    /// The precision target and replication range of a sequential spec (`None` for a
    /// fixed replication count or a plan made by hand).
    pub fn sequential(&self) -> Option<&crate::sweep::specs::Sequential> {
        match &self.runs {
            RunList::Expanded(e) => e.spec.sequential.as_ref(),
            RunList::Listed(_) => None,
        }
    }
}

impl RunList {
    /// Number of runs.
    pub fn len(&self) -> usize {
        match self {
            RunList::Listed(runs) => runs.len(),
            RunList::Expanded(e) => e.slots.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Run `index` (panics when out of range, like indexing a slice).
    pub fn get(&self, index: usize) -> PlannedRun {
        match self {
            RunList::Listed(runs) => runs[index].clone(),
            RunList::Expanded(e) => materialize(e, index),
        }
    }

    /// Every run in order, each built as the iterator reaches it.
    pub fn iter(&self) -> impl Iterator<Item = PlannedRun> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first run of each algorithm, in plan order: every run of one algorithm has
    /// the same parameter names, so these give a plan's columns without building all.
    pub fn representatives(&self) -> Vec<PlannedRun> {
        match self {
            RunList::Listed(runs) => runs.clone(),
            RunList::Expanded(e) => {
                let mut seen = Vec::new();
                let mut firsts = Vec::new();
                for (i, slot) in e.slots.iter().enumerate() {
                    if !seen.contains(&slot.algorithm) {
                        seen.push(slot.algorithm);
                        firsts.push(i);
                        if seen.len() == e.spec.algorithms.len() {
                            break;
                        }
                    }
                }
                firsts.into_iter().map(|i| self.get(i)).collect()
            }
        }
    }

    /// The first run, if any.
    pub fn first(&self) -> Option<PlannedRun> {
        (!self.is_empty()).then(|| self.get(0))
    }

    /// The last run, if any.
    pub fn last(&self) -> Option<PlannedRun> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }
}

impl Plan {
    /// Simulated node-seconds over all runs (nodes × duration), a measure of the work;
    /// `None` when some run reads a trace, whose size is unknown until it is read.
    pub fn node_seconds(&self) -> Option<f64> {
        if let RunList::Expanded(e) = &self.runs {
            return expansion_node_seconds(e);
        }
        self.runs
            .iter()
            .map(|r| match (&r.mobility, r.duration) {
                (MobilitySource::Rwp(p), Some(d)) => Some(p.nodes as f64 * d),
                _ => None,
            })
            .sum()
    }
}

// ---------------------------------------------------------------------------------------
// Runs of an expanded spec, built from their slots

/// Builds run `index` of an expanded spec from its slot: key, seed and parameters.
fn materialize(expansion: &Expansion, index: usize) -> PlannedRun {
    let spec = &expansion.spec;
    let slot = expansion.slots[index];
    let algorithm = spec.algorithms[slot.algorithm as usize];
    let rep = slot.replication;
    let value_index = point_index(spec, slot.point);
    let applies = |p: &SpecParam| p.scope.applies_to(algorithm);
    let mut key = format!("{}/algo={}", spec.name, algorithm.name());
    let mut seed_text = spec.name.clone();
    let mut params = Vec::new();
    let mut point = Point::default();
    for (p, &i) in spec.params.iter().zip(&value_index) {
        if !applies(p) {
            continue;
        }
        point.0.push((p.name, &p.typed[i]));
        let v = &p.values[i];
        if p.is_axis {
            key.push_str(&format!("/{}={}", p.name, key_text(v)));
        }
        // The algorithm's own parameters stay out of the seed, as the algorithm does:
        // all algorithms of a point see the same draws.
        if !matches!(p.scope, Scope::Algorithm(_)) {
            seed_text.push_str(&format!("/{}={}", p.name, key_text(v)));
        }
        params.push((p.name.to_string(), v.clone()));
    }
    key.push_str(&format!("/rep={rep}"));
    seed_text.push_str(&format!("/rep={rep}"));
    let seed = run_seed(spec.master_seed, &seed_text);
    planned_run(
        index,
        key,
        seed_text,
        algorithm,
        rep,
        seed,
        params,
        &point,
        (&expansion.base_dir, spec.max_events),
    )
}

/// A value as written into a key: `/` (the key's separator) and `%` are percent-escaped,
/// so a trace path cannot split a key.
fn key_text(v: &ParamValue) -> String {
    v.to_string().replace('%', "%25").replace('/', "%2F")
}

#[allow(clippy::too_many_arguments)]
fn planned_run(
    index: usize,
    key: String,
    seed_text: String,
    algorithm: Algorithm,
    replication: u32,
    seed: u64,
    params: Vec<(String, ParamValue)>,
    point: &Point<'_>,
    (base_dir, max_events): (&Path, Option<u64>),
) -> PlannedRun {
    let (mobility, duration) = match point.get("trace") {
        Some(SpecValue::Trace(path)) => {
            let path = base_dir.join(path);
            let activity = match point.get("activity") {
                Some(SpecValue::Choice(_, Choice::Activity(true))) => {
                    Some(crate::mobility::format::activity_path(&path))
                }
                _ => None,
            };
            (
                MobilitySource::Trace { path, activity },
                point.get("duration").map(|_| point.number("duration")),
            )
        }
        _ => {
            let rwp = point.rwp(seeds::derive(seed, Purpose::Mobility));
            (MobilitySource::Rwp(rwp), Some(rwp.duration))
        }
    };
    let algo_params = AlgoParams::resolve(
        algorithm.params(),
        algorithm
            .params()
            .iter()
            .filter_map(|d| match point.get(d.name) {
                Some(SpecValue::Algorithm(v)) => Some((d.name, v.clone())),
                _ => None,
            }),
    )
    .expect("checked against the registry");
    let workload = algorithm.family().needs_workload().then(|| WorkloadConfig {
        rate: point.number("rate"),
        cs_time: match point.get("cs_time") {
            Some(SpecValue::CsTime(cs)) => *cs,
            other => unreachable!("cs_time is a CS time, got {other:?}"),
        },
    });
    let config = RunConfig {
        network: point.network(),
        workload,
        duration: duration.map_or(SimTime::ZERO, SimTime::from_secs_f64),
        seed,
        script: None,
        max_events,
    };
    PlannedRun {
        index,
        key,
        seed_text,
        algorithm,
        replication,
        seed,
        range: point.number("range"),
        params,
        algo_params,
        mobility,
        config,
        duration,
    }
}

/// Simulated node-seconds of an expanded spec's runs (nodes × duration summed), from
/// their slots without building the runs; `None` when the runs read traces.
fn expansion_node_seconds(expansion: &Expansion) -> Option<f64> {
    let spec = &expansion.spec;
    if spec.mobility != MobilityKind::RandomWaypoint {
        return None;
    }
    let mut per_point: std::collections::HashMap<u64, Option<f64>> = Default::default();
    let mut total = 0.0;
    for slot in &expansion.slots {
        let size = *per_point.entry(slot.point).or_insert_with(|| {
            let index = point_index(spec, slot.point);
            let value = |name: &str| {
                spec.params
                    .iter()
                    .zip(&index)
                    .find(|(p, _)| p.name == name)
                    .map(|(p, &i)| &p.typed[i])
            };
            match (value("nodes"), value("duration")) {
                (Some(SpecValue::Count(n)), Some(SpecValue::Number(d))) => Some(*n as f64 * d),
                _ => None,
            }
        });
        total += size?;
    }
    Some(total)
}
