//! The replay document: what `run.html` embeds as JSON and the player reads (format
//! `linkrev-replay/1`, described field by field in [`super`]'s docs).

use crate::NodeId;
use crate::sim::{Happening, SimTime};
use crate::topology::events::LinkChange;
use serde::Serialize;

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
    /// The family's name (`leader-election`, `mutual-exclusion`, `route`).
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
    /// Names drawn instead of the ids (the slides' letters), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// Every label and panel line, once: drawings refer to them by index (a height
    /// appears in its node's drawing and in each neighbour's view of it).
    pub strings: Vec<String>,
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
    pub nodes: Vec<Drawn>,
    /// Messages on links at that time.
    pub messages: Vec<OnLink>,
}

/// A link `[a, b, dir]`: `dir` 1 draws `a → b`, -1 `b → a`, 0 no arrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkState(pub NodeId, pub NodeId, pub i8);

/// A message put on a link by the event: `[id, from, to, kind, arrives, token]` (seconds;
/// `token`: it carries the token).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sent(
    pub u64,
    pub NodeId,
    pub NodeId,
    pub &'static str,
    pub f64,
    pub bool,
);

/// A message on a link when the window starts: `[id, from, to, kind, arrives, token,
/// sent]` (seconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OnLink(
    pub u64,
    pub NodeId,
    pub NodeId,
    pub &'static str,
    pub f64,
    pub bool,
    pub f64,
);

/// A node's drawing as the document stores it: `[label, [panel lines], leader, flags]`,
/// label and lines as indices into [`Document::strings`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drawn(
    pub u32,
    pub Vec<u32>,
    pub Option<NodeId>,
    pub Vec<&'static str>,
);

/// A node's new drawing as a change of its previous one (the window's initial drawing or
/// its last redrawing): `[node, label, leader, flags, line count, [position, line, …]]`,
/// the panel lines that differ listed by position. Most events change one view line of
/// a node, so this is a fraction of the whole drawing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Redrawn(
    pub NodeId,
    pub u32,
    pub Option<NodeId>,
    pub Vec<&'static str>,
    pub u32,
    pub Vec<u32>,
);

impl Redrawn {
    /// Node `node`'s drawing `new` as a change of `old`.
    pub fn between(node: NodeId, old: &Drawn, new: &Drawn) -> Self {
        let changes = new
            .1
            .iter()
            .enumerate()
            .filter(|&(i, line)| old.1.get(i) != Some(line))
            .flat_map(|(i, &line)| [i as u32, line])
            .collect();
        Redrawn(
            node,
            new.0,
            new.2,
            new.3.clone(),
            new.1.len() as u32,
            changes,
        )
    }

    /// The drawing it describes, given the node's previous one.
    pub fn apply(&self, old: &Drawn) -> Drawn {
        let mut lines = old.1.clone();
        lines.resize(self.4 as usize, 0);
        for change in self.5.chunks_exact(2) {
            lines[change[0] as usize] = change[1];
        }
        Drawn(self.1, lines, self.2, self.3.clone())
    }
}

/// Strings stored once, referred to by index.
#[derive(Clone, Debug, Default)]
pub struct Strings {
    index: std::collections::HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    /// The index of `text`, added if new.
    pub fn intern(&mut self, text: &str) -> u32 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = u32::try_from(self.list.len()).expect("fewer than 2^32 strings");
        self.index.insert(text.to_string(), i);
        self.list.push(text.to_string());
        i
    }

    /// A drawing, stored.
    pub fn store(&mut self, drawing: &NodeDrawing) -> Drawn {
        Drawn(
            self.intern(&drawing.label),
            drawing.state.lines().map(|l| self.intern(l)).collect(),
            drawing.leader,
            drawing.flags.clone(),
        )
    }

    /// Every string, by index.
    pub fn into_list(self) -> Vec<String> {
        self.list
    }
}

impl Document {
    /// A stored drawing, whole again.
    pub fn drawing(&self, drawn: &Drawn) -> NodeDrawing {
        let text = |i: u32| self.strings[i as usize].as_str();
        NodeDrawing {
            label: text(drawn.0).to_string(),
            leader: drawn.2,
            flags: drawn.3.clone(),
            state: drawn.1.iter().map(|&i| format!("{}\n", text(i))).collect(),
        }
    }
}

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
    /// `timer`, `discovered`, `change` (a change queued in `serialize` mode). The
    /// player words the event log from it and the fields below.
    pub kind: &'static str,
    /// The node whose handler the event is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    /// The link a `notify` event is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair: Option<(NodeId, NodeId)>,
    /// Links that came up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<LinkState>,
    /// Links that went down.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<(NodeId, NodeId)>,
    /// Links whose orientation changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub orient: Vec<LinkState>,
    /// Nodes whose drawing changed, each as a change of its previous drawing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<Redrawn>,
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
        let (kind, node, pair) = match what {
            Happening::Change => ("change", None, None),
            Happening::Notify(a, b) => ("notify", None, Some((a, b))),
            Happening::Deliver(_, to) => ("deliver", Some(to), None),
            Happening::Start(n) => ("start", Some(n), None),
            Happening::Discovered(n) => ("discovered", Some(n), None),
            Happening::Request(n) => ("request", Some(n), None),
            Happening::Release(n) => ("release", Some(n), None),
            Happening::Timer(n) => ("timer", Some(n), None),
        };
        Self {
            time,
            kind,
            node,
            pair,
            ..Self::default()
        }
    }

    /// Notes that the event changed a link: a due change of the trace is an `up` or
    /// `down` event (a change applied during another event, in `serialize` mode, shows
    /// in `add` and `remove` only).
    pub fn note_change(&mut self, change: LinkChange) {
        if self.kind == "change" {
            self.kind = match change {
                LinkChange::Up => "up",
                LinkChange::Down => "down",
            };
        }
    }

    /// Notes that the message the event was to deliver was lost instead.
    pub fn note_lost(&mut self) {
        self.kind = "lost";
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
    /// [`Document::strings`].
    pub strings: Vec<String>,
    /// The state at the window's start.
    pub initial: Initial,
    /// The events in the window.
    pub steps: Vec<Step>,
    /// Engine index of the first recorded event, if any was.
    pub first_index: Option<u64>,
    /// Events of the window beyond [`super::MAX_WINDOW_EVENTS`], not recorded: the page
    /// would be too large to open, and the command refuses to write it.
    pub events_not_recorded: u64,
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
