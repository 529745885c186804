//! `linkrev demo`: the main job on built-in defaults. Runs reduced versions of the
//! standard studies (the specs in `analysis/demo/`, compiled in) on the random-waypoint
//! generator and writes their report.

use super::Outcome;
use super::sweep_cmd::{CliProgress, stop_on_ctrl_c};
use crate::report::{self, FigureSource};
use crate::results::lock::DirLock;
use crate::sweep::execute::{self, ExecuteOptions};
use crate::sweep::spec_copy;
use anyhow::Context as _;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The demo's experiments: (spec path shown to users, spec text).
const SPECS: [(&str, &str); 3] = [
    (
        "analysis/demo/me.toml",
        include_str!("../../analysis/demo/me.toml"),
    ),
    (
        "analysis/demo/le.toml",
        include_str!("../../analysis/demo/le.toml"),
    ),
    (
        "analysis/demo/route.toml",
        include_str!("../../analysis/demo/route.toml"),
    ),
];
const FIGURES: (&str, &str) = (
    "analysis/demo/figures.toml",
    include_str!("../../analysis/demo/figures.toml"),
);

/// Sizes of the quick demo (`--quick`, or LINKREV_DEMO_QUICK=1): the same experiments
/// and figures with fewer replications over a shorter time, for CI.
const QUICK_REPLICATIONS: i64 = 2;
const QUICK_DURATION_S: f64 = 60.0;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Report directory (replaced if it holds an earlier report and nothing else).
    #[arg(long, default_value = "reports/demo")]
    pub out: PathBuf,
    /// Where the demo's results go; one directory per experiment, rewritten each time.
    #[arg(long, default_value = "results/demo")]
    pub results: PathBuf,
    /// Worker threads (default: all cores, at most 1024). Results do not depend on it.
    #[arg(long, value_parser = super::thread_count)]
    pub threads: Option<usize>,
    /// A smaller demo (2 replications of 60 s instead of 5–10 of 300–600 s), for CI and a
    /// first look; also selected by LINKREV_DEMO_QUICK=1.
    #[arg(long)]
    pub quick: bool,
}

/// The spec text as run: the built-in text, or for the quick demo the same spec with
/// fewer replications and a shorter duration.
fn spec_text(text: &str, quick: bool) -> anyhow::Result<String> {
    if !quick {
        return Ok(text.to_string());
    }
    let mut table: toml::Table = toml::from_str(text).context("built-in demo spec")?;
    table.insert("replications".into(), QUICK_REPLICATIONS.into());
    if let Some(toml::Value::Table(mobility)) = table.get_mut("mobility") {
        mobility.insert("duration".into(), QUICK_DURATION_S.into());
    }
    let body = toml::to_string(&table).context("writing the quick demo spec")?;
    Ok(format!(
        "# Quick demo: the built-in spec with replications = {QUICK_REPLICATIONS} and \
         duration = {QUICK_DURATION_S}.\n{body}"
    ))
}

/// The file that marks a results directory as the demo's own: only such a directory
/// is cleared by the next demo.
const DEMO_MARK: &str = ".linkrev-demo";

/// Clears a previous demo's results directory: the demo always starts from scratch, so
/// its report shows what this build computes. Refuses anything the demo did not make
/// (a results directory of the user's own sweep included), and a directory another
/// process is writing (a demo or sweep still running there), naming it.
fn clear(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.join(DEMO_MARK).is_file() || !dir.join(spec_copy::SPEC_COPY).is_file() {
        anyhow::bail!(
            "{} exists and is not a results directory of the demo's (no {DEMO_MARK}): \
             choose another --results, or remove it yourself",
            dir.display()
        );
    }
    // The lock file goes with the directory, so it is let go of before the removal.
    drop(DirLock::exclusive(dir)?);
    std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))
}

pub fn run(args: DemoArgs) -> anyhow::Result<Outcome> {
    let quick = args.quick || std::env::var_os("LINKREV_DEMO_QUICK").is_some_and(|v| v == "1");
    let started = Instant::now();
    // Refuse a bad --out before minutes of simulation, not after.
    report::check_out_dir(&args.out)?;
    let mut plans = Vec::new();
    for (origin, text) in SPECS {
        let text = spec_text(text, quick)?;
        let spec = crate::sweep::specs::parse(&text, Path::new(origin))?;
        let dir = args.results.join(&spec.name);
        clear(&dir)?;
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        crate::output::write_atomically(&dir.join(DEMO_MARK), |w| {
            w.write_all(b"made by `linkrev demo`, which clears this directory when it runs again\n")
        })
        .with_context(|| format!("writing {}", dir.join(DEMO_MARK).display()))?;
        spec_copy::keep_text(text.as_bytes(), Path::new(origin), &dir)?;
        plans.push((spec_copy::plan(&dir)?, dir));
    }
    let total: usize = plans.iter().map(|(p, _)| p.runs.len()).sum();
    eprintln!(
        "linkrev demo{}: {total} runs ({}), then the report",
        if quick { " (quick)" } else { "" },
        plans
            .iter()
            .map(|(p, _)| format!("{} {}", p.runs.len(), p.experiment))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let stop = stop_on_ctrl_c();
    let progress = CliProgress::new(Some(total));
    let options = ExecuteOptions {
        threads: args.threads,
        shard: None,
        batch: None,
    };
    for (plan, dir) in &plans {
        let report = execute::execute(plan, dir, &options, stop, &progress)?;
        if report.interrupted {
            eprintln!("interrupted");
            return Ok(Outcome::Interrupted);
        }
    }
    progress.finish_all();
    let simulated = started.elapsed();
    let dirs: Vec<PathBuf> = plans.into_iter().map(|(_, d)| d).collect();
    let summary = report::write_report(
        &dirs,
        FigureSource::Text {
            text: FIGURES.1,
            name: FIGURES.0,
        },
        None,
        &args.out,
    )?;
    eprintln!(
        "\n{total} runs simulated in {:.1} s; {} figures ({} panels); {} safety violations; \
         total {:.1} s",
        simulated.as_secs_f64(),
        summary.figures,
        summary.panels,
        summary.safety_violations,
        started.elapsed().as_secs_f64()
    );
    outln!("{}", summary.index.display());
    Ok(Outcome::Success)
}
