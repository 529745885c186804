//! `linkrev sweep SPEC`: validate an experiment spec and print its plan (`--dry-run`), or
//! run it.

use super::Outcome;
use crate::sweep::plan::Plan;
use crate::sweep::spec::{self, MobilityKind, Spec};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Experiment spec (TOML), e.g. analysis/me_load.toml.
    pub spec: PathBuf,
    /// Validate the spec and print the plan (axes, run count, work) without running.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: SweepArgs) -> anyhow::Result<Outcome> {
    // Every check, including each combination of axes, happens here, before any run.
    let spec = spec::load(&args.spec)?;
    let plan = spec::expand(&spec)?;
    if args.dry_run {
        print_plan(&spec, &plan);
        Ok(Outcome::Success)
    } else {
        execute(&plan)
    }
}

/// Runs the plan. The executor (parallel runs, resumable store) is a separate piece of
/// work; until it lands, this refuses, so that a sweep never pretends to have run.
fn execute(_plan: &Plan) -> anyhow::Result<Outcome> {
    anyhow::bail!("running sweeps is not implemented yet (use --dry-run to see the plan)")
}

fn print_plan(spec: &Spec, plan: &Plan) {
    println!("experiment    {}", plan.experiment);
    println!("spec          {}", plan.spec_path.display());
    println!("master seed   {}", spec.master_seed);
    println!(
        "mobility      {}",
        match spec.mobility {
            MobilityKind::RandomWaypoint => "random waypoint (generated per run)",
            MobilityKind::Traces => "trace files",
        }
    );
    let list = |values: &[crate::sweep::plan::ParamValue]| {
        values
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if plan.axes.is_empty() {
        println!("axes          none");
    }
    for (i, (name, values)) in plan.axes.iter().enumerate() {
        let label = if i == 0 { "axes" } else { "" };
        println!(
            "{label:<14}{name} = [{}] ({} values)",
            list(values),
            values.len()
        );
    }
    let fixed: Vec<String> = spec
        .params
        .iter()
        .filter(|p| !p.is_axis)
        .map(|p| format!("{} = {}", p.name, p.values[0]))
        .collect();
    println!("fixed         {}", fixed.join(", "));
    let algorithms: Vec<&str> = plan.algorithms.iter().map(|a| a.name()).collect();
    println!("algorithms    {}", algorithms.join(", "));
    println!("replications  {}", plan.replications);
    println!("runs          {}", plan.runs.len());
    match plan.node_seconds() {
        Some(ns) => println!("work          {ns:.3e} simulated node-seconds"),
        None => println!("work          unknown until the trace files are read"),
    }
    if let (Some(first), Some(last)) = (plan.runs.first(), plan.runs.last()) {
        println!("first run     {} (seed {})", first.key, first.seed);
        println!("last run      {} (seed {})", last.key, last.seed);
    }
}
