//! `linkrev trace …`: generate, inspect, lint and convert mobility traces.

use super::Outcome;
use crate::input::InputError;
use crate::mobility::format::{LoadedTrace, ReadOptions, read_trace_with, write_trace};
use crate::mobility::ns2::SetdestFooter;
use crate::mobility::rwp::{self, PauseDist, RwpParams, SpeedDist, StartMode};
use crate::mobility::{Area, Trace};
use crate::topology::events::{link_limit, try_link_timeline};
use crate::topology::stats::{MobilityStats, mobility_stats};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// setdest's hard-coded radio range, metres.
pub const SETDEST_RANGE: f64 = crate::params::RANGE;

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Generate a trace.
    #[command(subcommand)]
    Gen(GenCommand),
    /// Replay a trace and print its mobility statistics (link changes, degree, …).
    Stats(StatsArgs),
    /// Parse and validate a trace; compare its link changes with setdest's footer.
    /// Exit 1 on a mismatch, 2 on unreadable input.
    Lint(LintArgs),
    /// Convert between ns-2 setdest (.tcl, .ns2, …) and BonnMotion (.movements[.gz]).
    Convert(ConvertArgs),
}

#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// Random waypoint, seeded. Defaults: the classic 50-node 1500×300 m ns-2 study.
    Rwp(RwpArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PauseDistArg {
    /// Every pause lasts exactly `--pause` seconds (setdest -P 1).
    Const,
    /// Pauses uniform in [0, 2·pause] (setdest -P 2).
    Uniform,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SpeedDistArg {
    /// Uniform in [MIN, MAX] (setdest -s 1).
    Uniform,
    /// Normal, mean (MIN+MAX)/2, sd (MAX−MIN)/4, redrawn outside [MIN, MAX] (setdest -s 2).
    Normal,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StartArg {
    /// Uniform positions, first leg a move: the model whose speed decays over time.
    Classic,
    /// Navidi–Camp perfect start: stationary from t = 0 (needs MIN > 0).
    Stationary,
}

#[derive(Debug, Args)]
pub struct RwpArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 50)]
    pub nodes: usize,
    /// Area as WIDTHxHEIGHT in metres.
    #[arg(long, default_value = "1500x300", value_parser = parse_area)]
    pub area: Area,
    /// Speed range MIN:MAX in m/s.
    #[arg(long, default_value = "1:20", value_parser = parse_speed)]
    pub speed: (f64, f64),
    /// Pause in seconds (the mean, with --pause-dist uniform).
    #[arg(long, default_value_t = 30.0, allow_negative_numbers = true)]
    pub pause: f64,
    #[arg(long, value_enum, default_value_t = PauseDistArg::Const)]
    pub pause_dist: PauseDistArg,
    #[arg(long, value_enum, default_value_t = SpeedDistArg::Uniform)]
    pub speed_dist: SpeedDistArg,
    /// Trace duration in seconds.
    #[arg(long, default_value_t = 900.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Random seed: the same seed and parameters give a byte-identical file.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = StartArg::Stationary)]
    pub start: StartArg,
    /// Output file; the format follows the extension (.movements[.gz] = BonnMotion, else ns-2).
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Trace file (ns-2 setdest or BonnMotion .movements[.gz]).
    pub file: PathBuf,
    /// Radio range in metres (link iff distance < range).
    #[arg(long, default_value_t = SETDEST_RANGE, allow_negative_numbers = true)]
    pub range: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    pub file: PathBuf,
    /// Radio range in metres; setdest's footer is only comparable at 250.
    #[arg(long, default_value_t = SETDEST_RANGE, allow_negative_numbers = true)]
    pub range: f64,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// How to read a trace beyond what its file says (shared by `trace stats`, `trace lint`
/// and `run`).
#[derive(Debug, Args, Clone, Default)]
pub struct ReadArgs {
    /// Length of the trace in seconds, over the file's own: cuts it, or extends it with
    /// every node resting where it ends (an ns-2 file ends at its last event, so an
    /// exported 900 s scenario can read as 899.16 s).
    #[arg(long, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// SUMO activity file (`traceExporter.py --ns2activity-output`): a vehicle has no
    /// links before its `start` or after its `stop`.
    #[arg(long, value_name = "FILE")]
    pub activity: Option<PathBuf>,
}

impl ReadArgs {
    /// The reader's options.
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            duration: self.duration,
            activity: self.activity.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    pub input: PathBuf,
    pub output: PathBuf,
}

pub fn run(cmd: TraceCommand) -> anyhow::Result<Outcome> {
    match cmd {
        TraceCommand::Gen(GenCommand::Rwp(args)) => gen_rwp(args),
        TraceCommand::Stats(args) => stats(args),
        TraceCommand::Lint(args) => lint(args),
        TraceCommand::Convert(args) => convert(args),
    }
}

fn parse_area(s: &str) -> Result<Area, String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got `{s}`"))?;
    let num = |v: &str, what: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("{what} `{v}` is not a number"))
            .and_then(|x| {
                if x.is_finite() && x > 0.0 {
                    Ok(x)
                } else {
                    Err(format!("{what} must be positive"))
                }
            })
    };
    Ok(Area {
        width: num(w, "width")?,
        height: num(h, "height")?,
    })
}

fn parse_speed(s: &str) -> Result<(f64, f64), String> {
    let (lo, hi) = s
        .split_once(':')
        .ok_or_else(|| format!("expected MIN:MAX, got `{s}`"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{v}` is not a number"))
    };
    Ok((num(lo)?, num(hi)?))
}

fn check_range(range: f64) -> Result<(), InputError> {
    if range.is_finite() && range > 0.0 {
        Ok(())
    } else {
        Err(InputError::parameter(
            "range",
            format!("must be a positive number of metres, got {range}"),
        ))
    }
}

fn gen_rwp(args: RwpArgs) -> anyhow::Result<Outcome> {
    let (min, max) = args.speed;
    let params = RwpParams {
        nodes: args.nodes,
        area: args.area,
        speed: match args.speed_dist {
            SpeedDistArg::Uniform => SpeedDist::Uniform { min, max },
            SpeedDistArg::Normal => SpeedDist::Normal { min, max },
        },
        pause: match args.pause_dist {
            PauseDistArg::Const => PauseDist::Constant(args.pause),
            PauseDistArg::Uniform => PauseDist::Uniform { mean: args.pause },
        },
        duration: args.duration,
        start: match args.start {
            StartArg::Classic => StartMode::Classic,
            StartArg::Stationary => StartMode::Stationary,
        },
        seed: args.seed,
    };
    let trace = rwp::generate(&params)?;
    write_trace(&trace, &args.output)?;
    eprintln!(
        "wrote {} ({} nodes, {} legs, {} s)",
        args.output.display(),
        trace.node_count(),
        trace.total_legs(),
        trace.duration
    );
    Ok(Outcome::Success)
}

/// What `trace stats --json` prints: the statistics plus the footer cross-check.
#[derive(Serialize)]
struct StatsReport<'a> {
    file: String,
    #[serde(flatten)]
    stats: &'a MobilityStats,
    footer_link_changes: Option<u64>,
    footer_match: Option<bool>,
    footer_per_node_match: Option<bool>,
    warnings: usize,
}

/// The setdest footer compared with our replay, when the footer is comparable.
struct FooterCheck {
    total: Option<u64>,
    total_match: Option<bool>,
    per_node_match: Option<bool>,
    /// Nodes whose per-node count differs: (node, footer, ours).
    per_node_diff: Vec<(u32, u64, usize)>,
}

fn check_footer(footer: Option<&SetdestFooter>, stats: &MobilityStats) -> FooterCheck {
    let Some(footer) = footer.filter(|_| stats.range == SETDEST_RANGE) else {
        return FooterCheck {
            total: None,
            total_match: None,
            per_node_match: None,
            per_node_diff: Vec::new(),
        };
    };
    let total_match = footer.link_changes.map(|n| n == stats.link_changes as u64);
    let per_node_diff: Vec<_> = footer
        .per_node
        .iter()
        .filter_map(|row| {
            let ours = stats
                .link_changes_per_node
                .get(row.node as usize)
                .copied()
                .unwrap_or(0);
            (row.link_changes != ours as u64).then_some((row.node, row.link_changes, ours))
        })
        .collect();
    let per_node_match = (!footer.per_node.is_empty())
        .then_some(per_node_diff.is_empty() && footer.per_node.len() == stats.nodes);
    FooterCheck {
        total: footer.link_changes,
        total_match,
        per_node_match,
        per_node_diff,
    }
}

fn load(file: &std::path::Path, read: &ReadArgs) -> anyhow::Result<LoadedTrace> {
    Ok(read_trace_with(file, &read.options())?)
}

fn stats(args: StatsArgs) -> anyhow::Result<Outcome> {
    check_range(args.range)?;
    let loaded = load(&args.file, &args.read)?;
    let timeline = try_link_timeline(&loaded.trace, args.range, link_limit()?)
        .map_err(|e| InputError::file(&args.file, e.to_string()))?;
    let stats = mobility_stats(&loaded.trace, &timeline);
    let check = check_footer(loaded.footer.as_ref(), &stats);
    if args.json {
        let report = StatsReport {
            file: args.file.display().to_string(),
            stats: &stats,
            footer_link_changes: check.total,
            footer_match: check.total_match,
            footer_per_node_match: check.per_node_match,
            warnings: loaded.warnings.len(),
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        for w in &loaded.warnings {
            eprintln!("{w}");
        }
        print_stats_table(&args.file, &loaded.trace, &stats, &check)?;
    }
    Ok(Outcome::Success)
}

/// `v` with `decimals` decimals, never as a negative zero (`-0.000`): a value that
/// rounds to zero is zero, whatever the sign of the rounding error behind it.
fn fixed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => text,
    }
}

fn print_stats_table(
    file: &std::path::Path,
    trace: &Trace,
    s: &MobilityStats,
    check: &FooterCheck,
) -> anyhow::Result<()> {
    let opt = |v: Option<f64>| v.map_or("n/a".to_string(), |v| fixed(v, 3));
    outln!("trace                 {}", file.display());
    outln!("nodes                 {}", s.nodes);
    outln!(
        "area                  {} x {} m",
        trace.area.width,
        trace.area.height
    );
    outln!("duration              {} s", s.duration);
    outln!("range                 {} m", s.range);
    outln!("link ups / downs      {} / {}", s.link_ups, s.link_downs);
    outln!(
        "link changes          {} ({} /s)",
        s.link_changes,
        fixed(s.link_change_rate, 3)
    );
    outln!("initial links         {}", s.initial_links);
    outln!("mean degree           {}", fixed(s.mean_degree, 3));
    outln!(
        "mean link duration    {} s ({} completed links)",
        opt(s.mean_link_duration),
        s.completed_links
    );
    outln!("mean components       {}", fixed(s.mean_components, 3));
    outln!(
        "time connected        {} %",
        fixed(100.0 * s.frac_time_connected, 1)
    );
    outln!("mean speed            {} m/s", fixed(s.mean_speed, 3));
    if let (Some(total), Some(ok)) = (check.total, check.total_match) {
        outln!(
            "setdest footer        {} link changes: {}",
            total,
            if ok { "match" } else { "MISMATCH" }
        );
    }
    if let Some(ok) = check.per_node_match {
        outln!(
            "footer per-node table {}",
            if ok { "match" } else { "MISMATCH" }
        );
    }
    Ok(())
}

fn lint(args: LintArgs) -> anyhow::Result<Outcome> {
    check_range(args.range)?;
    let loaded = load(&args.file, &args.read)?;
    for w in &loaded.warnings {
        outln!("{w}");
    }
    let trace = &loaded.trace;
    outln!(
        "{}: {} nodes, {} legs, {} s, area {} x {} m, {} warning(s)",
        args.file.display(),
        trace.node_count(),
        trace.total_legs(),
        trace.duration,
        trace.area.width,
        trace.area.height,
        loaded.warnings.len()
    );
    let Some(footer) = loaded.footer.as_ref() else {
        outln!("no setdest footer: nothing to compare link changes with");
        return Ok(Outcome::Success);
    };
    if args.range != SETDEST_RANGE {
        outln!(
            "setdest's footer counts links at {SETDEST_RANGE} m, not at {} m: not compared",
            args.range
        );
        return Ok(Outcome::Success);
    }
    let timeline = try_link_timeline(trace, args.range, link_limit()?)
        .map_err(|e| InputError::file(&args.file, e.to_string()))?;
    let stats = mobility_stats(trace, &timeline);
    let check = check_footer(Some(footer), &stats);
    let mut ok = true;
    if let (Some(total), Some(matched)) = (check.total, check.total_match) {
        outln!(
            "link changes: footer {total}, replay {}",
            stats.link_changes
        );
        ok &= matched;
    }
    for (node, theirs, ours) in &check.per_node_diff {
        outln!("node {node}: footer {theirs} link changes, replay {ours}");
    }
    if check.per_node_match == Some(false) {
        ok = false;
        if check.per_node_diff.is_empty() {
            outln!(
                "the footer's per-node table has {} rows for {} nodes",
                footer.per_node.len(),
                stats.nodes
            );
        }
    }
    outln!(
        "{}",
        if ok {
            "OK: replay agrees with the footer"
        } else {
            "MISMATCH"
        }
    );
    Ok(if ok {
        Outcome::Success
    } else {
        Outcome::Mismatch
    })
}

fn convert(args: ConvertArgs) -> anyhow::Result<Outcome> {
    refuse_writing_over_input(&args.input, &args.output)?;
    let loaded = load(&args.input, &ReadArgs::default())?;
    for w in &loaded.warnings {
        eprintln!("{w}");
    }
    write_trace(&loaded.trace, &args.output)?;
    eprintln!("wrote {}", args.output.display());
    Ok(Outcome::Success)
}

/// Refuses an output that is the input, or one of the files its reader opens (a
/// BonnMotion `.params`): writing it would replace what is being converted, and what
/// the writer leaves out (ns-2's `$god_` lines) would be gone.
fn refuse_writing_over_input(input: &Path, output: &Path) -> Result<(), InputError> {
    use crate::mobility::format::TraceFormat;
    let files = |path: &Path| {
        let mut all = vec![path.to_path_buf()];
        all.extend(
            TraceFormat::from_path(path)
                .side_files(path)
                .into_iter()
                .map(|(_, side)| side),
        );
        all
    };
    for written in files(output) {
        let Ok(written_real) = written.canonicalize() else {
            continue;
        };
        for read in files(input) {
            if read.canonicalize().is_ok_and(|r| r == written_real) {
                return Err(InputError::parameter(
                    "output",
                    format!(
                        "{} is also read by this conversion (as {}): write the converted \
                         trace to another file",
                        written.display(),
                        read.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fixed;

    #[test]
    fn values_that_round_to_zero_print_without_a_sign() {
        assert_eq!(fixed(-1e-12, 3), "0.000");
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.0004, 3), "0.000");
        assert_eq!(fixed(-0.0006, 3), "-0.001");
        assert_eq!(fixed(2.5, 3), "2.500");
    }
}
