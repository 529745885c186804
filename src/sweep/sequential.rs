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
//! has: every one must meet its own target (relative or absolute); with `paired = B`,
//! the paired difference
//! a − B of every other algorithm a does instead.

use super::plan::{Plan, RunList};
use super::specs::point::point_index;
use crate::registry::Algorithm;
use crate::results::store::{RUNS, Store};
use crate::stats::intervals::{Sample, interval};
use crate::stats::sequential::{HeldBack, StoppingRule, held_back, met_without_normality};
use crate::stats::{MetricTarget, Precision, Replications, Support};
use crate::sweep::specs::Sequential;
use std::cmp::Ordering;
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
    /// The interval's mean.
    pub estimate: f64,
    /// Its half-width; infinite without an interval.
    pub half_width: f64,
    /// The metric's target.
    pub target: crate::stats::Target,
    /// Why an interval narrow enough did not count (the guarded rule's checks).
    pub held_back: Option<HeldBack>,
}

impl Worst {
    /// How far from its target: the half-width over the widest the target allows
    /// (above 1 is short). Metrics with different targets compare on this scale.
    pub fn share_of_target(&self) -> f64 {
        self.target.share(self.estimate, self.half_width)
    }

    /// The precision in the target's terms: "±4.1%", "±0.0040", "no interval".
    pub fn precision_words(&self) -> String {
        self.target.format(self.estimate, self.half_width)
    }
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

impl PointState {
    /// The status in words for tables: "met", "running", "stopped at max, short", or
    /// "stopped at max, held back: …" when an interval narrow enough did not count.
    pub fn status_words(&self) -> String {
        match (self.status, self.worst.as_ref().and_then(|w| w.held_back)) {
            (Status::Met, _) => "met".to_string(),
            (Status::Running, _) => "running".to_string(),
            (Status::StoppedAtMax, None) => "stopped at max, short".to_string(),
            (Status::StoppedAtMax, Some(why)) => format!("stopped at max, held back: {why}"),
        }
    }
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
            .max_by(|a, b| a.1.share_of_target().total_cmp(&b.1.share_of_target()))
    }

    /// One line of progress: points done, points short, the worst precision.
    pub fn summary(&self) -> String {
        let (met, at_max, running) = (
            self.count(Status::Met),
            self.count(Status::StoppedAtMax),
            self.count(Status::Running),
        );
        let held = self
            .points
            .iter()
            .filter(|p| p.status == Status::StoppedAtMax)
            .filter(|p| p.worst.as_ref().is_some_and(|w| w.held_back.is_some()))
            .count();
        let held = match held {
            0 => String::new(),
            k => format!(" ({k} of them narrow enough but held back)"),
        };
        let mut line = format!(
            "{} points: {met} met the target, {at_max} stopped at max{held}, {running} still \
             short ({} runs to go in this wave)",
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
                worst.precision_words(),
                worst.metric,
                point.label,
                worst.algorithm,
                worst.target.words()
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
        .metrics()
        .filter(|m| columns.iter().any(|c| c == m))
        .collect();
    let table = store.read_columns(RUNS, &metrics)?;
    let index = crate::results::aggregate::float_values(&table, "run_index")?;
    let mut values: Vec<Vec<Option<f64>>> = Vec::new();
    for m in sequential.precision.metrics() {
        values.push(if metrics.contains(&m) {
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

/// One run of a point: its replication, its variant (index into the point's) and
/// its plan index.
#[derive(Clone, Copy)]
struct PointRun {
    replication: u32,
    variant: usize,
    index: usize,
}

/// What a sequential sweep judges as one series: an algorithm at the values of the
/// axes only some algorithms have (`me-raymond routing=discovery`), or just the
/// algorithm (`me-rl`).
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The algorithm, whose family declares the metrics.
    pub algorithm: Algorithm,
    /// The algorithm's name, then `axis=value` for each axis only some algorithms have.
    pub name: String,
}

impl Variant {
    /// The variant of an algorithm that has no axis of its own.
    pub fn of(algorithm: Algorithm) -> Variant {
        Variant {
            algorithm,
            name: algorithm.name().to_string(),
        }
    }
}

/// The runs of one point, by variant.
#[derive(Default)]
struct PointRuns {
    variants: Vec<Variant>,
    runs: Vec<PointRun>,
    /// The variant of each (algorithm, odometer position) met so far.
    variant_of: HashMap<(u32, u64), usize>,
}

/// The sweep's state: for each point, the replications it needs now, given the runs
/// `stored` (by run index; [`stored_values`]).
///
/// A point is a combination of the axes every algorithm has. An axis that only some
/// algorithms have (`[params.me-raymond] routing = ["oracle", "discovery"]`) makes
/// variants within the point instead: the algorithms without it run once per point,
/// their runs paired with every variant of the others, and every variant of a point
/// gets the same replications.
///
/// # Panics
/// If `plan` was not expanded from a spec (a hand-made plan has no points).
pub fn decide(plan: &Plan, sequential: &Sequential, stored: &StoredValues) -> Decision {
    let RunList::Expanded(expansion) = &plan.runs else {
        panic!("a sequential sweep needs a plan expanded from its spec");
    };
    let spec = &expansion.spec;
    // Whether each parameter is an axis every algorithm has.
    let shared: Vec<bool> = spec
        .params
        .iter()
        .map(|p| p.is_axis && spec.algorithms.iter().all(|&a| p.scope.applies_to(a)))
        .collect();
    let own_axes: Vec<&str> = spec
        .params
        .iter()
        .zip(&shared)
        .filter(|(p, s)| p.is_axis && !**s)
        .map(|(p, _)| p.name)
        .collect();
    let shared_axes: Vec<&str> = spec
        .params
        .iter()
        .zip(&shared)
        .filter(|(_, s)| **s)
        .map(|(p, _)| p.name)
        .collect();
    // Odometer indices with the algorithms' own axes at 0: the point, in plan order.
    let mut of_slot: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut points: BTreeMap<Vec<usize>, PointRuns> = BTreeMap::new();
    for (index, slot) in expansion.slots.iter().enumerate() {
        let key = of_slot
            .entry(slot.point)
            .or_insert_with(|| {
                point_index(spec, slot.point)
                    .into_iter()
                    .zip(&shared)
                    .map(|(i, &s)| if s { i } else { 0 })
                    .collect()
            })
            .clone();
        let point = points.entry(key).or_default();
        let variant = match point.variant_of.get(&(slot.algorithm, slot.point)) {
            Some(&v) => v,
            None => {
                let algorithm = plan.algorithms[slot.algorithm as usize];
                let key = plan.runs.get(index).key;
                point.variants.push(Variant {
                    algorithm,
                    name: variant_name(algorithm, &key, &own_axes),
                });
                let v = point.variants.len() - 1;
                point.variant_of.insert((slot.algorithm, slot.point), v);
                v
            }
        };
        point.runs.push(PointRun {
            replication: slot.replication,
            variant,
            index,
        });
    }
    let mut decision = Decision {
        points: Vec::with_capacity(points.len()),
        wanted: Vec::new(),
        missing: 0,
    };
    for point in points.values() {
        let label = point_label(&plan.runs.get(point.runs[0].index).key, &shared_axes);
        let state = judge_point(label, sequential, point, stored);
        for run in point.runs.iter().filter(|r| r.replication < state.n) {
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
    label: String,
    sequential: &Sequential,
    point: &PointRuns,
    stored: &StoredValues,
) -> PointState {
    let rule = sequential.precision.rule;
    let (n, status, worst) = grow(sequential.replications, rule, |n| {
        let all_stored = point
            .runs
            .iter()
            .filter(|r| r.replication < n)
            .all(|r| stored.contains_key(&r.index));
        // value(v, m): metric m of the point's variant v, replications below n, in
        // replication order.
        let value = |v: usize, m: usize| -> Vec<Option<f64>> {
            let mut of_v: Vec<(u32, Option<f64>)> = point
                .runs
                .iter()
                .filter(|r| r.variant == v && r.replication < n)
                .map(|r| (r.replication, stored.get(&r.index).and_then(|x| x[m])))
                .collect();
            of_v.sort_by_key(|(rep, _)| *rep);
            of_v.into_iter().map(|(_, x)| x).collect()
        };
        all_stored.then(|| judge(&point.variants, &sequential.precision, &value))
    });
    PointState {
        label,
        n,
        status,
        worst,
    }
}

/// The stopping rule's walk over one point: from `min`, `batch` at a time, until the
/// target is met at `rule`'s number of looks in a row or `max` is reached (where one
/// look that meets it is enough: there is no next one). `judge_at(n)` judges the
/// point's first `n` replications ([`judge`]), or is `None` while they are not all
/// stored, which leaves the point [`Status::Running`] at `n` with the judgment that
/// sent it there.
///
/// The sweep and the coverage harness ([`crate::coverage`]) both stop points through
/// this function, so the harness measures the rule the sweeps apply.
pub fn grow(
    replications: Replications,
    rule: StoppingRule,
    mut judge_at: impl FnMut(u32) -> Option<(bool, Option<Worst>)>,
) -> (u32, Status, Option<Worst>) {
    let mut n = replications.min;
    // The judgment that sent it past its previous count, shown while it runs.
    let mut last: Option<Worst> = None;
    // Looks in a row, up to this one, that met the target.
    let mut streak = 0;
    loop {
        let Some((met, worst)) = judge_at(n) else {
            return (n, Status::Running, last);
        };
        streak = if met { streak + 1 } else { 0 };
        match (met, replications.next(n)) {
            (true, next) if streak >= rule.looks() || next.is_none() => {
                return (n, Status::Met, worst);
            }
            (_, Some(more)) => {
                n = more;
                last = worst;
            }
            (_, None) => return (n, Status::StoppedAtMax, worst),
        }
    }
}

/// Whether every interval of a point meets the target, and the least precise one.
/// `variants` are the point's; `value(v, m)` is metric `m` (an index into
/// `precision.targets`) of `variants[v]`'s replications judged, in replication order,
/// `None` where a run has no value. With a paired target `b`, every variant of another
/// algorithm is differenced with every variant of `b`, run by run.
pub fn judge(
    variants: &[Variant],
    precision: &Precision,
    value: &dyn Fn(usize, usize) -> Vec<Option<f64>>,
) -> (bool, Option<Worst>) {
    let is_baseline = |v: usize| {
        precision
            .paired
            .as_ref()
            .is_some_and(|b| variants[v].algorithm.name() == b)
    };
    let baselines: Vec<usize> = (0..variants.len()).filter(|&v| is_baseline(v)).collect();
    if precision.paired.is_some() && baselines.is_empty() {
        // Every algorithm has runs at every point (sweep docs), so this is not reached;
        // a point with nothing to difference against has met nothing.
        return (false, None);
    }
    let mut met = true;
    // The least precise interval, those that do not count first.
    let mut worst: Option<(bool, Worst)> = None;
    for (
        m,
        MetricTarget {
            metric: metric_name,
            target,
        },
    ) in precision.targets.iter().enumerate()
    {
        // Each judged sample: its values, support and who it is.
        let mut samples: Vec<(Vec<f64>, Support, String, &crate::family::Metric)> = Vec::new();
        for a in 0..variants.len() {
            let Some(metric) = variants[a].algorithm.family().metric(metric_name) else {
                continue;
            };
            if precision.paired.is_none() {
                samples.push((
                    value(a, m).into_iter().flatten().collect(),
                    metric.support,
                    variants[a].name.clone(),
                    metric,
                ));
                continue;
            }
            if is_baseline(a) {
                continue;
            }
            for &b in &baselines {
                if variants[b].algorithm.family().metric(metric_name).is_none() {
                    continue;
                }
                let diffs = value(a, m)
                    .into_iter()
                    .zip(value(b, m))
                    .filter_map(|(x, y)| Some(x? - y?))
                    .collect();
                let who = format!("{} − {}", variants[a].name, variants[b].name);
                samples.push((diffs, Support::Any, who, metric));
            }
        }
        for (values, support, who, metric) in samples {
            let found = interval(
                Sample::Values(&values),
                metric.interval,
                precision.confidence,
                support,
            );
            let (narrow, estimate, half_width) = match found {
                Some(i) => (target.met_by(&i), i.estimate, i.half_width),
                None => (false, f64::NAN, f64::INFINITY),
            };
            let held = match precision.rule {
                StoppingRule::Guarded if narrow => {
                    held_back(&values, metric.least_runs).filter(|why| {
                        !(matches!(why, HeldBack::Skewed { .. })
                            && met_without_normality(
                                &values,
                                support,
                                precision.confidence,
                                target.allowed(estimate),
                            ))
                    })
                }
                _ => None,
            };
            let ok = narrow && held.is_none();
            met &= ok;
            let rank = |(ok, w): &(bool, Worst)| (!ok, w.share_of_target());
            let this = (
                ok,
                Worst {
                    metric: metric_name.clone(),
                    algorithm: who,
                    estimate,
                    half_width,
                    target: *target,
                    held_back: held,
                },
            );
            if worst
                .as_ref()
                .is_none_or(|w| rank(&this).partial_cmp(&rank(w)) == Some(Ordering::Greater))
            {
                worst = Some(this);
            }
        }
    }
    (met, worst.map(|(_, w)| w))
}

/// The values of a run key's axes named in `shared` (those every algorithm has): the
/// point's label (`rate=0.02/speed_max=20.0`).
fn point_label(key: &str, shared: &[&str]) -> String {
    let parts: Vec<&str> = key
        .split('/')
        .skip(1)
        .filter(|p| {
            p.split_once('=')
                .is_some_and(|(name, _)| shared.contains(&name))
        })
        .collect();
    if parts.is_empty() {
        "(the only point)".to_string()
    } else {
        parts.join("/")
    }
}

/// A variant's name from one of its run keys: the algorithm, then each `axis=value`
/// of the axes in `own` (those only some algorithms have) that the key holds.
fn variant_name(algorithm: Algorithm, key: &str, own: &[&str]) -> String {
    let mut name = algorithm.name().to_string();
    for part in key.split('/').skip(1) {
        if part
            .split_once('=')
            .is_some_and(|(axis, _)| own.contains(&axis))
        {
            name.push(' ');
            name.push_str(part);
        }
    }
    name
}
