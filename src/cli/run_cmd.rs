//! `linkrev run`: one simulation, summary as a table or JSON.

use super::Outcome;
use crate::family::MetricValue;
use crate::input::InputError;
use crate::mobility::Trace;
use crate::mobility::format::{ReadOptions, read_trace_with};
use crate::mobility::rwp::{self, PauseDist, RwpParams, SpeedDist};
use crate::params;
use crate::protocol::AlgoParams;
use crate::registry::Algorithm;
use crate::run::RunSummary;
use crate::sim::seeds::{self, Purpose};
use crate::sim::{
    ChangeMode, CsTime, DelayModel, LinkBreak, NetworkConfig, RunConfig, SimTime, WorkloadConfig,
};
use crate::topology::events::{LinkTimeline, link_limit, try_link_timeline};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LinkBreakArg {
    /// Messages in flight on a breaking link are still delivered (the papers' model).
    Drain,
    /// Messages in flight on a breaking link are lost (and counted).
    Drop,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ChangesArg {
    /// Topology changes happen when the trace says, overlapping protocol activity.
    Overlap,
    /// A change is applied only when no message is in flight (one change at a time).
    Serialize,
}

impl From<ChangesArg> for ChangeMode {
    fn from(arg: ChangesArg) -> ChangeMode {
        match arg {
            ChangesArg::Overlap => ChangeMode::Overlap,
            ChangesArg::Serialize => ChangeMode::Serialize,
        }
    }
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("mobility").required(true).args(["trace", "rwp", "scenario", "run"]))]
pub struct RunArgs {
    /// Algorithm to simulate (`linkrev algorithms` lists them with their parameters).
    #[arg(long, value_parser = Algorithm::value_parser(), required_unless_present_any = ["scenario", "run"])]
    pub algo: Option<Algorithm>,
    /// One run of a sweep, by its key (as the report and `linkrev export` list it), with
    /// exactly the sweep's parameters, mobility and seed (so no other run flag): needs
    /// --results.
    #[arg(
        long,
        value_name = "KEY",
        requires = "results",
        conflicts_with_all = [
            "algo", "params", "range", "rate", "cs_time", "delay", "link_break",
            "detection_delay", "changes", "duration", "seed",
        ]
    )]
    pub run: Option<String>,
    /// The results directory of --run's sweep (its spec copy gives the run's parameters).
    #[arg(long, value_name = "DIR", requires = "run")]
    pub results: Option<PathBuf>,
    /// Replay an execution `linkrev check --out` wrote (`<property>.scenario`): its
    /// algorithm, graph, changes, deliveries, requests and releases, one per
    /// microsecond, through the simulator and its monitors. (`linkrev replay`, not
    /// `run`, also takes the slides' worked examples by name: slides-le-a, slides-le-b,
    /// slides-rl.)
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// An algorithm parameter, KEY=VALUE (repeatable), e.g. --param k=2.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Mobility trace (ns-2 setdest or BonnMotion).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// SUMO activity file for --trace: a vehicle has no links before its `start` or
    /// after its `stop`.
    #[arg(long, value_name = "FILE", requires = "trace")]
    pub activity: Option<PathBuf>,
    /// Generate random-waypoint mobility from the run seed:
    /// nodes=50,area=1500x300,speed=1:20,pause=30,duration=900[,start=stationary|classic]
    #[arg(long, value_name = "SPEC")]
    pub rwp: Option<String>,
    /// Radio range, metres.
    #[arg(long, default_value_t = params::RANGE, allow_negative_numbers = true)]
    pub range: f64,
    /// CS requests per second per node (mutual exclusion).
    #[arg(long, default_value_t = params::RATE, allow_negative_numbers = true)]
    pub rate: f64,
    /// CS duration: seconds (constant) or exp:MEAN (exponential), e.g. 0.1 or exp:0.1.
    #[arg(long, default_value = params::CS_TIME)]
    pub cs_time: String,
    /// Per-hop delay: const:D, uniform:MIN:MAX or exp:MIN:MEAN (units ns, us, ms, s).
    #[arg(long, default_value = params::DELAY)]
    pub delay: DelayModel,
    #[arg(long, value_enum, default_value_t = LinkBreakArg::Drain)]
    pub link_break: LinkBreakArg,
    /// Delay between a link break and its detection by the endpoints, e.g. 10ms.
    #[arg(long, default_value = params::DETECTION_DELAY)]
    pub detection_delay: String,
    #[arg(long, value_enum, default_value_t = ChangesArg::Overlap)]
    pub changes: ChangesArg,
    /// Simulated seconds (default: the trace's duration). With --trace, the trace is read
    /// to last this long: cut, or extended with every node resting where it ends.
    #[arg(long, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Run seed: mobility (with --rwp), delays and requests derive from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The most events the run may handle before it is stopped and reported as aborted
    /// (default: 2,000 per node per simulated second, at least 1,000,000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Parses `nodes=50,area=1500x300,…` into generator parameters (duration, seed filled).
pub fn parse_rwp_spec(spec: &str, seed: u64) -> Result<RwpParams, InputError> {
    let err = |msg: String| InputError::parameter("rwp", msg);
    let mut p = params::default_rwp(seeds::derive(seed, Purpose::Mobility));
    let number = |key: &str, v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| err(format!("{key}: `{v}` is not a number")))
    };
    let mut seen: Vec<&str> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| err(format!("expected key=value, got `{item}`")))?;
        if seen.contains(&key.trim()) {
            return Err(err(format!("`{}` is given twice", key.trim())));
        }
        seen.push(key.trim());
        match key.trim() {
            "nodes" => {
                p.nodes = value
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("nodes: `{value}` is not a count")))?
            }
            "area" => p.area = params::parse_area(value).map_err(|e| err(format!("area: {e}")))?,
            "speed" => {
                let (lo, hi) = value
                    .split_once(':')
                    .ok_or_else(|| err(format!("speed: expected MIN:MAX, got `{value}`")))?;
                p.speed = SpeedDist::Uniform {
                    min: number("speed", lo)?,
                    max: number("speed", hi)?,
                };
            }
            "pause" => p.pause = PauseDist::Constant(number("pause", value)?),
            "duration" => p.duration = number("duration", value)?,
            "start" => {
                p.start = params::parse_start(value).map_err(|e| err(format!("start: {e}")))?
            }
            other => {
                return Err(err(format!(
                    "unknown key `{other}` (nodes, area, speed, pause, duration, start)"
                )));
            }
        }
    }
    p.validate()?;
    Ok(p)
}

fn parse_cs_time(text: &str) -> Result<CsTime, InputError> {
    params::parse_cs_time(text).map_err(|e| InputError::parameter("cs-time", e))
}

/// Loads or generates the mobility and extracts its link timeline.
fn mobility(args: &RunArgs) -> anyhow::Result<(Trace, LinkTimeline)> {
    if !(args.range.is_finite() && args.range > 0.0) {
        return Err(InputError::parameter(
            "range",
            format!("must be a positive number of metres, got {}", args.range),
        )
        .into());
    }
    let trace = match (&args.trace, &args.rwp) {
        (Some(path), _) => {
            let options = ReadOptions {
                duration: args.duration,
                activity: args.activity.clone(),
            };
            let loaded = read_trace_with(path, &options)?;
            if !loaded.warnings.is_empty() {
                eprintln!(
                    "note: {} warning(s) reading {}: `linkrev trace lint {}` lists them",
                    loaded.warnings.len(),
                    path.display(),
                    path.display()
                );
            }
            loaded.trace
        }
        (None, Some(spec)) => rwp::generate(&parse_rwp_spec(spec, args.seed)?)?,
        (None, None) => unreachable!("clap requires --trace or --rwp"),
    };
    let timeline = try_link_timeline(&trace, args.range, link_limit()?)
        .map_err(|e| InputError::parameter("range", e.to_string()))?;
    Ok((trace, timeline))
}

/// Validates the flags into a run configuration.
fn run_config(args: &RunArgs, algo: Algorithm, trace: &Trace) -> Result<RunConfig, InputError> {
    if !(args.range.is_finite() && args.range > 0.0) {
        return Err(InputError::parameter(
            "range",
            format!("must be a positive number of metres, got {}", args.range),
        ));
    }
    let duration = args.duration.unwrap_or(trace.duration);
    // One limit for every duration, as for trace times: never clamped silently.
    if let Some(why) = crate::input::span_problem(duration, true) {
        return Err(InputError::parameter("duration", why));
    }
    let workload = if algo.family().needs_workload() {
        if !(args.rate.is_finite() && args.rate > 0.0) {
            return Err(InputError::parameter(
                "rate",
                format!(
                    "must be a positive request rate per node, got {}",
                    args.rate
                ),
            ));
        }
        if let Some(problem) =
            crate::sim::workload::requests_problem(trace.node_count(), args.rate, duration)
        {
            return Err(InputError::parameter("rate", problem));
        }
        Some(WorkloadConfig {
            rate: args.rate,
            cs_time: parse_cs_time(&args.cs_time)?,
        })
    } else {
        None
    };
    let detection_delay = params::parse_detection_delay(&args.detection_delay)
        .map_err(|e| InputError::parameter("detection-delay", e))?;
    Ok(RunConfig {
        network: NetworkConfig {
            delay: args.delay,
            link_break: match args.link_break {
                LinkBreakArg::Drain => LinkBreak::Drain,
                LinkBreakArg::Drop => LinkBreak::Drop,
            },
            detection_delay,
            changes: match args.changes {
                ChangesArg::Overlap => ChangeMode::Overlap,
                ChangesArg::Serialize => ChangeMode::Serialize,
            },
        },
        workload,
        duration: SimTime::from_secs_f64(duration),
        seed: args.seed,
        script: None,
        max_events: args.max_events,
    })
}

/// A run ready to go: the algorithm, its parameters, the link timeline and the run
/// configuration, and the trace it came from (none for a scenario).
pub(super) struct Prepared {
    pub algo: Algorithm,
    pub params: AlgoParams,
    pub timeline: LinkTimeline,
    pub config: RunConfig,
    pub trace: Option<Trace>,
}

/// Checks the flags and loads or generates the input.
pub(super) fn prepare(args: &RunArgs) -> anyhow::Result<Prepared> {
    if let Some(path) = &args.scenario {
        return prepare_scenario(args, path);
    }
    if let (Some(key), Some(dir)) = (&args.run, &args.results) {
        return prepare_stored(key, dir);
    }
    let algo = args.algo.expect("clap requires --algo without --scenario");
    let params = algorithm_params(algo, &args.params)?;
    let (trace, timeline) = mobility(args)?;
    algo.check_node_ids(&params, timeline.node_count)
        .map_err(|e| InputError::parameter("param", e))?;
    let config = run_config(args, algo, &trace)?;
    Ok(Prepared {
        algo,
        params,
        timeline,
        config,
        trace: Some(trace),
    })
}

pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let run = prepare(&args)?;
    let output = run.algo.run(&run.params, &run.timeline, run.config);
    report(&args, &output, &run.params)?;
    if let Some(v) = output
        .summary
        .first_violation
        .as_ref()
        .filter(|_| !args.json)
    {
        outln!(
            "replay it               {}",
            command_for_violation(v.time_s)
        );
    }
    Ok(Outcome::Success)
}

/// `--run KEY --results DIR`: a sweep's run, as the sweep ran it.
fn prepare_stored(key: &str, dir: &std::path::Path) -> anyhow::Result<Prepared> {
    let plan =
        crate::sweep::spec_copy::plan(dir).map_err(|e| InputError::file(dir, format!("{e:#}")))?;
    let run = plan.runs.iter().find(|r| r.key == key).ok_or_else(|| {
        InputError::parameter(
            "run",
            format!(
                "no run `{key}` in the sweep of {} ({} runs; `linkrev export {} --csv` lists \
                 their keys)",
                dir.display(),
                plan.runs.len(),
                dir.display()
            ),
        )
    })?;
    let (trace, timeline, config) = crate::sweep::execute::prepare_run(&run, &|request| {
        Ok(std::sync::Arc::new(
            crate::mobility::format::read_trace_with(&request.path, &request.options())?.trace,
        ))
    })?;
    Ok(Prepared {
        algo: run.algorithm,
        params: run.algo_params.clone(),
        timeline,
        config,
        trace: Some(std::sync::Arc::unwrap_or_clone(trace)),
    })
}

/// `--scenario FILE`: the checker's execution, scripted, through the simulator.
fn prepare_scenario(args: &RunArgs, path: &std::path::Path) -> anyhow::Result<Prepared> {
    use crate::check::scenario::Scenario;
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::file(path, format!("cannot read the scenario: {e}")))?;
    let scenario = Scenario::parse(&text, &path.display().to_string(), |name| {
        Algorithm::parse(name).is_some()
    })?;
    let algo = Algorithm::parse(&scenario.algorithm).expect("checked by the parse");
    if args.algo.is_some_and(|a| a != algo) || !args.params.is_empty() {
        return Err(InputError::parameter(
            "scenario",
            format!(
                "{} names its algorithm ({}) and parameters; drop --algo and --param",
                path.display(),
                algo.name()
            ),
        )
        .into());
    }
    let located =
        |e: String| InputError::new(crate::input::Location::file(path.display().to_string()), e);
    // A bad `param` line is the file's error, at its line: the first prefix of the
    // lines that fails names it. Node ids are checked against the scenario's nodes
    // before the model builds its initial states from them.
    let parse = |texts: &[String]| -> Result<AlgoParams, String> {
        let params = AlgoParams::from_texts(algo.params(), texts)?;
        algo.check_node_ids(&params, scenario.nodes)?;
        Ok(params)
    };
    let params = parse(&scenario.params).map_err(|e| {
        let k = (0..scenario.params.len())
            .find(|&k| parse(&scenario.params[..=k]).is_err())
            .unwrap_or(0);
        let line = crate::check::scenario::line_of(&text, "param", k).unwrap_or(0);
        InputError::new(
            crate::input::Location::line(path.display().to_string(), line).with_field("param"),
            format!("{}: {e}", algo.name()),
        )
    })?;
    // Every step must be possible where it stands, or the simulator would replay
    // something the checker never explored (a release by nobody in the CS).
    algo.def()
        .check_steps(&params, scenario.nodes, &scenario.links, &scenario.steps)
        .map_err(|(k, why)| {
            let line = crate::check::scenario::line_of(&text, "step", k).unwrap_or(0);
            InputError::new(
                crate::input::Location::line(path.display().to_string(), line).with_field("step"),
                format!("step {}: {why}", k + 1),
            )
        })?;
    let timeline = scenario.timeline().map_err(located)?;
    let config = scenario
        .config(args.delay, args.seed, algo.family().needs_workload())
        .map_err(located)?;
    algo.check_node_ids(&params, timeline.node_count)
        .map_err(|e| InputError::parameter("param", e))?;
    Ok(Prepared {
        algo,
        params,
        timeline,
        config,
        trace: None,
    })
}

/// Prints a run's summary (JSON or a table).
pub(super) fn report(
    args: &RunArgs,
    output: &crate::run::RunOutput,
    algo_params: &AlgoParams,
) -> anyhow::Result<()> {
    if args.json {
        let mut json = serde_json::to_value(&output.summary)?;
        let params: serde_json::Map<String, serde_json::Value> = algo_params
            .iter()
            .map(|(k, v)| Ok((k.to_string(), serde_json::to_value(v)?)))
            .collect::<serde_json::Result<_>>()?;
        json["params"] = params.into();
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print_summary(&output.summary, algo_params)?;
    }
    Ok(())
}

/// Checks `--param KEY=VALUE` flags against the algorithm's declared parameters.
pub fn algorithm_params(algorithm: Algorithm, flags: &[String]) -> Result<AlgoParams, InputError> {
    AlgoParams::from_texts(algorithm.params(), flags)
        .map_err(|e| InputError::parameter("param", format!("{}: {e}", algorithm.name())))
}

/// The summary as aligned lines: the common fields, the algorithm's parameters, then
/// each metric its family declares (column name, value, label).
fn print_summary(s: &RunSummary, params: &AlgoParams) -> anyhow::Result<()> {
    outln!(
        "algorithm             {} ({})",
        s.algorithm,
        s.family.name()
    );
    for (name, value) in params.iter() {
        outln!("  {name:<20}{value}");
    }
    outln!("seed                  {}", s.seed);
    outln!("nodes / duration      {} / {} s", s.nodes, s.duration_s);
    outln!("events                {}", s.events);
    outln!(
        "messages              {} ({} lost)",
        s.messages,
        s.messages_lost
    );
    outln!("topology changes      {}", s.topology_changes);
    if s.changes_pending_at_end > 0 {
        outln!("changes never applied {}", s.changes_pending_at_end);
    }
    // At least one space after the longest column name.
    let width = s
        .metrics
        .iter()
        .map(|(m, _)| m.column.len() + 1)
        .max()
        .unwrap_or(0)
        .max(22);
    for (metric, value) in s.metrics.iter() {
        let value = match value {
            MetricValue::Real(Some(x)) => format!("{x:.4}"),
            MetricValue::Real(None) => "n/a".to_string(),
            MetricValue::Count(c) => c.to_string(),
        };
        outln!("{:<width$}{value:<12}{}", metric.column, metric.label);
    }
    outln!("tokens lost           {}", s.tokens_lost);
    outln!("safety violations     {}", s.safety_violations);
    if let Some(v) = &s.first_violation {
        outln!(
            "first violation       {} at {:.9} s, event {} (seed {}), nodes {:?}: {}",
            v.kind,
            v.time_s,
            v.event_index,
            s.seed,
            v.nodes,
            v.detail
        );
    }
    if let Some(why) = &s.aborted {
        outln!("ABORTED               {why}");
    }
    outln!("wall time             {:.3} s", s.wall_time_s);
    Ok(())
}

/// The `linkrev replay` command that shows the run this `linkrev run …` process is
/// running around a violation at `time_s`: the same arguments, `run` turned into
/// `replay`, and the window around it.
pub fn command_for_violation(time_s: f64) -> String {
    let mut words = vec!["linkrev".to_string()];
    for (i, arg) in std::env::args_os().skip(1).enumerate() {
        let arg = arg.to_string_lossy();
        words.push(if i == 0 && arg == "run" {
            "replay".to_string()
        } else {
            crate::replay::shell_quote(&arg)
        });
    }
    words.push(crate::replay::window_flags(time_s));
    words.push("-o violation.html".to_string());
    words.join(" ")
}
