//! A harness point's reference sample: its first `R` replications, run as the study
//! runs them.

use super::points::HarnessPoint;
use crate::registry::Algorithm;
use crate::run::RunSummary;
use crate::sweep::execute::Progress;
use crate::sweep::plan::PlannedRun;
use crate::sweep::specs::{Spec, expand, load, parse_stored};
use anyhow::{Context, bail};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
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
        "stormed" => flag(
            summary
                .aborted
                .as_deref()
                .is_some_and(crate::sim::engine::is_storm),
        ),
        "cut_short" => flag(
            summary
                .aborted
                .as_deref()
                .is_some_and(|r| !crate::sim::engine::is_storm(r)),
        ),
        other => summary.metrics.real(other),
    }
}

/// A reference sample kept on disk (`bench coverage --samples DIR`), so a change to a
/// procedure is measured again in seconds rather than by rerunning thousands of
/// replications. Valid only for a spec that makes the same runs as the one it was run
/// from (the same spec but for replications, precision target and comments,
/// [`runs_defining`]): replication r of a
/// point is the same run whatever R, so a kept sample of R′ replications serves any
/// R ≤ R′ and grows to a larger one by running only the replications it lacks. Also
/// valid only for the linkrev version that ran it; within one version, delete the
/// directory after changing the code of a metric.
#[derive(Debug, Serialize, Deserialize)]
struct KeptSample {
    /// The linkrev version that ran it (empty in a file that does not say).
    #[serde(default)]
    version: String,
    /// The study's spec, as read.
    spec: String,
    /// The columns, as [`ReferenceSample::columns`].
    columns: Vec<String>,
    /// The algorithms' names, as [`ReferenceSample::algorithms`].
    algorithms: Vec<String>,
    /// As [`ReferenceSample::values`].
    values: Vec<Vec<Vec<Option<f64>>>>,
}

/// Runs the first `replications` replications of `point` from the study in
/// `analysis_dir`, in parallel (`progress` is told how many, then of each run), and
/// keeps the columns its statistic and the study's precision target read. A fixed-count
/// study runs only the statistic's algorithms; a sequential one runs every algorithm of
/// the point, since its rule judges them all.
///
/// With `kept`, a directory: replications already kept there for this point and the
/// same spec text are read rather than run, and the sample is written back (whole, by
/// a rename) with any it ran.
///
/// # Errors
/// If the study cannot be read, the point names no point of it, a run fails, or the
/// kept sample cannot be read or written.
pub fn run_reference(
    point: &HarnessPoint,
    analysis_dir: &Path,
    replications: u32,
    kept: Option<&Path>,
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
    // The study's precision metrics, then what the other built-in points at the same
    // study point read, so that one kept sample serves them all.
    let mut more: Vec<String> = study
        .iter()
        .flat_map(|s| s.precision.metrics().map(str::to_string))
        .collect();
    for other in super::points::harness_points() {
        if other.study == point.study && other.at == point.at {
            more.extend(
                other
                    .statistic
                    .columns()
                    .unwrap_or_default()
                    .iter()
                    .map(|c| c.to_string()),
            );
        }
    }
    for m in more {
        if !columns.contains(&m) {
            columns.push(m);
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
    let spec_text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let names: Vec<String> = algorithms.iter().map(|a| a.name().to_string()).collect();
    // One file per study point, whichever harness points read it: a point's columns are
    // taken from a kept sample that holds them all.
    let stem = format!("{}--{}", point.study, point.at.join("--")).replace(['/', '='], "_");
    let kept_file = kept.map(|dir| dir.join(format!("{stem}.json")));
    let mut values = vec![vec![Vec::new(); algorithms.len()]; replications as usize];
    let mut have = 0usize;
    if let Some(file) = kept_file.as_ref().filter(|f| f.exists()) {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading the kept sample {}", file.display()))?;
        let old: KeptSample = serde_json::from_str(&text)
            .with_context(|| format!("reading the kept sample {}", file.display()))?;
        let at: Option<Vec<usize>> = columns
            .iter()
            .map(|c| old.columns.iter().position(|o| o == c))
            .collect();
        let same = parse_stored(&old.spec, &path).ok().map(runs_defining)
            == Some(runs_defining(spec.clone()))
            && old.algorithms == names
            && old.version == env!("CARGO_PKG_VERSION");
        if let (true, Some(at)) = (same, at) {
            have = old.values.len().min(values.len());
            for (slot, v) in values.iter_mut().zip(old.values) {
                *slot = v
                    .into_iter()
                    .map(|of_a| at.iter().map(|&c| of_a[c]).collect())
                    .collect();
            }
        }
    }
    let runs: Vec<PlannedRun> = runs
        .into_iter()
        .filter(|r| r.replication as usize >= have)
        .collect();
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
    let ran = !found.is_empty();
    for (r, a, v) in found {
        values[r as usize][a] = v;
    }
    if let Some(file) = kept_file.filter(|_| ran) {
        let sample = KeptSample {
            version: env!("CARGO_PKG_VERSION").to_string(),
            spec: spec_text,
            columns: columns.clone(),
            algorithms: names,
            values: values.clone(),
        };
        let text = serde_json::to_string(&sample)?;
        crate::output::write_atomically(&file, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("writing the kept sample {}", file.display()))?;
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

/// `spec` with what does not change any run cleared: the replication count, the
/// precision target, and the text (comments, layout). A run's key, seed and settings
/// come from the rest, so a kept sample serves every spec equal to its own here: a
/// study that gains a precision target or a comment keeps its samples.
fn runs_defining(mut spec: Spec) -> Spec {
    spec.replications = 0;
    spec.sequential = None;
    spec.text.clear();
    spec.stored = false;
    spec
}

/// Whether the run key holds every `name=value` of `at` as one of its parts.
fn at_point(key: &str, at: &[&str]) -> bool {
    at.iter()
        .all(|want| key.split('/').any(|part| part == *want))
}
