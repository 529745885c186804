//! A harness point's reference sample: its first `R` replications, run as the study
//! runs them.

use super::points::HarnessPoint;
use crate::registry::Algorithm;
use crate::run::RunSummary;
use crate::sweep::execute::Progress;
use crate::sweep::plan::PlannedRun;
use crate::sweep::specs::{expand, load};
use anyhow::{Context, bail};
use rayon::prelude::*;
use std::path::Path;

/// The values a harness reads from one replication of a point, and the study's
/// settings it applies the procedures with.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceSample {
    /// The point's algorithms, in the study's order (those an axis of the point does
    /// not apply to included).
    pub algorithms: Vec<Algorithm>,
    /// The columns read, in order: the statistic's, then the study's precision
    /// metrics.
    pub columns: Vec<String>,
    /// `values[r][a][c]`: replication `r`, algorithm `a`, column `c`; `None` where the
    /// run has no value (a mean over no event).
    pub values: Vec<Vec<Vec<Option<f64>>>>,
    /// The study's replications: its fixed count, or its sequential settings.
    pub study: Option<crate::sweep::specs::Sequential>,
    /// The study's fixed count (its `max` when sequential).
    pub study_n: u32,
}

impl ReferenceSample {
    /// Replications held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The position of `algorithm` among [`Self::algorithms`].
    pub fn algorithm(&self, name: &str) -> Option<usize> {
        self.algorithms.iter().position(|a| a.name() == name)
    }

    /// The position of `column` among [`Self::columns`].
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

/// One column of a run's summary, as the runs table and the report hold it (`violated`
/// and `stormed` as the report computes them).
pub fn column_value(summary: &RunSummary, column: &str) -> Option<f64> {
    let flag = |b: bool| Some(if b { 1.0 } else { 0.0 });
    match column {
        "messages" => Some(summary.messages as f64),
        "topology_changes" => Some(summary.topology_changes as f64),
        "safety_violations" => Some(summary.safety_violations as f64),
        "violated" => flag(summary.safety_violations > 0),
        "stormed" => flag(summary.aborted.is_some()),
        other => summary.metrics.real(other),
    }
}

/// Runs the first `replications` replications of `point` from the study in
/// `analysis_dir`, in parallel (`progress` is told how many, then of each run), and
/// keeps the columns its statistic and the study's precision target read. A fixed-count
/// study runs only the statistic's algorithms; a sequential one runs every algorithm of
/// the point, since its rule judges them all.
///
/// # Errors
/// If the study cannot be read, the point names no point of it, or a run fails.
pub fn run_reference(
    point: &HarnessPoint,
    analysis_dir: &Path,
    replications: u32,
    progress: &dyn Progress,
) -> anyhow::Result<ReferenceSample> {
    let path = analysis_dir.join(point.study);
    let mut spec = load(&path)?;
    let study = spec.sequential.take();
    let study_n = spec.replications;
    spec.replications = replications;
    let plan = expand(&spec)?;
    let mut columns: Vec<String> = point
        .statistic
        .columns()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("harness point {}", point.name))?
        .into_iter()
        .map(str::to_string)
        .collect();
    if let Some(s) = &study {
        for m in &s.precision.metrics {
            if !columns.contains(m) {
                columns.push(m.clone());
            }
        }
    }
    let wanted = point.statistic.algorithms();
    let runs: Vec<PlannedRun> = plan
        .runs
        .iter()
        .filter(|run| at_point(&run.key, point.at))
        .filter(|run| study.is_some() || wanted.contains(&run.algorithm.name()))
        .collect();
    // The algorithms the point holds, in the spec's order.
    let algorithms: Vec<Algorithm> = plan
        .algorithms
        .iter()
        .copied()
        .filter(|a| runs.iter().any(|r| r.algorithm == *a))
        .collect();
    for &name in &wanted {
        if !algorithms.iter().any(|a| a.name() == name) {
            bail!(
                "harness point {}: {} has no run of {name} at {}",
                point.name,
                path.display(),
                point.at.join("/")
            );
        }
    }
    if runs.len() != algorithms.len() * replications as usize {
        bail!(
            "harness point {}: {} at {} is not one point of {}: {} runs for {} algorithms \
             and {replications} replications (name a value of every axis)",
            point.name,
            point.at.join("/"),
            path.display(),
            spec.name,
            runs.len(),
            algorithms.len()
        );
    }
    let no_trace = |_: &crate::sweep::execute::TraceRequest| -> anyhow::Result<_> {
        bail!("the harness points are random-waypoint points")
    };
    progress.start(runs.len(), 0);
    let found: anyhow::Result<Vec<RunValues>> = runs
        .par_iter()
        .map(|run| {
            let record = crate::sweep::execute::run_one(&spec.name, run, &no_trace)
                .with_context(|| format!("run {}", run.key))?;
            progress.advance(1);
            let summary = &record.output.summary;
            let a = algorithms
                .iter()
                .position(|x| *x == run.algorithm)
                .expect("an algorithm of the point");
            let values = columns.iter().map(|c| column_value(summary, c)).collect();
            Ok((run.replication, a, values))
        })
        .collect::<anyhow::Result<_>>();
    progress.finish();
    let found = found?;
    let mut values = vec![vec![Vec::new(); algorithms.len()]; replications as usize];
    for (r, a, v) in found {
        values[r as usize][a] = v;
    }
    Ok(ReferenceSample {
        algorithms,
        columns,
        values,
        study,
        study_n,
    })
}

/// One run's replication, algorithm (index into the point's) and column values.
type RunValues = (u32, usize, Vec<Option<f64>>);

/// Whether the run key holds every `name=value` of `at` as one of its parts.
fn at_point(key: &str, at: &[&str]) -> bool {
    at.iter()
        .all(|want| key.split('/').any(|part| part == *want))
}
