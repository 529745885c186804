//! Reports: figure specs applied to one or more results directories, written as a
//! self-contained HTML page with the figures (SVG inline, plus PNG, CSV and pgfplots
//! files), the tables behind them, the specs, run counts and safety totals.
//!
//! Layout of a report directory:
//!
//! ```text
//! reports/NAME/index.html          the page (no scripts, no external resources)
//! reports/NAME/figures/STEM.svg    one per panel, also .png, .csv (plotted points), .tex
//!                                  and the caption (.caption.txt, .caption.tex)
//! reports/NAME/data/STEM.csv       the aggregated table behind each panel
//! reports/NAME/data/_runs.csv      run counts and health per experiment and algorithm
//! reports/NAME/data/_precision.csv each point's replications and precision (sweeps with
//!                                  a precision target)
//! ```
//!
//! Every figure is built (and every spec error found) before anything is written, and
//! the directory is assembled beside its destination and renamed into place, so a
//! failed report never leaves half a directory, and a re-run replaces the old one whole.

pub mod figspec;
pub mod figures;
mod html;
pub mod legend;

use crate::family::Family;
use crate::input::Location;
use crate::output::write_atomically;
use crate::plot::{self, FigureSize, IntervalStyle};
use crate::registry::Algorithm;
use crate::results::aggregate::float_values;
use crate::results::store::Store;
use crate::sweep::plan::{ParamValue, Plan};
use crate::sweep::spec_copy;
use anyhow::{Context as _, bail};
use figspec::{FigureKind, FigureSpec, FilterValue, Statistic};
use figures::Figure;
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// One results directory, opened read-only.
pub struct Experiment {
    /// The experiment's name from its spec; unique among a report's experiments.
    pub name: String,
    /// The results directory it was opened from.
    pub dir: PathBuf,
    /// The directory's result tables, opened read-only.
    pub store: Store,
    /// The plan of the directory's spec copy: every run, stored or not.
    pub plan: Plan,
    /// The experiment spec the runs were made with, verbatim.
    pub spec_text: String,
    /// The runs table (one row per stored run).
    pub runs: DataFrame,
    /// For a sweep with a precision target: each point's replications and precision,
    /// decided from the stored runs ([`crate::sweep::sequential`]).
    pub sequential: Option<crate::sweep::sequential::Decision>,
    /// The runs (by run index) of points that stopped at their `max` short of the
    /// precision target, each with its point (an index into `sequential`'s points):
    /// figures ring the points they make up.
    pub short_runs: std::collections::HashMap<u64, usize>,
}

impl Experiment {
    /// Opens a results directory written by `linkrev sweep` (complete or not).
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let store = Store::open_read_only(dir)?;
        if let Some(holder) = crate::results::lock::current_holder(dir) {
            eprintln!(
                "note: {} is being written by {holder}: this report shows the runs stored so far",
                dir.display()
            );
        }
        store.refuse_missing_rows(&format!(
            "`linkrev merge {}` removes incomplete batches so that the sweep reruns them",
            dir.display()
        ))?;
        let (spec_text, _) = spec_copy::read(dir)?;
        let plan = spec_copy::plan(dir)?;
        let runs = store.read_table("runs")?;
        if runs.height() == 0 {
            bail!(
                "{}: no runs stored yet: run `linkrev sweep` first",
                dir.display()
            );
        }
        let distinct = runs.column("run_index")?.n_unique()?;
        if distinct != runs.height() {
            bail!(
                "{}: {} rows for {distinct} runs: some run is stored twice (copied chunks?); \
                 `linkrev merge {}` reports the state of the directory",
                dir.display(),
                runs.height(),
                dir.display()
            );
        }
        let sequential = crate::sweep::sequential::decide_stored(&plan, &store)?;
        let short_runs = short_runs(&runs, sequential.as_ref())?;
        Ok(Experiment {
            name: plan.experiment.clone(),
            dir: dir.to_path_buf(),
            store,
            plan,
            spec_text,
            runs: with_indicators(runs)?,
            sequential,
            short_runs,
        })
    }

    /// Stored runs of `algorithm`.
    fn stored(&self, algorithm: &str) -> usize {
        figures::column_text(&self.runs, "algorithm")
            .map(|v| v.iter().filter(|a| a.as_deref() == Some(algorithm)).count())
            .unwrap_or(0)
    }
}

/// The runs of the points `decision` says stopped at their `max` short of the target: a
/// point's label (`rate=0.02/speed_max=20.0`) names axis values that its runs' keys
/// (`me-load/algo=me-rl/rate=0.02/speed_max=20.0/rep=85`) hold.
fn short_runs(
    runs: &DataFrame,
    decision: Option<&crate::sweep::sequential::Decision>,
) -> anyhow::Result<std::collections::HashMap<u64, usize>> {
    let mut out = std::collections::HashMap::new();
    let Some(decision) = decision else {
        return Ok(out);
    };
    let short: Vec<(usize, Vec<&str>)> = decision
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == crate::sweep::sequential::Status::StoppedAtMax)
        .map(|(i, p)| (i, p.label.split('/').collect()))
        .collect();
    if short.is_empty() {
        return Ok(out);
    }
    let keys = runs.column("run_key")?.str()?;
    let index = runs.column("run_index")?.u64()?;
    for (key, i) in keys.iter().zip(index.iter()) {
        let (Some(key), Some(i)) = (key, i) else {
            continue;
        };
        let parts: Vec<&str> = key.split('/').collect();
        if let Some((point, _)) = short
            .iter()
            .find(|(_, point)| point.iter().all(|p| parts.contains(p)))
        {
            out.insert(i, *point);
        }
    }
    Ok(out)
}

/// Per-run indicators the report computes when it opens results (they are not stored):
/// `violated` is 1 for a run with a safety violation, `stormed` 1 for a run the
/// message-storm guard stopped, else 0, so their mean over runs is the fraction of runs.
pub const INDICATORS: [(&str, &str); 3] = [
    ("violated", "fraction of runs with a safety violation"),
    ("stormed", "fraction of runs stopped as a message storm"),
    (
        "cut_short",
        "fraction of runs stopped by the event budget or a stall (not a storm)",
    ),
];

/// The computed column naming each run's algorithm variant: the algorithm, followed by
/// `name=value` for each of its parameters that takes more than one value among its
/// runs in the table (`me-krl k=2`, `me-raymond routing=discovery`; `me-rl` when its
/// parameters are fixed). Figures use it as a series, and paired figures pair variants.
pub const VARIANT: &str = "variant";

fn with_indicators(mut runs: DataFrame) -> anyhow::Result<DataFrame> {
    let numbers = |name: &str| float_values(&runs, name);
    let indicator = |flag: Option<bool>| flag.map(|f| if f { 1.0 } else { 0.0 });
    let violated: Vec<Option<f64>> = numbers("safety_violations")?
        .into_iter()
        .map(|v| indicator(v.map(|v| v > 0.0)))
        .collect();
    // A storm, or another reason to stop: `None` for a run that ran to its end.
    let aborted: Vec<Option<bool>> = runs
        .column("aborted")?
        .str()?
        .iter()
        .map(|reason| reason.map(crate::sim::engine::is_storm))
        .collect();
    let stormed: Vec<Option<f64>> = aborted
        .iter()
        .map(|a| indicator(Some(*a == Some(true))))
        .collect();
    let cut_short: Vec<Option<f64>> = aborted
        .iter()
        .map(|a| indicator(Some(*a == Some(false))))
        .collect();
    let mut computed = vec![
        Column::new(INDICATORS[0].0.into(), violated),
        Column::new(INDICATORS[1].0.into(), stormed),
        Column::new(INDICATORS[2].0.into(), cut_short),
    ];
    for ratio in crate::family::message_ratios() {
        if runs.column(ratio.count).is_ok() && runs.column(ratio.per).is_ok() {
            // Null where nothing was counted against: a ratio over zero CS entries or
            // zero topology changes is undefined, not zero.
            let per_entry: Vec<Option<f64>> = numbers(ratio.count)?
                .into_iter()
                .zip(numbers(ratio.per)?)
                .map(|(count, per)| match (count, per) {
                    (Some(count), Some(per)) if per > 0.0 => Some(count / per),
                    _ => None,
                })
                .collect();
            computed.push(Column::new(ratio.column.as_str().into(), per_entry));
        }
    }
    let variants = variant_names(&runs)?;
    for column in computed {
        runs.with_column(column)?;
    }
    runs.with_column(Column::new(VARIANT.into(), variants))?;
    Ok(runs)
}

/// Each row's [`VARIANT`].
fn variant_names(runs: &DataFrame) -> anyhow::Result<Vec<String>> {
    let algorithms = figures::column_text(runs, "algorithm")?;
    let mut names: Vec<String> = algorithms
        .iter()
        .map(|a| a.clone().unwrap_or_default())
        .collect();
    for algorithm in Algorithm::all() {
        let rows: Vec<usize> = (0..runs.height())
            .filter(|&r| algorithms[r].as_deref() == Some(algorithm.name()))
            .collect();
        for param in algorithm.params() {
            let Ok(values) = figures::column_text(runs, param.name) else {
                continue;
            };
            let first = &values[rows.first().copied().unwrap_or(0)];
            if rows.iter().all(|&r| values[r] == *first) {
                continue;
            }
            for &r in &rows {
                let value = values[r].as_deref().unwrap_or("none");
                names[r].push_str(&format!(" {}={value}", param.name));
            }
        }
    }
    Ok(names)
}

/// Where the figures of a report come from.
pub enum FigureSource<'a> {
    /// A figure spec file (`--figures`).
    File(&'a Path),
    /// Figure spec text with a name for errors (the demo's built-in specs).
    Text {
        /// The figure specs, in the figure spec file's TOML format.
        text: &'a str,
        /// What errors call the text, in place of a file name.
        name: &'a str,
    },
    /// One figure per metric and numeric sweep axis (see [`default_figures`]).
    Defaults,
}

/// What a report wrote.
pub struct ReportSummary {
    /// Path of the written `index.html`.
    pub index: PathBuf,
    /// Number of figures (one per figure spec).
    pub figures: usize,
    /// Number of panels over all figures (one per facet value).
    pub panels: usize,
    /// Runs stored in all the results directories.
    pub runs: usize,
    /// Safety violations summed over every stored run.
    pub safety_violations: u64,
}

/// Writes the report of `dirs` to `out` (replacing a previous report there).
pub fn write_report(
    dirs: &[PathBuf],
    source: FigureSource<'_>,
    labels: Option<&Path>,
    out: &Path,
) -> anyhow::Result<ReportSummary> {
    if dirs.is_empty() {
        bail!("give at least one results directory");
    }
    let mut experiments: Vec<Experiment> = Vec::new();
    for dir in dirs {
        let e = Experiment::open(dir)?;
        if let Some(other) = experiments.iter().find(|o| o.name == e.name) {
            bail!(
                "{} and {} both hold experiment `{}`: give each experiment once",
                other.dir.display(),
                e.dir.display(),
                e.name
            );
        }
        experiments.push(e);
    }
    let (specs, figure_text) = match source {
        FigureSource::File(path) => {
            let text = figspec::read(path)?;
            let name = path.display().to_string();
            (figspec::parse(&text, &name)?, Some((name, text)))
        }
        FigureSource::Text { text, name } => (
            figspec::parse(text, name)?,
            Some((name.to_string(), text.to_string())),
        ),
        FigureSource::Defaults => (default_figures(&experiments), None),
    };
    // The report-wide labels and styles (`--labels`) under the figure file's and each
    // figure's own.
    let report_legend = match labels {
        Some(path) => figspec::load_legend(path)?,
        None => legend::Legend::default(),
    };
    let mut specs = specs;
    for spec in &mut specs {
        spec.legend = legend::Legend::over(
            &legend::Legend::over(&report_legend, &spec.file_legend),
            &spec.own_legend,
        );
    }
    // Build everything first: a bad figure spec must fail before anything is written.
    let mut built: Vec<(usize, Figure)> = Vec::new();
    for spec in &specs {
        let index = experiment_of(spec, &experiments)?;
        built.push((index, figures::build(spec, &experiments[index])?));
    }
    check_legends(&built, &report_legend, labels)?;
    check_out_dir(out)?;
    check_stems(&built)?;
    for e in &experiments {
        if let (Ok(dir), Ok(out)) = (e.dir.canonicalize(), out.canonicalize())
            && dir.starts_with(&out)
        {
            bail!(
                "{} lies inside --out {}, which the report replaces: choose another --out",
                e.dir.display(),
                out.display()
            );
        }
    }
    let staging = crate::output_dir::stage(out, "report")?;
    let root = staging.path();
    for sub in ["figures", "data"] {
        std::fs::create_dir(root.join(sub))
            .with_context(|| format!("creating {}", root.join(sub).display()))?;
    }
    let mut svgs = Vec::new();
    for (index, figure) in &built {
        let mut panel_svgs = Vec::new();
        for panel in &figure.panels {
            let svg = plot::render_svg(&panel.chart)
                .with_context(|| format!("drawing figure {}", panel.stem))?;
            let fig = root.join("figures");
            write_text(&fig.join(format!("{}.svg", panel.stem)), &svg)?;
            plot::render_png(&panel.chart, &fig.join(format!("{}.png", panel.stem)))?;
            write_text(
                &fig.join(format!("{}.csv", panel.stem)),
                &plot::points_csv(&panel.chart),
            )?;
            write_text(
                &fig.join(format!("{}.tex", panel.stem)),
                &plot::pgfplots_tex(&panel.chart),
            )?;
            // The caption travels with the figure: a paper that takes the SVG, PNG or
            // .tex takes its interval method, n and notes too.
            let e = &experiments[*index];
            let caption = caption_text(panel, &e.name);
            write_text(
                &fig.join(format!("{}.caption.txt", panel.stem)),
                &format!("{caption}\n"),
            )?;
            write_text(
                &fig.join(format!("{}.caption.tex", panel.stem)),
                &format!("\\caption{{{}}}\n", plot::tex_escape(&caption)),
            )?;
            write_csv(
                &root.join("data").join(format!("{}.csv", panel.stem)),
                &panel.table,
            )?;
            panel_svgs.push(svg);
        }
        svgs.push(panel_svgs);
    }
    let health = html::Health::of(&experiments)?;
    write_csv(&root.join("data").join(RUNS_TABLE), &health.table)?;
    let precision = html::precision_table(&experiments)?;
    if let Some(table) = &precision {
        write_csv(&root.join("data").join(PRECISION_TABLE), table)?;
    }
    let page = html::page(&html::PageInput {
        experiments: &experiments,
        figures: &built,
        svgs: &svgs,
        figure_text: figure_text.as_ref(),
        health: &health,
        precision: precision.as_ref(),
    })?;
    write_text(&root.join("index.html"), &page)?;

    // Into place: the old report (if any) moves aside first and is removed after.
    staging.commit()?;
    Ok(ReportSummary {
        index: out.join("index.html"),
        figures: built.len(),
        panels: built.iter().map(|(_, f)| f.panels.len()).sum(),
        runs: experiments.iter().map(|e| e.runs.height()).sum(),
        safety_violations: health.safety_violations,
    })
}

/// A panel's caption as the report prints it: the chart's title, what is plotted with
/// its intervals and notes, and the experiment.
pub fn caption_text(panel: &figures::Panel, experiment: &str) -> String {
    let title = panel.chart.title.trim_end_matches('.');
    format!("{title}. {} Experiment {experiment}.", panel.note.trim())
}

/// The run-count table in `data/`; figure names cannot start with `_`, so no figure's
/// table can overwrite it.
pub const RUNS_TABLE: &str = "_runs.csv";

/// The file each point's replications and precision go to, for sweeps with a
/// precision target.
pub const PRECISION_TABLE: &str = "_precision.csv";

/// Every `labels` and `styles` entry names a series: a figure's own entries one of its
/// series, the figure file's and `--labels`' entries one of some figure's. An entry
/// that names nothing is most likely a typo, which would otherwise leave a registry
/// name in a paper's legend.
fn check_legends(
    built: &[(usize, Figure)],
    report_legend: &legend::Legend,
    labels: Option<&Path>,
) -> anyhow::Result<()> {
    let mut every: std::collections::BTreeSet<String> = Default::default();
    for (_, figure) in built {
        every.extend(figure.series_keys.iter().cloned());
        let unmatched = figure.spec.own_legend.unmatched(&figure.series_keys);
        if let Some(entry) = unmatched.first() {
            return Err(figure
                .spec
                .error(
                    "labels",
                    format!(
                        "the entry \"{entry}\" names no series of this figure (it could name {})",
                        quoted(&figure.series_keys)
                    ),
                )
                .into());
        }
    }
    let file_legend = built.first().map(|(_, f)| &f.spec.file_legend);
    for (legend, at) in [
        (
            file_legend,
            built.first().map(|(_, f)| f.spec.origin.file.clone()),
        ),
        (Some(report_legend), labels.map(|p| p.display().to_string())),
    ] {
        let (Some(legend), Some(at)) = (legend, at) else {
            continue;
        };
        if let Some(entry) = legend.unmatched(&every).first() {
            bail!(
                "{at}: the entry \"{entry}\" names no series of any figure (it could name {})",
                quoted(&every)
            );
        }
    }
    Ok(())
}

/// The parts of `keys` an entry could name, quoted: each part, and whole keys where
/// they have several parts (the first few).
fn quoted(keys: &std::collections::BTreeSet<String>) -> String {
    let parts = legend::Legend::parts(keys);
    let mut shown: Vec<String> = parts.iter().map(|k| format!("\"{k}\"")).collect();
    if keys.len() > parts.len() || keys.iter().any(|k| k.contains(legend::PART_SEPARATOR)) {
        shown.push(format!(
            "or whole keys such as \"{}\"",
            keys.iter().next().map_or("", String::as_str)
        ));
    }
    shown.join(", ")
}

/// Every panel's file stem is unique: facet values are sanitised into file names, so
/// two values (`a b`, `a_b`) could otherwise overwrite each other's files.
fn check_stems(built: &[(usize, Figure)]) -> anyhow::Result<()> {
    let mut seen: std::collections::HashMap<&str, &FigureSpec> = Default::default();
    for (_, figure) in built {
        for panel in &figure.panels {
            if let Some(first) = seen.insert(panel.stem.as_str(), &figure.spec) {
                return Err(figure
                    .spec
                    .error(
                        "name",
                        format!(
                            "panel file name `{}` is also one of `{}`'s panels: rename a figure \
                             (facet values are turned into file names)",
                            panel.stem, first.name
                        ),
                    )
                    .into());
            }
        }
    }
    Ok(())
}

/// Refuses an `--out` linkrev may not replace (see [`crate::output_dir`]), so a
/// mistyped `--out` never deletes anyone's files.
pub fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    crate::output_dir::check_replaceable(out)
}

fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    write_atomically(path, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

fn write_csv(path: &Path, df: &DataFrame) -> anyhow::Result<()> {
    let mut df = df.clone();
    // The encoder's error fails the atomic write: nothing half-written is kept.
    write_atomically(path, |w| {
        CsvWriter::new(w)
            .finish(&mut df)
            .map_err(std::io::Error::other)
    })
    .with_context(|| format!("writing {}", path.display()))
}

/// The experiment a figure draws from.
fn experiment_of(spec: &FigureSpec, experiments: &[Experiment]) -> anyhow::Result<usize> {
    let names = || {
        experiments
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &spec.experiment {
        Some(name) => experiments
            .iter()
            .position(|e| &e.name == name)
            .ok_or_else(|| {
                spec.error(
                    "experiment",
                    format!("no results of `{name}` given (given: {})", names()),
                )
                .into()
            }),
        None if experiments.len() == 1 => Ok(0),
        None => Err(spec
            .error(
                "experiment",
                format!(
                    "missing: this report has several experiments ({}); say which",
                    names()
                ),
            )
            .into()),
    }
}

/// Figures for results without a figure spec: for each numeric sweep axis, each
/// headline metric of each family present ([`Family::headline_metrics`], families in
/// the order the spec first names one of their algorithms) against it,
/// one line per algorithm and combination of the other axes that apply to the family
/// (never averaged over them); and the paired difference of the family's
/// [`Family::paired_metric`] when exactly two of its algorithms ran.
pub fn default_figures(experiments: &[Experiment]) -> Vec<FigureSpec> {
    let mut out = Vec::new();
    for e in experiments {
        // Whether any run of `algorithm` carries the parameter `name` (workload and
        // algorithm parameters apply to some algorithms only).
        let applies = |name: &str, algorithm: Algorithm| {
            e.plan
                .runs
                .iter()
                .any(|r| r.algorithm == algorithm && r.params.iter().any(|(n, _)| n == name))
        };
        // Families in the order the spec first names one of their algorithms.
        let mut families: Vec<Family> = Vec::new();
        for a in &e.plan.algorithms {
            if !families.contains(&a.family()) {
                families.push(a.family());
            }
        }
        for (x, values) in &e.plan.axes {
            if !values
                .iter()
                .all(|v| matches!(v, ParamValue::Int(_) | ParamValue::Float(_)))
            {
                continue;
            }
            for &family in &families {
                // In registry order, so a paired figure's sign does not depend on the
                // order a spec lists its algorithms in.
                let present: Vec<Algorithm> = Algorithm::all()
                    .filter(|a| a.family() == family && e.stored(a.name()) > 0)
                    .collect();
                if present.is_empty() || !present.iter().any(|&a| applies(x, a)) {
                    continue;
                }
                let others: Vec<String> = e
                    .plan
                    .axes
                    .iter()
                    .map(|(n, _)| n.clone())
                    .filter(|n| n != x && present.iter().any(|&a| applies(n, a)))
                    .collect();
                // A variant names the algorithm with its parameters
                // (`me-raymond routing=discovery`), as legends and label maps say it.
                let is_param = |n: &str| {
                    present
                        .iter()
                        .any(|a| a.params().iter().any(|p| p.name == n))
                };
                let mut series = vec![VARIANT.to_string()];
                series.extend(others.iter().filter(|n| !is_param(n)).cloned());
                let filter = vec![(
                    "algorithm".to_string(),
                    present
                        .iter()
                        .map(|a| FilterValue::Text(a.name().to_string()))
                        .collect(),
                )];
                for y in family.headline_metrics() {
                    out.push(default_spec(
                        e,
                        format!("{}-{y}-vs-{x}", e.name),
                        FigureKind::Line {
                            y: y.to_string(),
                            statistic: Statistic::Mean,
                        },
                        x,
                        series.clone(),
                        filter.clone(),
                    ));
                }
                // Only two algorithms with one variant each pair by name.
                let one_variant = |a: &Algorithm| {
                    !others
                        .iter()
                        .any(|n| a.params().iter().any(|p| p.name == n))
                };
                if let (Some(y), [a, b]) = (family.paired_metric(), present.as_slice())
                    && one_variant(a)
                    && one_variant(b)
                {
                    out.push(default_spec(
                        e,
                        format!("{}-{y}-paired-vs-{x}", e.name),
                        FigureKind::Paired {
                            y: y.to_string(),
                            a: a.name().to_string(),
                            b: b.name().to_string(),
                        },
                        x,
                        others.clone(),
                        Vec::new(),
                    ));
                }
            }
        }
    }
    out
}

fn default_spec(
    e: &Experiment,
    name: String,
    kind: FigureKind,
    x: &str,
    series: Vec<String>,
    filter: Vec<(String, Vec<FilterValue>)>,
) -> FigureSpec {
    FigureSpec {
        name,
        kind,
        experiment: Some(e.name.clone()),
        x: x.to_string(),
        series,
        facet: None,
        filter,
        intervals: Some(IntervalStyle::Bars),
        method: None,
        confidence: 0.95,
        simultaneous: None,
        log_x: false,
        log_y: false,
        title: None,
        x_label: None,
        y_label: None,
        size: FigureSize::OneColumn,
        legend: Default::default(),
        own_legend: Default::default(),
        file_legend: Default::default(),
        origin: Location::file("(default figures)"),
        key_lines: Default::default(),
    }
}
