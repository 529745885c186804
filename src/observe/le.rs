//! Leader-election metrics and the legality monitor (definitions in the book's design
//! page, `docs/src/explanation/design.md`, "Metric definitions").
//!
//! - A component is **legal** when all its nodes name the same leader, that leader is in
//!   the component and is its only sink (no neighbour with a lower height), and every
//!   node's view of each neighbour's height equals that neighbour's actual height.
//!   Heights are totally ordered, so once every view is accurate the orientation has no
//!   cycle; a cycle in the nodes' local orientations can only come from a stale view,
//!   which the last condition catches.
//! - A component is **quiescent** when no message is in flight to any of its nodes and
//!   no link notification is pending.
//! - **Convergence** of a topology change at t0: the first t1 ≥ t0 at which every
//!   component touching the change (those of its two endpoints) is quiescent and legal;
//!   convergence time t1 − t0, messages = all protocol messages sent in [t0, t1]. A
//!   further change touching one of those components first censors the record (kept,
//!   flagged).
//! - **Leaderless node-time**: time during which a node's component does not agree on a
//!   leader inside it, summed over nodes.
//! - **Leader changes**: how many times any node's leader id changed, summed over nodes.
//! - **Elections**: how many times a node became its own leader (its leader id changed
//!   to itself). An election is **unnecessary** when, at that moment, the node's
//!   component already held another node that considered itself leader: a leader the
//!   node could have reached (the stability Ingram et al. 2009 discuss: no new leader
//!   while the old one is reachable). Both are judged at the end of the event, against
//!   the graph as it then is: in `serialize` mode several queued changes can be applied
//!   in one event, so an isolated node's election followed in the same event by a merge
//!   with a led component counts as unnecessary.
//! - **Safety**: a quiescent component that is not legal is a violation (the initial
//!   state is checked too, before the first event), counted once
//!   per incident. An incident opens when a quiescent component is found illegal and none
//!   of its nodes is in an open incident; it stays open for a node until the node's
//!   component is next found quiescent and legal. While a component is busy (messages or
//!   notifications pending) its nodes keep their state, so traffic that passes through an
//!   illegal component without repairing it does not make the same illegal state count
//!   again when the component goes quiet. The paper proves legality for one change at a
//!   time (`serialize`); under `overlap` a violation is a finding about the algorithm,
//!   not a simulator error.

use super::groups::{Buckets, LabelTally, StampSet};
use super::safety::{SafetyLog, Violation, views_and_sink};
use super::touches;
use super::views::ViewCounts;
use crate::NodeId;
use crate::protocol::{LeaderView, Protocol};
use crate::sim::{Observer, SimTime, World};
use crate::topology::components::ComponentTracker;
use crate::topology::events::LinkChange;
use serde::Serialize;

/// One topology change and how leader election reacted to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeRecord {
    /// Simulated time of the change, seconds.
    pub time_s: f64,
    /// `up` or `down`.
    pub kind: &'static str,
    /// Lower-numbered endpoint of the link that changed.
    pub a: NodeId,
    /// Higher-numbered endpoint of the link that changed.
    pub b: NodeId,
    /// Whether the components of both endpoints became quiescent and legal before
    /// the record was censored or the run ended.
    pub converged: bool,
    /// Seconds from the change to convergence; `None` unless `converged`.
    pub convergence_time_s: Option<f64>,
    /// Messages sent from the change until convergence (or until censoring or the end).
    pub messages: u64,
    /// A further change touching the same components came first, so the record
    /// stopped there (it is kept, flagged).
    pub censored: bool,
}

impl ChangeRecord {
    /// The record of a change at `time_s` that has not converged yet.
    pub fn open(time_s: f64, change: LinkChange, a: NodeId, b: NodeId) -> Self {
        Self {
            time_s,
            kind: match change {
                LinkChange::Up => "up",
                LinkChange::Down => "down",
            },
            a,
            b,
            converged: false,
            convergence_time_s: None,
            messages: 0,
            censored: false,
        }
    }
}

struct Open {
    record: usize,
    start: SimTime,
    messages_at_start: u64,
}

// The flags counted per component label (see [`LabelTally`]).
/// A message is in flight to the node or a notification of its links is pending (its
/// component is quiescent when no node has it).
const BUSY: usize = 0;
/// The node fails a per-node condition of legality: a stale view, or being a sink
/// exactly when it is not its own leader.
const BAD: usize = 1;
/// The node's leader is outside its component or does not consider itself leader.
const DISCONTENT: usize = 2;
/// The node considers itself leader. A component agrees on a leader inside it exactly
/// when no node is discontent and one is a self-leader (see `after_event`).
const SELF_LEADER: usize = 3;
/// The node is in an open incident.
const IN_INCIDENT: usize = 4;

/// Watches a leader-election run.
///
/// Everything is kept per component label and updated from what an event changed: the
/// nodes it touched or disturbed, the endpoints of the topology changes it applied,
/// their neighbours (whose counts of stale views and lower neighbours move with them),
/// and the nodes that changed component (the tracker's move log). So the cost of an
/// event follows the event, not the size of the network, and the verdicts, counts and
/// records are those of judging every component from scratch (debug builds check it).
pub struct LeMonitor<H> {
    /// One record per topology change, in time order.
    pub records: Vec<ChangeRecord>,
    open: Vec<Open>,
    /// Quiescent components found illegal, counted once per incident.
    pub safety: SafetyLog,
    /// Node-seconds without an agreed leader.
    pub leaderless_node_time: f64,
    /// How many times any node's leader id changed, summed over nodes.
    pub leader_changes: u64,
    /// Times a node became its own leader.
    pub elections: u64,
    /// Of those, elections while the component held another leader.
    pub unnecessary_elections: u64,
    /// Every node's leader as of the end of the last event.
    leaders: Vec<NodeId>,
    leaderless_now: usize,
    last_time: SimTime,
    /// Endpoints of the topology changes applied during the current event.
    changed: Vec<NodeId>,
    /// Stale views and lower neighbours per node. The counts of nodes an event changed
    /// wait until their component is judged quiescent, the only time their `BAD` flags
    /// are read.
    views: ViewCounts<H>,
    /// The components' members, by label.
    groups: Buckets,
    /// Each node in the bucket of its leader.
    followers: Buckets,
    tally: LabelTally<5>,
    /// Per label: nodes counted in `leaderless_now` (0, or all of them), and the last
    /// verdict (`None`: busy).
    leaderless: Vec<u32>,
    verdict: Vec<Option<bool>>,
    /// Scratch sets: nodes whose contentment may have changed; labels whose agreement
    /// may have changed; labels to judge.
    recheck: StampSet,
    agreement_dirty: StampSet,
    judge_dirty: StampSet,
}

impl<H> Default for LeMonitor<H> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            open: Vec::new(),
            safety: SafetyLog::default(),
            leaderless_node_time: 0.0,
            leader_changes: 0,
            elections: 0,
            unnecessary_elections: 0,
            leaders: Vec::new(),
            leaderless_now: 0,
            last_time: SimTime::ZERO,
            changed: Vec::new(),
            views: ViewCounts::default(),
            groups: Buckets::default(),
            followers: Buckets::default(),
            tally: LabelTally::new(0),
            leaderless: Vec::new(),
            verdict: Vec::new(),
            recheck: StampSet::default(),
            agreement_dirty: StampSet::default(),
            judge_dirty: StampSet::default(),
        }
    }
}

/// Whether `members` (one component) is legal; otherwise why, and the nodes involved.
pub fn check_component<P: LeaderView>(
    nodes: &[P],
    graph: &ComponentTracker,
    members: &[NodeId],
) -> Result<(), (String, Vec<NodeId>)> {
    let first = members[0];
    let leader = nodes[first as usize].leader();
    if let Some(&other) = members
        .iter()
        .find(|&&m| nodes[m as usize].leader() != leader)
    {
        let theirs = nodes[other as usize].leader();
        return Err((
            format!("disagreement: node {first} follows {leader}, node {other} follows {theirs}"),
            vec![first, other],
        ));
    }
    if !members.contains(&leader) {
        return Err((
            format!("leader {leader} is not in the component"),
            vec![first],
        ));
    }
    for &m in members {
        let node = &nodes[m as usize];
        let sink = views_and_sink(
            m,
            &node.height(),
            graph.neighbours(m),
            |j| node.neighbour_height(j),
            |j| nodes[j as usize].height(),
        )?;
        if sink && m != leader {
            return Err((
                format!("node {m} is a sink but {leader} leads"),
                vec![m, leader],
            ));
        }
        if !sink && m == leader {
            return Err((format!("leader {m} has an outgoing link"), vec![m]));
        }
    }
    Ok(())
}

fn agrees<P: LeaderView>(nodes: &[P], members: &[NodeId]) -> bool {
    let leader = nodes[members[0] as usize].leader();
    members.contains(&leader)
        && members
            .iter()
            .all(|&m| nodes[m as usize].leader() == leader)
}

impl<H: Ord + Clone> LeMonitor<H> {
    /// A monitor with nothing recorded yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn busy_now<P>(world: &World<'_, P>, m: NodeId) -> bool {
        world.in_flight_to[m as usize] != 0 || world.pending_notify_at[m as usize] != 0
    }

    /// Node `v`'s leader is in its component and considers itself leader.
    fn content_now(&self, graph: &ComponentTracker, v: NodeId) -> bool {
        let l = self.leaders[v as usize];
        graph.connected(v, l) && self.leaders[l as usize] == l
    }

    /// Node `v` fails a per-node condition of legality (see [`check_component`]).
    fn bad_now(&self, v: NodeId) -> bool {
        self.views.stale(v) > 0 || (self.views.lower(v) == 0) != (self.leaders[v as usize] == v)
    }

    fn agrees_label(&self, label: u32) -> bool {
        self.tally.count(label, DISCONTENT) == 0 && self.tally.count(label, SELF_LEADER) == 1
    }

    /// Every flag and count from scratch (the start of a run).
    fn rebuild<P: LeaderView<Height = H>>(&mut self, world: &World<'_, P>) {
        let n = world.nodes.len();
        let graph = world.graph;
        let nodes = world.nodes;
        self.leaders = nodes.iter().map(LeaderView::leader).collect();
        self.views = ViewCounts::of_nodes(graph, nodes);
        self.groups = Buckets::components(graph);
        self.followers = Buckets::new(n, |v| self.leaders[v as usize]);
        self.tally = LabelTally::new(n);
        for v in 0..n as NodeId {
            let label = graph.label(v);
            let flags = [
                (BUSY, Self::busy_now(world, v)),
                (BAD, self.bad_now(v)),
                (DISCONTENT, !self.content_now(graph, v)),
                (SELF_LEADER, self.leaders[v as usize] == v),
            ];
            for (k, value) in flags {
                self.tally.set(v, label, k, value);
            }
        }
        self.leaderless = vec![0; n];
        self.verdict = vec![None; n];
        self.leaderless_now = 0;
        self.agreement_dirty.reset(n);
        for v in 0..n as NodeId {
            self.agreement_dirty.insert(graph.label(v));
        }
        self.update_leaderless(graph);
    }

    /// Recounts the pending nodes of the component labelled `label` and re-derives
    /// their `BAD` flags.
    fn settle_label<P: LeaderView<Height = H>>(&mut self, world: &World<'_, P>, label: u32) {
        self.views.settle_component(world.graph, label, world.nodes);
        let settled = std::mem::take(&mut self.views.settled);
        for &v in &settled {
            let bad = self.bad_now(v);
            self.tally.set(v, label, BAD, bad);
        }
        self.views.settled = settled;
    }

    /// The verdict on the component labelled `label` (`None`: busy), stored; opens or
    /// closes its nodes' incidents. Returns whether an incident opens (described by the
    /// caller, in the order of the components' smallest ids).
    fn judge_label<P: LeaderView<Height = H>>(&mut self, world: &World<'_, P>, label: u32) -> bool {
        if self.tally.count(label, BUSY) == 0 {
            self.settle_label(world, label);
        }
        if cfg!(debug_assertions) {
            self.cross_check(world, label);
        }
        let size = world.graph.label_size(label) as u32;
        let in_incident = self.tally.count(label, IN_INCIDENT);
        let (verdict, onset) = if self.tally.count(label, BUSY) > 0 {
            (None, false)
        } else if self.agrees_label(label) && self.tally.count(label, BAD) == 0 {
            if in_incident > 0 {
                self.mark_incident(label, false);
            }
            (Some(true), false)
        } else {
            if in_incident < size {
                self.mark_incident(label, true);
            }
            (Some(false), in_incident == 0)
        };
        self.verdict[label as usize] = verdict;
        onset
    }

    fn mark_incident(&mut self, label: u32, open: bool) {
        for &m in self.groups.members(label) {
            self.tally.set(m, label, IN_INCIDENT, open);
        }
    }

    /// Debug builds: the label's counts against the definitions, from its members.
    fn cross_check<P: LeaderView>(&self, world: &World<'_, P>, label: u32) {
        let members = self.groups.members(label);
        assert_eq!(members.len(), world.graph.label_size(label));
        assert!(members.iter().all(|&m| world.graph.label(m) == label));
        let busy = self.tally.count(label, BUSY) > 0;
        assert_eq!(!busy, quiescent(world, members), "busy count");
        assert_eq!(
            self.agrees_label(label),
            agrees(world.nodes, members),
            "agreement"
        );
        if !busy {
            let legal = self.agrees_label(label) && self.tally.count(label, BAD) == 0;
            assert_eq!(
                legal,
                check_component(world.nodes, world.graph, members).is_ok(),
                "legality"
            );
        }
    }

    /// Judges the labels in `judge_dirty` and records the incidents that open, in the
    /// order of their components' smallest ids (the order of [`super::components`]).
    fn judge_dirty<P: LeaderView<Height = H>>(&mut self, world: &World<'_, P>) {
        let labels = std::mem::take(&mut self.judge_dirty.items);
        let mut onsets: Vec<Vec<NodeId>> = Vec::new();
        for &label in &labels {
            if self.judge_label(world, label) {
                let mut members = self.groups.members(label).to_vec();
                members.sort_unstable();
                onsets.push(members);
            }
        }
        self.judge_dirty.items = labels;
        onsets.sort_unstable_by_key(|members| members[0]);
        for members in onsets {
            // The full check only at an incident's onset, for its description.
            if let Err((detail, nodes)) = check_component(world.nodes, world.graph, &members) {
                self.safety.record(|| Violation {
                    kind: "illegal_component",
                    time_s: world.now.as_secs_f64(),
                    event_index: world.event_index,
                    nodes,
                    detail,
                });
            }
        }
    }

    /// Re-derives the leaderless count of the labels in `agreement_dirty`.
    fn update_leaderless(&mut self, graph: &ComponentTracker) {
        for &label in &self.agreement_dirty.items {
            let now = if self.agrees_label(label) {
                0
            } else {
                graph.label_size(label) as u32
            };
            let before = std::mem::replace(&mut self.leaderless[label as usize], now);
            self.leaderless_now = self.leaderless_now + now as usize - before as usize;
        }
    }
}

fn quiescent<P>(world: &World<'_, P>, members: &[NodeId]) -> bool {
    members
        .iter()
        .all(|&m| world.in_flight_to[m as usize] == 0 && world.pending_notify_at[m as usize] == 0)
}

impl<P: Protocol + LeaderView> Observer<P> for LeMonitor<P::Height> {
    fn on_start(&mut self, world: &World<'_, P>) {
        self.rebuild(world);
        self.last_time = world.now;
        // The initial state must be legal too: an algorithm whose `initial_states` is
        // wrong is caught before anything happens.
        let n = world.nodes.len();
        self.recheck.reset(n);
        self.agreement_dirty.reset(n);
        self.judge_dirty.reset(n);
        for v in 0..n as NodeId {
            self.judge_dirty.insert(world.graph.label(v));
        }
        self.judge_dirty(world);
    }

    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        self.changed.extend([a, b]);
        let graph = world.graph;
        let touches = |x: NodeId, y: NodeId| touches(graph, (a, b), x, y);
        let messages = world.counters.messages;
        self.open.retain(|o| {
            let r = &mut self.records[o.record];
            if touches(r.a, r.b) {
                r.censored = true;
                r.messages = messages - o.messages_at_start;
                false
            } else {
                true
            }
        });
        self.open.push(Open {
            record: self.records.len(),
            start: world.now,
            messages_at_start: messages,
        });
        self.records
            .push(ChangeRecord::open(world.now.as_secs_f64(), change, a, b));
    }

    /// Agreement per component from counts: a component agrees on a leader inside it
    /// exactly when it holds one node that considers itself leader and every node is
    /// *content* (its leader is in its component and considers itself leader). If all
    /// are content, each follows a self-leader of the component, the only one; the
    /// converse is the definition. Contentment changes only for nodes that changed
    /// leader or component, and for the followers of a node that did.
    fn after_event(&mut self, world: &World<'_, P>) {
        let elapsed = world.now.since(self.last_time).as_secs_f64();
        self.leaderless_node_time += elapsed * self.leaderless_now as f64;
        self.last_time = world.now;
        let graph = world.graph;
        let n = world.nodes.len();
        self.recheck.reset(n);
        self.agreement_dirty.reset(n);
        self.judge_dirty.reset(n);

        // Nodes that changed component carry their flags to the new label.
        for m in graph.moves() {
            self.groups.relocate(m.node, m.from, m.to);
            self.tally.carry(m.node, m.from, m.to);
            self.agreement_dirty.insert(m.from);
            self.agreement_dirty.insert(m.to);
            self.recheck.insert(m.node);
            for &f in self.followers.members(m.node) {
                self.recheck.insert(f);
            }
        }

        // Leaders.
        let mut elected: Vec<NodeId> = Vec::new();
        for &node in world.touched {
            let leader = world.nodes[node as usize].leader();
            let before = std::mem::replace(&mut self.leaders[node as usize], leader);
            if before == leader {
                continue;
            }
            self.leader_changes += 1;
            if leader == node {
                elected.push(node);
            }
            self.followers.relocate(node, before, leader);
            self.recheck.insert(node);
            if (before == node) != (leader == node) {
                self.tally
                    .set(node, graph.label(node), SELF_LEADER, leader == node);
                for &f in self.followers.members(node) {
                    self.recheck.insert(f);
                }
            }
        }
        for &node in &elected {
            self.elections += 1;
            // Another node of its component considers itself leader.
            let self_leaders = self.tally.count(graph.label(node), SELF_LEADER);
            self.unnecessary_elections += u64::from(self_leaders > 1);
        }
        let recheck = std::mem::take(&mut self.recheck.items);
        for &v in &recheck {
            let label = graph.label(v);
            self.agreement_dirty.insert(label);
            let content = self.content_now(graph, v);
            self.tally.set(v, label, DISCONTENT, !content);
        }
        self.recheck.items = recheck;
        self.update_leaderless(graph);

        // Views and sinks: the nodes the event changed wait until their component is
        // judged quiet; their neighbours' counts move now.
        let changed = std::mem::take(&mut self.changed);
        self.views
            .record_event(graph, world.touched.iter().chain(&changed), world.nodes);
        let affected = std::mem::take(&mut self.views.affected);
        for &v in &affected {
            let bad = self.bad_now(v);
            self.tally.set(v, graph.label(v), BAD, bad);
        }
        self.views.affected = affected;

        // Traffic.
        for &m in world.touched.iter().chain(world.disturbed) {
            self.tally
                .set(m, graph.label(m), BUSY, Self::busy_now(world, m));
        }

        // Judge the components an event may have changed: those with a node touched
        // or disturbed by it, or at a topology change it applied. Any other component
        // has the same members, states and traffic as when last judged.
        for &v in world.touched.iter().chain(world.disturbed).chain(&changed) {
            self.judge_dirty.insert(graph.label(v));
        }
        self.changed = changed;
        self.changed.clear();
        self.judge_dirty(world);

        // … and convergence of the open records.
        if self.open.is_empty() {
            return;
        }
        let verdict = |v: NodeId| self.verdict[graph.label(v) as usize];
        let messages = world.counters.messages;
        let now = world.now;
        self.open.retain(|o| {
            let r = &mut self.records[o.record];
            let done = [r.a, r.b].iter().all(|&v| verdict(v) == Some(true));
            if done {
                r.converged = true;
                r.convergence_time_s = Some(now.since(o.start).as_secs_f64());
                r.messages = messages - o.messages_at_start;
            }
            !done
        });
    }

    fn finish(&mut self, world: &World<'_, P>) {
        let elapsed = world.now.since(self.last_time).as_secs_f64();
        self.leaderless_node_time += elapsed * self.leaderless_now as f64;
        self.last_time = world.now;
        let messages = world.counters.messages;
        for o in self.open.drain(..) {
            self.records[o.record].messages = messages - o.messages_at_start;
        }
    }
}
