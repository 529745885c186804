//! `linkrev replay`: one run, recorded and written as a self-contained HTML page that
//! animates it ([`crate::replay`]).

use super::Outcome;
use super::run_cmd::{Prepared, RunArgs, prepare, report};
use crate::input::InputError;
use crate::protocol::AlgoParams;
use crate::registry::Algorithm;
use crate::replay::Window;
use crate::replay::document::Recorded;
use crate::replay::{self, Heading, Layout, scenarios, shell_quote};
use crate::run::RunOutput;
use crate::sim::{RunConfig, SimTime};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run, as `linkrev run` takes it.
    #[command(flatten)]
    pub run: RunArgs,
    /// Record from this simulated time (seconds; the run still starts at 0).
    #[arg(long, allow_negative_numbers = true)]
    pub from: Option<f64>,
    /// Record up to this simulated time (seconds; default: the end of the run).
    #[arg(long, allow_negative_numbers = true)]
    pub to: Option<f64>,
    /// The page to write.
    #[arg(short = 'o', long = "out", default_value = "run.html")]
    pub out: PathBuf,
    /// Also write the embedded document as JSON (for scripts and tests).
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Also write the state at the end of the window (links with their orientation,
    /// node drawings, messages in flight) as JSON, computed from the nodes themselves
    /// rather than from the recorded deltas: what the page must show at --to.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
}

/// Pages above this size (bytes) get a note about --from/--to: 15 MB (50 nodes, 300 s
/// of RL) open in about 2 s in headless Chromium, 57 MB (200 nodes) in about 11 s.
const LARGE_PAGE: u64 = 40_000_000;

pub fn run(args: ReplayArgs) -> anyhow::Result<Outcome> {
    // Before the run, which may take a while: an unwritable page fails now.
    for path in std::iter::once(&args.out)
        .chain(&args.json_out)
        .chain(&args.snapshot)
    {
        crate::output::ensure_writable_parent(path)
            .map_err(|e| InputError::file(path, format!("cannot write here: {e}")))?;
    }
    let builtin = args
        .run
        .scenario
        .as_ref()
        .and_then(|p| p.to_str())
        .and_then(scenarios::find);
    if let Some(path) = args.run.scenario.as_ref().filter(|p| !p.exists())
        && builtin.is_none()
    {
        let names: Vec<&str> = scenarios::BUILTINS.iter().map(|b| b.name).collect();
        return Err(InputError::parameter(
            "scenario",
            format!(
                "{}: no such file, nor a built-in scenario ({})",
                path.display(),
                names.join(", ")
            ),
        )
        .into());
    }
    let Recording {
        algo,
        params,
        seed,
        layout,
        window,
        full,
        output,
        recorded,
    } = match builtin {
        Some(scenario) => record_builtin(&args, scenario)?,
        None => record_run(&args)?,
    };
    if recorded.events_not_recorded > 0 {
        // The recorder stopped the run at its limit: nothing more was simulated.
        return Err(InputError::parameter(
            "to",
            format!(
                "the window from {} s to {} s holds more than {} events, the most a page \
                 may show (about 100 MB); the run was stopped there and nothing written. \
                 Choose a shorter window with --from and --to",
                window.from.as_secs_f64(),
                window.to.as_secs_f64(),
                crate::replay::MAX_WINDOW_EVENTS
            ),
        )
        .into());
    }
    report(&args.run, &output, &params)?;
    if window.to < full {
        outln!(
            "(simulated up to --to: the summary covers 0 to {} s of {} s)",
            window.to.as_secs_f64(),
            full.as_secs_f64()
        );
    }
    let heading = Heading {
        title: title(&args, algo, seed),
        command: command_line(),
    };
    let events = recorded.steps.len();
    if let Some(path) = &args.snapshot {
        let json = serde_json::to_string_pretty(&recorded.last)?;
        crate::output::write_atomically(path, |f| f.write_all(json.as_bytes()))
            .map_err(|e| InputError::file(path, format!("cannot write: {e}")))?;
    }
    let document = replay::document(heading, layout, window, &output, recorded);
    if let Some(path) = &args.json_out {
        let json = serde_json::to_string(&document)?;
        crate::output::write_atomically(path, |f| f.write_all(json.as_bytes()))
            .map_err(|e| InputError::file(path, format!("cannot write: {e}")))?;
    }
    let bytes = replay::write(&args.out, &document)
        .map_err(|e| InputError::file(&args.out, format!("cannot write the replay: {e}")))?;
    eprintln!(
        "wrote {} ({:.1} MB): {events} events from {} s to {} s; open it in a browser",
        args.out.display(),
        bytes as f64 / 1e6,
        window.from.as_secs_f64(),
        window.to.as_secs_f64(),
    );
    if bytes > LARGE_PAGE {
        eprintln!(
            "note: a page this size takes a browser several seconds to open; --from and --to \
             record a shorter window (a 200-node RL run is about 0.2 MB per simulated second)"
        );
    }
    Ok(Outcome::Success)
}

/// One recorded run and what the page needs around it.
struct Recording {
    algo: Algorithm,
    params: AlgoParams,
    seed: u64,
    layout: Layout,
    window: Window,
    /// How long the whole run would last (it is simulated only up to the window's end).
    full: SimTime,
    output: RunOutput,
    recorded: Recorded,
}

/// A built-in scenario (the slides' examples), recorded.
fn record_builtin(args: &ReplayArgs, scenario: &scenarios::Builtin) -> anyhow::Result<Recording> {
    if args.run.algo.is_some() || !args.run.params.is_empty() {
        return Err(InputError::parameter(
            "scenario",
            format!(
                "the built-in scenario {} names its algorithm and parameters; drop --algo \
                 and --param",
                scenario.name
            ),
        )
        .into());
    }
    let full = scenario.duration();
    let window = replay::window(args.from, args.to, full).map_err(window_error)?;
    let (output, recorded) = scenario.record(window);
    let algo = Algorithm::parse(scenario.algorithm()).expect("a built-in algorithm");
    Ok(Recording {
        algo,
        params: algo.default_params(),
        seed: scenarios::Builtin::SEED,
        layout: scenario.layout(),
        window,
        full,
        output,
        recorded,
    })
}

/// A run given as `linkrev run` takes it, recorded up to the window's end.
fn record_run(args: &ReplayArgs) -> anyhow::Result<Recording> {
    let Prepared {
        algo,
        params,
        timeline,
        config,
        trace,
    } = prepare(&args.run)?;
    let full = config.duration;
    let window = replay::window(args.from, args.to, full).map_err(window_error)?;
    let layout = match &trace {
        Some(trace) => Layout::of_trace(trace, window.from.as_secs_f64(), window.to.as_secs_f64()),
        None => Layout::circle(timeline.node_count),
    };
    let seed = config.seed;
    // Nothing after the window is shown, so the run stops there.
    let config = RunConfig {
        duration: window.to,
        ..config
    };
    let (output, recorded) = algo.replay(&params, &timeline, config, window);
    Ok(Recording {
        algo,
        params,
        seed,
        layout,
        window,
        full,
        output,
        recorded,
    })
}

/// A bad `--from`/`--to`, named.
fn window_error((flag, message): (&str, String)) -> InputError {
    InputError::parameter(flag, message)
}

/// `me-rl · rwp nodes=50,duration=300 · seed 3`.
fn title(args: &ReplayArgs, algo: Algorithm, seed: u64) -> String {
    let input = match (
        &args.run.scenario,
        &args.run.trace,
        &args.run.rwp,
        &args.run.run,
    ) {
        (Some(s), _, _, _) => format!("scenario {}", s.display()),
        (_, Some(t), _, _) => format!("trace {}", t.display()),
        (_, _, Some(spec), _) => format!("rwp {spec}"),
        (_, _, _, Some(key)) => format!("run {key}"),
        _ => String::new(),
    };
    format!("{algo} · {input} · seed {seed}")
}

/// The command line that made this page, quoted for a POSIX shell where needed.
fn command_line() -> String {
    std::iter::once("linkrev".to_string())
        .chain(
            std::env::args_os()
                .skip(1)
                .map(|a| shell_quote(&a.to_string_lossy())),
        )
        .collect::<Vec<_>>()
        .join(" ")
}
