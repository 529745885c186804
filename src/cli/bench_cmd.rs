//! `linkrev bench`: speed measurements any user can reproduce, each reported next to a
//! baseline run in the same process (these machines are noisy; ratios travel).

use super::Outcome;
use super::run_cmd::parse_rwp_spec;
use crate::mobility::rwp;
use crate::params;
use crate::registry::Algorithm;
use crate::run::simulate;
use crate::sim::hold::{self, HoldDelay};
use crate::topology::events::link_timeline;
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Hold model through linkrev's event queue vs a bare BinaryHeap loop.
    Engine(EngineArgs),
    /// Events per second of every registered algorithm with every monitor on (50 nodes ×
    /// 900 s).
    Protocols(ProtocolArgs),
}

#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Events kept pending.
    #[arg(long, default_value_t = 10_000)]
    pub pending: usize,
    /// Events processed per measurement.
    #[arg(long, default_value_t = 5_000_000)]
    pub events: u64,
    /// Measurements per loop; the best is kept.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProtocolArgs {
    /// Mobility, as for `linkrev run --rwp`.
    #[arg(
        long,
        default_value = "nodes=50,area=1500x300,speed=1:20,pause=30,duration=900"
    )]
    pub rwp: String,
    /// CS requests per second per node.
    #[arg(long, default_value_t = 0.1)]
    pub rate: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ProtocolResult {
    algorithm: &'static str,
    family: &'static str,
    events: u64,
    wall_time_s: f64,
    events_per_s: f64,
    safety_violations: u64,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<Outcome> {
    match cmd {
        BenchCommand::Engine(args) => engine(args),
        BenchCommand::Protocols(args) => protocols(args),
    }
}

fn engine(args: EngineArgs) -> anyhow::Result<Outcome> {
    let results: Vec<_> = [HoldDelay::Uniform1000, HoldDelay::Exponential500]
        .into_iter()
        .map(|delay| {
            if !args.json {
                eprintln!(
                    "hold model, {delay:?} delays: {} events, {} pending …",
                    args.events, args.pending
                );
            }
            hold::measure(args.pending, args.events, delay, args.repeats)
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        println!(
            "{:<16} {:>16} {:>16} {:>8}",
            "delay", "linkrev ev/s", "bare heap ev/s", "ratio"
        );
        for r in &results {
            let name = match r.delay {
                HoldDelay::Uniform1000 => "uniform 0-1000ns",
                HoldDelay::Exponential500 => "exp mean 500ns",
            };
            println!(
                "{name:<16} {:>16.0} {:>16.0} {:>7.1}%",
                r.events_per_s,
                r.bare_events_per_s,
                100.0 * r.ratio
            );
        }
    }
    Ok(Outcome::Success)
}

fn protocols(args: ProtocolArgs) -> anyhow::Result<Outcome> {
    let params = parse_rwp_spec(&args.rwp, args.seed)?;
    let trace = rwp::generate(&params)?;
    let timeline = link_timeline(&trace, 250.0);
    let mut results = Vec::new();
    for algorithm in Algorithm::all() {
        let config = params::bench_config(algorithm, args.rate, trace.duration, args.seed);
        if !args.json {
            eprintln!("{} …", algorithm.name());
        }
        let s = simulate(algorithm, &timeline, config).summary;
        results.push(ProtocolResult {
            algorithm: algorithm.name(),
            family: algorithm.family().name(),
            events: s.events,
            wall_time_s: s.wall_time_s,
            events_per_s: s.events as f64 / s.wall_time_s,
            safety_violations: s.safety_violations,
        });
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        println!(
            "{:<14} {:<18} {:>10} {:>10} {:>14}",
            "algorithm", "family", "events", "wall s", "events/s"
        );
        for r in &results {
            println!(
                "{:<14} {:<18} {:>10} {:>10.3} {:>14.0}",
                r.algorithm, r.family, r.events, r.wall_time_s, r.events_per_s
            );
        }
    }
    Ok(Outcome::Success)
}
