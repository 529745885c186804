//! The replay viewer's driver: run an algorithm through the simulator with a recorder
//! beside the family's monitors, and write one self-contained HTML file that animates
//! the run (`linkrev replay`).
//!
//! The protocol core is the simulator's, unchanged: the recorder is one more
//! [`crate::sim::Observer`], and what it draws of a node comes from the protocol's
//! [`ReplayView`] (label, orientation of its links, panel text) and its family's view
//! trait (leader, token, critical section, destination: the family's roles, from its
//! definition). So a new algorithm is drawn as soon as it implements `ReplayView`,
//! which the registry's family constructors require.
//!
//! # The document (`linkrev-replay/1`)
//!
//! `run.html` embeds one JSON document ([`document::Document`]): the run's metadata,
//! each node's motion as waypoints `[t, x, y]`, the state at the window's start
//! (`initial`: links `[a, b, dir]` with `dir` 1 for `a → b`, -1 for `b → a`, 0 for an
//! unoriented link; node drawings; messages on links), then one step per event with
//! only what the event changed (links added, removed or turned; nodes whose drawing
//! changed, as the label, roles and panel lines that differ from the node's previous
//! drawing; messages sent, delivered or lost), and the safety violations' onsets.
//! Labels and panel lines are stored once, in `strings`, and referred to by index. The player (`player.html`, inline script, no external resources) replays the
//! steps once at load and keeps a checkpoint every few hundred events, so seeking costs
//! at most one checkpoint and a few hundred steps.

pub mod document;
pub mod recorder;
pub mod scenarios;

use crate::family::{Extra, Watches};
use crate::mobility::Trace;
use crate::observe::safety::Violation;
use crate::protocol::{AlgoParams, ProtocolConfig, ReplayView};
use crate::run::RunOutput;
use crate::run::runner::run_with;
use crate::sim::{RunConfig, SimTime};
use crate::topology::events::LinkTimeline;
use document::{Document, FORMAT, Mark, Recorded};
use recorder::Recorder;
pub use recorder::Window;
use std::path::Path;

/// The player, with a placeholder where the document goes.
const PLAYER: &str = include_str!("player.html");
/// The placeholder in [`PLAYER`].
const PLACEHOLDER: &str = "/*LINKREV_REPLAY_DATA*/";

/// Events of the window recorded at most: about 100 MB of page (some 250 bytes an
/// event), more than a browser opens in reasonable time. A longer window is refused,
/// with its count, before a page is written; the recording stops growing there, so
/// memory stays bounded however busy the run.
pub const MAX_WINDOW_EVENTS: usize = 400_000;

/// Violations marked on the timeline at most (a broken algorithm can have thousands;
/// the window's first ones are the ones to look at; the run's count is in the summary
/// `linkrev replay` prints).
pub const MAX_MARKS: usize = 1_000;

pub use crate::family::Roles;

/// How a family runs one algorithm with a recorder: the registry keeps one per entry
/// ([`record::<F, P>`](record)).
pub type Replayer = fn(&AlgoParams, &LinkTimeline, RunConfig, Window) -> (RunOutput, Recorded);

/// Records a run of `P` with family `F`'s monitors: the run's output (its violations
/// in the window kept whole, up to [`MAX_MARKS`]) and the events of `window`.
pub fn record<F: Watches<P>, P: ReplayView>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    window: Window,
) -> (RunOutput, Recorded) {
    record_from::<F, P>(params, timeline, config, window, None)
}

/// [`record`], with the nodes starting in `states` (the protocol's initial states if
/// `None`; the slides' examples start mid-run).
pub fn record_from<F: Watches<P>, P: ReplayView>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    window: Window,
    states: Option<Vec<P>>,
) -> (RunOutput, Recorded) {
    let roles = F::roles(&P::Config::from_params(params));
    let mut recorder = Recorder::new(window, roles);
    let output = run_with::<F, P, _>(
        params,
        timeline,
        config,
        Extra {
            observer: &mut recorder,
            keep_violations: MAX_MARKS,
            keep_from: window.from,
            states,
        },
    );
    (output, recorder.into_recorded())
}

/// Where the nodes are: their motion and the area it spans.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Width and height of the area, metres.
    pub area: [f64; 2],
    /// Per node: waypoints `[t, x, y]`.
    pub motion: Vec<Vec<[f64; 3]>>,
    /// Names to draw instead of the ids (the slides' letters), if any.
    pub names: Option<Vec<String>>,
}

impl Layout {
    /// The trace's motion within `[from, to]`: each leg boundary in the window, and the
    /// positions at both ends.
    pub fn of_trace(trace: &Trace, from: f64, to: f64) -> Self {
        let motion = trace
            .nodes
            .iter()
            .map(|trajectory| {
                let mut points = vec![at(from, trajectory.position(from))];
                for leg in trajectory.legs() {
                    if leg.start > from && leg.start < to {
                        points.push(at(leg.start, leg.origin));
                    }
                }
                points.push(at(to, trajectory.position(to)));
                points
            })
            .collect();
        Self {
            area: [trace.area.width, trace.area.height],
            motion,
            names: None,
        }
    }

    /// Fixed positions (a scenario: the checker's graphs have no geometry).
    pub fn fixed(area: [f64; 2], positions: &[(f64, f64)]) -> Self {
        Self {
            area,
            motion: positions.iter().map(|&(x, y)| vec![[0.0, x, y]]).collect(),
            names: None,
        }
    }

    /// `n` nodes evenly on a circle, node 0 at the top, clockwise.
    pub fn circle(n: usize) -> Self {
        let positions: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let angle = std::f64::consts::TAU * i as f64 / n.max(1) as f64;
                (50.0 + 40.0 * angle.sin(), 50.0 - 40.0 * angle.cos())
            })
            .collect();
        Self::fixed([100.0, 100.0], &positions)
    }
}

fn at(t: f64, p: crate::mobility::trace::Point) -> [f64; 3] {
    [t, p.x, p.y]
}

/// What the document says about where the run came from.
#[derive(Clone, Debug)]
pub struct Heading {
    /// The page heading.
    pub title: String,
    /// The command that reproduces the file.
    pub command: String,
}

/// Assembles the document from a recorded run (its algorithm and family are the run
/// summary's).
pub fn document(
    heading: Heading,
    layout: Layout,
    window: Window,
    output: &RunOutput,
    recorded: Recorded,
) -> Document {
    let first = recorded.first_index.unwrap_or(0);
    let steps = recorded.steps.len() as u64;
    let violations = output
        .violations
        .iter()
        .filter(|v| v.event_index >= first && v.event_index < first + steps)
        .map(|v: &Violation| Mark {
            t: v.time_s,
            event: (v.event_index - first) as usize,
            property: v.kind,
            detail: if v.nodes.is_empty() {
                v.detail.clone()
            } else {
                format!("{} (nodes {:?})", v.detail, v.nodes)
            },
        })
        .collect();
    Document {
        format: FORMAT,
        title: heading.title,
        command: heading.command,
        family: output.summary.family.name(),
        algorithm: output.summary.algorithm,
        nodes: layout.motion.len(),
        area: layout.area,
        from: window.from.as_secs_f64(),
        to: window.to.as_secs_f64(),
        motion: layout.motion,
        names: layout.names,
        strings: recorded.strings,
        initial: recorded.initial,
        events: recorded.steps,
        violations,
    }
}

/// The player with `document` embedded: one self-contained page.
pub fn html(document: &Document) -> serde_json::Result<String> {
    let json = serde_json::to_string(document)?;
    // Inside <script>, `</script` ends the element and `<!--` changes how the rest is
    // parsed; no `<` at all is safe, and JSON reads `\u003c` as `<`.
    let json = json.replace('<', "\\u003c");
    Ok(PLAYER.replacen(PLACEHOLDER, &json, 1))
}

/// Writes the page to `path` atomically (a temporary file renamed into place, so an
/// interrupted write leaves no half-written page).
pub fn write(path: &Path, document: &Document) -> anyhow::Result<u64> {
    let page = html(document)?;
    crate::output::write_atomically(path, |file| file.write_all(page.as_bytes()))
        .map_err(|e| anyhow::anyhow!("{}: cannot write the replay: {e}", path.display()))?;
    Ok(page.len() as u64)
}

/// A command-line word quoted for a POSIX shell where it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=.,:/+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The window a replay of a violation at `time_s` shows: the ten seconds before it and
/// one after, as `--from A --to B`.
pub fn window_flags(time_s: f64) -> String {
    format!(
        "--from {:.3} --to {:.3}",
        (time_s - 10.0).max(0.0),
        time_s + 1.0
    )
}

/// The window `[from, to]` (seconds; defaults: the whole run), checked. An error names
/// the flag (`from`, `to`) it is about.
pub fn window(
    from: Option<f64>,
    to: Option<f64>,
    duration: SimTime,
) -> Result<Window, (&'static str, String)> {
    let end = duration.as_secs_f64();
    let from_s = from.unwrap_or(0.0);
    if to.is_some_and(|t| !t.is_finite()) {
        return Err((
            "to",
            format!("must be a time in seconds, got {}", to.unwrap_or(0.0)),
        ));
    }
    let to_s = to.unwrap_or(end).min(end);
    if !(from_s.is_finite() && from_s >= 0.0 && from_s < end) {
        return Err((
            "from",
            format!("must be a time from 0 s to before the run's end ({end} s), got {from_s}"),
        ));
    }
    if !(to_s.is_finite() && to_s > from_s) {
        return Err((
            "to",
            format!(
                "must be after --from ({from_s} s), got {}",
                to.unwrap_or(end)
            ),
        ));
    }
    Ok(Window {
        from: SimTime::from_secs_f64(from_s),
        to: SimTime::from_secs_f64(to_s),
    })
}
