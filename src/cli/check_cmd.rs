//! `linkrev check`: exhaustive checking of a small configuration ([`crate::check`]).

use super::Outcome;
use super::run_cmd::algorithm_params;
use crate::check::graph::SmallGraph;
use crate::check::{CheckReport, CheckSetup, Verdict};
use crate::family::Family;
use crate::input::InputError;
use crate::output::write_atomically;
use crate::registry::Algorithm;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Algorithm to check (`linkrev algorithms` lists them).
    #[arg(long, value_parser = Algorithm::value_parser())]
    pub algo: Algorithm,
    /// An algorithm parameter, KEY=VALUE (repeatable), e.g. --param k=2.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// The starting graph: path:N, ring:N, star:N, complete:N, grid:RxC (2 to 8 nodes),
    /// or a file of `a b` edges.
    #[arg(long)]
    pub graph: String,
    /// Topology changes: any K link failures or formations among all pairs of nodes.
    #[arg(long, default_value_t = 1)]
    pub changes: u8,
    /// overlap: a change may happen while messages are in flight; serialize: only when
    /// none is (the leader-election paper's assumption, the simulator's `--changes`).
    #[arg(long = "changes-mode", value_enum, default_value_t = super::run_cmd::ChangesArg::Overlap)]
    pub change_mode: super::run_cmd::ChangesArg,
    /// CS requests to issue (mutual exclusion), at any nodes, at any time.
    #[arg(long, default_value_t = 0)]
    pub requests: u8,
    /// The most actions on one execution; longer ones are cut, and a property not
    /// violated within the bound is reported unknown.
    #[arg(long, default_value_t = 30)]
    pub max_depth: usize,
    /// Checker threads. With 1 (the default) each violation found is a shortest one.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write `check.json` and one `<property>.txt` per violation (its steps) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs the check; exit 1 when a property is violated.
pub fn run(args: CheckArgs) -> anyhow::Result<Outcome> {
    let graph = SmallGraph::parse(&args.graph).map_err(|e| InputError::parameter("graph", e))?;
    if args.requests > 0 && args.algo.family() != Family::MutualExclusion {
        return Err(InputError::parameter(
            "requests",
            format!(
                "{} is not a mutual-exclusion algorithm: it takes no CS requests",
                args.algo.name()
            ),
        )
        .into());
    }
    let params = algorithm_params(args.algo, &args.params)?;
    args.algo
        .check_node_ids(&params, graph.nodes)
        .map_err(|e| InputError::parameter("param", e))?;
    let setup = CheckSetup {
        graph,
        changes: args.changes,
        change_mode: args.change_mode.into(),
        requests: args.requests,
        max_depth: args.max_depth,
        threads: args.threads,
    };
    eprintln!(
        "checking {} on {} ({} changes, {} requests, depth ≤ {})…",
        args.algo.name(),
        setup.graph.name,
        setup.changes,
        setup.requests,
        setup.max_depth
    );
    let report = args.algo.check(&params, &setup);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print_report(&report);
    }
    if let Some(dir) = &args.out {
        write_out(dir, &report)?;
    }
    Ok(if report.violated() {
        Outcome::Mismatch
    } else {
        Outcome::Success
    })
}

fn print_report(report: &CheckReport) {
    println!("algorithm      {}", report.algorithm);
    println!("graph          {} {:?}", report.graph, report.edges);
    println!(
        "budgets        {} changes ({}), {} requests",
        report.changes, report.change_mode, report.requests
    );
    println!(
        "explored       {} states ({} generated), depth {} of {}{}",
        report.states,
        report.states_generated,
        report.depth_reached,
        report.max_depth,
        if report.truncated {
            " (executions cut at the bound)"
        } else {
            " (complete)"
        }
    );
    println!("time           {:.3} s", report.seconds);
    for p in &report.properties {
        let verdict = match &p.verdict {
            Verdict::Holds => "holds".to_string(),
            Verdict::Unknown => "unknown (depth bound hit)".to_string(),
            Verdict::Violated { steps, .. } => format!("VIOLATED in {} steps", steps.len()),
        };
        println!("{:<38} {verdict}   [{}]", p.name, p.judged_in);
        if let Verdict::Violated { detail, steps, .. } = &p.verdict {
            for (i, step) in steps.iter().enumerate() {
                println!("    {:>3}. {step}", i + 1);
            }
            println!("    → {detail}");
        }
    }
}

fn write_out(dir: &std::path::Path, report: &CheckReport) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(report).context("serialising the report")?;
    let path = dir.join("check.json");
    write_atomically(&path, |w| std::io::Write::write_all(w, json.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))?;
    for p in &report.properties {
        if let Verdict::Violated { detail, steps, .. } = &p.verdict {
            let path = dir.join(format!("{}.txt", p.name));
            write_atomically(&path, |w| {
                writeln!(
                    w,
                    "# {} on {} {:?}: {} violated after {} steps: {detail}",
                    report.algorithm,
                    report.graph,
                    report.edges,
                    p.name,
                    steps.len()
                )?;
                for step in steps {
                    writeln!(w, "{step}")?;
                }
                Ok(())
            })
            .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}
