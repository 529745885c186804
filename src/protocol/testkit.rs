//! A hand-driven network for tests: no time, no randomness, the test decides which
//! message is delivered when.
//!
//! Scenario tests (the slides' walk-throughs, hand-made RL and Raymond runs) use it to
//! replay an exact order of events; because protocols are sans-IO, the same node code runs
//! here and in the simulator. Links are FIFO per direction; a link failure notifies both
//! endpoints at once and leaves messages already in flight deliverable (the `drain`
//! semantics). Routed sends ([`Effect::SendRouted`]) are delivered as if the routing layer
//! were one perfect hop.

use super::{AppEvent, Ctx, Effect, Message, Protocol};
use crate::NodeId;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A set of nodes, the current links and the messages in flight.
#[derive(Debug)]
pub struct Harness<P: Protocol> {
    /// Every node's state, indexed by id; tests read and set it directly.
    pub nodes: Vec<P>,
    links: BTreeSet<(NodeId, NodeId)>,
    in_flight: BTreeMap<(NodeId, NodeId), VecDeque<P::Msg>>,
    ctx: Ctx<P::Msg>,
    /// The event time handed to handlers (tests set it to stamp, e.g., LE's τ).
    pub time_ns: u64,
    /// Every message sent, in order: (from, to, message).
    pub sent: Vec<(NodeId, NodeId, P::Msg)>,
    /// Nodes that entered the critical section, in order.
    pub cs_entries: Vec<NodeId>,
    /// Timers set and not yet fired: (node, due time ns, tag). Fire with [`Self::fire`].
    pub timers: Vec<(NodeId, u64, u64)>,
}

fn key(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

impl<P: Protocol> Harness<P> {
    /// Nodes in the protocol's legal initial state for the graph `links` on `n` nodes,
    /// with the default configuration.
    pub fn new(n: usize, links: &[(NodeId, NodeId)]) -> Self {
        Self::configured(&P::Config::default(), n, links)
    }

    /// As [`Self::new`], with a given configuration.
    pub fn configured(config: &P::Config, n: usize, links: &[(NodeId, NodeId)]) -> Self {
        let mut neighbours = vec![Vec::new(); n];
        for &(a, b) in links {
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        let mut harness = Self::with_states(P::initial_states(config, &neighbours), links);
        if P::STARTS {
            for node in 0..n {
                let node = NodeId::try_from(node).expect("node count fits NodeId");
                harness.run(node, |p, ctx| p.on_start(ctx));
            }
        }
        harness
    }

    /// Nodes in given states (for the slides' examples, which start mid-run).
    pub fn with_states(nodes: Vec<P>, links: &[(NodeId, NodeId)]) -> Self {
        Self {
            nodes,
            links: links.iter().map(|&(a, b)| key(a, b)).collect(),
            in_flight: BTreeMap::new(),
            ctx: Ctx::new(0, 0),
            time_ns: 0,
            sent: Vec::new(),
            cs_entries: Vec::new(),
            timers: Vec::new(),
        }
    }

    /// Whether link `a–b` is up (in either order).
    pub fn linked(&self, a: NodeId, b: NodeId) -> bool {
        self.links.contains(&key(a, b))
    }

    /// Forms link `a–b`: `a` is told first, then `b`.
    pub fn link_up(&mut self, a: NodeId, b: NodeId) {
        assert!(self.links.insert(key(a, b)), "link {a}-{b} already up");
        self.run(a, |p, ctx| p.on_link_up(b, ctx));
        self.run(b, |p, ctx| p.on_link_up(a, ctx));
    }

    /// Breaks link `a–b`: `a` is told first, then `b`; messages in flight stay.
    pub fn link_down(&mut self, a: NodeId, b: NodeId) {
        assert!(self.links.remove(&key(a, b)), "link {a}-{b} is not up");
        self.run(a, |p, ctx| p.on_link_down(b, ctx));
        self.run(b, |p, ctx| p.on_link_down(a, ctx));
    }

    /// Hands `node` an application event (request or release the CS).
    pub fn app(&mut self, node: NodeId, event: AppEvent) {
        self.run(node, |p, ctx| p.on_app(event, ctx));
    }

    /// Fires the `index`-th pending timer (the test decides when, as with messages).
    pub fn fire(&mut self, index: usize) {
        let (node, due, tag) = self.timers.remove(index);
        self.time_ns = self.time_ns.max(due);
        self.run(node, |p, ctx| p.on_timer(tag, ctx));
    }

    /// Messages in flight from `from` to `to`, oldest first.
    pub fn pending(&self, from: NodeId, to: NodeId) -> Vec<P::Msg> {
        self.in_flight
            .get(&(from, to))
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Number of messages sent and not yet delivered, over all links.
    pub fn in_flight_count(&self) -> usize {
        self.in_flight.values().map(VecDeque::len).sum()
    }

    /// Delivers the oldest message from `from` to `to`; returns it, or `None` if none.
    pub fn deliver(&mut self, from: NodeId, to: NodeId) -> Option<P::Msg> {
        let queue = self.in_flight.get_mut(&(from, to))?;
        let msg = queue.pop_front()?;
        if queue.is_empty() {
            self.in_flight.remove(&(from, to));
        }
        let copy = msg.clone();
        self.run(to, |p, ctx| p.on_message(from, msg, ctx));
        Some(copy)
    }

    /// Delivers messages until none is in flight, always the front of the lowest
    /// `(from, to)` queue, so the order is deterministic. Returns how many were
    /// delivered; panics after `limit` deliveries (a livelock in a test is a bug).
    pub fn deliver_all(&mut self, limit: usize) -> usize {
        let mut count = 0;
        while let Some((&(from, to), _)) = self.in_flight.iter().next() {
            assert!(count < limit, "still delivering after {limit} messages");
            self.deliver(from, to);
            count += 1;
        }
        count
    }

    fn run(&mut self, node: NodeId, handler: impl FnOnce(&mut P, &mut Ctx<P::Msg>)) {
        self.ctx.reset(node, self.time_ns);
        handler(&mut self.nodes[node as usize], &mut self.ctx);
        let effects: Vec<_> = self.ctx.drain().collect();
        for effect in effects {
            match effect {
                Effect::Send { to, msg } => {
                    assert!(
                        self.linked(node, to),
                        "node {node} sent {} to {to}, which is not a neighbour",
                        msg.kind()
                    );
                    self.sent.push((node, to, msg.clone()));
                    self.in_flight.entry((node, to)).or_default().push_back(msg);
                }
                Effect::SendRouted { to, msg } => {
                    self.sent.push((node, to, msg.clone()));
                    self.in_flight.entry((node, to)).or_default().push_back(msg);
                }
                Effect::EnterCs => self.cs_entries.push(node),
                Effect::SetTimer { delay_ns, tag } => {
                    self.timers.push((node, self.time_ns + delay_ns, tag))
                }
            }
        }
    }
}
