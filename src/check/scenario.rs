//! An execution the checker found, as a file `linkrev run --scenario` replays through
//! the simulator.
//!
//! ```text
//! # linkrev scenario: le-malpani on 4:01-12-13-23 …
//! algorithm le-malpani
//! param holder=0            (0 or more: the algorithm's parameters)
//! nodes 4
//! link 0 1                  (the links at t = 0, one per line)
//! step link 0 1 down        (the execution, in order)
//! step deliver 1 2
//! step deliver-routed 3 0   (a routed message, Raymond's: origin and destination)
//! step request 3
//! step release 3
//! ```
//!
//! Step `k` (from 0) happens at `(k + 2)` µs: the checker's logical clock (one tick per
//! action, starting at 1) as simulated time, so handlers see the same event times and
//! leader election stamps the same reference levels. The link steps become the
//! simulator's link timeline; every message's delivery time comes from the step that
//! delivers it ([`crate::sim::Script`]); requests and releases are scripted. A routed
//! message waits at its origin until its step, then travels the oracle's shortest path
//! within that step (every hop sent and counted, with no delay), which is the checker's
//! one-step delivery. The run lasts until 1 µs after the last step.

use super::model::Step;
use crate::NodeId;
use crate::input::{InputError, Location};
use crate::protocol::AppEvent;
use crate::sim::{
    ChangeMode, CsTime, DelayModel, Duration, LinkBreak, NetworkConfig, RunConfig, Script, SimTime,
    WorkloadConfig,
};
use crate::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};
use std::collections::BTreeMap;

/// A replayable execution.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The algorithm's registry name.
    pub algorithm: String,
    /// Its parameters as `KEY=VALUE` texts (as `--param` takes them).
    pub params: Vec<String>,
    /// Number of nodes.
    pub nodes: usize,
    /// The links at t = 0, `a < b`.
    pub links: Vec<(NodeId, NodeId)>,
    /// The execution.
    pub steps: Vec<Step>,
}

/// The line (from 1) of a scenario's text that holds the `k`-th (from 0) line starting
/// with `keyword` (`step`, `param`).
pub fn line_of(text: &str, keyword: &str, k: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, raw)| {
            let content = raw.split('#').next().unwrap_or("").trim();
            content.split_whitespace().next() == Some(keyword)
        })
        .nth(k)
        .map(|(index, _)| index + 1)
}

/// When step `k` (from 0) happens.
pub fn step_time(k: usize) -> SimTime {
    SimTime((k as u64 + 2) * 1_000)
}

impl Scenario {
    /// The file's text, with `comment` as its first line(s).
    pub fn to_text(&self, comment: &str) -> String {
        let mut out = String::new();
        for line in comment.lines() {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str(&format!("algorithm {}\n", self.algorithm));
        for p in &self.params {
            out.push_str(&format!("param {p}\n"));
        }
        out.push_str(&format!("nodes {}\n", self.nodes));
        for (a, b) in &self.links {
            out.push_str(&format!("link {a} {b}\n"));
        }
        for step in &self.steps {
            out.push_str(&format!("step {}\n", step_text(step)));
        }
        out
    }

    /// Reads a scenario; errors name the line and field. `is_algorithm` says which
    /// names are algorithms (the registry's, which this layer does not read).
    pub fn parse(
        text: &str,
        source: &str,
        is_algorithm: impl Fn(&str) -> bool,
    ) -> Result<Scenario, InputError> {
        let mut algorithm = None;
        let mut params = Vec::new();
        let mut nodes = None;
        let mut links = Vec::new();
        let mut steps = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let err = |field: &str, message: String| {
                InputError::new(Location::line(source, line).with_field(field), message)
            };
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let words: Vec<&str> = content.split_whitespace().collect();
            let node = |field: &str, word: Option<&&str>| -> Result<NodeId, InputError> {
                let word = word.ok_or_else(|| err(field, "expected a node id".into()))?;
                let id: NodeId = word
                    .parse()
                    .map_err(|_| err(field, format!("expected a node id, found `{word}`")))?;
                match nodes {
                    Some(n) if (id as usize) < n => Ok(id),
                    Some(n) => Err(err(field, format!("node {id}, but there are {n} nodes"))),
                    None => Err(err(
                        field,
                        "`nodes N` must come before links and steps".into(),
                    )),
                }
            };
            match words[0] {
                "algorithm" => {
                    if algorithm.is_some() {
                        return Err(err("algorithm", "given twice".into()));
                    }
                    let name = words.get(1).copied().unwrap_or("");
                    if !is_algorithm(name) {
                        return Err(err("algorithm", format!("unknown algorithm `{name}`")));
                    }
                    algorithm = Some(name.to_string());
                }
                "param" => params.push(words[1..].join(" ")),
                "nodes" => {
                    if nodes.is_some() {
                        return Err(err("nodes", "given twice".into()));
                    }
                    let most = super::sets::MAX_STATE_NODES;
                    let n: usize = words
                        .get(1)
                        .and_then(|w| w.parse().ok())
                        .filter(|&n| (1..=most).contains(&n))
                        .ok_or_else(|| {
                            err(
                                "nodes",
                                format!(
                                    "expected a node count from 1 to {most} (the model \
                                     checker, which validates a scenario's steps, holds \
                                     states of at most {most} nodes), found `{}`",
                                    words.get(1).copied().unwrap_or("")
                                ),
                            )
                        })?;
                    nodes = Some(n);
                }
                "link" => {
                    let (a, b) = (node("link", words.get(1))?, node("link", words.get(2))?);
                    if a == b || words.len() != 3 {
                        return Err(err("link", "expected `link A B` of two nodes".into()));
                    }
                    links.push((a.min(b), a.max(b)));
                }
                "step" => {
                    let what = words.get(1).copied().unwrap_or("");
                    let step = match what {
                        "deliver" if words.len() == 4 => Step::Deliver {
                            from: node("step", words.get(2))?,
                            to: node("step", words.get(3))?,
                        },
                        "deliver-routed" if words.len() == 4 => Step::DeliverRouted {
                            origin: node("step", words.get(2))?,
                            dest: node("step", words.get(3))?,
                        },
                        "link" if words.len() == 5 && matches!(words[4], "up" | "down") => {
                            let (a, b) = (node("step", words.get(2))?, node("step", words.get(3))?);
                            if a == b {
                                return Err(err(
                                    "step",
                                    format!(
                                        "`link {a} {a}` links a node to itself: expected two nodes"
                                    ),
                                ));
                            }
                            Step::Link {
                                a: a.min(b),
                                b: a.max(b),
                                up: words[4] == "up",
                            }
                        }
                        "request" if words.len() == 3 => Step::Request {
                            node: node("step", words.get(2))?,
                        },
                        "release" if words.len() == 3 => Step::Release {
                            node: node("step", words.get(2))?,
                        },
                        _ => {
                            return Err(err(
                                "step",
                                format!(
                                    "expected `deliver FROM TO`, `deliver-routed ORIGIN DEST`, \
                                     `link A B up|down`, `request N` or `release N`, found `{}`",
                                    words[1..].join(" ")
                                ),
                            ));
                        }
                    };
                    steps.push(step);
                }
                other => {
                    return Err(err(
                        "line",
                        format!(
                            "unknown line `{other}`: expected algorithm, param, nodes, link or step"
                        ),
                    ));
                }
            }
        }
        let missing =
            |what: &str| InputError::new(Location::file(source), format!("no `{what}` line"));
        Ok(Scenario {
            algorithm: algorithm.ok_or_else(|| missing("algorithm"))?,
            params,
            nodes: nodes.ok_or_else(|| missing("nodes"))?,
            links,
            steps,
        })
    }

    /// How long the replay lasts: 1 µs after the last step.
    pub fn duration(&self) -> SimTime {
        SimTime(step_time(self.steps.len()).0)
    }

    /// The link timeline: the links at t = 0, and each link step at its time. Errors
    /// when a step brings up a link that is up or down one that is down.
    pub fn timeline(&self) -> Result<LinkTimeline, String> {
        let duration = self.duration().as_secs_f64();
        let mut open: BTreeMap<(NodeId, NodeId), f64> =
            self.links.iter().map(|&l| (l, 0.0)).collect();
        let mut intervals = Vec::new();
        let mut events = Vec::new();
        for (k, step) in self.steps.iter().enumerate() {
            let Step::Link { a, b, up } = *step else {
                continue;
            };
            let time = step_time(k).as_secs_f64();
            if up {
                if open.insert((a, b), time).is_some() {
                    return Err(format!("step {}: link {a} - {b} is already up", k + 1));
                }
            } else {
                let start = open
                    .remove(&(a, b))
                    .ok_or_else(|| format!("step {}: link {a} - {b} is not up", k + 1))?;
                intervals.push(LinkInterval {
                    a,
                    b,
                    start,
                    end: time,
                });
            }
            events.push(LinkEvent {
                time,
                a,
                b,
                change: if up { LinkChange::Up } else { LinkChange::Down },
            });
        }
        for ((a, b), start) in open {
            intervals.push(LinkInterval {
                a,
                b,
                start,
                end: duration,
            });
        }
        intervals.sort_by(|x, y| {
            (x.a, x.b)
                .cmp(&(y.a, y.b))
                .then(x.start.total_cmp(&y.start))
        });
        Ok(LinkTimeline {
            range: 1.0,
            duration,
            node_count: self.nodes,
            intervals,
            events,
        })
    }

    /// The run configuration that replays it: delays and the workload's draws replaced
    /// by the script; the checker's semantics otherwise (drain, changes told at once,
    /// applied when they happen). `delay` only matters for messages the script does not
    /// deliver (none, in a scenario the checker wrote).
    /// `workload`: whether the algorithm's family needs one (the script then makes its
    /// requests and releases).
    pub fn config(
        &self,
        delay: DelayModel,
        seed: u64,
        workload: bool,
    ) -> Result<RunConfig, String> {
        Ok(RunConfig {
            network: NetworkConfig {
                delay,
                link_break: LinkBreak::Drain,
                detection_delay: Duration(0),
                changes: ChangeMode::Overlap,
            },
            workload: workload.then_some(WorkloadConfig {
                rate: 1.0,
                cs_time: CsTime::Constant(Duration(1)),
            }),
            duration: self.duration(),
            seed,
            script: Some(std::sync::Arc::new(self.script()?)),
            max_events: None,
        })
    }

    /// Delivery and application times: each delivery step's time goes to its link's
    /// queue (FIFO links: the k-th message sent is the k-th delivered).
    pub fn script(&self) -> Result<Script, String> {
        let mut script = Script::default();
        for (k, step) in self.steps.iter().enumerate() {
            let at = step_time(k);
            match *step {
                Step::Deliver { from, to } => {
                    script
                        .deliveries
                        .entry((from, to))
                        .or_default()
                        .push_back(at);
                }
                Step::Request { node } => script.app.push((at, node, AppEvent::RequestCs)),
                Step::Release { node } => script.app.push((at, node, AppEvent::ReleaseCs)),
                Step::DeliverRouted { origin, dest } => {
                    script
                        .routed
                        .entry((origin, dest))
                        .or_default()
                        .push_back(at);
                }
                Step::Link { .. } => {}
            }
        }
        Ok(script)
    }
}

/// A step as a scenario line (after `step `).
fn step_text(step: &Step) -> String {
    match *step {
        Step::Deliver { from, to } => format!("deliver {from} {to}"),
        Step::DeliverRouted { origin, dest } => format!("deliver-routed {origin} {dest}"),
        Step::Link { a, b, up } => format!("link {a} {b} {}", if up { "up" } else { "down" }),
        Step::Request { node } => format!("request {node}"),
        Step::Release { node } => format!("release {node}"),
    }
}
