//! Applying the studies' interval procedures to disjoint blocks of a reference sample,
//! and counting how often their intervals hold the truth.

use super::points::{HarnessPoint, Statistic};
use super::reference::ReferenceSample;
use crate::stats::intervals::{Interval, IntervalMethod, Sample, interval};
use crate::stats::{Replications, StoppingRule, Support};
use crate::sweep::sequential::{Status, Variant, grow, judge};
use crate::sweep::specs::Sequential;
use serde::Serialize;
use std::ops::Range;

/// How a study decides how many replications a point gets.
#[derive(Clone, Debug, PartialEq)]
pub enum Procedure {
    /// A fixed count: each block is `n` replications.
    Fixed {
        /// Replications per point.
        n: u32,
    },
    /// The sequential rule with a study's settings: each block is as long as the rule
    /// runs, from `min` to at most `max`.
    Sequential(Sequential),
}

impl Procedure {
    /// The procedure the study of `sample` uses.
    pub fn of_study(sample: &ReferenceSample) -> Procedure {
        match &sample.study {
            Some(s) => Procedure::Sequential(s.clone()),
            None => Procedure::Fixed { n: sample.study_n },
        }
    }

    /// The study's own procedure, then the point's other sequential settings
    /// ([`HarnessPoint::also`], with the study's precision metrics); each sequential
    /// setting under every stopping rule, the study's own rule first.
    pub fn for_point(point: &HarnessPoint, sample: &ReferenceSample) -> Vec<Procedure> {
        let extra = point
            .fixed
            .iter()
            .filter(|&&n| n != sample.study_n || sample.study.is_some())
            .map(|&n| Procedure::Fixed { n });
        let Some(study) = &sample.study else {
            return std::iter::once(Procedure::of_study(sample))
                .chain(extra)
                .collect();
        };
        let mut settings = vec![study.clone()];
        for &(min, max, batch, gamma) in point.also {
            let mut s = study.clone();
            s.replications = Replications { min, max, batch };
            for t in &mut s.precision.targets {
                t.target = crate::stats::Target::Relative(gamma);
            }
            settings.push(s);
        }
        let mut all = Vec::new();
        for s in settings {
            let own = s.precision.rule;
            let rules =
                std::iter::once(own).chain(StoppingRule::ALL.into_iter().filter(|r| *r != own));
            for rule in rules {
                let mut s = s.clone();
                s.precision.rule = rule;
                all.push(Procedure::Sequential(s));
            }
        }
        all.extend(extra);
        all
    }

    /// The most replications one block can take.
    pub fn longest(&self) -> u32 {
        match self {
            Procedure::Fixed { n } => *n,
            Procedure::Sequential(s) => s.replications.max,
        }
    }

    /// Words for the table: "fixed n = 20", "sequential 10–100 by 10, ±5%".
    pub fn label(&self) -> String {
        match self {
            Procedure::Fixed { n } => format!("fixed n = {n}"),
            Procedure::Sequential(s) => {
                let Replications { min, max, batch } = s.replications;
                // One target for every metric reads "±5%"; several name their metrics.
                let targets = &s.precision.targets;
                let target = if targets.iter().all(|t| t.target == targets[0].target) {
                    targets[0].target.words()
                } else {
                    targets
                        .iter()
                        .map(|t| format!("{} {}", t.metric, t.target.words()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                format!(
                    "sequential {min}–{max} by {batch}, {target}, {}",
                    s.precision.rule.name()
                )
            }
        }
    }
}

/// One procedure's coverage at one harness point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoverageRow {
    /// The harness point.
    pub point: String,
    /// The shape of data it stands for.
    pub shape: String,
    /// What is estimated.
    pub statistic: String,
    /// The interval method, by its spec name.
    pub method: &'static str,
    /// The procedure ([`Procedure::label`]).
    pub procedure: String,
    /// Nominal confidence of the intervals.
    pub confidence: f64,
    /// Replications in the reference sample.
    pub reference_n: usize,
    /// The statistic over the whole reference sample: the truth the blocks are judged
    /// against.
    pub truth: f64,
    /// The half-width of the truth's own 95% interval (same method over all
    /// replications); it must be small against [`Self::median_half_width`].
    pub truth_half_width: f64,
    /// Disjoint blocks judged.
    pub blocks: u32,
    /// Blocks whose interval held the truth (a block without an interval did not).
    pub covered: u32,
    /// `covered / blocks`.
    pub coverage: f64,
    /// The Clopper–Pearson 95% interval of the coverage, over the blocks.
    pub coverage_low: f64,
    /// Its upper end.
    pub coverage_high: f64,
    /// Mean replications per block (the stopping point, for a sequential rule).
    pub mean_n: f64,
    /// The median half-width of the blocks' intervals.
    pub median_half_width: f64,
    /// Blocks whose interval the procedure stands behind: for a sequential rule, those
    /// that stopped claiming the target met; for a fixed count, those a figure would
    /// not mark rough (at least the metric's least runs,
    /// [`crate::family::Metric::least_runs`], and no run holding the spread).
    pub claimed: u32,
    /// Of those, blocks whose interval held the truth.
    pub claimed_covered: u32,
    /// The fewest runs the statistic's metric is trusted from.
    pub least_runs: u32,
}

/// The statistic's interval over replications `rows` of `sample`.
pub fn block_interval(
    statistic: &Statistic,
    sample: &ReferenceSample,
    rows: Range<usize>,
    confidence: f64,
) -> Option<Interval> {
    let (method, support) = statistic.method();
    block_interval_by(statistic, sample, rows, (method, support), confidence)
}

fn block_interval_by(
    statistic: &Statistic,
    sample: &ReferenceSample,
    rows: Range<usize>,
    (method, support): (IntervalMethod, Support),
    confidence: f64,
) -> Option<Interval> {
    with_block_sample(statistic, sample, rows, |s| {
        interval(s, method, confidence, support)
    })
}

/// Whether a figure would mark the statistic's interval over replications `rows`
/// rough ([`crate::stats::sequential::rough`]).
fn block_is_rough(statistic: &Statistic, sample: &ReferenceSample, rows: Range<usize>) -> bool {
    let least = statistic.least_runs();
    with_block_sample(statistic, sample, rows, |s| {
        crate::stats::sequential::rough(s, least)
    })
}

/// `f` applied to the statistic's sample over replications `rows` of `sample`.
fn with_block_sample<R>(
    statistic: &Statistic,
    sample: &ReferenceSample,
    rows: Range<usize>,
    f: impl FnOnce(Sample<'_>) -> R,
) -> R {
    let col = |name: &str| sample.column(name).expect("a column of the sample");
    let alg = |name: &str| sample.algorithm(name).expect("an algorithm of the sample");
    let rows = &sample.values[rows];
    match *statistic {
        Statistic::Mean { algorithm, metric } => {
            let (a, c) = (alg(algorithm), col(metric));
            let values: Vec<f64> = rows.iter().filter_map(|r| r[a][c]).collect();
            f(Sample::Values(&values))
        }
        Statistic::PairedDifference { a, b, metric } => {
            let (a, b, c) = (alg(a), alg(b), col(metric));
            let values: Vec<f64> = rows
                .iter()
                .filter_map(|r| Some(r[a][c]? - r[b][c]?))
                .collect();
            f(Sample::Values(&values))
        }
        Statistic::PooledRatio { algorithm, .. } => {
            let columns = statistic.columns().expect("checked when sampled");
            let (a, num, den) = (alg(algorithm), col(columns[0]), col(columns[1]));
            let (nums, dens): (Vec<f64>, Vec<f64>) = rows
                .iter()
                .filter_map(|r| Some((r[a][num]?, r[a][den]?)))
                .unzip();
            f(Sample::Ratio {
                numerators: &nums,
                denominators: &dens,
            })
        }
        Statistic::Share {
            algorithm,
            indicator,
        } => {
            let (a, c) = (alg(algorithm), col(indicator));
            let flags: Vec<f64> = rows.iter().filter_map(|r| r[a][c]).collect();
            f(Sample::Proportion {
                successes: flags.iter().filter(|&&x| x > 0.0).count() as u64,
                n: flags.len() as u64,
            })
        }
    }
}

/// The truth and its own 95% half-width: the statistic over the whole sample, by a
/// method that needs no resampling (Student t for means, the delta method for ratios,
/// Clopper–Pearson for shares).
fn truth(point: &HarnessPoint, sample: &ReferenceSample) -> Option<Interval> {
    let exact = match point.statistic {
        Statistic::Mean { .. } | Statistic::PairedDifference { .. } => {
            (IntervalMethod::StudentT, Support::Any)
        }
        _ => point.statistic.method(),
    };
    block_interval_by(&point.statistic, sample, 0..sample.len(), exact, 0.95)
}

/// One block of a reference sample, as a procedure judged it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    /// Its first replication.
    pub start: usize,
    /// Replications it took.
    pub n: usize,
    /// Whether the sequential rule stopped it claiming its target met (never for a
    /// fixed count).
    pub met: bool,
    /// The statistic's interval over its replications, if there is one.
    pub interval: Option<Interval>,
    /// Whether a figure would mark that interval rough (too few runs for the metric,
    /// or one run holding the spread).
    pub rough: bool,
}

/// The disjoint consecutive blocks `procedure` makes of `sample`: each starts where the
/// previous one ended, and only where the sample holds the longest it could take.
pub fn blocks(
    statistic: &Statistic,
    sample: &ReferenceSample,
    procedure: &Procedure,
    confidence: f64,
) -> Vec<Block> {
    let longest = procedure.longest() as usize;
    let mut found = Vec::new();
    let mut start = 0;
    while start + longest <= sample.len() {
        let (n, met) = match procedure {
            Procedure::Fixed { n } => (*n as usize, false),
            Procedure::Sequential(s) => {
                let (n, status) = stop(sample, s, start);
                (n, status == Status::Met)
            }
        };
        let interval = block_interval(statistic, sample, start..start + n, confidence);
        let rough = block_is_rough(statistic, sample, start..start + n);
        found.push(Block {
            start,
            n,
            met,
            interval,
            rough,
        });
        start += n;
    }
    found
}

/// The coverage of `procedure` at `point` over the [`blocks`] it makes of `sample`.
///
/// # Errors
/// If the sample has no truth (no value at all) or is shorter than one block.
pub fn measure(
    point: &HarnessPoint,
    sample: &ReferenceSample,
    procedure: &Procedure,
    confidence: f64,
) -> anyhow::Result<CoverageRow> {
    let Some(truth) = truth(point, sample) else {
        anyhow::bail!(
            "harness point {}: no value to take the truth from",
            point.name
        );
    };
    let longest = procedure.longest() as usize;
    if sample.len() < longest {
        anyhow::bail!(
            "harness point {}: {} replications hold no block of {} ({}): ask for at least {longest}",
            point.name,
            sample.len(),
            procedure.label(),
            point.shape
        );
    }
    let found = blocks(&point.statistic, sample, procedure, confidence);
    let holds = |b: &Block| {
        b.interval
            .as_ref()
            .is_some_and(|i| i.low <= truth.estimate && truth.estimate <= i.high)
    };
    let blocks = found.len() as u32;
    let covered = found.iter().filter(|b| holds(b)).count() as u32;
    let least_runs = point.statistic.least_runs();
    // A sequential rule stands behind the blocks it stopped calling met, for the
    // metrics it targets; of any other metric (le-malpani's messages per change, which
    // the studies do not target) it claims nothing, and the figure's rough mark is what
    // is left, as for a fixed count.
    let targeted = |s: &Sequential| {
        point
            .statistic
            .metric()
            .is_some_and(|m| s.precision.metrics().any(|t| t == m))
    };
    let stands_behind = |b: &Block| match procedure {
        Procedure::Sequential(s) if targeted(s) => b.met,
        Procedure::Sequential(_) | Procedure::Fixed { .. } => !b.rough,
    };
    let claimed = found.iter().filter(|b| stands_behind(b)).count() as u32;
    let claimed_covered = found
        .iter()
        .filter(|b| stands_behind(b) && holds(b))
        .count() as u32;
    let taken: usize = found.iter().map(|b| b.n).sum();
    let mut half_widths: Vec<f64> = found
        .iter()
        .filter_map(|b| b.interval.map(|i| i.half_width))
        .collect();
    let share = interval(
        Sample::Proportion {
            successes: u64::from(covered),
            n: u64::from(blocks),
        },
        IntervalMethod::ClopperPearson,
        0.95,
        Support::UnitInterval,
    )
    .expect("at least one block");
    half_widths.sort_by(f64::total_cmp);
    let (method, _) = point.statistic.method();
    Ok(CoverageRow {
        point: point.name.to_string(),
        shape: point.shape.to_string(),
        statistic: point.statistic.label(),
        method: method.name(),
        procedure: procedure.label(),
        confidence,
        reference_n: sample.len(),
        truth: truth.estimate,
        truth_half_width: truth.half_width,
        blocks,
        covered,
        coverage: share.estimate,
        coverage_low: share.low,
        coverage_high: share.high,
        mean_n: taken as f64 / f64::from(blocks),
        median_half_width: half_widths
            .get(half_widths.len() / 2)
            .copied()
            .unwrap_or(f64::NAN),
        claimed,
        claimed_covered,
        least_runs,
    })
}

/// Where the study's sequential rule stops a block that starts at replication
/// `start`: the rule the sweeps apply ([`grow`] and [`judge`]), on the block's
/// replications in order.
fn stop(sample: &ReferenceSample, sequential: &Sequential, start: usize) -> (usize, Status) {
    let precision = &sequential.precision;
    let columns: Vec<Option<usize>> = precision.metrics().map(|m| sample.column(m)).collect();
    let variants: Vec<Variant> = sample.algorithms.iter().map(|&a| Variant::of(a)).collect();
    let (n, status, _) = grow(sequential.replications, precision.rule, |n| {
        let value = |a: usize, m: usize| -> Vec<Option<f64>> {
            sample.values[start..start + n as usize]
                .iter()
                .map(|r| columns[m].and_then(|c| r[a][c]))
                .collect()
        };
        Some(judge(&variants, precision, &value))
    });
    (n as usize, status)
}
