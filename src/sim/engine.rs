//! The event loop: one queue of events in (time, insertion order), each handed to the
//! protocol handler it concerns, with the effects applied through the network model
//! ([`super::network`]) and the workload ([`super::workload`]), and every observer told
//! after each event.
//!
//! # Semantics (also in the book's design page, "Network model")
//!
//! - **Links** come from a [`LinkTimeline`] (exact unit-disk events), rounded to the
//!   nanosecond. Both endpoints are told of a change, the lower id first.
//! - **Topology changes** `overlap` (default): applied at their trace time. `serialize`:
//!   queued and applied one at a time, each only when no message is in flight (the
//!   leader-election paper's one-change-at-a-time assumption); the simulated topology
//!   then lags the trace. A protocol that never goes quiet (RL in a component cut off
//!   from the token keeps reversing) freezes the topology; the changes still queued at
//!   the end are counted (`changes_pending_at_end`).
//! - **Timers** set by a protocol fire at `now + delay` as their own events.
//! - Messages, link breaks, detection delays and routing are the network model's
//!   ([`super::network`]); requests and CS durations the workload's
//!   ([`super::workload`]).
//! - A run whose messages multiply (more than [`MAX_IN_FLIGHT`] in flight) is stopped
//!   and reported as aborted, and so is a run whose simulated time barely advances
//!   (more than [`MAX_EVENTS_PER_STALL_WINDOW`] events within [`STALL_WINDOW`] of
//!   simulated time: near-zero delays and a protocol that never goes quiet, such as
//!   link reversal in a partition, which would otherwise take days to reach the end).

use super::RunCounters;
use super::network::{InFlight, Network, NetworkConfig, Parked, RouteStep, Tell};
use super::queue::EventQueue;
use super::time::{Duration, SimTime};
use super::workload::{Workload, WorkloadConfig};
use crate::NodeId;
use crate::protocol::{AppEvent, Ctx, Effect, Protocol, ProtocolConfig};
use crate::topology::components::ComponentTracker;
use crate::topology::events::{LinkChange, LinkTimeline};
use std::collections::VecDeque;

pub use super::network::ChangeMode;
pub use super::workload::RequestRecord;

/// Everything one run is configured with, but the protocol's own parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The network model.
    pub network: NetworkConfig,
    /// `None` for protocols without an application (leader election).
    pub workload: Option<WorkloadConfig>,
    /// Events after this time are not run.
    pub duration: SimTime,
    /// The run seed; delays and requests draw from streams derived from it.
    pub seed: u64,
    /// A scripted run ([`super::script`]): deliveries and application events at given
    /// times instead of drawn ones. `None` for every simulated run.
    pub script: Option<std::sync::Arc<super::Script>>,
    /// The most events the run may handle (`--max-events`); `None`: the default budget
    /// ([`default_event_budget`]).
    pub max_events: Option<u64>,
}

/// Events per node per simulated second a run may handle by default: 5.5 times the most
/// any of the 39,190 runs of the shipped studies and the demo handled (362, a
/// `le-malpani` run heading into a message storm; the busiest run that ended normally
/// handled 355), and a 180th of what Gafni–Bertsekas partial reversal with 1 µs delays
/// handles in a partitioned 3000 m × 3000 m square (366,000).
pub const EVENTS_PER_NODE_SECOND: u64 = 2_000;

/// The default budget never goes below this many events (a short run of few nodes).
pub const MIN_EVENT_BUDGET: u64 = 1_000_000;

/// The events a run of `nodes` nodes over `duration` may handle unless told otherwise:
/// [`EVENTS_PER_NODE_SECOND`] per node per simulated second, at least
/// [`MIN_EVENT_BUDGET`]. It bounds every run, where the stall guard and the storm guard
/// catch only runs whose time stops or whose messages multiply: a protocol that stays
/// busy at a steady, high rate (nanosecond delays that never quite stall) ends at the
/// budget, reported as aborted, instead of taking hours.
pub fn default_event_budget(nodes: usize, duration: SimTime) -> u64 {
    let node_seconds = nodes as f64 * duration.as_secs_f64();
    ((node_seconds * EVENTS_PER_NODE_SECOND as f64).min(u64::MAX as f64) as u64)
        .max(MIN_EVENT_BUDGET)
}

/// A run with more messages than this in flight at once is stopped and reported as
/// aborted: no algorithm here needs more than a few per link, and a protocol whose
/// messages multiply (a livelock) would otherwise exhaust memory and never finish.
pub const MAX_IN_FLIGHT: usize = 100_000;

/// The words that end the `aborted` reason of a run stopped by [`MAX_IN_FLIGHT`], and
/// only of such a run: the report's `stormed` indicator looks for them
/// ([`is_storm`]), so a run stopped by its event budget or a stall is not counted as
/// a storm.
pub const STORM_REASON: &str = "messages in flight (a message storm)";

/// Whether an `aborted` reason says the run was stopped as a message storm.
pub fn is_storm(reason: &str) -> bool {
    reason.ends_with(STORM_REASON)
}

/// A run with more events than this within [`STALL_WINDOW`] of simulated time is stopped
/// and reported as aborted: with (near-)zero message delays, a protocol that never goes
/// quiet (Gafni–Bertsekas or RL reversing in a component cut off from the destination or
/// the token) advances simulated time by a nanosecond per step and would take days to
/// reach the end of a run. Millisecond delays come nowhere near it (a wave of 1,600
/// nodes each messaging 20 neighbours is 32,000 events).
pub const MAX_EVENTS_PER_STALL_WINDOW: u64 = 1_000_000;

/// The window of simulated time over which [`MAX_EVENTS_PER_STALL_WINDOW`] is counted.
pub const STALL_WINDOW: Duration = Duration(1_000_000);

/// Runs of this many nodes or more prefetch the next event's node state
/// ([`crate::prefetch`]). Smaller networks' state stays in the caches, where prefetching
/// only costs instructions. Measured on this project's 2-core machine (`linkrev run`,
/// 300 s, the builds' runs taking turns), with prefetching forced on: `me-rl` 5–10%
/// slower at 200 nodes and even at 800; at 1,600 nodes the mean wall time 3–20% lower
/// across the eight algorithms.
pub const PREFETCH_FROM_NODES: usize = 1_000;

/// What observers see after each event.
pub struct World<'a, P> {
    /// Simulated time of the event just handled.
    pub now: SimTime,
    /// Index of the event just handled (0-based), for reproducers.
    pub event_index: u64,
    /// Every node's protocol state.
    pub nodes: &'a [P],
    /// The links currently up, as applied (in `serialize` mode it lags the trace).
    pub graph: &'a ComponentTracker,
    /// Messages scheduled for delivery to each node.
    pub in_flight_to: &'a [u32],
    /// Messages scheduled for delivery, in all.
    pub in_flight: usize,
    /// Tokens on a link or parked by the routing layer.
    pub tokens_in_flight: u32,
    /// Where those tokens are: the receiver of each one's hop, or where it is parked.
    pub token_places: &'a [NodeId],
    /// Nodes in their critical section.
    pub in_cs: u32,
    /// Link notifications scheduled but not yet delivered (detection delay).
    pub pending_notifications: usize,
    /// Per node: pending notifications of its links.
    pub pending_notify_at: &'a [u32],
    /// Nodes whose handlers ran during this event.
    pub touched: &'a [NodeId],
    /// Nodes whose messages in flight or pending link notifications changed during this
    /// event without necessarily running a handler (a message scheduled to them, or
    /// arriving and lost; a notification of their link scheduled, fired or cancelled),
    /// in no particular order, possibly repeated: with `touched`, the nodes whose
    /// component's quiescence may have changed.
    pub disturbed: &'a [NodeId],
    /// Messages sent during this event, as (sender, number of messages): one entry per
    /// hop sent, and one per route discovery charged (its flood and reply are sent in
    /// the discovering node's component).
    pub sent_by: &'a [(NodeId, u64)],
    /// Run-wide counts so far.
    pub counters: &'a RunCounters,
}

/// Metric collectors and safety monitors hook in here (see `observe`).
pub trait Observer<P: Protocol> {
    /// Whether the observer wants [`Observer::on_send`] (the simulator then keeps a
    /// list of the hops each event sends; the monitors do not need it).
    const NARRATES: bool = false;

    /// The run starts: nodes are in their initial states, nothing has happened.
    fn on_start(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
    /// A topology change is applied: called after the graph changed, before the
    /// endpoints are told.
    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        let _ = (change, a, b, world);
    }
    /// An event was handled and its effects applied.
    fn after_event(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
    /// The run ended; `world.now` is the configured end, for integrals over time.
    fn finish(&mut self, world: &World<'_, P>) {
        let _ = world;
    }
    /// An event is about to be handled (before any of its effects): what it is. Told
    /// only to an observer that [`Observer::NARRATES`] (the replay viewer); the
    /// monitors judge states, not events.
    fn before_event(&mut self, now: SimTime, what: Happening) {
        let _ = (now, what);
    }
    /// A hop `from → to` of a message of kind `kind` (`token`: it carries the token) was
    /// put on the link during the event just handled, to arrive at `arrives` (told, in
    /// sending order, just before [`Observer::after_event`], and only to an observer
    /// that [`Observer::NARRATES`]). Hops over one directed link arrive in the order
    /// they were sent, except that under `drop` a break restarts the order: a hop sent
    /// after it may arrive before one sent before it (which is lost).
    fn on_send(
        &mut self,
        from: NodeId,
        to: NodeId,
        kind: &'static str,
        token: bool,
        arrives: SimTime,
    ) {
        let _ = (from, to, kind, token, arrives);
    }
    /// The hop on the directed link `from → to` due now arrived: handed to `to`
    /// (`delivered`), or lost because the link broke under it (`drop`). Told to every
    /// observer (it costs nothing to one that ignores it).
    fn on_arrive(&mut self, from: NodeId, to: NodeId, delivered: bool) {
        let _ = (from, to, delivered);
    }
    /// Whether the observer has all it can take, so the run may stop here (asked only
    /// of an observer that [`Observer::NARRATES`]: the replay recorder, whose window
    /// has a size limit, stops the run when it is reached rather than simulating the
    /// rest for nothing).
    fn full(&self) -> bool {
        false
    }
}

/// What an event is, as [`Observer::before_event`] is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Happening {
    /// The next change of the trace is due (applied at once, or queued in `serialize`
    /// mode; [`Observer::on_change`] follows when it is applied).
    Change,
    /// A detected link break is told to its endpoints (detection delay).
    Notify(NodeId, NodeId),
    /// A hop arrives at `to` from `from`.
    Deliver(NodeId, NodeId),
    /// A node starts ([`Protocol::STARTS`]).
    Start(NodeId),
    /// A route discovery for a routed message waiting at the node finished.
    Discovered(NodeId),
    /// The node's application requests the critical section.
    Request(NodeId),
    /// The node's application leaves the critical section.
    Release(NodeId),
    /// A timer the node set fires.
    Timer(NodeId),
}

/// An observer that observes nothing.
impl<P: Protocol> Observer<P> for () {}

/// Two observers, told of everything in turn: the first, then the second.
impl<P: Protocol, A: Observer<P>, B: Observer<P>> Observer<P> for (&mut A, &mut B) {
    const NARRATES: bool = A::NARRATES || B::NARRATES;

    fn on_start(&mut self, world: &World<'_, P>) {
        self.0.on_start(world);
        self.1.on_start(world);
    }
    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        self.0.on_change(change, a, b, world);
        self.1.on_change(change, a, b, world);
    }
    fn after_event(&mut self, world: &World<'_, P>) {
        self.0.after_event(world);
        self.1.after_event(world);
    }
    fn finish(&mut self, world: &World<'_, P>) {
        self.0.finish(world);
        self.1.finish(world);
    }
    fn before_event(&mut self, now: SimTime, what: Happening) {
        self.0.before_event(now, what);
        self.1.before_event(now, what);
    }
    fn on_send(
        &mut self,
        from: NodeId,
        to: NodeId,
        kind: &'static str,
        token: bool,
        arrives: SimTime,
    ) {
        self.0.on_send(from, to, kind, token, arrives);
        self.1.on_send(from, to, kind, token, arrives);
    }
    fn on_arrive(&mut self, from: NodeId, to: NodeId, delivered: bool) {
        self.0.on_arrive(from, to, delivered);
        self.1.on_arrive(from, to, delivered);
    }
    fn full(&self) -> bool {
        (A::NARRATES && self.0.full()) || (B::NARRATES && self.1.full())
    }
}

/// A hop sent during an event, for [`Observer::on_send`].
struct Hop {
    from: NodeId,
    to: NodeId,
    kind: &'static str,
    token: bool,
    arrives: SimTime,
}

enum Event<M> {
    /// The next link event of the timeline is due.
    Topology(usize),
    /// Tell both endpoints of a detected link break, if still current.
    Notify {
        a: NodeId,
        b: NodeId,
        generation: u32,
    },
    Deliver(InFlight<M>),
    /// Start a node ([`Protocol::STARTS`]).
    Start(NodeId),
    /// A route discovery for a routed message finished: forward it again.
    Discovered(Parked<M>),
    Request(NodeId),
    Release(NodeId),
    Timer {
        node: NodeId,
        tag: u64,
    },
}

/// One simulation run of protocol `P`.
pub struct Simulation<'t, P: Protocol> {
    config: RunConfig,
    timeline: &'t LinkTimeline,
    nodes: Vec<P>,
    network: Network<P::Msg>,
    workload: Workload,
    queue: EventQueue<Event<P::Msg>>,
    ctx: Ctx<P::Msg>,
    now: SimTime,
    counters: RunCounters,
    touched: Vec<NodeId>,
    disturbed: Vec<NodeId>,
    sent_by: Vec<(NodeId, u64)>,
    /// Hops sent during this event, kept only for an observer that
    /// [`Observer::NARRATES`].
    hops: Option<Vec<Hop>>,
    /// `serialize` mode: trace changes waiting for the network to be quiet.
    pending_changes: VecDeque<(LinkChange, NodeId, NodeId)>,
    /// Whether each event prefetches the next one's node state
    /// ([`PREFETCH_FROM_NODES`]).
    prefetch: bool,
}

impl<'t, P: Protocol> Simulation<'t, P> {
    /// Sets up nodes in `P`'s legal initial state for the timeline's t = 0 graph, with
    /// `P`'s default configuration.
    pub fn new(timeline: &'t LinkTimeline, config: RunConfig) -> Self {
        Self::configured(timeline, config, &P::Config::default())
    }

    /// As [`Self::new`], with the protocol configured by `protocol`.
    pub fn configured(timeline: &'t LinkTimeline, config: RunConfig, protocol: &P::Config) -> Self {
        Self::starting(timeline, config, protocol, None)
    }

    /// As [`Self::configured`], with the nodes in `states` at t = 0 instead of the
    /// protocol's initial states (the slides' examples start mid-run).
    ///
    /// # Panics
    /// If `states` does not have one state per node of the timeline.
    pub fn starting(
        timeline: &'t LinkTimeline,
        config: RunConfig,
        protocol: &P::Config,
        states: Option<Vec<P>>,
    ) -> Self {
        let n = timeline.node_count;
        let nodes = match states {
            Some(states) => {
                assert_eq!(states.len(), n, "one starting state per node");
                states
            }
            None => P::initial_states(protocol, &timeline.initial_neighbours()),
        };
        let mut network = Network::new(timeline, config.network, config.seed);
        network.set_routing(protocol.routing());
        if let Some(script) = &config.script {
            network.set_script(script);
        }
        let workload = Workload::new(config.workload, n, config.seed);
        Self {
            config,
            timeline,
            nodes,
            network,
            workload,
            queue: EventQueue::with_capacity(4 * n + 16),
            ctx: Ctx::new(0, 0),
            now: SimTime::ZERO,
            counters: RunCounters::default(),
            touched: Vec::new(),
            disturbed: Vec::new(),
            sent_by: Vec::new(),
            hops: None,
            pending_changes: VecDeque::new(),
            prefetch: n >= PREFETCH_FROM_NODES,
        }
    }

    /// Turns prefetching ([`PREFETCH_FROM_NODES`]) on or off, whatever the network's
    /// size: it changes nothing but speed, which tests check with this.
    pub fn set_prefetch(&mut self, on: bool) {
        self.prefetch = on;
    }

    /// Every node's protocol state.
    pub fn nodes(&self) -> &[P] {
        &self.nodes
    }

    /// Run-wide counts so far.
    pub fn counters(&self) -> &RunCounters {
        &self.counters
    }

    /// Every CS request so far.
    pub fn requests(&self) -> &[RequestRecord] {
        self.workload.requests()
    }

    /// The links currently up, as applied.
    pub fn graph(&self) -> &ComponentTracker {
        self.network.graph()
    }

    /// Messages scheduled for delivery and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.network.in_flight()
    }

    fn world(&self, event_index: u64) -> World<'_, P> {
        World {
            now: self.now,
            event_index,
            nodes: &self.nodes,
            graph: self.network.graph(),
            in_flight_to: self.network.in_flight_to(),
            in_flight: self.network.in_flight(),
            tokens_in_flight: self.network.tokens_in_flight(),
            token_places: self.network.token_places(),
            in_cs: self.workload.in_cs(),
            pending_notifications: self.network.pending_notifications(),
            pending_notify_at: self.network.pending_notify_at(),
            touched: &self.touched,
            disturbed: &self.disturbed,
            sent_by: &self.sent_by,
            counters: &self.counters,
        }
    }

    /// Runs to the configured duration (or until nothing is left to do).
    pub fn run<O: Observer<P>>(&mut self, observer: &mut O) {
        self.hops = O::NARRATES.then(Vec::new);
        observer.on_start(&self.world(0));
        if P::STARTS {
            for node in 0..self.nodes.len() {
                let node = NodeId::try_from(node).expect("node count fits NodeId");
                self.queue.push(SimTime::ZERO, Event::Start(node));
            }
        }
        if !self.timeline.events.is_empty() {
            self.schedule_topology(0);
        }
        match self.config.script.clone() {
            Some(script) => {
                for &(at, node, event) in &script.app {
                    self.queue.push(
                        at,
                        match event {
                            AppEvent::RequestCs => Event::Request(node),
                            AppEvent::ReleaseCs => Event::Release(node),
                        },
                    );
                }
            }
            None => {
                for (at, node) in self.workload.first_requests() {
                    self.queue.push(at, Event::Request(node));
                }
            }
        }
        let (mut window_start, mut in_window) = (SimTime::ZERO, 0u64);
        let budget = self
            .config
            .max_events
            .unwrap_or_else(|| default_event_budget(self.nodes.len(), self.config.duration));
        while let Some(time) = self.queue.peek_time() {
            if self.counters.events >= budget {
                self.counters.aborted = Some(format!(
                    "stopped at {}: the event budget of {budget} events was reached (a run \
                     that never goes quiet; --max-events sets another budget)",
                    self.now
                ));
                break;
            }
            if time > self.config.duration {
                break;
            }
            let Some((time, event)) = self.queue.pop() else {
                break;
            };
            if time.since(window_start) > STALL_WINDOW {
                (window_start, in_window) = (time, 0);
            }
            in_window += 1;
            self.now = time;
            self.touched.clear();
            self.disturbed.clear();
            self.sent_by.clear();
            self.network.clear_moves();
            let index = self.counters.events;
            self.counters.events += 1;
            if O::NARRATES {
                observer.before_event(time, Self::happening(&event));
            }
            if self.prefetch {
                self.prefetch_next();
            }
            self.handle(event, observer, index);
            if let Some(hops) = &mut self.hops {
                for hop in hops.drain(..) {
                    observer.on_send(hop.from, hop.to, hop.kind, hop.token, hop.arrives);
                }
            }
            observer.after_event(&self.world(index));
            if O::NARRATES && observer.full() {
                self.counters.aborted = Some(format!(
                    "stopped at {}: the observer has all it can take",
                    self.now
                ));
                break;
            }
            if self.network.in_flight() > MAX_IN_FLIGHT {
                // A message storm (a protocol whose messages multiply) would otherwise fill
                // the machine's memory; stop and say so instead.
                self.counters.aborted = Some(format!(
                    "stopped at {}: more than {MAX_IN_FLIGHT} {STORM_REASON}",
                    self.now
                ));
                break;
            }
            if in_window > MAX_EVENTS_PER_STALL_WINDOW {
                self.counters.aborted = Some(format!(
                    "stopped at {}: more than {MAX_EVENTS_PER_STALL_WINDOW} events within {} ms \
                     of simulated time (time barely advances: near-zero delays and a \
                     protocol that never goes quiet)",
                    self.now,
                    STALL_WINDOW.0 / 1_000_000
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

    /// Asks for the state of the nodes the next queued event goes to to be loaded
    /// while this event is handled ([`crate::prefetch`]; it changes nothing else). The
    /// reads that find that state (the node's vector headers, its adjacency entry) are
    /// ordinary loads: only what they point to is prefetched.
    #[inline]
    fn prefetch_next(&self) {
        let (a, b) = match self.queue.peek() {
            Some(Event::Deliver(m)) => (m.to, None),
            Some(Event::Topology(i)) => match self.timeline.events.get(*i) {
                Some(e) => (e.a, Some(e.b)),
                None => return,
            },
            Some(&Event::Notify { a, b, .. }) => (a, Some(b)),
            Some(&Event::Start(node) | &Event::Request(node) | &Event::Release(node)) => {
                (node, None)
            }
            Some(&Event::Timer { node, .. }) => (node, None),
            Some(Event::Discovered(p)) => (p.at, None),
            None => return,
        };
        for node in std::iter::once(a).chain(b) {
            if let Some(state) = self.nodes.get(node as usize) {
                crate::prefetch::value(state);
                state.prefetch();
                self.network.prefetch_node(node);
            }
        }
    }

    fn happening(event: &Event<P::Msg>) -> Happening {
        match *event {
            Event::Topology(_) => Happening::Change,
            Event::Notify { a, b, .. } => Happening::Notify(a, b),
            Event::Deliver(ref m) => Happening::Deliver(m.from, m.to),
            Event::Start(node) => Happening::Start(node),
            Event::Discovered(ref p) => Happening::Discovered(p.at),
            Event::Request(node) => Happening::Request(node),
            Event::Release(node) => Happening::Release(node),
            Event::Timer { node, .. } => Happening::Timer(node),
        }
    }

    fn schedule_topology(&mut self, index: usize) {
        if let Some(e) = self.timeline.events.get(index) {
            self.queue
                .push(SimTime::from_secs_f64(e.time), Event::Topology(index));
        }
    }

    fn serialized(&self) -> bool {
        self.config.network.changes == ChangeMode::Serialize
    }

    fn handle<O: Observer<P>>(&mut self, event: Event<P::Msg>, observer: &mut O, index: u64) {
        match event {
            Event::Topology(i) => {
                self.schedule_topology(i + 1);
                let e = self.timeline.events[i];
                if self.serialized() {
                    self.pending_changes.push_back((e.change, e.a, e.b));
                    self.apply_pending(observer, index);
                } else {
                    self.apply_change(e.change, e.a, e.b, observer, index);
                }
            }
            Event::Notify { a, b, generation } => {
                self.disturbed.extend([a, b]);
                if self.network.notification_due(a, b, generation) {
                    self.notify(a, b, false);
                    if self.serialized() {
                        self.apply_pending(observer, index);
                    }
                }
            }
            Event::Deliver(m) => self.deliver(m, observer, index),
            Event::Start(node) => self.invoke(node, |p, ctx| p.on_start(ctx)),
            Event::Discovered(waiting) => {
                self.network.discovery_done(&waiting);
                self.forward(waiting.at, waiting.origin, waiting.dest, waiting.msg, false);
            }
            Event::Request(node) => {
                self.workload.request(node, self.now);
                self.invoke(node, |p, ctx| p.on_app(AppEvent::RequestCs, ctx));
            }
            Event::Release(node) => {
                let next = self.workload.release(node, self.now);
                self.invoke(node, |p, ctx| p.on_app(AppEvent::ReleaseCs, ctx));
                // A script says when requests come; the workload's draws do not.
                if let Some(at) = next.filter(|_| self.config.script.is_none()) {
                    self.queue.push(at, Event::Request(node));
                }
            }
            Event::Timer { node, tag } => self.invoke(node, |p, ctx| p.on_timer(tag, ctx)),
        }
    }

    /// `serialize` mode: applies queued changes while the network is quiet.
    fn apply_pending<O: Observer<P>>(&mut self, observer: &mut O, index: u64) {
        while self.network.is_quiet() {
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
        self.disturbed.extend([a, b]);
        let tell = self.network.apply_change(self.now, change, a, b);
        observer.on_change(change, a, b, &self.world(index));
        match tell {
            Tell::Now => self.notify(a, b, change == LinkChange::Up),
            Tell::Later { at, generation } => {
                self.network.notification_scheduled(a, b);
                self.queue.push(at, Event::Notify { a, b, generation });
            }
            Tell::Nothing => {}
        }
        if change == LinkChange::Up && self.network.has_parked() {
            for p in self.network.unpark_ready() {
                self.forward(p.at, p.origin, p.dest, p.msg, p.flooded);
            }
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

    fn deliver<O: Observer<P>>(&mut self, m: InFlight<P::Msg>, observer: &mut O, index: u64) {
        self.disturbed.push(m.to);
        let delivered = self.network.arrive(&m, &mut self.counters);
        observer.on_arrive(m.from, m.to, delivered);
        if delivered {
            match m.route {
                Some((origin, dest)) if dest != m.to => {
                    self.forward(m.to, origin, dest, m.msg, false)
                }
                Some((origin, _)) => self.invoke(m.to, |p, ctx| p.on_message(origin, m.msg, ctx)),
                None => self.invoke(m.to, |p, ctx| p.on_message(m.from, m.msg, ctx)),
            }
        }
        if self.serialized() && self.network.in_flight() == 0 {
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
                    match self.network.scripted_route(node, to) {
                        None => self.forward(node, node, to, msg, false),
                        // Scripted: it waits at its origin, as in flight, until its
                        // step, then is forwarded (`Event::Discovered` does that).
                        Some(at) => {
                            let waiting = Parked {
                                at: node,
                                origin: node,
                                dest: to,
                                msg,
                                flooded: false,
                            };
                            self.network.discovery_started(&waiting);
                            if let Some(at) = at {
                                self.queue.push(at, Event::Discovered(waiting));
                            }
                        }
                    }
                }
                Effect::EnterCs => {
                    self.counters.cs_entries += 1;
                    let release = self.workload.enter(node, self.now);
                    // A script says when the CS is released.
                    if let Some(release) = release.filter(|_| self.config.script.is_none()) {
                        self.queue.push(release, Event::Release(node));
                    }
                }
                Effect::SetTimer { delay_ns, tag } => self.queue.push(
                    self.now.after(Duration(delay_ns)),
                    Event::Timer { node, tag },
                ),
            }
        }
        self.ctx = ctx;
    }

    /// Sends one hop over the direct link `from → to` (lost if that link is down).
    fn send_hop(&mut self, from: NodeId, to: NodeId, route: Option<(NodeId, NodeId)>, msg: P::Msg) {
        self.sent_by.push((from, 1));
        let sent = self
            .network
            .send_hop(self.now, from, to, route, msg, &mut self.counters);
        if let Some((at, m)) = sent {
            if let Some(hops) = &mut self.hops {
                use crate::protocol::Message as _;
                hops.push(Hop {
                    from,
                    to,
                    kind: m.msg.kind(),
                    token: m.msg.carries_token(),
                    arrives: at,
                });
            }
            self.disturbed.push(m.to);
            self.queue.push(at, Event::Deliver(m));
        }
    }

    /// Moves a routed message one hop on from `at`, parks it while there is no path, or
    /// holds it while its route is discovered (`flooded`: a failed discovery was already
    /// charged for it).
    fn forward(&mut self, at: NodeId, origin: NodeId, dest: NodeId, msg: P::Msg, flooded: bool) {
        let step = self
            .network
            .route(self.now, at, origin, dest, flooded, &mut self.counters);
        let mut waiting = Parked {
            at,
            origin,
            dest,
            msg,
            flooded,
        };
        match step {
            RouteStep::Hop(hop) => self.send_hop(at, hop, Some((origin, dest)), waiting.msg),
            RouteStep::NoPath { messages } => {
                if messages > 0 {
                    self.sent_by.push((at, messages));
                    waiting.flooded = true;
                }
                self.network.park(waiting);
            }
            RouteStep::Discovered { ready_at, messages } => {
                self.sent_by.push((at, messages));
                self.network.discovery_started(&waiting);
                self.queue.push(ready_at, Event::Discovered(waiting));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_event_budget_grows_with_nodes_and_time_from_a_floor() {
        let secs = SimTime::from_secs_f64;
        assert_eq!(default_event_budget(50, secs(900.0)), 90_000_000);
        assert_eq!(default_event_budget(2, secs(1.0)), MIN_EVENT_BUDGET);
        // The largest run allowed (a million nodes, 1e9 s) does not overflow.
        assert_eq!(
            default_event_budget(1_000_000, secs(1e9)),
            2_000_000_000_000_000_000
        );
    }

    use crate::protocol::Message;
    use crate::sim::{DelayModel, LinkBreak};
    use crate::topology::events::{LinkEvent, LinkInterval};

    /// An empty message.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Ping;

    impl Message for Ping {
        const KINDS: &'static [&'static str] = &["Ping"];
        fn kind_index(&self) -> usize {
            0
        }
    }

    /// Answers a link-up with a ping; logs what it sees, with the event time.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    struct Echo {
        log: Vec<(u64, &'static str, NodeId)>,
    }

    impl Protocol for Echo {
        type Msg = Ping;
        type Config = ();
        fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
            vec![Echo::default(); neighbours.len()]
        }
        fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Ping>) {
            self.log.push((ctx.event_time_ns(), "up", peer));
            ctx.send(peer, Ping);
        }
        fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<Ping>) {
            self.log.push((ctx.event_time_ns(), "down", peer));
        }
        fn on_message(&mut self, from: NodeId, _: Ping, ctx: &mut Ctx<Ping>) {
            self.log.push((ctx.event_time_ns(), "ping", from));
        }
    }

    fn timeline(events: &[(f64, LinkChange)]) -> LinkTimeline {
        LinkTimeline {
            range: 1.0,
            duration: 10.0,
            node_count: 2,
            intervals: Vec::<LinkInterval>::new(),
            events: events
                .iter()
                .map(|&(time, change)| LinkEvent {
                    time,
                    a: 0,
                    b: 1,
                    change,
                })
                .collect(),
        }
    }

    fn config(changes: ChangeMode, duration_s: f64) -> RunConfig {
        RunConfig {
            network: NetworkConfig {
                delay: DelayModel::Constant(Duration(2_000_000)),
                link_break: LinkBreak::Drain,
                detection_delay: Duration(0),
                changes,
            },
            workload: None,
            duration: SimTime::from_secs_f64(duration_s),
            seed: 1,
            script: None,
            max_events: None,
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn events_run_in_time_order_and_effects_become_events() {
        let tl = timeline(&[(1.0, LinkChange::Up), (1.001, LinkChange::Down)]);
        let mut sim = Simulation::<Echo>::new(&tl, config(ChangeMode::Overlap, 10.0));
        sim.run(&mut ());
        // Both told of the link at 1 s (lower id first), the break at 1.001 s, and
        // the pings sent at 1 s delivered 2 ms later over the broken link (`drain`).
        let up = 1000 * MS;
        assert_eq!(
            sim.nodes()[0].log,
            [
                (up, "up", 1),
                (up + MS, "down", 1),
                (up + 2 * MS, "ping", 1)
            ]
        );
        assert_eq!(sim.counters().events, 4);
        assert_eq!(sim.counters().messages, 2);
        assert_eq!(sim.counters().topology_changes, 2);
    }

    #[test]
    fn serialize_holds_a_change_until_nothing_is_in_flight() {
        let tl = timeline(&[(1.0, LinkChange::Up), (1.001, LinkChange::Down)]);
        let mut sim = Simulation::<Echo>::new(&tl, config(ChangeMode::Serialize, 10.0));
        sim.run(&mut ());
        // The break waits for both pings (delivered at 1.002 s) and is applied then.
        let up = 1000 * MS;
        assert_eq!(
            sim.nodes()[1].log,
            [
                (up, "up", 0),
                (up + 2 * MS, "ping", 0),
                (up + 2 * MS, "down", 0)
            ]
        );
    }

    #[test]
    fn nothing_after_the_duration_runs() {
        let tl = timeline(&[(1.0, LinkChange::Up), (5.0, LinkChange::Down)]);
        let mut sim = Simulation::<Echo>::new(&tl, config(ChangeMode::Overlap, 1.0015));
        sim.run(&mut ());
        // The pings arrive at 1.002 s, after the end; the break at 5 s never happens.
        assert_eq!(sim.nodes()[0].log, [(1000 * MS, "up", 1)]);
        assert_eq!(sim.counters().topology_changes, 1);
        assert_eq!(sim.in_flight(), 2);
    }
}
