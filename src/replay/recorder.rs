//! The replay recorder: an observer that writes down, per event, only what changed —
//! links that came or went, links whose orientation flipped, nodes whose drawing
//! changed, messages put on or taken off a link — so that a 300 s run replays from
//! deltas rather than snapshots.
//!
//! It keeps its own copy of what it last recorded (node drawings, oriented links,
//! messages on each directed link) and compares after each event; only the nodes whose
//! handlers ran can have changed, and only their links can have turned.

use super::document::{
    Drawn, Initial, LinkState, NodeDrawing, OnLink, Recorded, Redrawn, Sent, Snapshot, Step,
    Strings,
};
use crate::NodeId;
use crate::protocol::ReplayView;
use crate::sim::{Happening, Observer, SimTime, World};
use crate::topology::events::LinkChange;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A node's family roles, as the family reads them from its state ([`super::Roles`]).
pub type RolesOf<'a, P> = Box<dyn Fn(&P, NodeId) -> crate::family::Roles + 'a>;

/// The part of the run the recording covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Events before this time are run but not recorded; the recording starts from the
    /// state they leave.
    pub from: SimTime,
    /// Events after this time are not recorded (the run itself goes on to its end).
    pub to: SimTime,
}

/// A message on a link, as recorded.
#[derive(Clone, Debug)]
struct Queued {
    id: u64,
    from: NodeId,
    to: NodeId,
    kind: &'static str,
    token: bool,
    sent: SimTime,
    arrives: SimTime,
}

/// Records one run for the replay viewer.
pub struct Recorder<'a, P> {
    window: Window,
    roles: RolesOf<'a, P>,
    /// What the viewer was last told of each node.
    drawings: Vec<NodeDrawing>,
    /// Labels and panel lines, stored once.
    strings: Strings,
    /// Each node's drawing as last stored in the document (from the window's start), which
    /// the next redrawing is a change of.
    stored: Vec<Drawn>,
    /// Links up, `a < b`, with the orientation last recorded.
    links: BTreeMap<(NodeId, NodeId), i8>,
    /// Nodes that requested the CS and have not entered it (the engine's workload knows
    /// it; the view traits need not).
    waiting: Vec<bool>,
    /// Messages on each directed link, oldest first (links are FIFO).
    on_link: HashMap<(NodeId, NodeId), VecDeque<Queued>>,
    next_id: u64,
    /// The event being handled: what it is and what it did so far.
    step: Step,
    /// Links that changed during the event, to re-orient.
    changed_links: Vec<(NodeId, NodeId)>,
    initial: Option<Initial>,
    steps: Vec<Step>,
    /// Engine index of the first recorded event.
    first_index: Option<u64>,
    /// Window events beyond [`super::MAX_WINDOW_EVENTS`], counted, not recorded.
    events_not_recorded: u64,
    /// The state at the end, computed afresh from the nodes (not from the deltas).
    last: Option<Snapshot>,
}

impl<'a, P: ReplayView> Recorder<'a, P> {
    /// A recorder of `window`, reading each node's family roles with `roles`.
    pub fn new(window: Window, roles: RolesOf<'a, P>) -> Self {
        Self {
            window,
            roles,
            drawings: Vec::new(),
            strings: Strings::default(),
            stored: Vec::new(),
            links: BTreeMap::new(),
            waiting: Vec::new(),
            on_link: HashMap::new(),
            next_id: 0,
            step: Step::default(),
            changed_links: Vec::new(),
            initial: None,
            steps: Vec::new(),
            first_index: None,
            events_not_recorded: 0,
            last: None,
        }
    }

    /// The recording, once the run has finished.
    pub fn into_recorded(self) -> Recorded {
        Recorded {
            strings: self.strings.into_list(),
            initial: self.initial.unwrap_or_default(),
            steps: self.steps,
            first_index: self.first_index,
            events_not_recorded: self.events_not_recorded,
            last: self.last.unwrap_or_default(),
        }
    }

    fn drawing(&self, world: &World<'_, P>, node: NodeId) -> NodeDrawing {
        let state = &world.nodes[node as usize];
        let roles = (self.roles)(state, node);
        let waiting = self.waiting.get(node as usize).copied().unwrap_or(false);
        NodeDrawing::new(state.label(), roles, waiting, state.describe())
    }

    /// The orientation of link `a–b` (`a < b`): 1 for `a → b`, -1 for `b → a`, 0 for none.
    fn orientation(world: &World<'_, P>, a: NodeId, b: NodeId) -> i8 {
        match world.nodes[a as usize].points_to(b, &world.nodes[b as usize]) {
            Some(true) => 1,
            Some(false) => -1,
            None => 0,
        }
    }

    /// The state now, whole: the viewer's starting point.
    fn snapshot(&mut self, now: SimTime) -> Initial {
        let mut messages: Vec<OnLink> = self
            .on_link
            .values()
            .flatten()
            .map(|m| {
                let (arrives, sent) = (m.arrives.as_secs_f64(), m.sent.as_secs_f64());
                OnLink(m.id, m.from, m.to, m.kind, arrives, m.token, sent)
            })
            .collect();
        messages.sort_by_key(|m| m.0);
        let strings = &mut self.strings;
        let nodes: Vec<Drawn> = self.drawings.iter().map(|d| strings.store(d)).collect();
        self.stored = nodes.clone();
        Initial {
            time: now,
            links: self
                .links
                .iter()
                .map(|(&(a, b), &dir)| LinkState(a, b, dir))
                .collect(),
            nodes,
            messages,
        }
    }

    fn in_window(&self, now: SimTime) -> bool {
        now >= self.window.from && now <= self.window.to
    }
}

fn ordered(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    if a < b { (a, b) } else { (b, a) }
}

impl<P: ReplayView> Observer<P> for Recorder<'_, P> {
    const NARRATES: bool = true;

    fn on_start(&mut self, world: &World<'_, P>) {
        let n = world.nodes.len();
        self.waiting = vec![false; n];
        self.drawings = (0..n as NodeId).map(|i| self.drawing(world, i)).collect();
        for a in 0..n as NodeId {
            for &b in world.graph.neighbours(a) {
                if a < b {
                    self.links.insert((a, b), Self::orientation(world, a, b));
                }
            }
        }
    }

    fn before_event(&mut self, now: SimTime, what: Happening) {
        if self.initial.is_none() && now >= self.window.from {
            self.initial = Some(self.snapshot(self.window.from));
        }
        self.step = Step::new(now, what);
        if let Happening::Request(node) = what {
            self.waiting[node as usize] = true;
        }
    }

    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        let (a, b) = ordered(a, b);
        match change {
            LinkChange::Up => {
                let dir = Self::orientation(world, a, b);
                self.links.insert((a, b), dir);
                self.step.add.push(LinkState(a, b, dir));
            }
            LinkChange::Down => {
                self.links.remove(&(a, b));
                // A link that came up earlier in this event (`serialize` mode applies
                // several changes at once) was never drawn: drop it instead.
                match self.step.add.iter().position(|l| (l.0, l.1) == (a, b)) {
                    Some(i) => {
                        self.step.add.remove(i);
                    }
                    None => self.step.remove.push((a, b)),
                }
            }
        }
        self.step.note_change(change);
        self.changed_links.push((a, b));
    }

    fn on_send(
        &mut self,
        from: NodeId,
        to: NodeId,
        kind: &'static str,
        token: bool,
        arrives: SimTime,
    ) {
        let message = Queued {
            id: self.next_id,
            from,
            to,
            kind,
            token,
            sent: self.step.time,
            arrives,
        };
        self.next_id += 1;
        self.step.send.push(Sent(
            message.id,
            from,
            to,
            kind,
            arrives.as_secs_f64(),
            token,
        ));
        self.on_link
            .entry((from, to))
            .or_default()
            .push_back(message);
    }

    fn on_arrive(&mut self, from: NodeId, to: NodeId, delivered: bool) {
        // The message due now on this link: the oldest one in the usual case, but under
        // `drop` a new message may overtake one doomed by a break (a break restarts the
        // link's FIFO order), so match the arrival time.
        let now = self.step.time;
        let queue = self.on_link.get_mut(&(from, to));
        let Some(message) = queue.and_then(|q| {
            let at = q.iter().position(|m| m.arrives == now)?;
            q.remove(at)
        }) else {
            debug_assert!(
                false,
                "a message arrived on {from} → {to} that was never sent"
            );
            return;
        };
        if delivered {
            self.step.recv = Some(message.id);
        } else {
            self.step.lost.push(message.id);
            self.step.note_lost();
        }
    }

    fn after_event(&mut self, world: &World<'_, P>) {
        let mut step = std::mem::take(&mut self.step);
        // Drawings: only nodes whose handlers ran can have changed.
        let mut touched: Vec<NodeId> = world.touched.to_vec();
        touched.sort_unstable();
        touched.dedup();
        for &node in &touched {
            let drawing = self.drawing(world, node);
            // A node in its critical section no longer waits.
            if drawing.in_cs() {
                self.waiting[node as usize] = false;
            }
            if drawing != self.drawings[node as usize] {
                // Before the window only the drawing is kept (the window's start stores
                // what it needs), so a late window's page holds no earlier strings.
                if self.in_window(world.now) {
                    let drawn = self.strings.store(&drawing);
                    let old = &self.stored[node as usize];
                    step.set.push(Redrawn::between(node, old, &drawn));
                    self.stored[node as usize] = drawn;
                }
                self.drawings[node as usize] = drawing;
            }
        }
        // Orientations: links at touched nodes, and links that came up.
        let mut turned: Vec<(NodeId, NodeId)> = std::mem::take(&mut self.changed_links);
        for &a in &touched {
            turned.extend(world.graph.neighbours(a).iter().map(|&b| ordered(a, b)));
        }
        turned.sort_unstable();
        turned.dedup();
        for (a, b) in turned {
            let Some(recorded) = self.links.get_mut(&(a, b)) else {
                continue;
            };
            let dir = Self::orientation(world, a, b);
            if dir != *recorded {
                *recorded = dir;
                // A link that came up in this event is drawn with its final direction.
                match step.add.iter_mut().find(|l| (l.0, l.1) == (a, b)) {
                    Some(added) => added.2 = dir,
                    None => step.orient.push(LinkState(a, b, dir)),
                }
            }
        }
        if self.in_window(world.now) {
            self.first_index.get_or_insert(world.event_index);
            if self.steps.len() < super::MAX_WINDOW_EVENTS {
                self.steps.push(step);
            } else {
                self.events_not_recorded += 1;
            }
        }
    }

    fn full(&self) -> bool {
        self.events_not_recorded > 0
    }

    fn finish(&mut self, world: &World<'_, P>) {
        if self.initial.is_none() {
            self.initial = Some(self.snapshot(self.window.from));
        }
        // Afresh, from the nodes and the graph: what the deltas must add up to.
        let n = world.nodes.len() as NodeId;
        let mut links = Vec::new();
        for a in 0..n {
            for &b in world.graph.neighbours(a) {
                if a < b {
                    links.push(LinkState(a, b, Self::orientation(world, a, b)));
                }
            }
        }
        links.sort_by_key(|l| (l.0, l.1));
        self.last = Some(Snapshot {
            time: world.now,
            links,
            nodes: (0..n).map(|i| self.drawing(world, i)).collect(),
            in_flight: world.in_flight,
        });
    }
}
