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

use super::le::ChangeRecord;
use super::safety::{Incidents, SafetyLog, Violation, views_and_sink};
use super::{components, touches};
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

/// Watches a run of the route family.
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
    heights: Vec<H>,
    routed_now: usize,
    /// The orientation may have changed since `routed_now` was counted.
    stale_routes: bool,
    last_time: SimTime,
    incidents: Incidents,
    scratch: Vec<bool>,
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
            heights: Vec::new(),
            routed_now: 0,
            stale_routes: true,
            last_time: SimTime::ZERO,
            incidents: Incidents::default(),
            scratch: Vec::new(),
        }
    }

    /// How many nodes have a route now: a search from the destination upwards, through
    /// each link to its higher end.
    fn count_routed<P: RouteView<Height = H>>(&mut self, world: &World<'_, P>) -> usize {
        let n = world.nodes.len();
        let reached = &mut self.scratch;
        reached.clear();
        reached.resize(n, false);
        let mut stack = vec![self.dest];
        reached[self.dest as usize] = true;
        let mut count = 0;
        while let Some(u) = stack.pop() {
            count += 1;
            let hu = &self.heights[u as usize];
            for &w in world.graph.neighbours(u) {
                if !reached[w as usize] && self.heights[w as usize] > *hu {
                    reached[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        count
    }

    /// The verdict on the destination's component: `None` while it is busy, otherwise
    /// whether it is legal; an illegal state is counted at its onset.
    fn judge<P: RouteView<Height = H>>(
        &mut self,
        world: &World<'_, P>,
        members: &[NodeId],
    ) -> Option<bool> {
        let busy = members.iter().any(|&m| {
            world.in_flight_to[m as usize] != 0 || world.pending_notify_at[m as usize] != 0
        });
        if busy {
            return None;
        }
        match check_component(world.nodes, world.graph, members, self.dest) {
            Ok(()) => {
                self.incidents.legal(members);
                Some(true)
            }
            Err((detail, nodes)) => {
                self.incidents.illegal(members, &mut self.safety, || {
                    Some(Violation {
                        kind: "no_route",
                        time_s: world.now.as_secs_f64(),
                        event_index: world.event_index,
                        nodes,
                        detail,
                    })
                });
                Some(false)
            }
        }
    }

    fn integrate(&mut self, now: SimTime) {
        let elapsed = now.since(self.last_time).as_secs_f64();
        self.routed_node_time += elapsed * self.routed_now as f64;
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
        self.heights = world.nodes.iter().map(RouteView::height).collect();
        self.routed_now = self.count_routed(world);
        self.stale_routes = false;
        self.last_time = world.now;
        let groups = components(world.graph);
        if let Some(members) = groups.iter().find(|g| g.contains(&self.dest)) {
            self.judge(world, members);
        }
    }

    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        self.stale_routes = true;
        let graph = world.graph;
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
        for &v in world.touched {
            let now = world.nodes[v as usize].height();
            if now == self.heights[v as usize] {
                continue;
            }
            self.heights[v as usize] = now;
            self.stale_routes = true;
            self.reversals += 1;
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
        if self.stale_routes {
            self.routed_now = self.count_routed(world);
            self.stale_routes = false;
        }
        if self.open.is_empty() && world.touched.is_empty() {
            return;
        }
        let dest = self.dest;
        let members: Vec<NodeId> = (0..world.nodes.len() as NodeId)
            .filter(|&v| graph.connected(v, dest))
            .collect();
        let verdict = self.judge(world, &members);
        if verdict != Some(true) {
            return;
        }
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
