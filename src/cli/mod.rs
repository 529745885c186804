//! The `linkrev` command line: argument parsing, human-readable errors and output.
//!
//! Exit codes: 0 success; 1 a check found a mismatch (`trace lint`); 2 unusable input
//! (a malformed trace, a bad parameter, a missing file) or a failed write. Every error
//! names the file, line and field it is about (see [`crate::input`]).
//!
//! Output goes through `outln!` and `out!`, never `println!`: a write that fails (a
//! full device) is the command's error, exit 2, where `println!` would panic. A closed
//! pipe (`linkrev export DIR --csv | head -1`) only stops the output: the command goes
//! on and finishes the files it writes, since a reader that has seen enough must not
//! leave two CSVs of four behind. Writes after the pipe closed are dropped, quietly.

/// `println!` for a command's output: a failed write returns the error from the
/// enclosing function (which returns `anyhow::Result`), naming standard output; a
/// closed pipe is not an error (see the module docs).
macro_rules! outln {
    ($($arg:tt)*) => {
        crate::cli::to_stdout(format_args!($($arg)*), true)?
    };
}

/// `print!` for a command's output, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        crate::cli::to_stdout(format_args!($($arg)*), false)?
    };
}

/// Set once standard output's reader has gone: later output is dropped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` (and a newline) to standard output: a failed write is the command's
/// error, except a closed pipe, after which output is dropped and the command goes on.
fn to_stdout(text: std::fmt::Arguments<'_>, newline: bool) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    let written = if newline {
        writeln!(stdout, "{text}")
    } else {
        write!(stdout, "{text}").and_then(|()| stdout.flush())
    };
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(anyhow::anyhow!("cannot write to standard output: {e}")),
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
            eprintln!("error: {}", error_text(&e));
            ExitCode::from(2)
        }
    }
}

/// An error with its causes, `: `-separated, each said once: a cause whose text the
/// message before it already holds (an I/O error a library quotes in its own message)
/// is not repeated.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_text;

    /// polars quotes the I/O error it wraps, which is also its source: said once.
    #[test]
    fn an_error_says_each_cause_once() {
        let io = std::io::Error::from_raw_os_error(28);
        let quoted = format!("parquet: underlying IO error: {io}");
        let e = anyhow::Error::new(io)
            .context(quoted)
            .context("writing x.parquet");
        let text = error_text(&e);
        assert_eq!(text.matches("os error 28").count(), 1, "{text}");
        assert!(
            text.starts_with("writing x.parquet: parquet: underlying IO error"),
            "{text}"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&plain), "outer: inner");
    }
}
