//! A sequential sweep: which runs each point needs, decided from the runs stored.
//!
//! A spec with `replications = { min, max, batch }` and a `[precision]` target is
//! planned for `max` replications of every point, and run a wave at a time: every
//! point first gets `min`; a point whose first `n` replications are all stored and
//! whose intervals miss the target gets `batch` more, up to `max`
//! ([`crate::stats::sequential`] has the rule and its reference).
//!
//! [`decide`] is a function of the plan and the stored runs only, and reads only a
//! point's first `n` replications when it judges `n`. Hence:
//! - replication r of a point is the run a fixed sweep of `max` replications makes
//!   (same key, seed and run index), so the runs of a stopped sweep are a subset of
//!   the fixed sweep's;
//! - the decision does not depend on thread count, on how runs were batched, on a kill
//!   and resume, or on shards: each process, wave or `linkrev merge` recomputes it from
//!   what is stored, and a shard that runs while another is still busy with an earlier
//!   wave finds the same points undecided and leaves them.
//!
//! A point is all runs of one parameter combination: every algorithm gets the same
//! replications (its pairs stay whole for paired comparisons and a paired target). A
//! point is judged on every precision metric that each of its algorithms' families
//! has: every one must meet the target; with `paired = B`, the paired difference
//! a − B of every other algorithm a does instead.

use super::plan::{Plan, RunList};
use crate::registry::Algorithm;
use crate::results::store::{RUNS, Store};
use crate::stats::intervals::{Sample, interval};
use crate::stats::{Precision, Replications, Support};
use crate::sweep::specs::Sequential;
use std::collections::{BTreeMap, HashMap};

/// Where a point stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Some of its first `n` replications are not stored yet.
    Running,
    /// Every interval meets the target at `n`.
    Met,
    /// `n` reached `max` without meeting the target.
    StoppedAtMax,
}

/// The least precise interval of a point: which metric, for which algorithm, and how
/// far from the target.
#[derive(Clone, Debug, PartialEq)]
pub struct Worst {
    /// The metric column.
    pub metric: String,
    /// The algorithm (`a − b` for a paired target).
    pub algorithm: String,
    /// The achieved precision in the target's terms ([`crate::stats::Target::achieved`]):
    /// half-width over |mean|, or the half-width; infinite without an interval.
    pub achieved: f64,
}

/// One point of a sequential sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct PointState {
    /// The parameter values (`rate=0.02/speed_max=20.0`), as in run keys.
    pub label: String,
    /// Replications the point has (or is getting) now.
    pub n: u32,
    /// Where it stands.
    pub status: Status,
    /// Its least precise interval: at `n` once judged; while running, at the count
    /// before (`None` while its first `min` runs are not all stored).
    pub worst: Option<Worst>,
}

/// The state of a whole sequential sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Every point, in plan order.
    pub points: Vec<PointState>,
    /// The plan indices of every run the points need now (their first `n`
    /// replications), ascending.
    pub wanted: Vec<usize>,
    /// How many of `wanted` are not stored.
    pub missing: usize,
    /// The bound the achieved precision is compared with (γ/(1+γ), or β).
    pub bound: f64,
    /// Whether the bound is relative (a fraction of the mean).
    pub relative: bool,
}

impl Decision {
    /// Every point met its target or reached `max`, with every run stored.
    pub fn done(&self) -> bool {
        self.missing == 0 && self.points.iter().all(|p| p.status != Status::Running)
    }

    /// Points in `status`.
    pub fn count(&self, status: Status) -> usize {
        self.points.iter().filter(|p| p.status == status).count()
    }

    /// The least precise point of those in `status`, if any was judged.
    pub fn worst(&self, status: Status) -> Option<(&PointState, &Worst)> {
        self.points
            .iter()
            .filter(|p| p.status == status)
            .filter_map(|p| p.worst.as_ref().map(|w| (p, w)))
            .max_by(|a, b| a.1.achieved.total_cmp(&b.1.achieved))
    }

    /// `achieved` as words: "4.1%" of the mean, or the half-width itself.
    pub fn format_precision(&self, achieved: f64) -> String {
        match (self.relative, achieved.is_finite()) {
            (_, false) => "no interval".to_string(),
            (true, true) => format!("±{:.1}%", 100.0 * achieved),
            (false, true) => format!("±{achieved:.4}"),
        }
    }

    /// One line of progress: points done, points short, the worst precision.
    pub fn summary(&self) -> String {
        let (met, at_max, running) = (
            self.count(Status::Met),
            self.count(Status::StoppedAtMax),
            self.count(Status::Running),
        );
        let mut line = format!(
            "{} points: {met} met the target, {at_max} stopped at max, {running} still short \
             ({} runs to go in this wave)",
            self.points.len(),
            self.missing
        );
        let widest = self
            .worst(Status::Running)
            .map(|w| ("widest still short", w))
            .or_else(|| {
                self.worst(Status::StoppedAtMax)
                    .map(|w| ("widest at max", w))
            });
        if let Some((what, (point, worst))) = widest {
            line.push_str(&format!(
                "; {what}: {} of {} at {} ({}; target {})",
                self.format_precision(worst.achieved),
                worst.metric,
                point.label,
                worst.algorithm,
                self.format_precision(self.bound)
            ));
        }
        line
    }
}

/// The stored values of the precision metrics, by run index.
pub type StoredValues = HashMap<usize, Vec<Option<f64>>>;

/// Reads the precision metrics of every stored run of `store`, by run index.
pub fn stored_values(store: &Store, sequential: &Sequential) -> anyhow::Result<StoredValues> {
    let columns = store.columns(RUNS)?;
    if columns.is_empty() {
        return Ok(StoredValues::new());
    }
    let metrics: Vec<&str> = sequential
        .precision
        .metrics
        .iter()
        .map(String::as_str)
        .filter(|m| columns.iter().any(|c| c == m))
        .collect();
    let table = store.read_columns(RUNS, &metrics)?;
    let index = crate::results::aggregate::float_values(&table, "run_index")?;
    let mut values: Vec<Vec<Option<f64>>> = Vec::new();
    for m in &sequential.precision.metrics {
        values.push(if metrics.contains(&m.as_str()) {
            crate::results::aggregate::float_values(&table, m)?
        } else {
            vec![None; table.height()]
        });
    }
    let mut out = StoredValues::new();
    for (row, i) in index.iter().enumerate() {
        if let Some(i) = i {
            out.insert(*i as usize, values.iter().map(|v| v[row]).collect());
        }
    }
    Ok(out)
}

/// The state of `plan`'s sequential sweep in `store`, or `None` for a fixed plan.
pub fn decide_stored(plan: &Plan, store: &Store) -> anyhow::Result<Option<Decision>> {
    let Some(sequential) = plan.sequential() else {
        return Ok(None);
    };
    let stored = stored_values(store, sequential)?;
    Ok(Some(decide(plan, sequential, &stored)))
}

/// One run of a point: its replication, algorithm (index into the plan's) and plan
/// index.
#[derive(Clone, Copy)]
struct PointRun {
    replication: u32,
    algorithm: usize,
    index: usize,
}

/// The sweep's state: for each point, the replications it needs now, given the runs
/// `stored` (by run index; [`stored_values`]).
///
/// # Panics
/// If `plan` was not expanded from a spec (a hand-made plan has no points).
pub fn decide(plan: &Plan, sequential: &Sequential, stored: &StoredValues) -> Decision {
    let RunList::Expanded(expansion) = &plan.runs else {
        panic!("a sequential sweep needs a plan expanded from its spec");
    };
    let mut points: BTreeMap<u64, Vec<PointRun>> = BTreeMap::new();
    for (index, slot) in expansion.slots.iter().enumerate() {
        points.entry(slot.point).or_default().push(PointRun {
            replication: slot.replication,
            algorithm: slot.algorithm as usize,
            index,
        });
    }
    let precision = &sequential.precision;
    let mut decision = Decision {
        points: Vec::with_capacity(points.len()),
        wanted: Vec::new(),
        missing: 0,
        bound: precision.target.bound(),
        relative: matches!(precision.target, crate::stats::Target::Relative(_)),
    };
    for runs in points.values() {
        let state = judge_point(plan, sequential, runs, stored);
        for run in runs.iter().filter(|r| r.replication < state.n) {
            decision.wanted.push(run.index);
            decision.missing += usize::from(!stored.contains_key(&run.index));
        }
        decision.points.push(state);
    }
    decision.wanted.sort_unstable();
    decision
}

/// Grows one point's replications from `min` while its runs are stored and short.
fn judge_point(
    plan: &Plan,
    sequential: &Sequential,
    runs: &[PointRun],
    stored: &StoredValues,
) -> PointState {
    let label = point_label(&plan.runs.get(runs[0].index).key);
    let mut algorithms: Vec<usize> = Vec::new();
    for r in runs {
        if !algorithms.contains(&r.algorithm) {
            algorithms.push(r.algorithm);
        }
    }
    let named: Vec<Algorithm> = algorithms.iter().map(|&a| plan.algorithms[a]).collect();
    let (n, status, worst) = grow(sequential.replications, |n| {
        let all_stored = runs
            .iter()
            .filter(|r| r.replication < n)
            .all(|r| stored.contains_key(&r.index));
        // value(a, m): metric m of the point's algorithm a, replications below n, in
        // replication order.
        let value = |a: usize, m: usize| -> Vec<Option<f64>> {
            let mut of_a: Vec<(u32, Option<f64>)> = runs
                .iter()
                .filter(|r| r.algorithm == algorithms[a] && r.replication < n)
                .map(|r| (r.replication, stored.get(&r.index).and_then(|v| v[m])))
                .collect();
            of_a.sort_by_key(|(rep, _)| *rep);
            of_a.into_iter().map(|(_, v)| v).collect()
        };
        all_stored.then(|| judge(&named, &sequential.precision, &value))
    });
    PointState {
        label,
        n,
        status,
        worst,
    }
}

/// The stopping rule's walk over one point: from `min`, `batch` at a time, until the
/// target is met or `max` is reached. `judge_at(n)` judges the point's first `n`
/// replications ([`judge`]), or is `None` while they are not all stored, which leaves
/// the point [`Status::Running`] at `n` with the judgment that sent it there.
///
/// The sweep and the coverage harness ([`crate::coverage`]) both stop points through
/// this function, so the harness measures the rule the sweeps apply.
pub fn grow(
    replications: Replications,
    mut judge_at: impl FnMut(u32) -> Option<(bool, Option<Worst>)>,
) -> (u32, Status, Option<Worst>) {
    let mut n = replications.min;
    // The judgment that sent it past its previous count, shown while it runs.
    let mut last: Option<Worst> = None;
    loop {
        let Some((met, worst)) = judge_at(n) else {
            return (n, Status::Running, last);
        };
        match (met, replications.next(n)) {
            (false, Some(more)) => {
                n = more;
                last = worst;
            }
            (true, _) => return (n, Status::Met, worst),
            (false, None) => return (n, Status::StoppedAtMax, worst),
        }
    }
}

/// Whether every interval of a point meets the target, and the least precise one.
/// `algorithms` are the point's; `value(a, m)` is metric `m` (an index into
/// `precision.metrics`) of `algorithms[a]`'s replications judged, in replication order,
/// `None` where a run has no value.
pub fn judge(
    algorithms: &[Algorithm],
    precision: &Precision,
    value: &dyn Fn(usize, usize) -> Vec<Option<f64>>,
) -> (bool, Option<Worst>) {
    let name = |a: usize| -> Algorithm { algorithms[a] };
    let paired = precision
        .paired
        .as_ref()
        .and_then(|b| (0..algorithms.len()).find(|&a| name(a).name() == b));
    let mut met = true;
    let mut worst: Option<Worst> = None;
    for (m, metric_name) in precision.metrics.iter().enumerate() {
        for a in 0..algorithms.len() {
            let Some(metric) = name(a).family().metric(metric_name) else {
                continue;
            };
            let (values, support, who): (Vec<f64>, Support, String) = match paired {
                // With a paired target, each other algorithm's difference to `b`.
                Some(b) if b == a => continue,
                Some(b) => {
                    if name(b).family().metric(metric_name).is_none() {
                        continue;
                    }
                    let diffs = value(a, m)
                        .into_iter()
                        .zip(value(b, m))
                        .filter_map(|(x, y)| Some(x? - y?))
                        .collect();
                    let who = format!("{} − {}", name(a).name(), name(b).name());
                    (diffs, Support::Any, who)
                }
                None => (
                    value(a, m).into_iter().flatten().collect(),
                    metric.support,
                    name(a).name().to_string(),
                ),
            };
            let found = interval(
                Sample::Values(&values),
                metric.interval,
                precision.confidence,
                support,
            );
            let (ok, achieved) = match found {
                Some(i) => (precision.target.met_by(&i), precision.target.achieved(&i)),
                None => (false, f64::INFINITY),
            };
            met &= ok;
            if worst.as_ref().is_none_or(|w| achieved > w.achieved) {
                worst = Some(Worst {
                    metric: metric_name.clone(),
                    algorithm: who,
                    achieved,
                });
            }
        }
    }
    (met, worst)
}

/// A run key without its experiment, algorithm and replication: the point's values.
fn point_label(key: &str) -> String {
    let parts: Vec<&str> = key
        .split('/')
        .skip(1)
        .filter(|p| !p.starts_with("algo=") && !p.starts_with("rep="))
        .collect();
    if parts.is_empty() {
        "(the only point)".to_string()
    } else {
        parts.join("/")
    }
}
