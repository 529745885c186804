//! The `linkrev` command line: argument parsing, human-readable errors and output.
//!
//! Exit codes: 0 success; 1 a check found a mismatch (`trace lint`); 2 unusable input
//! (a malformed trace, a bad parameter, a missing file) or a failed write. Every error
//! names the file, line and field it is about (see [`crate::input`]).
//!
//! Output goes through `outln!` and `out!`, never `println!`: a write that fails (a
//! full device) is the command's error, exit 2, where `println!` would panic. A closed
//! pipe (`linkrev algorithms --json | head -c1`) ends the process quietly, as it ends
//! `ls | head`: `main` restores the default action of `SIGPIPE`, which Rust's runtime
//! ignores.

/// `println!` for a command's output: a failed write returns the error from the
/// enclosing function (which returns `anyhow::Result`), naming standard output.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err(crate::cli::stdout_error)?;
    }};
}

/// `print!` for a command's output, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, $($arg)*)
            .and_then(|()| stdout.flush())
            .map_err(crate::cli::stdout_error)?;
    }};
}

/// A failed write to standard output, as the command's error.
fn stdout_error(e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("cannot write to standard output: {e}")
}

/// Restores the default action of `SIGPIPE` (end the process), which Rust's runtime
/// sets to "ignore": a command writing into a closed pipe then ends quietly instead of
/// failing on every write.
fn quiet_on_closed_pipe() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called first thing in `main`, before any other thread exists; setting a
    // signal's disposition to its default has no other effect on this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The most worker threads a command takes: far above any machine's cores, far below
/// the count whose start-up alone takes minutes (`--threads 100000`).
pub const MAX_THREADS: usize = 1024;

/// Parses `--threads`: 1 to [`MAX_THREADS`].
fn thread_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!("expected a thread count from 1 to {MAX_THREADS}")),
    }
}

mod algorithms_cmd;
mod bench_cmd;
mod check_cmd;
mod demo_cmd;
pub mod reference;
mod replay_cmd;
mod report_cmd;
mod run_cmd;
mod slurm_cmd;
mod sweep_cmd;
mod trace_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// linkrev: link-reversal algorithms on mobile ad hoc networks, trace-driven.
#[derive(Debug, Parser)]
#[command(name = "linkrev", version, about, long_about = None)]
pub struct Cli {
    /// The subcommand to run, with its own arguments.
    #[command(subcommand)]
    pub command: Command,
}

/// The `linkrev` subcommands; each variant's doc is its line in `--help`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The main job: run reduced standard studies and write their report (reports/demo).
    Demo(demo_cmd::DemoArgs),
    /// Generate, inspect, check and convert mobility traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCommand),
    /// Simulate one algorithm on one mobility scenario and print its summary.
    Run(run_cmd::RunArgs),
    /// Write one run as a self-contained HTML page that animates it: nodes, links
    /// oriented by height, leaders, tokens, messages, topology changes, violations.
    Replay(replay_cmd::ReplayArgs),
    /// Check every interleaving of a small configuration exhaustively (exit 1: a property
    /// is violated, with a shortest execution).
    Check(check_cmd::CheckArgs),
    /// List the registered algorithms: family, description, parameters and defaults.
    Algorithms(algorithms_cmd::AlgorithmsArgs),
    /// Run a parameter sweep from an experiment spec (TOML); --dry-run prints the plan.
    Sweep(sweep_cmd::SweepArgs),
    /// Check a results directory against its spec (missing runs: exit 1) and compact it.
    Merge(sweep_cmd::MergeArgs),
    /// Export a results directory's tables (`--csv`).
    Export(sweep_cmd::ExportArgs),
    /// Write an HTML report (figures, tables, specs, safety totals) of results directories.
    Report(report_cmd::ReportArgs),
    /// Run a sweep on a Slurm cluster: an array job (one shard per task), then a merge job.
    Slurm(slurm_cmd::SlurmArgs),
    /// Reproducible speed measurements, each next to a same-process baseline.
    #[command(subcommand)]
    Bench(bench_cmd::BenchCommand),
    /// Write the reference pages generated from this binary (commands, spec keys,
    /// figure-spec keys, metrics and columns, algorithms), as in docs/src/reference.
    Reference(reference::ReferenceArgs),
}

/// What a command reports back to `main`.
pub enum Outcome {
    /// The command did what was asked (exit code 0).
    Success,
    /// A check ran and found a mismatch (exit code 1).
    Mismatch,
    /// Stopped by Ctrl-C after storing the runs in progress (exit code 130).
    Interrupted,
}

/// Entry point of a binary that is the whole `linkrev` command line with `registry`'s
/// algorithms: the built-ins plus a user's own ([`crate::registry::Registry::add`]).
/// Every command (`algorithms`, `run`, `sweep`, `merge`, `report`, `check`, `replay`,
/// `bench`, `slurm`) then knows them by name. `examples/own_algorithm.rs` is a worked
/// example.
pub fn main_with(registry: crate::registry::Registry) -> ExitCode {
    if let Err(e) = registry.install() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    main()
}

/// Entry point of the binary, with the built-in algorithms.
pub fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Demo(args) => demo_cmd::run(args),
        Command::Trace(cmd) => trace_cmd::run(cmd),
        Command::Run(args) => run_cmd::run(args),
        Command::Replay(args) => replay_cmd::run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Algorithms(args) => algorithms_cmd::run(args),
        Command::Sweep(args) => sweep_cmd::run(args),
        Command::Merge(args) => sweep_cmd::merge(args),
        Command::Export(args) => sweep_cmd::export(args),
        Command::Report(args) => report_cmd::run(args),
        Command::Slurm(args) => slurm_cmd::run(args),
        Command::Bench(cmd) => bench_cmd::run(cmd),
        Command::Reference(args) => reference::run(args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
