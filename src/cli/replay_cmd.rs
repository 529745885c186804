//! `linkrev replay`: one run, recorded and written as a self-contained HTML page that
//! animates it ([`crate::replay`]).

use super::Outcome;
use super::run_cmd::{Prepared, RunArgs, prepare, report};
use crate::input::InputError;
use crate::replay::{self, Heading, Layout, scenarios};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run, as `linkrev run` takes it. `--scenario` also takes a built-in scenario:
    /// the seed slides' worked examples (slides-le-a, slides-le-b, slides-rl).
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

/// Pages above this size (bytes) get a note about --from/--to: 25 MB (50 nodes, 300 s
/// of RL) open in about 3 s in headless Chromium, 105 MB (200 nodes) in about 20 s.
const LARGE_PAGE: u64 = 40_000_000;

pub fn run(args: ReplayArgs) -> anyhow::Result<Outcome> {
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
    let (algo, output, recorded, layout, window, params, seed) = match builtin {
        Some(scenario) => {
            if args.run.algo.is_some() || !args.run.params.is_empty() {
                return Err(InputError::parameter(
                    "scenario",
                    format!(
                        "the built-in scenario {} names its algorithm and parameters; drop \
                         --algo and --param",
                        scenario.name
                    ),
                )
                .into());
            }
            let duration = scenario.duration();
            let window = replay::window(args.from, args.to, duration).map_err(window_error)?;
            let (output, recorded) = scenario.record(window);
            let algo = scenario.algorithm();
            let params = algo.default_params();
            (
                algo,
                output,
                recorded,
                scenario.layout(),
                window,
                params,
                args.run.seed,
            )
        }
        None => {
            let Prepared {
                algo,
                params,
                timeline,
                config,
                trace,
            } = prepare(&args.run)?;
            let window =
                replay::window(args.from, args.to, config.duration).map_err(window_error)?;
            let layout = match &trace {
                Some(trace) => {
                    Layout::of_trace(trace, window.from.as_secs_f64(), window.to.as_secs_f64())
                }
                None => Layout::circle(timeline.node_count),
            };
            let seed = config.seed;
            // Nothing after the window is shown, so the run stops there.
            let config = crate::sim::RunConfig {
                duration: window.to,
                ..config
            };
            let (output, recorded) = algo.replay(&params, &timeline, config, window);
            (algo, output, recorded, layout, window, params, seed)
        }
    };
    report(&args.run, &output, &params)?;
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
    let document = replay::document(algo, heading, layout, window, &output, recorded);
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
             record a shorter window (a 200-node RL run is about 0.35 MB per simulated second)"
        );
    }
    Ok(Outcome::Success)
}

/// A bad `--from`/`--to`, named.
fn window_error((flag, message): (&str, String)) -> InputError {
    InputError::parameter(flag, message)
}

/// `me-rl · rwp nodes=50,duration=300 · seed 3`.
fn title(args: &ReplayArgs, algo: crate::registry::Algorithm, seed: u64) -> String {
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
    let mut args = std::env::args();
    let program = args.next().map(|_| "linkrev".to_string());
    program
        .into_iter()
        .chain(args.map(|a| shell_quote(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=.,:/+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The `linkrev replay` command that shows the run this process is running (`linkrev
/// run …`) around a violation at `time_s`: the same arguments, the ten seconds before
/// it and one after.
pub fn command_for_violation(time_s: f64) -> String {
    let mut args = std::env::args().skip(1);
    let mut out = vec!["linkrev".to_string()];
    if let Some(sub) = args.next() {
        out.push(if sub == "run" {
            "replay".to_string()
        } else {
            sub
        });
    }
    out.extend(args.filter(|a| a != "--json").map(|a| shell_quote(&a)));
    out.push(format!("--from {:.3}", (time_s - 10.0).max(0.0)));
    out.push(format!("--to {:.3}", time_s + 1.0));
    out.push("-o violation.html".to_string());
    out.join(" ")
}
