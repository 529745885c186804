//! The event loop and the network model.
//!
//! # Semantics (also in README)
//!
//! - **Links** come from a [`LinkTimeline`] (exact unit-disk events), rounded to the
//!   nanosecond. Both endpoints are told of a change, the lower id first.
//! - **Messages** take one hop each: delivery = max(send + delay, previous delivery on the
//!   same directed link), so every directed link is FIFO. A message sent over a link that
//!   is physically down (possible while a break is not yet detected) is lost.
//! - **Link break** `drain` (default): messages already in flight are still delivered, as
//!   the papers assume reliable links; `drop`: they are lost and counted (tokens too).
//!   An optional detection delay postpones the endpoints' LinkDown notification; a break
//!   that heals before it is detected is never notified (the endpoints did not notice),
//!   though messages sent over the link while it was down are lost, under `drain` too.
//!   LinkUp is always notified at once.
//! - **Topology changes** `overlap` (default): applied at their trace time. `serialize`:
//!   queued and applied one at a time, each only when no message is in flight (the
//!   leader-election paper's one-change-at-a-time assumption); the simulated topology
//!   then lags the trace. A protocol that never goes quiet (RL in a component cut off
//!   from the token keeps reversing) freezes the topology; the changes still queued at
//!   the end are counted (`changes_pending_at_end`).
//! - **Routed sends** (the Raymond baseline): forwarded hop by hop along a shortest path
//!   of the current graph (ties to the lowest neighbour id), one message and one delay
//!   per hop; a message with no path waits at its current node until a link appears.
//! - **Timers** set by a protocol fire at `now + delay` as their own events.
//! - **Workload**: each node requests the critical section as a Poisson process of rate
//!   λ, with at most one outstanding request: the next gap is drawn when the CS is
//!   released. CS durations are constant or exponential. Request gaps and CS durations
//!   come from per-node streams, so every algorithm sees the same draws.

use super::delay::DelayModel;
use super::queue::EventQueue;
use super::seeds::{self, Purpose};
use super::time::{Duration, SimTime};
use crate::NodeId;
use crate::graph::{UNREACHED, breadth_first};
use crate::protocol::{AppEvent, Ctx, Effect, Message, Protocol};
use crate::topology::components::ComponentTracker;
use crate::topology::events::{LinkChange, LinkTimeline};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// What happens to messages in flight when their link breaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkBreak {
    #[default]
    Drain,
    Drop,
}

/// Whether topology changes overlap protocol activity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangeMode {
    #[default]
    Overlap,
    Serialize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetworkConfig {
    pub delay: DelayModel,
    pub link_break: LinkBreak,
    /// Time from a physical link break to the endpoints' LinkDown notification.
    pub detection_delay: Duration,
    pub changes: ChangeMode,
}

/// How long a node stays in its critical section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CsTime {
    Constant(Duration),
    Exponential { mean: Duration },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkloadConfig {
    /// Requests per second per node (λ).
    pub rate: f64,
    pub cs_time: CsTime,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunConfig {
    pub network: NetworkConfig,
    /// `None` for protocols without an application (leader election).
    pub workload: Option<WorkloadConfig>,
    /// Events after this time are not run.
    pub duration: SimTime,
    pub seed: u64,
}

/// Run-wide counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCounters {
    /// Events handled (topology changes, deliveries, requests, releases, notifications).
    pub events: u64,
    /// Protocol messages sent, one per hop.
    pub messages: u64,
    pub messages_lost: u64,
    pub tokens_lost: u64,
    /// Topology changes applied.
    pub topology_changes: u64,
    pub cs_entries: u64,
    /// `serialize` mode: changes still waiting for quiescence when the run ended.
    pub changes_pending_at_end: u64,
    /// Why the run stopped before its duration, if it did (see [`MAX_IN_FLIGHT`]).
    pub aborted: Option<String>,
}

/// A run with more messages than this in flight at once is stopped and reported as
/// aborted: no algorithm here needs more than a few per link, and a protocol whose
/// messages multiply (a livelock) would otherwise exhaust memory and never finish.
pub const MAX_IN_FLIGHT: usize = 100_000;

/// One critical-section request of the workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestRecord {
    pub node: NodeId,
    pub requested: SimTime,
    pub entered: Option<SimTime>,
    pub exited: Option<SimTime>,
}

/// What observers see after each event.
pub struct World<'a, P> {
    pub now: SimTime,
    /// Index of the event just handled (0-based), for reproducers.
    pub event_index: u64,
    pub nodes: &'a [P],
    /// The links currently up, as applied (in `serialize` mode it lags the trace).
    pub graph: &'a ComponentTracker,
    /// Messages scheduled for delivery to each node.
    pub in_flight_to: &'a [u32],
    pub in_flight: usize,
    pub tokens_in_flight: u32,
    /// Nodes in their critical section.
    pub in_cs: u32,
    /// Link notifications scheduled but not yet delivered (detection delay).
    pub pending_notifications: usize,
    /// Per node: pending notifications of its links.
    pub pending_notify_at: &'a [u32],
    /// Nodes whose handlers ran during this event.
    pub touched: &'a [NodeId],
    pub counters: &'a RunCounters,
}

/// Metric collectors and safety monitors hook in here (see `observe`).
pub trait Observer<P: Protocol> {
    fn on_start(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
    /// A topology change is applied: called after the graph changed, before the
    /// endpoints are told.
    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        let _ = (change, a, b, world);
    }
    fn after_event(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
    fn finish(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
}

/// An observer that observes nothing.
impl<P: Protocol> Observer<P> for () {}

enum Event<M> {
    /// The next link event of the timeline is due.
    Topology(usize),
    /// Tell both endpoints of a (possibly delayed) link change.
    Notify {
        a: NodeId,
        b: NodeId,
        generation: u32,
    },
    Deliver(InFlight<M>),
    Request(NodeId),
    Release(NodeId),
    Timer {
        node: NodeId,
        tag: u64,
    },
}

struct InFlight<M> {
    /// The hop's sender and receiver.
    from: NodeId,
    to: NodeId,
    /// Link epoch at sending: the message is lost under `drop` if the link broke since.
    epoch: u32,
    /// For routed messages: the original sender and the final destination.
    route: Option<(NodeId, NodeId)>,
    msg: M,
}

/// A routed message waiting for a path.
struct Parked<M> {
    at: NodeId,
    origin: NodeId,
    dest: NodeId,
    msg: M,
}

#[derive(Clone, Copy, Default)]
struct PairState {
    epoch: u32,
    /// Last delivery time scheduled per direction (lower → higher, higher → lower).
    last_delivery: [SimTime; 2],
    /// A LinkDown notification is scheduled (detection delay) and not yet delivered.
    down_pending: bool,
    /// Generation of the pending notification: a queued Notify with another generation
    /// was cancelled.
    notify_generation: u32,
}

fn pair(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

/// One simulation run of protocol `P`.
pub struct Simulation<'t, P: Protocol> {
    config: RunConfig,
    timeline: &'t LinkTimeline,
    nodes: Vec<P>,
    graph: ComponentTracker,
    pairs: FxHashMap<(NodeId, NodeId), PairState>,
    queue: EventQueue<Event<P::Msg>>,
    ctx: Ctx<P::Msg>,
    now: SimTime,
    counters: RunCounters,
    in_flight_to: Vec<u32>,
    in_flight: usize,
    tokens_in_flight: u32,
    in_cs: u32,
    pending_notifications: usize,
    pending_notify_at: Vec<u32>,
    touched: Vec<NodeId>,
    pending_changes: VecDeque<(LinkChange, NodeId, NodeId)>,
    parked: Vec<Parked<P::Msg>>,
    delay_rng: ChaCha8Rng,
    gap_rngs: Vec<ChaCha8Rng>,
    cs_rngs: Vec<ChaCha8Rng>,
    requests: Vec<RequestRecord>,
    outstanding: Vec<Option<usize>>,
    scratch_dist: Vec<u32>,
    /// Next hops computed since the last topology change: (at, destination) → hop.
    route_cache: FxHashMap<(NodeId, NodeId), Option<NodeId>>,
}

impl<'t, P: Protocol> Simulation<'t, P> {
    /// Sets up nodes in `P`'s legal initial state for the timeline's t = 0 graph, with
    /// `P`'s default configuration.
    pub fn new(timeline: &'t LinkTimeline, config: RunConfig) -> Self {
        Self::configured(timeline, config, &P::Config::default())
    }

    /// As [`Self::new`], with the protocol configured by `protocol`.
    pub fn configured(timeline: &'t LinkTimeline, config: RunConfig, protocol: &P::Config) -> Self {
        let n = timeline.node_count;
        let neighbours = timeline.initial_neighbours();
        let nodes = P::initial_states(protocol, &neighbours);
        let mut graph = ComponentTracker::new(n);
        for (a, b) in timeline.initial_links() {
            graph.add_edge(a, b);
        }
        Self {
            config,
            timeline,
            nodes,
            graph,
            pairs: FxHashMap::default(),
            queue: EventQueue::with_capacity(4 * n + 16),
            ctx: Ctx::new(0, 0),
            now: SimTime::ZERO,
            counters: RunCounters::default(),
            in_flight_to: vec![0; n],
            in_flight: 0,
            tokens_in_flight: 0,
            in_cs: 0,
            pending_notifications: 0,
            pending_notify_at: vec![0; n],
            touched: Vec::new(),
            pending_changes: VecDeque::new(),
            parked: Vec::new(),
            delay_rng: seeds::stream(config.seed, Purpose::Delay, 0),
            gap_rngs: (0..n as u64)
                .map(|i| seeds::stream(config.seed, Purpose::RequestGaps, i))
                .collect(),
            cs_rngs: (0..n as u64)
                .map(|i| seeds::stream(config.seed, Purpose::CsDurations, i))
                .collect(),
            requests: Vec::new(),
            outstanding: vec![None; n],
            scratch_dist: vec![u32::MAX; n],
            route_cache: FxHashMap::default(),
        }
    }

    pub fn nodes(&self) -> &[P] {
        &self.nodes
    }

    pub fn counters(&self) -> &RunCounters {
        &self.counters
    }

    pub fn requests(&self) -> &[RequestRecord] {
        &self.requests
    }

    /// The links currently up, as applied.
    pub fn graph(&self) -> &ComponentTracker {
        &self.graph
    }

    /// Messages scheduled for delivery and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn world(&self, event_index: u64) -> World<'_, P> {
        World {
            now: self.now,
            event_index,
            nodes: &self.nodes,
            graph: &self.graph,
            in_flight_to: &self.in_flight_to,
            in_flight: self.in_flight,
            tokens_in_flight: self.tokens_in_flight,
            in_cs: self.in_cs,
            pending_notifications: self.pending_notifications,
            pending_notify_at: &self.pending_notify_at,
            touched: &self.touched,
            counters: &self.counters,
        }
    }

    /// Runs to the configured duration (or until nothing is left to do).
    pub fn run<O: Observer<P>>(&mut self, observer: &mut O) {
        observer.on_start(&self.world(0));
        if !self.timeline.events.is_empty() {
            self.schedule_topology(0);
        }
        if let Some(w) = self.config.workload {
            for node in 0..self.nodes.len() as NodeId {
                let gap = self.request_gap(node, w.rate);
                self.queue
                    .push(SimTime::ZERO.after(gap), Event::Request(node));
            }
        }
        while let Some(time) = self.queue.peek_time() {
            if time > self.config.duration {
                break;
            }
            let Some((time, event)) = self.queue.pop() else {
                break;
            };
            self.now = time;
            self.touched.clear();
            let index = self.counters.events;
            self.counters.events += 1;
            self.handle(event, observer, index);
            observer.after_event(&self.world(index));
            if self.in_flight > MAX_IN_FLIGHT {
                // A message storm (a protocol whose messages multiply) would otherwise fill
                // the machine's memory; stop and say so instead.
                self.counters.aborted = Some(format!(
                    "stopped at {}: more than {MAX_IN_FLIGHT} messages in flight (a message storm)",
                    self.now
                ));
                break;
            }
        }
        self.counters.changes_pending_at_end = self.pending_changes.len() as u64;
        // Observers integrate over the whole run, up to its configured end.
        self.now = self.config.duration;
        let index = self.counters.events;
        observer.finish(&self.world(index));
    }

    fn schedule_topology(&mut self, index: usize) {
        if let Some(e) = self.timeline.events.get(index) {
            self.queue
                .push(SimTime::from_secs_f64(e.time), Event::Topology(index));
        }
    }

    fn handle<O: Observer<P>>(&mut self, event: Event<P::Msg>, observer: &mut O, index: u64) {
        match event {
            Event::Topology(i) => {
                self.schedule_topology(i + 1);
                let e = self.timeline.events[i];
                match self.config.network.changes {
                    ChangeMode::Overlap => self.apply_change(e.change, e.a, e.b, observer, index),
                    ChangeMode::Serialize => {
                        self.pending_changes.push_back((e.change, e.a, e.b));
                        self.apply_pending(observer, index);
                    }
                }
            }
            Event::Notify { a, b, generation } => {
                let state = self.pairs.entry(pair(a, b)).or_default();
                if state.down_pending && state.notify_generation == generation {
                    state.down_pending = false;
                    self.pending_notifications -= 1;
                    self.pending_notify_at[a as usize] -= 1;
                    self.pending_notify_at[b as usize] -= 1;
                    self.notify(a, b, false);
                    if self.config.network.changes == ChangeMode::Serialize {
                        self.apply_pending(observer, index);
                    }
                }
            }
            Event::Deliver(m) => self.deliver(m, observer, index),
            Event::Request(node) => self.request(node),
            Event::Release(node) => self.release(node),
            Event::Timer { node, tag } => self.invoke(node, |p, ctx| p.on_timer(tag, ctx)),
        }
    }

    /// `serialize` mode: applies queued changes while nothing is in flight and no
    /// notification is pending.
    fn apply_pending<O: Observer<P>>(&mut self, observer: &mut O, index: u64) {
        while self.in_flight == 0 && self.pending_notifications == 0 {
            let Some((change, a, b)) = self.pending_changes.pop_front() else {
                break;
            };
            self.apply_change(change, a, b, observer, index);
        }
    }

    fn apply_change<O: Observer<P>>(
        &mut self,
        change: LinkChange,
        a: NodeId,
        b: NodeId,
        observer: &mut O,
        index: u64,
    ) {
        self.counters.topology_changes += 1;
        self.route_cache.clear();
        let up = change == LinkChange::Up;
        let detection = self.config.network.detection_delay;
        let drop = self.config.network.link_break == LinkBreak::Drop;
        let state = self.pairs.entry(pair(a, b)).or_default();
        // What the endpoints must be told: nothing when a break heals before it was
        // detected (the endpoints never noticed it), at once for a link-up, and after the
        // detection delay for a break.
        enum Tell {
            Now,
            Later(u32),
            Nothing,
        }
        let tell = if up {
            self.graph.add_edge(a, b);
            if state.down_pending {
                state.down_pending = false;
                state.notify_generation = state.notify_generation.wrapping_add(1);
                self.pending_notifications -= 1;
                self.pending_notify_at[a as usize] -= 1;
                self.pending_notify_at[b as usize] -= 1;
                Tell::Nothing
            } else {
                Tell::Now
            }
        } else {
            self.graph.remove_edge(a, b);
            state.epoch = state.epoch.wrapping_add(1);
            if drop {
                // Messages in flight are lost, so they must not hold back new ones.
                state.last_delivery = [SimTime::ZERO; 2];
            }
            if detection.0 == 0 {
                Tell::Now
            } else {
                state.down_pending = true;
                state.notify_generation = state.notify_generation.wrapping_add(1);
                Tell::Later(state.notify_generation)
            }
        };
        observer.on_change(change, a, b, &self.world(index));
        match tell {
            Tell::Now => self.notify(a, b, up),
            Tell::Later(generation) => {
                self.pending_notifications += 1;
                self.pending_notify_at[a as usize] += 1;
                self.pending_notify_at[b as usize] += 1;
                self.queue.push(
                    self.now.after(detection),
                    Event::Notify { a, b, generation },
                );
            }
            Tell::Nothing => {}
        }
        if up && !self.parked.is_empty() {
            self.retry_parked();
        }
    }

    fn notify(&mut self, a: NodeId, b: NodeId, up: bool) {
        for (node, peer) in [(a, b), (b, a)] {
            self.invoke(node, |p, ctx| {
                if up {
                    p.on_link_up(peer, ctx)
                } else {
                    p.on_link_down(peer, ctx)
                }
            });
        }
    }

    fn request(&mut self, node: NodeId) {
        self.outstanding[node as usize] = Some(self.requests.len());
        self.requests.push(RequestRecord {
            node,
            requested: self.now,
            entered: None,
            exited: None,
        });
        self.invoke(node, |p, ctx| p.on_app(AppEvent::RequestCs, ctx));
    }

    fn release(&mut self, node: NodeId) {
        self.in_cs -= 1;
        if let Some(i) = self.outstanding[node as usize].take() {
            self.requests[i].exited = Some(self.now);
        }
        self.invoke(node, |p, ctx| p.on_app(AppEvent::ReleaseCs, ctx));
        if let Some(w) = self.config.workload {
            let gap = self.request_gap(node, w.rate);
            self.queue.push(self.now.after(gap), Event::Request(node));
        }
    }

    fn request_gap(&mut self, node: NodeId, rate: f64) -> Duration {
        let u: f64 = self.gap_rngs[node as usize].random();
        Duration::from_secs_f64(-(1.0 - u).ln() / rate)
    }

    fn cs_duration(&mut self, node: NodeId, cs: CsTime) -> Duration {
        match cs {
            CsTime::Constant(d) => d,
            CsTime::Exponential { mean } => {
                let u: f64 = self.cs_rngs[node as usize].random();
                Duration::from_secs_f64(-(1.0 - u).ln() * mean.as_secs_f64())
            }
        }
    }

    fn deliver<O: Observer<P>>(&mut self, m: InFlight<P::Msg>, observer: &mut O, index: u64) {
        self.in_flight -= 1;
        self.in_flight_to[m.to as usize] -= 1;
        let token = m.msg.carries_token();
        if token {
            self.tokens_in_flight -= 1;
        }
        let broken = self
            .pairs
            .get(&pair(m.from, m.to))
            .is_some_and(|s| s.epoch != m.epoch);
        if broken && self.config.network.link_break == LinkBreak::Drop {
            self.counters.messages_lost += 1;
            self.counters.tokens_lost += u64::from(token);
        } else {
            match m.route {
                Some((origin, dest)) if dest != m.to => self.forward(m.to, origin, dest, m.msg),
                Some((origin, _)) => self.invoke(m.to, |p, ctx| p.on_message(origin, m.msg, ctx)),
                None => self.invoke(m.to, |p, ctx| p.on_message(m.from, m.msg, ctx)),
            }
        }
        if self.config.network.changes == ChangeMode::Serialize && self.in_flight == 0 {
            self.apply_pending(observer, index);
        }
    }

    /// Runs one handler and applies its effects.
    fn invoke(&mut self, node: NodeId, handler: impl FnOnce(&mut P, &mut Ctx<P::Msg>)) {
        self.touched.push(node);
        let mut ctx = std::mem::replace(&mut self.ctx, Ctx::new(0, 0));
        ctx.reset(node, self.now.nanos());
        handler(&mut self.nodes[node as usize], &mut ctx);
        for effect in ctx.drain() {
            match effect {
                Effect::Send { to, msg } => self.send_hop(node, to, None, msg),
                Effect::SendRouted { to, msg } => {
                    if to == node {
                        continue;
                    }
                    self.forward(node, node, to, msg)
                }
                Effect::EnterCs => self.enter_cs(node),
                Effect::SetTimer { delay_ns, tag } => self.queue.push(
                    self.now.after(Duration(delay_ns)),
                    Event::Timer { node, tag },
                ),
            }
        }
        self.ctx = ctx;
    }

    fn enter_cs(&mut self, node: NodeId) {
        self.in_cs += 1;
        self.counters.cs_entries += 1;
        if let Some(i) = self.outstanding[node as usize] {
            self.requests[i].entered = Some(self.now);
        }
        if let Some(w) = self.config.workload {
            let d = self.cs_duration(node, w.cs_time);
            self.queue.push(self.now.after(d), Event::Release(node));
        }
    }

    /// Sends one hop over the direct link `from → to`, or loses the message if that link
    /// is physically down.
    fn send_hop(&mut self, from: NodeId, to: NodeId, route: Option<(NodeId, NodeId)>, msg: P::Msg) {
        self.counters.messages += 1;
        let token = msg.carries_token();
        let key = pair(from, to);
        if !self.graph.neighbours(from).contains(&to) {
            self.counters.messages_lost += 1;
            self.counters.tokens_lost += u64::from(token);
            return;
        }
        let delay = self.config.network.delay.sample(&mut self.delay_rng);
        let state = self.pairs.entry(key).or_default();
        let dir = usize::from(from > to);
        let at = self.now.after(delay).max(state.last_delivery[dir]);
        state.last_delivery[dir] = at;
        let epoch = state.epoch;
        self.in_flight += 1;
        self.in_flight_to[to as usize] += 1;
        if token {
            self.tokens_in_flight += 1;
        }
        self.queue.push(
            at,
            Event::Deliver(InFlight {
                from,
                to,
                epoch,
                route,
                msg,
            }),
        );
    }

    /// Moves a routed message one hop on from `at`, or parks it while there is no path.
    fn forward(&mut self, at: NodeId, origin: NodeId, dest: NodeId, msg: P::Msg) {
        match self.next_hop(at, dest) {
            Some(hop) => self.send_hop(at, hop, Some((origin, dest)), msg),
            None => {
                if msg.carries_token() {
                    // A parked token is still in the system: count it as in flight.
                    self.tokens_in_flight += 1;
                }
                self.parked.push(Parked {
                    at,
                    origin,
                    dest,
                    msg,
                });
            }
        }
    }

    fn retry_parked(&mut self) {
        let parked = std::mem::take(&mut self.parked);
        for p in parked {
            if p.msg.carries_token() {
                self.tokens_in_flight -= 1;
            }
            self.forward(p.at, p.origin, p.dest, p.msg);
        }
    }

    /// First hop of a shortest path from `from` to `dest` in the current graph (ties to
    /// the lowest neighbour id), by breadth-first search from `dest`.
    fn next_hop(&mut self, from: NodeId, dest: NodeId) -> Option<NodeId> {
        if let Some(&hop) = self.route_cache.get(&(from, dest)) {
            return hop;
        }
        let hop = self.shortest_path_hop(from, dest);
        self.route_cache.insert((from, dest), hop);
        hop
    }

    /// The search behind [`Self::next_hop`] (cached until the topology changes).
    fn shortest_path_hop(&mut self, from: NodeId, dest: NodeId) -> Option<NodeId> {
        if !self.graph.connected(from, dest) {
            return None;
        }
        let dist = &mut self.scratch_dist;
        dist.fill(UNREACHED);
        let graph = &self.graph;
        breadth_first(|v| graph.neighbours(v), dest, Some(from), dist, |_, _| {});
        let target = dist[from as usize].checked_sub(1)?;
        self.graph
            .neighbours(from)
            .iter()
            .copied()
            .filter(|&w| dist[w as usize] == target)
            .min()
    }
}
