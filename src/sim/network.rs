//! The network model: which links are up, what a message sent over one costs and when
//! it arrives, what a link break does to messages in flight, when the endpoints learn of
//! a change, and how routed messages find their way.
//!
//! - **FIFO links**: delivery = max(send + delay, previous delivery on the same directed
//!   link), so every directed link is FIFO.
//! - **Epochs**: each link counts its breaks. A message remembers the epoch it was sent
//!   in; under `drop` a message whose link broke since is lost on arrival (tokens too),
//!   under `drain` it is delivered. A message sent over a link that is physically down
//!   (possible while a break is not yet detected) is lost at once.
//! - **Detection delay**: a break is told to the endpoints after the delay; a break that
//!   heals before it is detected is never told (the endpoints did not notice), though
//!   messages sent over the link while it was down are lost, under `drain` too. A link
//!   that comes up is told at once.
//! - **Routing** (the Raymond baseline; the protocol's configuration picks the mode,
//!   [`Routing`]): a routed message moves hop by hop, one message and one delay per hop;
//!   with no path it is parked where it is until a link appears, then tried again.
//!   - `oracle`: each hop is the first hop of a shortest path of the current graph
//!     (ties to the lowest neighbour id), known for free.
//!   - `discovery`: every node keeps a next hop per destination, learnt from
//!     discoveries. The sender of a message checks the whole cached route (following
//!     the next hops to the destination); a node forwarding it checks its own next hop.
//!     If a hop is missing or its link is down, that node discovers a route: a shortest
//!     path of the current graph, as the oracle's, whose nodes all learn their next hop.
//!     It costs one `RouteRequest` message per node of the discovering node's component
//!     (the flood) and one `RouteReply` per hop of the path, and the message leaves
//!     after `2 × hops` hop delays (the flood reaching the destination and the reply
//!     coming back). A discovery that finds no path costs the flood once per message;
//!     the message is parked and tried again, uncharged, whenever a link appears, and
//!     discovers again once a path exists. Cached hops are never expired: a route is
//!     used while its links are up, even when a shorter one has appeared.
//!
//! The model never schedules anything itself: it answers the event loop
//! ([`super::engine`]) with what to schedule and when, so each rule is testable here
//! without a protocol.

use super::RunCounters;
use super::delay::DelayModel;
use super::routes::ShortestPaths;
use super::seeds::{self, Purpose};
use super::time::{Duration, SimTime};
use crate::NodeId;
use crate::protocol::{Message, Routing};
use crate::topology::components::ComponentTracker;
use crate::topology::events::{LinkChange, LinkTimeline};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

/// What happens to messages in flight when their link breaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkBreak {
    /// Messages already in flight are still delivered (the papers' reliable links).
    #[default]
    Drain,
    /// Messages in flight are lost and counted, tokens included.
    Drop,
}

/// Whether topology changes overlap protocol activity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangeMode {
    /// Changes are applied at their trace times.
    #[default]
    Overlap,
    /// A change is applied only when no message is in flight and no notification is
    /// pending (the leader-election paper's one change at a time).
    Serialize,
}

/// The network model's settings.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetworkConfig {
    /// Per-hop delay distribution.
    pub delay: DelayModel,
    /// What a break does to messages in flight.
    pub link_break: LinkBreak,
    /// Time from a physical link break to the endpoints' LinkDown notification.
    pub detection_delay: Duration,
    /// When topology changes are applied.
    pub changes: ChangeMode,
}

/// A message on one hop.
pub struct InFlight<M> {
    /// The hop's sender.
    pub from: NodeId,
    /// The hop's receiver.
    pub to: NodeId,
    /// Link epoch at sending: the message is lost under `drop` if the link broke since.
    epoch: u32,
    /// For routed messages: the original sender and the final destination.
    pub route: Option<(NodeId, NodeId)>,
    /// The protocol message.
    pub msg: M,
}

/// A routed message waiting for a path, or for a discovery to finish.
pub struct Parked<M> {
    /// Where it waits.
    pub at: NodeId,
    /// Its original sender.
    pub origin: NodeId,
    /// Its final destination.
    pub dest: NodeId,
    /// The protocol message.
    pub msg: M,
    /// `discovery` routing: a flood already looked for a path for it and found none (a
    /// parked message is charged one failed flood, not one per retry).
    pub flooded: bool,
}

/// What the routing layer does with a routed message at a node ([`Network::route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteStep {
    /// Send it over the link to this neighbour now.
    Hop(NodeId),
    /// There is no path to its destination: park it until a link appears. `messages`
    /// route-discovery messages were charged (a failed flood, `discovery` only).
    NoPath {
        /// Flood messages charged.
        messages: u64,
    },
    /// A route was discovered and charged (`messages` messages); the message leaves at
    /// `ready_at`.
    Discovered {
        /// When the discovery's reply is back and the message can go.
        ready_at: SimTime,
        /// Flood and reply messages charged.
        messages: u64,
    },
}

/// What the endpoints of a topology change must be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tell {
    /// Both endpoints, now.
    Now,
    /// Both endpoints at `at`, if the notification with this `generation` is still
    /// current then ([`Network::notification_due`]).
    Later {
        /// When the break is detected.
        at: SimTime,
        /// Which pending notification this is (a heal cancels it).
        generation: u32,
    },
    /// Nothing: a break healed before it was detected.
    Nothing,
}

/// The state of a link that is down but not forgotten: messages were still in flight on
/// it when it broke, or its break is told later. Links that are up keep the same facts
/// in [`LinkEnd`]s instead.
#[derive(Clone, Copy, Default)]
struct PairState {
    epoch: u32,
    /// Last delivery time scheduled per direction (lower → higher, higher → lower); a
    /// `drop` break forgets it.
    last_delivery: [SimTime; 2],
    /// Last delivery time scheduled in either direction, never forgotten: after it no
    /// message is in flight on the link.
    busy_until: SimTime,
    /// A LinkDown notification is scheduled (detection delay) and not yet delivered.
    down_pending: bool,
    /// Generation of the pending notification: a queued one with another generation
    /// is stale (the link healed, and perhaps broke again, since it was scheduled).
    notify_generation: u32,
}

impl PairState {
    /// Whether the link has no message in flight and no notification pending at `now`.
    /// A link in that state behaves as one never used, so its state can be forgotten:
    /// only the links in use carry state, and on large networks it stays small enough
    /// for the cache.
    fn idle_at(&self, now: SimTime) -> bool {
        !self.down_pending && self.busy_until < now
    }

    /// The state of a link that just went down, from its two ends (`low`: the end at
    /// the lower node id); no notification pending yet.
    fn from_ends(low: LinkEnd, high: LinkEnd) -> Self {
        Self {
            epoch: low.epoch,
            last_delivery: [low.last_delivery, high.last_delivery],
            busy_until: low.busy_until.max(high.busy_until),
            down_pending: false,
            notify_generation: 0,
        }
    }

    /// The two ends (lower node id first) of a link that comes up with this state.
    fn ends(&self) -> (LinkEnd, LinkEnd) {
        let end = |dir: usize| LinkEnd {
            last_delivery: self.last_delivery[dir],
            busy_until: self.busy_until,
            epoch: self.epoch,
            in_use: true,
        };
        (end(0), end(1))
    }
}

/// One end of a link that is up: the state of the direction leaving that end.
///
/// Kept beside the component tracker's adjacency lists, at the same index as the peer
/// in [`ComponentTracker::neighbours`], so that a send finds it in the list it already
/// scans to check the link is up, and the event loop can prefetch it with the node's
/// other state ([`Network::prefetch_node`]). A hash map of per-pair state measured a
/// tenth of `me-rl`'s time at 1,600 nodes in its lookups' cache misses.
#[derive(Clone, Copy, Default)]
struct LinkEnd {
    /// Last delivery time scheduled on this direction (FIFO); a `drop` break forgets it.
    last_delivery: SimTime,
    /// Latest delivery scheduled on the link since its state was last forgotten, as far
    /// as this end knows: its own sends and, if the link came back up with its state,
    /// the link's latest before. The link's own is the later of its two ends'.
    busy_until: SimTime,
    /// The link's break count (the same at both ends).
    epoch: u32,
    /// The link has state: a message went out on it since the state was last forgotten
    /// (from this end), or the state came back when the link came up again.
    in_use: bool,
}

fn pair(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

/// The links, the messages on them and the routing layer of one run.
pub struct Network<M> {
    config: NetworkConfig,
    graph: ComponentTracker,
    /// Per node, parallel to `graph.neighbours(node)`: the state of each link leaving it.
    ends: Vec<Vec<LinkEnd>>,
    /// Links that are down and keep their state: something was in flight when they
    /// broke, or their break is told later (every break, with a detection delay). The
    /// state moves back into `ends` when the link comes up.
    down_links: FxHashMap<(NodeId, NodeId), PairState>,
    /// Generation of the last link-down notification scheduled: unique over the run, so
    /// a stale notification never matches a later one.
    last_generation: u32,
    in_flight_to: Vec<u32>,
    in_flight: usize,
    /// Where each token not held by a node is: the receiver of its hop, or the node
    /// where it is parked (one entry per token).
    token_places: Vec<NodeId>,
    pending_notifications: usize,
    pending_notify_at: Vec<u32>,
    parked: Vec<Parked<M>>,
    delay_rng: ChaCha8Rng,
    /// Shortest paths of the current graph, for both routing modes.
    paths: ShortestPaths,
    routing: Routing,
    /// `discovery`: next hops learnt from discoveries, (node, destination) → hop; kept
    /// across topology changes and checked when used.
    learnt_routes: FxHashMap<(NodeId, NodeId), NodeId>,
    /// `discovery`: messages waiting for their discovery to finish.
    discovering: usize,
    /// Scripted delivery times per directed link (a replayed scenario), or `None`.
    script: Option<BTreeMap<(NodeId, NodeId), VecDeque<SimTime>>>,
    /// Scripted delivery times of routed messages per (origin, destination).
    scripted_routes: BTreeMap<(NodeId, NodeId), VecDeque<SimTime>>,
}

impl<M: Message> Network<M> {
    /// The t = 0 graph of `timeline`, nothing in flight; delays drawn from the run
    /// seed's delay stream.
    pub fn new(timeline: &LinkTimeline, config: NetworkConfig, seed: u64) -> Self {
        let n = timeline.node_count;
        let mut graph = ComponentTracker::new(n);
        let mut ends = vec![Vec::new(); n];
        for (a, b) in timeline.initial_links() {
            graph.add_edge(a, b);
            ends[a as usize].push(LinkEnd::default());
            ends[b as usize].push(LinkEnd::default());
        }
        // Observers follow component relabellings event by event (the engine clears
        // the log before each event).
        graph.log_moves();
        Self {
            config,
            graph,
            ends,
            down_links: FxHashMap::default(),
            last_generation: 0,
            in_flight_to: vec![0; n],
            in_flight: 0,
            token_places: Vec::new(),
            pending_notifications: 0,
            pending_notify_at: vec![0; n],
            parked: Vec::new(),
            delay_rng: seeds::stream(seed, Purpose::Delay, 0),
            paths: ShortestPaths::new(n),
            routing: Routing::Oracle,
            learnt_routes: FxHashMap::default(),
            discovering: 0,
            script: None,
            scripted_routes: BTreeMap::new(),
        }
    }

    /// Scripted delivery times ([`super::Script`]) instead of drawn delays. Routed
    /// messages then take the oracle's shortest paths whatever the protocol's routing
    /// mode, with no delay per hop (they wait at their origin until their time instead,
    /// [`Self::scripted_route`]).
    pub fn set_script(&mut self, script: &super::Script) {
        self.script = Some(script.deliveries.clone());
        self.scripted_routes = script.routed.clone();
        self.routing = Routing::Oracle;
    }

    /// In a scripted run, when the next routed message from `origin` to `dest` is to be
    /// delivered: `Some(None)` if the script has no time for it (it is never delivered
    /// within the run); `None` in a run that is not scripted.
    pub fn scripted_route(&mut self, origin: NodeId, dest: NodeId) -> Option<Option<SimTime>> {
        self.script.as_ref()?;
        Some(
            self.scripted_routes
                .get_mut(&(origin, dest))
                .and_then(VecDeque::pop_front),
        )
    }

    /// Sets how routed messages are carried (the protocol's choice; `oracle` unless set).
    pub fn set_routing(&mut self, routing: Routing) {
        self.routing = routing;
    }

    /// Forgets the component relabellings logged so far: an event starts.
    pub fn clear_moves(&mut self) {
        self.graph.clear_moves();
    }

    /// The links currently up, as applied.
    pub fn graph(&self) -> &ComponentTracker {
        &self.graph
    }

    /// Messages scheduled for delivery and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Per node: messages scheduled for delivery to it.
    pub fn in_flight_to(&self) -> &[u32] {
        &self.in_flight_to
    }

    /// Tokens on a link or parked by the routing layer.
    pub fn tokens_in_flight(&self) -> u32 {
        self.token_places.len() as u32
    }

    /// Where the tokens in flight are going: the receiver of each token's current hop,
    /// or the node where a routed token is parked.
    pub fn token_places(&self) -> &[NodeId] {
        &self.token_places
    }

    fn token_leaves(&mut self, place: NodeId) {
        match self.token_places.iter().position(|&p| p == place) {
            Some(at) => {
                self.token_places.swap_remove(at);
            }
            None => debug_assert!(false, "no token was in flight to {place}"),
        }
    }

    /// Link-down notifications scheduled and not yet delivered.
    pub fn pending_notifications(&self) -> usize {
        self.pending_notifications
    }

    /// Per node: pending notifications of its links.
    pub fn pending_notify_at(&self) -> &[u32] {
        &self.pending_notify_at
    }

    /// Whether nothing is in flight and no notification is pending (when `serialize`
    /// may apply the next change).
    pub fn is_quiet(&self) -> bool {
        self.in_flight == 0 && self.pending_notifications == 0 && self.discovering == 0
    }

    /// One more notification of link `a`–`b` is pending.
    fn add_pending(&mut self, a: NodeId, b: NodeId) {
        self.pending_notifications += 1;
        self.pending_notify_at[a as usize] += 1;
        self.pending_notify_at[b as usize] += 1;
    }

    /// One notification of link `a`–`b` is no longer pending (delivered or cancelled).
    fn remove_pending(&mut self, a: NodeId, b: NodeId) {
        self.pending_notifications -= 1;
        self.pending_notify_at[a as usize] -= 1;
        self.pending_notify_at[b as usize] -= 1;
    }

    /// Applies a topology change to the graph and the link's state at `now`; says what
    /// the endpoints must be told. A [`Tell::Later`] must be followed by
    /// [`Self::notification_scheduled`] once the notification is scheduled.
    pub fn apply_change(&mut self, now: SimTime, change: LinkChange, a: NodeId, b: NodeId) -> Tell {
        let key = pair(a, b);
        if change == LinkChange::Up {
            self.graph.add_edge(a, b);
            self.paths.changed(change, a, b);
            let restored = if self.down_links.is_empty() {
                None
            } else {
                self.down_links.remove(&key)
            };
            let tell = match restored {
                Some(state) if state.down_pending => {
                    // A break healed before it was detected: the endpoints never noticed.
                    // Its queued notification finds no pending one and is ignored.
                    self.remove_pending(a, b);
                    Tell::Nothing
                }
                _ => Tell::Now,
            };
            let (low, high) = restored
                .as_ref()
                .map_or_else(Default::default, PairState::ends);
            self.ends[key.0 as usize].push(low);
            self.ends[key.1 as usize].push(high);
            for node in [a, b] {
                debug_assert_eq!(
                    self.ends[node as usize].len(),
                    self.graph.neighbours(node).len()
                );
            }
            tell
        } else {
            let (at_a, at_b) = self
                .graph
                .remove_edge(a, b)
                .unwrap_or_else(|| panic!("link {a}–{b} went down but was not up"));
            self.paths.changed(change, a, b);
            let end_a = self.ends[a as usize].swap_remove(at_a);
            let end_b = self.ends[b as usize].swap_remove(at_b);
            let detection = self.config.detection_delay;
            if detection.0 == 0 && !(end_a.in_use || end_b.in_use) {
                // Never used since its state was last forgotten: nothing to keep.
                return Tell::Now;
            }
            let (low, high) = if a < b {
                (end_a, end_b)
            } else {
                (end_b, end_a)
            };
            let mut state = PairState::from_ends(low, high);
            if detection.0 == 0 && state.idle_at(now) {
                // Nothing on the link and nothing pending: as good as new.
                return Tell::Now;
            }
            state.epoch = state.epoch.wrapping_add(1);
            if self.config.link_break == LinkBreak::Drop {
                // Messages in flight are lost, so they must not hold back new ones.
                state.last_delivery = [SimTime::ZERO; 2];
            }
            let tell = if detection.0 == 0 {
                Tell::Now
            } else {
                self.last_generation = self.last_generation.wrapping_add(1);
                state.down_pending = true;
                state.notify_generation = self.last_generation;
                Tell::Later {
                    at: now.after(detection),
                    generation: self.last_generation,
                }
            };
            self.down_links.insert(key, state);
            tell
        }
    }

    /// The event loop scheduled the notification [`Self::apply_change`] asked for with
    /// [`Tell::Later`]: from now on it is pending (observers of the change itself see
    /// the network as it was before).
    pub fn notification_scheduled(&mut self, a: NodeId, b: NodeId) {
        self.add_pending(a, b);
    }

    /// A scheduled link-down notification fired: whether it is still current (it was
    /// not cancelled by a heal), in which case the endpoints are to be told now.
    pub fn notification_due(&mut self, a: NodeId, b: NodeId, generation: u32) -> bool {
        match self.down_links.get_mut(&pair(a, b)) {
            Some(state) if state.down_pending && state.notify_generation == generation => {
                state.down_pending = false;
                self.remove_pending(a, b);
                true
            }
            _ => false,
        }
    }

    /// Where `to` is in `from`'s list of links (and so its [`LinkEnd`]), if the link is
    /// up.
    fn link_index(&self, from: NodeId, to: NodeId) -> Option<usize> {
        self.graph.neighbours(from).iter().position(|&v| v == to)
    }

    /// The break count of link `a`–`b`, if it has state.
    fn epoch(&self, a: NodeId, b: NodeId) -> Option<u32> {
        match self.link_index(a, b) {
            Some(i) => Some(self.ends[a as usize][i].epoch),
            None => self.down_links.get(&pair(a, b)).map(|s| s.epoch),
        }
    }

    /// Sends one hop over the direct link `from → to` at `now`: the message and its
    /// delivery time, or `None` if the link is physically down (the message is lost and
    /// counted). Counts the message either way.
    pub fn send_hop(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        route: Option<(NodeId, NodeId)>,
        msg: M,
        counters: &mut RunCounters,
    ) -> Option<(SimTime, InFlight<M>)> {
        counters.count_message(msg.kind_index());
        let token = msg.carries_token();
        let Some(link) = self.link_index(from, to) else {
            counters.messages_lost += 1;
            counters.tokens_lost += u64::from(token);
            return None;
        };
        let planned = match &mut self.script {
            // A scripted routed message travels within its step (`scripted_route`).
            Some(_) if route.is_some() => now,
            // Beyond its link's script a message is never delivered within the run.
            Some(script) => script
                .get_mut(&(from, to))
                .and_then(VecDeque::pop_front)
                .unwrap_or(SimTime::NEVER),
            None => now.after(self.config.delay.sample(&mut self.delay_rng)),
        };
        let end = &mut self.ends[from as usize][link];
        let at = planned.max(end.last_delivery);
        end.last_delivery = at;
        end.busy_until = end.busy_until.max(at);
        end.in_use = true;
        let epoch = end.epoch;
        self.in_flight += 1;
        self.in_flight_to[to as usize] += 1;
        if token {
            self.token_places.push(to);
        }
        Some((
            at,
            InFlight {
                from,
                to,
                epoch,
                route,
                msg,
            },
        ))
    }

    /// Asks for `node`'s links in the component tracker, their state and its count of
    /// messages in flight to be loaded ([`crate::prefetch`]). Nothing for a node id out
    /// of range.
    #[inline]
    pub fn prefetch_node(&self, node: NodeId) {
        if let Some(count) = self.in_flight_to.get(node as usize) {
            crate::prefetch::value(count);
            crate::prefetch::slice(self.graph.neighbours(node));
            crate::prefetch::slice(&self.ends[node as usize]);
        }
    }

    /// A message reaches the end of its hop: whether it is delivered (`false`: its link
    /// broke since it was sent and breaks `drop`; it is lost and counted).
    pub fn arrive(&mut self, m: &InFlight<M>, counters: &mut RunCounters) -> bool {
        self.in_flight -= 1;
        self.in_flight_to[m.to as usize] -= 1;
        let token = m.msg.carries_token();
        if token {
            self.token_leaves(m.to);
        }
        // A link's state is forgotten only when nothing is in flight on it, so a
        // message's link has state when it arrives. Only `drop` needs its epoch.
        let broken = || self.epoch(m.from, m.to).is_some_and(|e| e != m.epoch);
        if self.config.link_break == LinkBreak::Drop && broken() {
            counters.messages_lost += 1;
            counters.tokens_lost += u64::from(token);
            false
        } else {
            true
        }
    }

    /// Parks a routed message at `at` until a link appears; a parked token still counts
    /// as in flight.
    pub fn park(&mut self, parked: Parked<M>) {
        if parked.msg.carries_token() {
            self.token_places.push(parked.at);
        }
        self.parked.push(parked);
    }

    /// Takes the parked messages that forwarding again could move, in the order they
    /// were parked (a link appeared). Under the oracle those are the ones whose node is
    /// now connected to their destination: forwarding any other would park it again in
    /// the same place, so it stays (on a large network, re-forwarding every waiting
    /// message at every link that came up was a search per message and link).
    /// Under discovery every one: a learnt first hop may move a message that has no path.
    pub fn unpark_ready(&mut self) -> Vec<Parked<M>> {
        let (graph, routing) = (&self.graph, self.routing);
        let can_move = |p: &Parked<M>| match routing {
            Routing::Oracle => p.at != p.dest && graph.connected(p.at, p.dest),
            Routing::Discovery => true,
        };
        if !self.parked.iter().any(can_move) {
            return Vec::new();
        }
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(can_move);
        self.parked = waiting;
        for p in &ready {
            if p.msg.carries_token() {
                self.token_leaves(p.at);
            }
        }
        ready
    }

    /// Whether any routed message waits for a path.
    pub fn has_parked(&self) -> bool {
        !self.parked.is_empty()
    }

    /// A discovery for `waiting` started: it is in flight until
    /// [`Self::discovery_done`] (a token in it still counts as in flight, at the node
    /// where it waits).
    pub fn discovery_started(&mut self, waiting: &Parked<M>) {
        self.discovering += 1;
        if waiting.msg.carries_token() {
            self.token_places.push(waiting.at);
        }
    }

    /// The discovery [`Self::discovery_started`] for `waiting` finished.
    pub fn discovery_done(&mut self, waiting: &Parked<M>) {
        self.discovering -= 1;
        if waiting.msg.carries_token() {
            self.token_leaves(waiting.at);
        }
    }

    /// What to do with a routed message from `origin` to `dest` that is at `at` now
    /// (module docs, "Routing"). `flooded`: a failed flood was already charged for it.
    pub fn route(
        &mut self,
        now: SimTime,
        at: NodeId,
        origin: NodeId,
        dest: NodeId,
        flooded: bool,
        counters: &mut RunCounters,
    ) -> RouteStep {
        match self.routing {
            Routing::Oracle => match self.next_hop(at, dest) {
                Some(hop) => RouteStep::Hop(hop),
                None => RouteStep::NoPath { messages: 0 },
            },
            Routing::Discovery => {
                if let Some(hop) = self.learnt_hop(at, dest, at == origin) {
                    return RouteStep::Hop(hop);
                }
                let flood = self.graph.component_size(at) as u64;
                let Some(path) = self.shortest_path(at, dest) else {
                    let messages = if flooded { 0 } else { flood };
                    counters.messages += messages;
                    counters.route_requests += messages;
                    return RouteStep::NoPath { messages };
                };
                let hops = path.len() as u64 - 1;
                counters.messages += flood + hops;
                counters.route_requests += flood;
                counters.route_replies += hops;
                for step in path.windows(2) {
                    self.learnt_routes.insert((step[0], dest), step[1]);
                }
                let mut ready_at = now;
                for _ in 0..2 * hops {
                    ready_at = ready_at.after(self.config.delay.sample(&mut self.delay_rng));
                }
                RouteStep::Discovered {
                    ready_at,
                    messages: flood + hops,
                }
            }
        }
    }

    /// `discovery`: the learnt next hop from `at` towards `dest`, if its link is up and,
    /// when `whole_route`, every further learnt hop to `dest` is too.
    fn learnt_hop(&self, at: NodeId, dest: NodeId, whole_route: bool) -> Option<NodeId> {
        let up = |a: NodeId, b: NodeId| self.graph.neighbours(a).contains(&b);
        let first = *self.learnt_routes.get(&(at, dest))?;
        if !up(at, first) {
            return None;
        }
        if whole_route {
            let mut node = first;
            // A route longer than the node count has a loop (hops learnt at different
            // times): treat it as broken.
            for _ in 0..self.graph.node_count() {
                if node == dest {
                    return Some(first);
                }
                let hop = *self.learnt_routes.get(&(node, dest))?;
                if !up(node, hop) {
                    return None;
                }
                node = hop;
            }
            return None;
        }
        Some(first)
    }

    /// A shortest path `from` … `dest` of the current graph, taking at each node the
    /// oracle's next hop (ties to the lowest id); `None` if there is none.
    fn shortest_path(&mut self, from: NodeId, dest: NodeId) -> Option<Vec<NodeId>> {
        self.paths.path(from, dest, &self.graph)
    }

    /// First hop of a shortest path from `from` to `dest` in the current graph (ties to
    /// the lowest neighbour id).
    pub fn next_hop(&mut self, from: NodeId, dest: NodeId) -> Option<NodeId> {
        self.paths.next_hop(from, dest, &self.graph)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::events::LinkInterval;
    use proptest::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Msg(bool);

    impl Message for Msg {
        const KINDS: &'static [&'static str] = &["Msg"];
        fn kind_index(&self) -> usize {
            0
        }
        fn carries_token(&self) -> bool {
            self.0
        }
    }

    impl Network<Msg> {
        /// Whether link `a`–`b` has state (it is not as good as new).
        fn has_state(&self, a: NodeId, b: NodeId) -> bool {
            match self.link_index(a, b) {
                Some(i) => {
                    let j = self.link_index(b, a).unwrap();
                    self.ends[a as usize][i].in_use || self.ends[b as usize][j].in_use
                }
                None => self.down_links.contains_key(&pair(a, b)),
            }
        }
    }

    /// `n` nodes with the links `up` from t = 0.
    fn network(n: usize, up: &[(NodeId, NodeId)], config: NetworkConfig) -> Network<Msg> {
        let timeline = LinkTimeline {
            range: 1.0,
            duration: 10.0,
            node_count: n,
            intervals: up
                .iter()
                .map(|&(a, b)| LinkInterval {
                    a,
                    b,
                    start: 0.0,
                    end: 10.0,
                })
                .collect(),
            events: Vec::new(),
        };
        Network::new(&timeline, config, 1)
    }

    fn config(delay: &str, link_break: LinkBreak, detection_ns: u64) -> NetworkConfig {
        NetworkConfig {
            delay: delay.parse().unwrap(),
            link_break,
            detection_delay: Duration(detection_ns),
            changes: ChangeMode::Overlap,
        }
    }

    #[test]
    fn each_directed_link_is_fifo() {
        let mut net = network(
            2,
            &[(0, 1)],
            config("uniform:1ms:20ms", LinkBreak::Drain, 0),
        );
        let mut counters = RunCounters::default();
        let mut last = SimTime::ZERO;
        for i in 0..200u64 {
            let now = SimTime::ZERO.after(Duration(i * 100_000));
            let (at, m) = net
                .send_hop(now, 0, 1, None, Msg(false), &mut counters)
                .unwrap();
            assert!(at >= last && at >= now, "message {i} overtook");
            last = at;
            assert_eq!((m.from, m.to), (0, 1));
        }
        assert_eq!(net.in_flight(), 200);
        assert_eq!(net.in_flight_to(), [0, 200]);
        assert_eq!(counters.messages, 200);
    }

    #[test]
    fn a_message_over_a_down_link_is_lost_at_once() {
        let mut net = network(3, &[(0, 1)], config("const:1ms", LinkBreak::Drain, 0));
        let mut counters = RunCounters::default();
        assert!(
            net.send_hop(SimTime::ZERO, 0, 2, None, Msg(true), &mut counters)
                .is_none()
        );
        assert_eq!(
            (
                counters.messages,
                counters.messages_lost,
                counters.tokens_lost
            ),
            (1, 1, 1)
        );
        assert_eq!(net.in_flight(), 0);
    }

    #[test]
    fn a_break_drains_or_drops_what_is_in_flight() {
        for (mode, delivered) in [(LinkBreak::Drain, true), (LinkBreak::Drop, false)] {
            let mut net = network(2, &[(0, 1)], config("const:5ms", mode, 0));
            let mut counters = RunCounters::default();
            let (_, m) = net
                .send_hop(SimTime::ZERO, 0, 1, None, Msg(true), &mut counters)
                .unwrap();
            assert_eq!(net.tokens_in_flight(), 1);
            let tell = net.apply_change(SimTime::ZERO, LinkChange::Down, 0, 1);
            assert_eq!(tell, Tell::Now);
            // Back up before the message arrives: it was still sent in the old epoch.
            net.apply_change(SimTime::ZERO, LinkChange::Up, 0, 1);
            assert_eq!(net.arrive(&m, &mut counters), delivered, "{mode:?}");
            assert_eq!(counters.tokens_lost, u64::from(!delivered));
            assert_eq!((net.in_flight(), net.tokens_in_flight()), (0, 0));
        }
    }

    /// A link's state is dropped when it breaks idle (`PairState::idle_at`), and must
    /// not be while an old message is still in flight: here a second break comes after a
    /// `drop` break already forgot the message's delivery time.
    #[test]
    fn a_link_forgets_its_state_only_when_nothing_is_in_flight() {
        let ms = |m: u64| SimTime::ZERO.after(Duration(m * 1_000_000));
        for (mode, delivered) in [(LinkBreak::Drain, true), (LinkBreak::Drop, false)] {
            let mut net = network(2, &[(0, 1)], config("const:5ms", mode, 0));
            let mut counters = RunCounters::default();
            let (at, m) = net
                .send_hop(ms(0), 0, 1, None, Msg(false), &mut counters)
                .unwrap();
            assert_eq!(at, ms(5));
            for (t, change) in [
                (1, LinkChange::Down),
                (2, LinkChange::Up),
                (3, LinkChange::Down),
                (4, LinkChange::Up),
            ] {
                net.apply_change(ms(t), change, 0, 1);
                assert!(net.has_state(0, 1), "{mode:?}: forgotten at {t} ms");
            }
            assert_eq!(net.arrive(&m, &mut counters), delivered, "{mode:?}");
            // Everything delivered: the next break forgets the link, and a message sent
            // after it goes out as on a new link.
            net.apply_change(ms(6), LinkChange::Down, 0, 1);
            assert!(!net.has_state(0, 1), "{mode:?}");
            net.apply_change(ms(7), LinkChange::Up, 0, 1);
            let (at, m) = net
                .send_hop(ms(7), 1, 0, None, Msg(false), &mut counters)
                .unwrap();
            assert_eq!(at, ms(12));
            assert!(net.arrive(&m, &mut counters), "{mode:?}");
        }
    }

    #[test]
    fn a_break_is_told_after_the_detection_delay_unless_it_heals_first() {
        let mut net = network(
            2,
            &[(0, 1)],
            config("const:1ms", LinkBreak::Drain, 10_000_000),
        );
        let now = SimTime::ZERO;
        let Tell::Later { at, generation } = net.apply_change(now, LinkChange::Down, 0, 1) else {
            panic!("a break with a detection delay is told later");
        };
        assert_eq!(at, now.after(Duration(10_000_000)));
        net.notification_scheduled(0, 1);
        assert!(!net.is_quiet() && net.pending_notify_at() == [1, 1]);
        assert!(net.notification_due(0, 1, generation));
        assert!(net.is_quiet());
        // A second break heals before its detection: never told, and its notification
        // is cancelled.
        net.apply_change(now, LinkChange::Up, 0, 1);
        let Tell::Later { generation, .. } = net.apply_change(now, LinkChange::Down, 0, 1) else {
            panic!("told later");
        };
        net.notification_scheduled(0, 1);
        assert_eq!(net.apply_change(now, LinkChange::Up, 0, 1), Tell::Nothing);
        assert!(!net.notification_due(0, 1, generation));
        assert!(net.is_quiet());
    }

    #[test]
    fn routes_take_a_shortest_path_with_ties_to_the_lowest_id_and_wait_without_one() {
        // 0-1-3 and 0-2-3: two shortest paths from 0 to 3; 4 is cut off.
        let mut net = network(
            5,
            &[(0, 1), (1, 3), (0, 2), (2, 3)],
            config("const:1ms", LinkBreak::Drain, 0),
        );
        assert_eq!(net.next_hop(0, 3), Some(1));
        assert_eq!(net.next_hop(3, 0), Some(1));
        assert_eq!(net.next_hop(0, 4), None);
        net.apply_change(SimTime::ZERO, LinkChange::Down, 1, 3);
        assert_eq!(
            net.next_hop(0, 3),
            Some(2),
            "the cache is cleared by a change"
        );
        // Parked towards 4 (a token, then a message), and from 4 towards 0: a link
        // within the component moves none; the link to 4 moves all, in parked order.
        for (at, dest, token) in [(0, 4, true), (2, 4, false), (4, 0, false)] {
            net.park(Parked {
                at,
                origin: at,
                dest,
                msg: Msg(token),
                flooded: false,
            });
        }
        assert!(net.has_parked() && net.tokens_in_flight() == 1);
        net.apply_change(SimTime::ZERO, LinkChange::Up, 1, 3);
        assert!(net.unpark_ready().is_empty());
        assert!(net.has_parked() && net.tokens_in_flight() == 1);
        net.apply_change(SimTime::ZERO, LinkChange::Up, 3, 4);
        let moved: Vec<(NodeId, NodeId)> =
            net.unpark_ready().iter().map(|p| (p.at, p.dest)).collect();
        assert_eq!(moved, [(0, 4), (2, 4), (4, 0)]);
        assert!(!net.has_parked() && net.tokens_in_flight() == 0);
    }

    #[test]
    fn discovery_charges_a_flood_and_a_reply_per_route_and_again_when_a_hop_breaks() {
        // 0-1-3 and 0-2-3 (4 nodes in one component); 4 is cut off.
        let mut net = network(
            5,
            &[(0, 1), (1, 3), (0, 2), (2, 3)],
            config("const:1ms", LinkBreak::Drain, 0),
        );
        net.set_routing(Routing::Discovery);
        let mut counters = RunCounters::default();
        let ms = |k: u64| SimTime::ZERO.after(Duration(k * 1_000_000));
        // Flood of the component (4) and a reply over 2 hops; the message leaves once
        // the flood has reached 3 and the reply come back: 4 hop delays.
        let first = net.route(SimTime::ZERO, 0, 0, 3, false, &mut counters);
        assert_eq!(
            first,
            RouteStep::Discovered {
                ready_at: ms(4),
                messages: 6
            }
        );
        assert_eq!((counters.route_requests, counters.route_replies), (4, 2));
        assert_eq!(counters.messages, 6);
        // Cached: the sender and the node on the route know their next hops, for free.
        assert_eq!(
            net.route(ms(4), 0, 0, 3, false, &mut counters),
            RouteStep::Hop(1)
        );
        assert_eq!(
            net.route(ms(5), 1, 0, 3, false, &mut counters),
            RouteStep::Hop(3)
        );
        assert_eq!(counters.messages, 6);
        // A broken hop further on: the sender checks the whole route and rediscovers.
        net.apply_change(ms(6), LinkChange::Down, 1, 3);
        assert_eq!(
            net.route(ms(6), 0, 0, 3, false, &mut counters),
            RouteStep::Discovered {
                ready_at: ms(10),
                messages: 6
            }
        );
        assert_eq!(
            net.route(ms(10), 0, 0, 3, false, &mut counters),
            RouteStep::Hop(2)
        );
        // No path: one failed flood of the sender's component (0, 1, 2), then none.
        net.apply_change(ms(11), LinkChange::Down, 2, 3);
        let before = counters.messages;
        assert_eq!(
            net.route(ms(11), 0, 0, 3, false, &mut counters),
            RouteStep::NoPath { messages: 3 }
        );
        assert_eq!(
            net.route(ms(12), 0, 0, 3, true, &mut counters),
            RouteStep::NoPath { messages: 0 }
        );
        assert_eq!(counters.messages, before + 3);
        assert_eq!(counters.route_requests, 4 + 4 + 3);
    }

    #[test]
    fn the_oracle_charges_nothing() {
        let mut net = network(
            3,
            &[(0, 1), (1, 2)],
            config("const:1ms", LinkBreak::Drain, 0),
        );
        let mut counters = RunCounters::default();
        assert_eq!(
            net.route(SimTime::ZERO, 0, 0, 2, false, &mut counters),
            RouteStep::Hop(1)
        );
        net.apply_change(SimTime::ZERO, LinkChange::Down, 1, 2);
        assert_eq!(
            net.route(SimTime::ZERO, 0, 0, 2, false, &mut counters),
            RouteStep::NoPath { messages: 0 }
        );
        assert_eq!(counters, RunCounters::default());
    }

    /// The link rules with nothing forgotten and nothing laid out for speed: every pair
    /// ever linked keeps its state in an ordered map for the whole run. The oracle for
    /// [`Network`]'s per-end state, its forgetting of idle links and its run-wide
    /// notification generations, which must change no delivery time and no verdict.
    #[derive(Default)]
    struct Remembering {
        up: std::collections::BTreeSet<(NodeId, NodeId)>,
        pairs: BTreeMap<(NodeId, NodeId), Remembered>,
    }

    #[derive(Clone, Copy, Default)]
    struct Remembered {
        epoch: u32,
        /// Per direction: lower → higher, higher → lower.
        last_delivery: [SimTime; 2],
        down_pending: bool,
        generation: u32,
    }

    impl Remembering {
        fn change(
            &mut self,
            now: SimTime,
            change: LinkChange,
            a: NodeId,
            b: NodeId,
            config: &NetworkConfig,
        ) -> Tell {
            let state = self.pairs.entry(pair(a, b)).or_default();
            if change == LinkChange::Up {
                self.up.insert(pair(a, b));
                if state.down_pending {
                    state.down_pending = false;
                    state.generation += 1;
                    return Tell::Nothing;
                }
                return Tell::Now;
            }
            self.up.remove(&pair(a, b));
            state.epoch += 1;
            if config.link_break == LinkBreak::Drop {
                state.last_delivery = [SimTime::ZERO; 2];
            }
            if config.detection_delay.0 == 0 {
                return Tell::Now;
            }
            state.down_pending = true;
            state.generation += 1;
            Tell::Later {
                at: now.after(config.detection_delay),
                generation: state.generation,
            }
        }

        /// Delivery time and epoch of a message sent `planned` to arrive, if the link is up.
        fn send(&mut self, from: NodeId, to: NodeId, planned: SimTime) -> Option<(SimTime, u32)> {
            if !self.up.contains(&pair(from, to)) {
                return None;
            }
            let state = self.pairs.entry(pair(from, to)).or_default();
            let dir = usize::from(from > to);
            let at = planned.max(state.last_delivery[dir]);
            state.last_delivery[dir] = at;
            Some((at, state.epoch))
        }

        fn delivered(&self, from: NodeId, to: NodeId, epoch: u32, config: &NetworkConfig) -> bool {
            config.link_break == LinkBreak::Drain || self.pairs[&pair(from, to)].epoch == epoch
        }

        fn due(&mut self, a: NodeId, b: NodeId, generation: u32) -> bool {
            let state = self.pairs.get_mut(&pair(a, b)).unwrap();
            let due = state.down_pending && state.generation == generation;
            state.down_pending &= !due;
            due
        }
    }

    /// Something scheduled, as each model sees it.
    enum Due {
        Message(InFlight<Msg>, u32),
        Notification {
            a: NodeId,
            b: NodeId,
            generation: u32,
            remembered: u32,
        },
    }

    /// The network and the remembering model driven side by side, with what they
    /// scheduled happening at its time.
    struct SideBySide {
        config: NetworkConfig,
        net: Network<Msg>,
        model: Remembering,
        /// The model's delays: the same stream the network draws from.
        rng: ChaCha8Rng,
        counters: RunCounters,
        /// Time, order of scheduling, what.
        scheduled: Vec<(SimTime, usize, Due)>,
    }

    type Checked = Result<(), proptest::test_runner::TestCaseError>;

    impl SideBySide {
        fn new(n: usize, up: &[(NodeId, NodeId)], config: NetworkConfig) -> Self {
            let mut model = Remembering::default();
            model.up.extend(up.iter().map(|&(a, b)| pair(a, b)));
            Self {
                config,
                net: network(n, up, config),
                model,
                rng: seeds::stream(1, Purpose::Delay, 0),
                counters: RunCounters::default(),
                scheduled: Vec::new(),
            }
        }

        /// Everything scheduled before `now`, or at `now` too if `including_now`, in
        /// time order (ties in the order scheduled).
        fn happen_before(&mut self, now: SimTime, including_now: bool) -> Checked {
            self.scheduled
                .sort_by_key(|&(at, seq, _)| std::cmp::Reverse((at, seq)));
            let due = |at: SimTime| at < now || (including_now && at == now);
            while self.scheduled.last().is_some_and(|(at, ..)| due(*at)) {
                let (at, _, due) = self.scheduled.pop().unwrap();
                match due {
                    Due::Message(m, epoch) => {
                        let expected = self.model.delivered(m.from, m.to, epoch, &self.config);
                        let delivered = self.net.arrive(&m, &mut self.counters);
                        prop_assert_eq!(delivered, expected, "{}→{} at {}", m.from, m.to, at);
                    }
                    Due::Notification {
                        a,
                        b,
                        generation,
                        remembered,
                    } => {
                        let due = self.net.notification_due(a, b, generation);
                        let expected = self.model.due(a, b, remembered);
                        prop_assert_eq!(due, expected, "notification {}–{} at {}", a, b, at);
                    }
                }
            }
            Ok(())
        }

        fn flip(&mut self, now: SimTime, a: NodeId, b: NodeId, seq: usize) -> Checked {
            let change = if self.model.up.contains(&pair(a, b)) {
                LinkChange::Down
            } else {
                LinkChange::Up
            };
            let told = self.net.apply_change(now, change, a, b);
            match (told, self.model.change(now, change, a, b, &self.config)) {
                (
                    Tell::Later { at, generation },
                    Tell::Later {
                        at: expected_at,
                        generation: remembered,
                    },
                ) => {
                    prop_assert_eq!(at, expected_at);
                    self.net.notification_scheduled(a, b);
                    let due = Due::Notification {
                        a,
                        b,
                        generation,
                        remembered,
                    };
                    self.scheduled.push((at, seq, due));
                }
                (told, expected) => {
                    prop_assert_eq!(told, expected, "{:?} {}–{} at {}", change, a, b, now)
                }
            }
            Ok(())
        }

        fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, seq: usize) -> Checked {
            let sent = self
                .net
                .send_hop(now, from, to, None, Msg(false), &mut self.counters);
            let expected = if self.model.up.contains(&pair(from, to)) {
                let planned = now.after(self.config.delay.sample(&mut self.rng));
                self.model.send(from, to, planned)
            } else {
                None
            };
            let times = (sent.as_ref().map(|s| s.0), expected.map(|e| e.0));
            prop_assert_eq!(times.0, times.1, "{}→{} at {}", from, to, now);
            if let (Some((at, m)), Some((_, epoch))) = (sent, expected) {
                self.scheduled.push((at, seq, Due::Message(m, epoch)));
            }
            Ok(())
        }
    }

    proptest! {
        /// Random flips and sends on 3 or 5 nodes, most of them at the same millisecond
        /// as the one before, with what they schedule happening at its time (before or
        /// after a step at the same instant): the network and the remembering model give
        /// the same delivery times, losses and notifications, in both break modes, with
        /// and without a detection delay.
        #[test]
        fn forgetting_idle_links_changes_nothing(
            drop in proptest::bool::ANY,
            // Whole milliseconds make deliveries coincide with changes.
            delay in proptest::sample::select(vec!["const:2ms", "uniform:1ms:4ms"]),
            detection_ms in 0u64..3,
            n in proptest::sample::select(vec![3u32, 5]),
            initial in proptest::collection::vec((0u32..5, 0u32..5), 0..6),
            steps in proptest::collection::vec(
                (0u64..6, 0u32..5, 0u32..5, proptest::bool::ANY, proptest::bool::ANY),
                1..150,
            ),
        ) {
            let link_break = if drop { LinkBreak::Drop } else { LinkBreak::Drain };
            let config = config(delay, link_break, detection_ms * 1_000_000);
            let mut up: Vec<(NodeId, NodeId)> = initial
                .iter()
                .map(|&(a, b)| pair(a % n, b % n))
                .filter(|(a, b)| a != b)
                .collect();
            up.sort_unstable();
            up.dedup();
            let mut run = SideBySide::new(n as usize, &up, config);
            let mut now = SimTime::ZERO;
            for (seq, &(wait, a, b, flip, due_first)) in steps.iter().enumerate() {
                let (a, b) = (a % n, b % n);
                // No wait two times in three.
                now = now.after(Duration(wait.saturating_sub(3) * 1_000_000));
                run.happen_before(now, due_first)?;
                match (a == b, flip) {
                    (true, _) => {}
                    (false, true) => run.flip(now, a, b, seq)?,
                    (false, false) => run.send(now, a, b, seq)?,
                }
            }
            run.happen_before(SimTime::NEVER, true)?;
            prop_assert_eq!(run.net.in_flight(), 0);
            prop_assert_eq!(run.net.pending_notifications(), 0);
        }
    }
}
