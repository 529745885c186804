//! `linkrev slurm SPEC --tasks N`: write an array job (task K runs shard K/N) and a merge
//! job for a sweep, and submit both with `sbatch` unless `--dry-run`.
//!
//! The spec is validated first, so a bad spec fails here, not in N queued tasks. The
//! scripts go to `<results>/slurm/`, beside the results they produce, so a later look at
//! a results directory shows how it was made. The script text comes from
//! [`crate::sweep::slurm`].

use super::Outcome;
use crate::output::write_atomically;
use crate::results::lock::DirLock;
use crate::results::store::tables;
use crate::sweep::slurm::{self, Jobs};
use crate::sweep::specs;
use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// Experiment spec (TOML), e.g. analysis/me_load.toml.
    pub spec: PathBuf,
    /// Array tasks; task K runs shard K/N of the plan.
    #[arg(long, value_parser = positive)]
    pub tasks: usize,
    /// Slurm partition (default: the cluster's default partition).
    #[arg(long, value_parser = slurm::check_partition)]
    pub partition: Option<String>,
    /// Wall-time limit of each job, HH:MM:SS (default: the partition's).
    #[arg(long, value_parser = slurm::check_time)]
    pub time: Option<String>,
    /// Cores per array task; the task runs that many worker threads.
    #[arg(long, default_value_t = 1, value_parser = positive)]
    pub cpus_per_task: usize,
    /// Results directory (default: results/<experiment>).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Write the scripts and print their key lines, without submitting.
    #[arg(long)]
    pub dry_run: bool,
}

fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number >= 1, got `{text}`")),
    }
}

pub fn run(args: SlurmArgs) -> anyhow::Result<Outcome> {
    let plan = specs::plan_from_file(&args.spec)?;
    if args.tasks > plan.runs.len() {
        bail!(
            "--tasks {} is more than the plan's {} runs: some tasks would have nothing to do; \
             use --tasks {} or fewer",
            args.tasks,
            plan.runs.len(),
            plan.runs.len()
        );
    }
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&plan.experiment));
    // Tasks start elsewhere, in another directory: every path must be absolute.
    let jobs = Jobs {
        experiment: plan.experiment.clone(),
        exe: std::env::current_exe().context("finding the linkrev executable")?,
        spec: std::fs::canonicalize(&args.spec)
            .with_context(|| format!("resolving {}", args.spec.display()))?,
        results: std::path::absolute(&results)
            .with_context(|| format!("resolving {}", results.display()))?,
        tasks: args.tasks,
        cpus_per_task: args.cpus_per_task,
        partition: args.partition.clone(),
        time: args.time.clone(),
        // Each array job finishes at least one wave of every point (its last task goes
        // on to the next); one more for a wave left by a task that stopped early.
        waves: plan.sequential().map(|seq| {
            let r = seq.replications;
            (r.max - r.min).div_ceil(r.batch) + 2
        }),
    };
    for path in [&jobs.exe, &jobs.spec, &jobs.results] {
        slurm::check_path(path).map_err(anyhow::Error::msg)?;
    }
    {
        // Under the directory's lock, so that a sweep or merge running there is named
        // and refused before anything is written or queued; let go before submitting,
        // or the first tasks (which share the lock) could find it taken.
        crate::sweep::spec_copy::refuse_other_spec(&plan, &jobs.results)?;
        let _lock = DirLock::exclusive(&jobs.results)?;
        // Written now, once, rather than by N tasks starting at the same moment; this
        // also refuses a directory of another spec before anything is queued.
        crate::sweep::spec_copy::keep(&plan, &jobs.results)?;
        let logs = jobs.log_dir();
        // Slurm does not create the directory of an --output file; the task would fail.
        std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
        for (path, text) in [
            (jobs.array_script_path(), jobs.array_script()),
            (jobs.merge_script_path(), jobs.merge_script()),
        ] {
            write_atomically(&path, |w| w.write_all(text.as_bytes()))
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    match jobs.waves {
        None => outln!(
            "{}: {} runs in {} array tasks ({} cpus each), then a merge job",
            plan.experiment,
            plan.runs.len(),
            jobs.tasks,
            jobs.cpus_per_task
        ),
        Some(waves) => outln!(
            "{}: up to {} runs (a precision target: points stop when their intervals are \
             narrow enough) in {} array tasks ({} cpus each), then a merge job that submits \
             the next wave while points need more runs (at most {waves} waves)",
            plan.experiment,
            plan.runs.len(),
            jobs.tasks,
            jobs.cpus_per_task
        ),
    }
    if args.dry_run {
        print_dry_run(&jobs)?;
    } else {
        submit(&jobs)?;
    }
    Ok(Outcome::Success)
}

fn print_dry_run(jobs: &Jobs) -> anyhow::Result<()> {
    for (path, text) in [
        (jobs.array_script_path(), jobs.array_script()),
        (jobs.merge_script_path(), jobs.merge_script()),
    ] {
        outln!("wrote {}", path.display());
        // The command lines: `exec linkrev …`, or the waves of a sequential merge.
        for line in text.lines().filter(|l| {
            l.starts_with("#SBATCH")
                || l.starts_with("exec ")
                || l.contains(" merge ")
                || l.starts_with("array=$(sbatch")
        }) {
            outln!("  {line}");
        }
    }
    outln!("dry run: nothing submitted; to submit by hand:");
    outln!(
        "  id=$(sbatch --parsable {})",
        slurm::quote(&jobs.array_script_path())
    );
    outln!(
        "  sbatch --dependency=afterok:$id --kill-on-invalid-dep=yes {}",
        slurm::quote(&jobs.merge_script_path())
    );
    Ok(())
}

fn submit(jobs: &Jobs) -> anyhow::Result<()> {
    let array_script = jobs.array_script_path();
    let array = sbatch(
        &jobs.results,
        &["--parsable".as_ref(), array_script.as_os_str()],
    )?;
    let merge_script = jobs.merge_script_path();
    let dependency = format!("--dependency=afterok:{array}");
    let merge = sbatch(
        &jobs.results,
        &[
            "--parsable".as_ref(),
            dependency.as_ref(),
            // Without it a failed task leaves the merge job pending forever.
            "--kill-on-invalid-dep=yes".as_ref(),
            merge_script.as_os_str(),
        ],
    )
    .with_context(|| {
        format!(
            "array job {array} is queued without its merge job: cancel it with \
             `scancel {array}`, or submit the merge yourself with `sbatch {dependency} \
             --kill-on-invalid-dep=yes {}`",
            slurm::quote(&merge_script)
        )
    })?;
    let logs = jobs.log_dir();
    outln!(
        "array job {array}: {} tasks, task K runs shard K/{}",
        jobs.tasks,
        jobs.tasks
    );
    outln!("merge job {merge}: runs once every task has succeeded (cancelled if one fails)");
    outln!("watch:   squeue -j {array},{merge}");
    outln!(
        "logs:    {} (K = 1..{}), {}",
        logs.join(format!("array-{array}_K.out")).display(),
        jobs.tasks,
        jobs.merge_log(&merge).display()
    );
    outln!("cancel:  scancel {array} {merge}");
    outln!(
        "results: {} ({} once the merge job is done)",
        jobs.results.display(),
        tables()
            .iter()
            .map(|t| format!("{t}.parquet"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// Runs `sbatch ARGS` from the results directory and returns the job id it printed.
fn sbatch(dir: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<String> {
    let shown = args
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let out = match Command::new("sbatch").args(args).current_dir(dir).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "`sbatch` was not found on PATH: run this where Slurm's client commands are \
             installed (a login node), or use --dry-run to write the scripts only"
        ),
        Err(e) => return Err(e).with_context(|| format!("running sbatch {shown}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "sbatch {shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    slurm::parse_job_id(&stdout)
        .with_context(|| format!("sbatch {shown} printed no job id: `{}`", stdout.trim()))
}
