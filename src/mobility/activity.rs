//! SUMO's ns-2 activity file: when each vehicle is in the scenario.
//!
//! SUMO's `traceExporter.py --ns2activity-output` writes, beside the mobility file, one
//! `start` and one `stop` line per vehicle:
//!
//! ```text
//! $ns_ at 82.0 "$g(8) start"; # SUMO-ID: 8
//! $ns_ at 300.0 "$g(8) stop"; # SUMO-ID: 8
//! ```
//!
//! A vehicle exists only from its `start` (it enters the network) to its `stop` (it has
//! left). The mobility file cannot say so: it parks a vehicle that has not departed at
//! its departure position from t = 0, and leaves one that has arrived where it stopped.
//! Read without this file, such parked vehicles form links nobody drove to. So a trace
//! read with its activity file gives every node a presence interval, and a link exists
//! only while both ends are present ([`crate::topology::events::link_timeline`]).
//!
//! Lines may come in any order (SUMO sorts them by vehicle id as text). Blank lines and
//! `#` comments are skipped. A node with no line is present throughout (with a warning);
//! a `start` without a `stop` lasts to the end. Errors, located by line and field: any
//! other command, a malformed or negative time, a node index beyond the trace's nodes,
//! a second `start` or `stop` for one node (one interval per node is supported), and a
//! `stop` before the `start`.

use crate::input::{InputError, InputWarning, Location};
use crate::mobility::ns2::read_text;
use std::path::Path;

/// When a node takes part in the network: `[start, stop]`, seconds.
pub type Presence = (f64, f64);

/// An activity file read against a trace of `nodes` nodes lasting `duration` seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Activity {
    /// Per node, when it is present.
    pub presence: Vec<Presence>,
    /// Usable but suspicious input (nodes without lines).
    pub warnings: Vec<InputWarning>,
}

/// Reads an activity file for a trace of `nodes` nodes lasting `duration` seconds.
pub fn read(path: &Path, nodes: usize, duration: f64) -> Result<Activity, InputError> {
    let text = read_text(path)?;
    parse(&text, &path.display().to_string(), nodes, duration)
}

/// A `start` or `stop` seen for a node, with its line.
#[derive(Clone, Copy, Default)]
struct Seen {
    start: Option<(f64, usize)>,
    stop: Option<(f64, usize)>,
}

/// Parses activity text; `source` names it in errors.
pub fn parse(
    text: &str,
    source: &str,
    nodes: usize,
    duration: f64,
) -> Result<Activity, InputError> {
    let mut seen = vec![Seen::default(); nodes];
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |field: &str, message: String| {
            InputError::new(Location::line(source, line).with_field(field), message)
        };
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        // `$ns_ at T "$g(I) start|stop"` then, optionally, `; # comment`.
        let mut parts = content.splitn(3, '"');
        let (head, quoted) = match (parts.next(), parts.next(), parts.next()) {
            (Some(head), Some(quoted), Some(_)) => (head, quoted),
            _ => {
                return Err(err(
                    "command",
                    format!(
                        "expected `$ns_ at T \"$g(i) start\"` or `… stop\"`, found `{content}`"
                    ),
                ));
            }
        };
        let head: Vec<&str> = head.split_whitespace().collect();
        if head.len() != 3 || !matches!(head[0], "$ns_" | "$ns") || head[1] != "at" {
            return Err(err(
                "command",
                format!(
                    "expected `$ns_ at T` before the quote, found `{}`",
                    head.join(" ")
                ),
            ));
        }
        let time: f64 = head[2]
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                err(
                    "time",
                    format!(
                        "expected a non-negative time in seconds, found `{}`",
                        head[2]
                    ),
                )
            })?;
        let words: Vec<&str> = quoted.split_whitespace().collect();
        let node = match words.first().and_then(|w| {
            w.strip_prefix("$g(")
                .or_else(|| w.strip_prefix("$node_("))
                .and_then(|w| w.strip_suffix(')'))
        }) {
            Some(index) => index.trim().parse::<usize>().map_err(|_| {
                err(
                    "node",
                    format!("expected a node index (a non-negative integer), found `{index}`"),
                )
            })?,
            None => {
                return Err(err(
                    "node",
                    format!("expected `$g(i)`, found `{}`", words.first().unwrap_or(&"")),
                ));
            }
        };
        if node >= nodes {
            return Err(err(
                "node",
                format!(
                    "node {node}, but the trace has {nodes} nodes (0 to {})",
                    nodes - 1
                ),
            ));
        }
        let entry = &mut seen[node];
        let (slot, other) = match words.get(1).copied() {
            Some("start") if words.len() == 2 => (&mut entry.start, "start"),
            Some("stop") if words.len() == 2 => (&mut entry.stop, "stop"),
            _ => {
                return Err(err(
                    "command",
                    format!(
                        "expected `start` or `stop` after `$g({node})`, found `{}`",
                        words[1..].join(" ")
                    ),
                ));
            }
        };
        if let Some((_, first)) = slot {
            return Err(err(
                other,
                format!(
                    "node {node}: a second `{other}` (the first is on line {first}): one \
                     presence interval per node is supported"
                ),
            ));
        }
        *slot = Some((time, line));
    }
    let mut warnings = Vec::new();
    let mut presence = Vec::with_capacity(nodes);
    let mut absent = Vec::new();
    for (node, s) in seen.iter().enumerate() {
        let start = s.start.map_or(0.0, |(t, _)| t);
        let stop = s.stop.map_or(duration, |(t, _)| t);
        if let (Some((_, line)), true) = (s.stop, stop < start) {
            return Err(InputError::new(
                Location::line(source, line).with_field("stop"),
                format!("node {node} stops at {stop} s, before it starts at {start} s"),
            ));
        }
        if s.start.is_none() && s.stop.is_none() {
            absent.push(node.to_string());
        }
        presence.push((start, stop.min(duration)));
    }
    if !absent.is_empty() {
        warnings.push(InputWarning {
            location: Location::file(source),
            message: format!(
                "no start or stop for node(s) {}: taken as present for the whole trace",
                absent.join(", ")
            ),
        });
    }
    Ok(Activity { presence, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sumo_lines_in_any_order_give_each_node_its_interval() {
        let text = "$ns_ at 82.0 \"$g(1) start\"; # SUMO-ID: 1\n\
                    $ns_ at 0.0 \"$g(0) start\"; # SUMO-ID: 0\n\
                    \n\
                    $ns_ at 109.0 \"$g(0) stop\"; # SUMO-ID: 0\n";
        let a = parse(text, "a.tcl", 3, 300.0).unwrap();
        assert_eq!(a.presence, vec![(0.0, 109.0), (82.0, 300.0), (0.0, 300.0)]);
        assert_eq!(a.warnings.len(), 1);
        assert!(
            a.warnings[0].message.contains("node(s) 2"),
            "{:?}",
            a.warnings
        );
    }

    #[test]
    fn bad_lines_are_located() {
        for (text, field, what) in [
            ("$ns_ at x \"$g(0) start\"\n", "time", "non-negative time"),
            ("$ns_ at 1.0 \"$g(5) start\"\n", "node", "has 2 nodes"),
            ("$ns_ at 1.0 \"$g(0) go\"\n", "command", "start` or `stop"),
            (
                "$ns_ at 1.0 \"$g(0) start\"\n$ns_ at 2.0 \"$g(0) start\"\n",
                "start",
                "line 1",
            ),
            (
                "$ns_ at 5.0 \"$g(0) start\"\n$ns_ at 2.0 \"$g(0) stop\"\n",
                "stop",
                "before it starts",
            ),
        ] {
            let e = parse(text, "a.tcl", 2, 10.0).unwrap_err();
            assert_eq!(e.location.field.as_deref(), Some(field), "{e}");
            assert!(e.message.contains(what), "{e}");
            assert!(e.location.line.is_some(), "{e}");
        }
    }
}
