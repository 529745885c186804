//! Route-family metrics and the destination-orientation monitor (Gafni–Bertsekas link
//! reversal, [`crate::protocol::route_gb`]).
//!
//! - The orientation is the one the *actual* heights induce: each link from its higher
//!   end to its lower end. Heights are totally ordered, so it is always acyclic.
//! - A node **has a route** when a directed path leads from it to the destination.
//! - The destination's component is **legal** when every node's view of each
//!   neighbour's height is that neighbour's actual height and no node but the
//!   destination is a sink (all neighbours higher): then every node of it has a route
//!   (following lower neighbours ends at a sink, which can only be the destination) and
//!   the nodes' own views induce the same acyclic orientation.
//! - A component is **quiescent** when no message is in flight to any of its nodes and
//!   no link notification is pending. **Safety**: the destination's component, whenever
//!   quiescent, is legal; a violation is counted once per incident, as in
//!   [`super::le`]. A component without the destination is **partitioned**: without
//!   partition detection it reverses for as long as it is cut off, which is GB's
//!   behaviour, not a violation; its reversal steps are counted
//!   (`partitioned_reversals`).
//! - A **reversal step** is one change of a node's height.
//! - **Convergence** of a topology change at t0: the first t1 ≥ t0 at which the
//!   destination's component, if it contains an endpoint of the change, is quiescent and
//!   legal. Its **messages** and **reversal steps** are those sent and taken in
//!   [t0, t1] by nodes whose component contains an endpoint of the change (so a
//!   partition elsewhere is not charged to it), and **nodes reversed** the distinct
//!   nodes among them. A change inside a partitioned component (neither endpoint
//!   connected to the destination) cannot converge and is flagged `partitioned`. A
//!   further change touching the same components censors a record first (kept,
//!   flagged), as for leader election.
//! - **Route availability**: the fraction of node-time during which nodes have a route,
//!   the destination included, over the whole run.

use super::groups::{Buckets, LabelTally};
use super::le::ChangeRecord;
use super::routed::Routed;
use super::safety::{SafetyLog, Violation, views_and_sink};
use super::touches;
use super::views::ViewCounts;
use crate::NodeId;
use crate::protocol::{Protocol, RouteView};
use crate::sim::{Observer, SimTime, World};
use crate::topology::components::ComponentTracker;
use crate::topology::events::LinkChange;
use serde::Serialize;

/// One topology change and how the destination-oriented DAG reacted to it: the fields
/// leader election records too (convergence, messages, censoring; their definitions
/// here are the module docs'), and the reversal work.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteChangeRecord {
    /// When and which link, whether and when the destination's component converged,
    /// the messages sent by nodes in the change's components until the record ended,
    /// and whether a further change censored it.
    #[serde(flatten)]
    pub change: ChangeRecord,
    /// Neither endpoint was connected to the destination after the change: it cannot
    /// converge (module docs).
    pub partitioned: bool,
    /// Reversal steps (height changes) of nodes in the change's components until the
    /// record ended.
    pub reversals: u64,
    /// Distinct nodes among them that reversed.
    pub nodes_reversed: u64,
}

struct Open {
    record: usize,
    start: SimTime,
    reversed: Vec<NodeId>,
}

// The flags counted per component label (see [`LabelTally`]).
/// A message is in flight to the node or a notification of its links is pending.
const BUSY: usize = 0;
/// The node has a stale view of a neighbour, or is a [`SINK`].
const BAD: usize = 1;
/// The node is a sink (every neighbour higher), has neighbours and is not the
/// destination: no route leaves it.
const SINK: usize = 2;
/// The node is in an open incident.
const IN_INCIDENT: usize = 3;

/// Watches a run of the route family.
///
/// As for leader election ([`super::le::LeMonitor`]), per-node conditions are counted
/// per component label and kept current from what an event changed, so judging the
/// destination's component reads counts; with no sink in it, every node of it has a
/// route and the search for routed nodes is skipped.
pub struct RouteMonitor<H> {
    dest: NodeId,
    /// One record per topology change, in time order.
    pub records: Vec<RouteChangeRecord>,
    open: Vec<Open>,
    /// The destination's component found quiescent and illegal, once per incident.
    pub safety: SafetyLog,
    /// Reversal steps, in all.
    pub reversals: u64,
    /// Reversal steps taken in components without the destination.
    pub partitioned_reversals: u64,
    /// Node-seconds with a route to the destination.
    pub routed_node_time: f64,
    /// Stale views and lower neighbours per node (the counts of nodes an event changed
    /// wait until the destination's component is judged quiescent), and the heights
    /// the routes follow.
    views: ViewCounts<H>,
    groups: Buckets,
    tally: LabelTally<4>,
    /// Endpoints of the topology changes applied during the current event.
    changed: Vec<NodeId>,
    /// The nodes with a route (built at the start of the run).
    routed: Option<Routed<H>>,
    /// Scratch: nodes whose height changed in the current event, with their heights
    /// before it.
    raised: Vec<(NodeId, H)>,
    last_time: SimTime,
}

impl<H: Ord + Clone> RouteMonitor<H> {
    /// A monitor for routes to `dest`, with nothing recorded yet.
    pub fn new(dest: NodeId) -> Self {
        Self {
            dest,
            records: Vec::new(),
            open: Vec::new(),
            safety: SafetyLog::default(),
            reversals: 0,
            partitioned_reversals: 0,
            routed_node_time: 0.0,
            views: ViewCounts::default(),
            groups: Buckets::default(),
            tally: LabelTally::new(0),
            changed: Vec::new(),
            routed: None,
            raised: Vec::new(),
            last_time: SimTime::ZERO,
        }
    }

    fn busy_now<P>(world: &World<'_, P>, m: NodeId) -> bool {
        world.in_flight_to[m as usize] != 0 || world.pending_notify_at[m as usize] != 0
    }

    /// Re-derives `v`'s flags from its counts.
    fn refresh(&mut self, graph: &ComponentTracker, v: NodeId) {
        let label = graph.label(v);
        let sink = self.views.lower(v) == 0 && v != self.dest && !graph.neighbours(v).is_empty();
        self.tally.set(v, label, SINK, sink);
        self.tally
            .set(v, label, BAD, sink || self.views.stale(v) > 0);
    }

    /// Nodes with a route now, the destination included.
    fn routed_now(&self) -> usize {
        self.routed.as_ref().map_or(0, Routed::count)
    }

    /// How many nodes have a route, by a search from the destination upwards through
    /// each link to its higher end: the definition, against which debug builds check
    /// the incremental count.
    fn search_routed(&self, graph: &ComponentTracker) -> usize {
        let mut reached = vec![false; graph.node_count()];
        let mut stack = vec![self.dest];
        reached[self.dest as usize] = true;
        let mut count = 0;
        while let Some(u) = stack.pop() {
            count += 1;
            let hu = self.views.height(u);
            for &w in graph.neighbours(u) {
                if !reached[w as usize] && self.views.height(w) > hu {
                    reached[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        count
    }

    /// The verdict on the destination's component: `None` while it is busy, otherwise
    /// whether it is legal; an illegal state is counted at its onset.
    fn judge<P: RouteView<Height = H>>(&mut self, world: &World<'_, P>) -> Option<bool> {
        let graph = world.graph;
        let label = graph.label(self.dest);
        if self.tally.count(label, BUSY) == 0 {
            // The counts of the nodes events changed wait until now.
            self.views.settle_component(graph, label, world.nodes);
            let settled = std::mem::take(&mut self.views.settled);
            for &v in &settled {
                self.refresh(graph, v);
            }
            self.views.settled = settled;
        }
        if cfg!(debug_assertions) {
            let members = self.groups.members(label);
            assert_eq!(members.len(), graph.label_size(label));
            let quiet = members.iter().all(|&m| !Self::busy_now(world, m));
            assert_eq!(quiet, self.tally.count(label, BUSY) == 0, "busy count");
            if quiet {
                let legal = check_component(world.nodes, graph, members, self.dest).is_ok();
                assert_eq!(legal, self.tally.count(label, BAD) == 0, "legality");
            }
        }
        if self.tally.count(label, BUSY) > 0 {
            return None;
        }
        let in_incident = self.tally.count(label, IN_INCIDENT);
        if self.tally.count(label, BAD) == 0 {
            if in_incident > 0 {
                self.mark_incident(label, false);
            }
            return Some(true);
        }
        if in_incident == 0 {
            // The full check only at an incident's onset, for its description.
            let mut members = self.groups.members(label).to_vec();
            members.sort_unstable();
            if let Err((detail, nodes)) = check_component(world.nodes, graph, &members, self.dest) {
                self.safety.record(|| Violation {
                    kind: "no_route",
                    time_s: world.now.as_secs_f64(),
                    event_index: world.event_index,
                    nodes,
                    detail,
                });
            }
        }
        if (in_incident as usize) < graph.label_size(label) {
            self.mark_incident(label, true);
        }
        Some(false)
    }

    fn mark_incident(&mut self, label: u32, open: bool) {
        for &m in self.groups.members(label) {
            self.tally.set(m, label, IN_INCIDENT, open);
        }
    }

    fn integrate(&mut self, now: SimTime) {
        let elapsed = now.since(self.last_time).as_secs_f64();
        self.routed_node_time += elapsed * self.routed_now() as f64;
        self.last_time = now;
    }
}

/// Whether the destination's component `members` is legal (module docs); otherwise
/// why, and the nodes involved.
pub fn check_component<P: RouteView>(
    nodes: &[P],
    graph: &ComponentTracker,
    members: &[NodeId],
    dest: NodeId,
) -> Result<(), (String, Vec<NodeId>)> {
    for &m in members {
        let node = &nodes[m as usize];
        let sink = views_and_sink(
            m,
            &node.height(),
            graph.neighbours(m),
            |j| node.neighbour_height(j),
            |j| nodes[j as usize].height(),
        )?;
        if sink && m != dest && !graph.neighbours(m).is_empty() {
            return Err((
                format!("node {m} is a sink: it has no route to destination {dest}"),
                vec![m],
            ));
        }
    }
    Ok(())
}

impl<P: Protocol + RouteView> Observer<P> for RouteMonitor<P::Height> {
    fn on_start(&mut self, world: &World<'_, P>) {
        let graph = world.graph;
        let nodes = world.nodes;
        let n = nodes.len();
        self.views = ViewCounts::of_nodes(graph, nodes);
        self.groups = Buckets::components(graph);
        self.tally = LabelTally::new(n);
        for v in 0..n as NodeId {
            self.tally
                .set(v, graph.label(v), BUSY, Self::busy_now(world, v));
            self.refresh(graph, v);
        }
        self.routed = Some(Routed::new(graph, self.dest, &self.views));
        self.last_time = world.now;
        self.judge(world);
    }

    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        let graph = world.graph;
        self.changed.extend([a, b]);
        let touches = |x: NodeId, y: NodeId| touches(graph, (a, b), x, y);
        self.open.retain(|o| {
            let r = &mut self.records[o.record];
            if touches(r.change.a, r.change.b) {
                r.change.censored = true;
                false
            } else {
                true
            }
        });
        self.open.push(Open {
            record: self.records.len(),
            start: world.now,
            reversed: Vec::new(),
        });
        self.records.push(RouteChangeRecord {
            change: ChangeRecord::open(world.now.as_secs_f64(), change, a, b),
            partitioned: !graph.connected(a, self.dest) && !graph.connected(b, self.dest),
            reversals: 0,
            nodes_reversed: 0,
        });
    }

    fn after_event(&mut self, world: &World<'_, P>) {
        self.integrate(world.now);
        let graph = world.graph;
        let in_record = |r: &RouteChangeRecord, v: NodeId| {
            graph.connected(v, r.change.a) || graph.connected(v, r.change.b)
        };
        for &(sender, count) in world.sent_by {
            for o in &self.open {
                let r = &mut self.records[o.record];
                if in_record(r, sender) {
                    r.change.messages += count;
                }
            }
        }
        for m in graph.moves() {
            self.groups.relocate(m.node, m.from, m.to);
            self.tally.carry(m.node, m.from, m.to);
        }
        // Reversal steps, against the heights of the last event.
        self.raised.clear();
        for &v in world.touched {
            let now = world.nodes[v as usize].height();
            if now == *self.views.height(v) {
                continue;
            }
            self.reversals += 1;
            self.raised.push((v, self.views.height(v).clone()));
            if !graph.connected(v, self.dest) {
                self.partitioned_reversals += 1;
            }
            for o in &mut self.open {
                let r = &mut self.records[o.record];
                if in_record(r, v) {
                    r.reversals += 1;
                    if !o.reversed.contains(&v) {
                        o.reversed.push(v);
                        r.nodes_reversed += 1;
                    }
                }
            }
        }
        let changed = std::mem::take(&mut self.changed);
        self.views
            .record_event(graph, world.touched.iter().chain(&changed), world.nodes);
        let affected = std::mem::take(&mut self.views.affected);
        for &v in &affected {
            self.refresh(graph, v);
        }
        self.views.affected = affected;
        // Routes: a node's lower neighbours change only with its links, its height or a
        // neighbour's height.
        if let Some(routed) = &mut self.routed {
            routed.update(graph, &self.views, changed.iter().copied(), &self.raised);
        }
        if cfg!(debug_assertions) {
            assert_eq!(self.routed_now(), self.search_routed(graph), "routed nodes");
        }
        self.changed = changed;
        self.changed.clear();
        for &m in world.touched.iter().chain(world.disturbed) {
            self.tally
                .set(m, graph.label(m), BUSY, Self::busy_now(world, m));
        }
        if self.open.is_empty() && world.touched.is_empty() {
            return;
        }
        let verdict = self.judge(world);
        if verdict != Some(true) {
            return;
        }
        let dest = self.dest;
        let now = world.now;
        self.open.retain(|o| {
            let r = &mut self.records[o.record];
            let done = !r.partitioned
                && (graph.connected(r.change.a, dest) || graph.connected(r.change.b, dest));
            if done {
                r.change.converged = true;
                r.change.convergence_time_s = Some(now.since(o.start).as_secs_f64());
            }
            !done
        });
    }

    fn finish(&mut self, world: &World<'_, P>) {
        self.integrate(world.now);
        self.open.clear();
    }
}
