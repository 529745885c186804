//! Leader-election metrics and the legality monitor (definitions from DESIGN.md).
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

use super::safety::{Incidents, SafetyLog, Violation, views_and_sink};
use super::{components, touches};
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

/// Watches a leader-election run.
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
    leaders: Vec<NodeId>,
    leaderless_now: usize,
    last_time: SimTime,
    /// Nodes in an open incident: their component was last found (quiescent and)
    /// illegal and has not been found legal since. An illegal component with none of
    /// these is a new incident.
    incidents: Incidents,
    /// Per node: the last verdict on its component (`None`: busy). A component none of
    /// whose nodes was touched, disturbed or at a topology change since has the same
    /// members, states and traffic as then, so its verdict stands and it is not judged
    /// again: the cost per event follows what the event touched, not the network.
    verdict_of: Vec<Option<bool>>,
    /// Per node: its component does not agree on a leader inside it (counted in
    /// `leaderless_now`).
    leaderless: Vec<bool>,
    /// Endpoints of the topology changes applied during the current event.
    changed: Vec<NodeId>,
    /// Per node: how many of its neighbours it has a stale view of, and how many are
    /// lower than it, kept current as heights, views and links change (a touched node
    /// is recounted, and each of its neighbours adjusted for the one link to it), so
    /// that judging a component reads two counts and a leader per node.
    stale: Vec<u32>,
    lower: Vec<u32>,
    /// Every node's height when `stale` and `lower` were last brought up to date.
    heights: Vec<H>,
    /// Scratch: the nodes recounted in the current event.
    recount: Vec<bool>,
    /// The components, as [`components`] lists them, rebuilt only when a topology
    /// change was applied, and each node's index in them.
    groups: Vec<Vec<NodeId>>,
    group_of: Vec<usize>,
    /// Per node: a message is in flight to it or a notification of its links is
    /// pending; per group: how many such nodes (a group is quiescent at 0). Kept up to
    /// date from the nodes an event touched or disturbed.
    busy: Vec<bool>,
    busy_in_group: Vec<u32>,
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
            incidents: Incidents::default(),
            verdict_of: Vec::new(),
            leaderless: Vec::new(),
            changed: Vec::new(),
            stale: Vec::new(),
            lower: Vec::new(),
            heights: Vec::new(),
            recount: Vec::new(),
            groups: Vec::new(),
            group_of: Vec::new(),
            busy: Vec::new(),
            busy_in_group: Vec::new(),
        }
    }
}

/// Node `m`'s counts from scratch: (neighbours it has a stale view of, neighbours lower
/// than it).
fn counts<P: LeaderView>(nodes: &[P], graph: &ComponentTracker, m: NodeId) -> (u32, u32) {
    let node = &nodes[m as usize];
    let own = node.height();
    let (mut stale, mut lower) = (0, 0);
    for &j in graph.neighbours(m) {
        let actual = nodes[j as usize].height();
        stale += u32::from(node.neighbour_height(j).as_ref() != Some(&actual));
        lower += u32::from(actual < own);
    }
    (stale, lower)
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

    /// Legality of every quiescent component of `groups` (the safety monitor): `Some`
    /// verdict per quiescent component, `None` for a busy one. Each illegal state is
    /// counted at its onset; busy components keep their nodes' incidents.
    fn judge<P: LeaderView>(
        &mut self,
        world: &World<'_, P>,
        groups: &[Vec<NodeId>],
        dirty: &[bool],
    ) -> Vec<Option<bool>> {
        let mut verdict: Vec<Option<bool>> = vec![None; groups.len()];
        self.verdict_of.resize(world.nodes.len(), None);
        for (i, members) in groups.iter().enumerate() {
            if !dirty[i] {
                verdict[i] = self.verdict_of[members[0] as usize];
                continue;
            }
            debug_assert_eq!(
                self.busy_in_group[i] == 0,
                Self::quiescent(world, members),
                "busy count of group {i}"
            );
            let fresh = match self.busy_in_group[i] {
                0 => self.judge_one(world, members),
                _ => None,
            };
            for &m in members {
                self.verdict_of[m as usize] = fresh;
            }
            verdict[i] = fresh;
        }
        verdict
    }

    /// The verdict on one component (see [`Self::judge`]).
    fn judge_one<P: LeaderView>(
        &mut self,
        world: &World<'_, P>,
        members: &[NodeId],
    ) -> Option<bool> {
        // The per-node conditions of `check_component`, from the counts: no stale view,
        // and a node is a sink exactly when it is its own leader.
        let bad = |m: NodeId| {
            self.stale[m as usize] > 0
                || (self.lower[m as usize] == 0) != (world.nodes[m as usize].leader() == m)
        };
        let legal = agrees(world.nodes, members) && !members.iter().any(|&m| bad(m));
        debug_assert_eq!(
            legal,
            check_component(world.nodes, world.graph, members).is_ok()
        );
        if legal {
            self.incidents.legal(members);
            return Some(true);
        }
        // The full check only at an incident's onset, for its description.
        self.incidents.illegal(members, &mut self.safety, || {
            let (detail, nodes) = check_component(world.nodes, world.graph, members).err()?;
            Some(Violation {
                kind: "illegal_component",
                time_s: world.now.as_secs_f64(),
                event_index: world.event_index,
                nodes,
                detail,
            })
        });
        Some(false)
    }

    /// Which of `groups` an event may have changed: those with a node touched or
    /// disturbed by it, or at a topology change it applied (all of them at the start).
    /// Also brings the per-node [`bad`] flags up to date.
    fn dirty_groups<P: LeaderView<Height = H>>(
        &mut self,
        world: &World<'_, P>,
        groups: usize,
        all: bool,
    ) -> Vec<bool> {
        let n = world.nodes.len();
        let graph = world.graph;
        if all {
            self.heights = world.nodes.iter().map(LeaderView::height).collect();
            self.stale = vec![0; n];
            self.lower = vec![0; n];
            for v in 0..n as NodeId {
                (self.stale[v as usize], self.lower[v as usize]) = counts(world.nodes, graph, v);
            }
        }
        self.update_counts(world);
        let mut dirty = vec![all; groups];
        for &v in world
            .touched
            .iter()
            .chain(world.disturbed)
            .chain(&self.changed)
        {
            dirty[self.group_of[v as usize]] = true;
        }
        self.changed.clear();
        dirty
    }

    /// Rebuilds the cached components and their busy counts (after a topology change,
    /// or at the start).
    fn rebuild_groups<P>(&mut self, world: &World<'_, P>) {
        let graph = world.graph;
        self.groups = components(graph);
        self.group_of.resize(graph.node_count(), 0);
        self.busy.resize(graph.node_count(), false);
        self.busy_in_group = vec![0; self.groups.len()];
        for (i, g) in self.groups.iter().enumerate() {
            for &m in g {
                self.group_of[m as usize] = i;
                let busy = Self::busy_now(world, m);
                self.busy[m as usize] = busy;
                self.busy_in_group[i] += u32::from(busy);
            }
        }
    }

    fn busy_now<P>(world: &World<'_, P>, m: NodeId) -> bool {
        world.in_flight_to[m as usize] != 0 || world.pending_notify_at[m as usize] != 0
    }

    /// Updates the busy counts for the nodes an event touched or disturbed (the only
    /// ones whose messages or notifications can have changed).
    fn update_busy<P>(&mut self, world: &World<'_, P>) {
        for &m in world.touched.iter().chain(world.disturbed) {
            let now = Self::busy_now(world, m);
            let before = std::mem::replace(&mut self.busy[m as usize], now);
            let count = &mut self.busy_in_group[self.group_of[m as usize]];
            *count = *count + u32::from(now) - u32::from(before);
        }
    }

    /// Brings `stale` and `lower` up to date after an event. Only nodes whose state or
    /// links changed (touched, or at a topology change: the set `T`) are recounted; a
    /// neighbour `j` outside `T` has the same links and views as before, and only its
    /// link to a node of `T` can count differently, so it is adjusted for that link
    /// alone, from the height stored before the event and the height now.
    fn update_counts<P: LeaderView<Height = H>>(&mut self, world: &World<'_, P>) {
        let n = world.nodes.len();
        let graph = world.graph;
        self.recount.clear();
        self.recount.resize(n, false);
        for &v in world.touched.iter().chain(&self.changed) {
            self.recount[v as usize] = true;
        }
        for &v in world.touched.iter().chain(&self.changed) {
            let before = &self.heights[v as usize];
            let now = world.nodes[v as usize].height();
            if *before == now {
                continue;
            }
            for &j in graph.neighbours(v) {
                if self.recount[j as usize] {
                    continue;
                }
                let node = &world.nodes[j as usize];
                let view = node.neighbour_height(v);
                let own = &self.heights[j as usize];
                let stale_then = view.as_ref() != Some(before);
                let stale_now = view.as_ref() != Some(&now);
                let s = &mut self.stale[j as usize];
                *s = *s + u32::from(stale_now) - u32::from(stale_then);
                let l = &mut self.lower[j as usize];
                *l = *l + u32::from(now < *own) - u32::from(*before < *own);
            }
            self.heights[v as usize] = now;
        }
        for &v in world.touched.iter().chain(&self.changed) {
            if std::mem::replace(&mut self.recount[v as usize], false) {
                (self.stale[v as usize], self.lower[v as usize]) = counts(world.nodes, graph, v);
            }
        }
    }

    /// Brings the leaderless node count up to date for the dirty groups.
    fn update_leaderless<P: LeaderView>(
        &mut self,
        world: &World<'_, P>,
        groups: &[Vec<NodeId>],
        dirty: &[bool],
    ) {
        self.leaderless.resize(world.nodes.len(), false);
        for (members, _) in groups.iter().zip(dirty).filter(|(_, d)| **d) {
            let now = !agrees(world.nodes, members);
            for &m in members {
                let before = std::mem::replace(&mut self.leaderless[m as usize], now);
                match (before, now) {
                    (false, true) => self.leaderless_now += 1,
                    (true, false) => self.leaderless_now -= 1,
                    _ => {}
                }
            }
        }
    }

    fn quiescent<P>(world: &World<'_, P>, members: &[NodeId]) -> bool {
        members.iter().all(|&m| {
            world.in_flight_to[m as usize] == 0 && world.pending_notify_at[m as usize] == 0
        })
    }
}

impl<P: Protocol + LeaderView> Observer<P> for LeMonitor<P::Height> {
    fn on_start(&mut self, world: &World<'_, P>) {
        self.leaders = world.nodes.iter().map(LeaderView::leader).collect();
        self.rebuild_groups(world);
        let groups = std::mem::take(&mut self.groups);
        let dirty = self.dirty_groups(world, groups.len(), true);
        self.update_leaderless(world, &groups, &dirty);
        self.last_time = world.now;
        // The initial state must be legal too: an algorithm whose `initial_states` is
        // wrong is caught before anything happens.
        self.judge(world, &groups, &dirty);
        self.groups = groups;
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

    fn after_event(&mut self, world: &World<'_, P>) {
        let elapsed = world.now.since(self.last_time).as_secs_f64();
        self.leaderless_node_time += elapsed * self.leaderless_now as f64;
        self.last_time = world.now;
        let mut elected: Vec<NodeId> = Vec::new();
        let mut leaders_changed = false;
        for &node in world.touched {
            let leader = world.nodes[node as usize].leader();
            if std::mem::replace(&mut self.leaders[node as usize], leader) != leader {
                self.leader_changes += 1;
                leaders_changed = true;
                if leader == node {
                    elected.push(node);
                }
            }
        }
        let regroup = !self.changed.is_empty();
        if regroup {
            self.rebuild_groups(world);
        } else {
            self.update_busy(world);
        }
        let groups = std::mem::take(&mut self.groups);
        for &node in &elected {
            self.elections += 1;
            let another_leader = groups[self.group_of[node as usize]]
                .iter()
                .any(|&m| m != node && world.nodes[m as usize].leader() == m);
            self.unnecessary_elections += u64::from(another_leader);
        }
        let dirty = self.dirty_groups(world, groups.len(), false);
        // Agreement can only change where a leader or a component changed.
        if leaders_changed || regroup {
            self.update_leaderless(world, &groups, &dirty);
        }
        let verdict = self.judge(world, &groups, &dirty);
        self.groups = groups;

        // … and convergence of the open records.
        if self.open.is_empty() {
            return;
        }
        let group_of = |v: NodeId| self.group_of[v as usize];
        let messages = world.counters.messages;
        let now = world.now;
        self.open.retain(|o| {
            let r = &mut self.records[o.record];
            let done = [r.a, r.b]
                .iter()
                .all(|&v| verdict[group_of(v)] == Some(true));
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
