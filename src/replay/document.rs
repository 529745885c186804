//! The replay document: what `run.html` embeds as JSON and the player reads (format
//! `linkrev-replay/1`, described field by field in [`super`]'s docs).

use crate::NodeId;
use crate::sim::{Happening, SimTime};
use crate::topology::events::LinkChange;
use serde::Serialize;
use std::collections::BTreeMap;

/// The format tag the player checks.
pub const FORMAT: &str = "linkrev-replay/1";

/// The whole document.
#[derive(Clone, Debug, Serialize)]
pub struct Document {
    /// [`FORMAT`].
    pub format: &'static str,
    /// The page heading.
    pub title: String,
    /// The command that reproduces the file.
    pub command: String,
    /// The family's name (`leader_election`).
    pub family: &'static str,
    /// The algorithm's registry name.
    pub algorithm: &'static str,
    /// Number of nodes (ids `0..nodes`).
    pub nodes: usize,
    /// Width and height of the area drawn, metres.
    pub area: [f64; 2],
    /// Start of the recorded window, seconds.
    pub from: f64,
    /// End of the recorded window, seconds.
    pub to: f64,
    /// Per node: waypoints `[t, x, y]`, positions in between interpolated linearly.
    pub motion: Vec<Vec<[f64; 3]>>,
    /// The state at `from`.
    pub initial: Initial,
    /// One step per event in the window.
    pub events: Vec<Step>,
    /// Safety violations whose onset is in the window.
    pub violations: Vec<Mark>,
}

/// The state the replay starts from.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Initial {
    /// When (seconds).
    #[serde(serialize_with = "seconds")]
    pub time: SimTime,
    /// Links up, each `[a, b, dir]` with `a < b`.
    pub links: Vec<LinkState>,
    /// Every node's drawing, by id.
    pub nodes: Vec<NodeDrawing>,
    /// Messages on links at that time.
    pub messages: Vec<Sent>,
}

/// A link `[a, b, dir]`: `dir` 1 draws `a → b`, -1 `b → a`, 0 no arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkState(pub NodeId, pub NodeId, pub i8);

/// A message put on a link: `[id, from, to, kind, arrives, sent]` (seconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sent(
    pub u64,
    pub NodeId,
    pub NodeId,
    pub &'static str,
    pub f64,
    pub f64,
);

/// What the viewer draws of one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeDrawing {
    /// Its height (or what orients its links), short.
    pub label: String,
    /// The leader it believes in (leader election), else `null`.
    pub leader: Option<NodeId>,
    /// Its roles: `token`, `cs`, `waiting`, `leader`, `destination`.
    pub flags: Vec<&'static str>,
    /// Its state for the panel, one item per line.
    pub state: String,
}

impl NodeDrawing {
    /// The drawing of a node labelled `label` with `roles`, `waiting` for the CS if it
    /// requested it and is not in it, and panel text `state`.
    pub fn new(label: String, roles: super::Roles, waiting: bool, state: String) -> Self {
        let mut flags = Vec::new();
        for (on, name) in [
            (roles.tokens > 0, "token"),
            (roles.cs, "cs"),
            (waiting && !roles.cs, "waiting"),
            (roles.leads, "leader"),
            (roles.destination, "destination"),
        ] {
            if on {
                flags.push(name);
            }
        }
        Self {
            label,
            leader: roles.leader,
            flags,
            state,
        }
    }

    /// Whether the node is in its critical section.
    pub fn in_cs(&self) -> bool {
        self.flags.contains(&"cs")
    }
}

/// One event: what it was and what it changed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Step {
    /// When (seconds).
    #[serde(rename = "t", serialize_with = "seconds")]
    pub time: SimTime,
    /// `up`, `down`, `deliver`, `lost`, `notify`, `request`, `release`, `start`,
    /// `timer`, `discovered`, `change` (a change queued in `serialize` mode).
    pub kind: &'static str,
    /// One line for the event log.
    pub text: String,
    /// The node whose handler the event is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    /// Links that came up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<LinkState>,
    /// Links that went down.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<(NodeId, NodeId)>,
    /// Links whose orientation changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub orient: Vec<LinkState>,
    /// Nodes whose drawing changed: the new drawing, whole.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<NodeId, NodeDrawing>,
    /// Messages the event put on links.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub send: Vec<Sent>,
    /// The message the event delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recv: Option<u64>,
    /// Messages lost (their link broke under them, `drop`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<u64>,
}

impl Step {
    /// An event at `time` of kind `what`, before it is handled.
    pub fn new(time: SimTime, what: Happening) -> Self {
        let (kind, text, node) = match what {
            Happening::Change => ("change", "topology change queued".to_string(), None),
            Happening::Notify(a, b) => ("notify", format!("link {a}–{b} break detected"), None),
            Happening::Deliver(from, to) => ("deliver", format!("{from} → {to}"), Some(to)),
            Happening::Start(n) => ("start", format!("node {n} starts"), Some(n)),
            Happening::Discovered(n) => ("discovered", format!("route found at {n}"), Some(n)),
            Happening::Request(n) => ("request", format!("node {n} requests the CS"), Some(n)),
            Happening::Release(n) => ("release", format!("node {n} leaves the CS"), Some(n)),
            Happening::Timer(n) => ("timer", format!("timer at {n}"), Some(n)),
        };
        Self {
            time,
            kind,
            text,
            node,
            ..Self::default()
        }
    }

    /// Says that the event changed link `a–b`: a due change of the trace is an `up` or
    /// `down` event; a change applied during another event (`serialize` mode) is noted
    /// in its text.
    pub fn describe_change(&mut self, change: LinkChange, a: NodeId, b: NodeId) {
        let word = match change {
            LinkChange::Up => "up",
            LinkChange::Down => "down",
        };
        let text = format!("link {a}–{b} {word}");
        if self.kind == "change" {
            self.kind = word;
            self.text = text;
        } else {
            self.text.push_str(&format!("; {text}"));
        }
    }

    /// Says what arrived: a message of `kind` on `from → to`, handed over or lost.
    pub fn describe_arrival(&mut self, kind: &str, from: NodeId, to: NodeId, delivered: bool) {
        if delivered {
            self.text = format!("{kind} {from} → {to}");
        } else {
            self.kind = "lost";
            self.text = format!("{kind} {from} → {to} lost (link broke under it)");
        }
    }
}

/// A violation's onset, marked on the timeline.
#[derive(Clone, Debug, Serialize)]
pub struct Mark {
    /// When (seconds).
    pub t: f64,
    /// Index into the document's events.
    pub event: usize,
    /// Which invariant (`too_many_in_cs`).
    pub property: &'static str,
    /// What was wrong, with the nodes involved.
    pub detail: String,
}

/// What the recorder produced, before the document around it is assembled.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The state at the window's start.
    pub initial: Initial,
    /// The events in the window.
    pub steps: Vec<Step>,
    /// Engine index of the first recorded event, if any was.
    pub first_index: Option<u64>,
    /// The state at the end of the run, computed afresh from the nodes rather than
    /// from the deltas (`linkrev replay --snapshot`; the tests compare the two).
    pub last: Snapshot,
}

/// The state at one time, whole: links with their orientation, node drawings, and how
/// many messages are in flight.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// When (seconds).
    #[serde(serialize_with = "seconds")]
    pub time: SimTime,
    /// Links up, `a < b`, ascending.
    pub links: Vec<LinkState>,
    /// Every node's drawing, by id.
    pub nodes: Vec<NodeDrawing>,
    /// Messages on links (scheduled for delivery).
    pub in_flight: usize,
}

fn seconds<S: serde::Serializer>(time: &SimTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(time.as_secs_f64())
}
