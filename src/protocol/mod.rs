//! The protocol API: every algorithm is a deterministic state machine per node.
//!
//! A protocol never reads a clock or a random generator, never sees positions and never
//! does I/O. The driver (the simulator in `sim`, or [`testkit::Harness`] in tests) calls a
//! handler with one event and a [`Ctx`]; the handler changes the node's state and pushes
//! effects (send a message, enter the critical section) into the `Ctx`, which the driver
//! then applies with its own semantics (delays, FIFO links, link breaks). This split is
//! what makes the slides' worked examples runnable as tests that drive nodes by hand, and
//! small configurations explorable exhaustively (the shape of dslab-mp's process/context
//! and stateright's actor APIs).
//!
//! Observers (safety monitors, metrics) read node state only through the small view
//! traits [`HeightView`], [`LeaderView`], [`RouteView`] and [`TokenView`].
//!
//! # Writing a protocol
//!
//! A protocol is a per-node state type, a message type and a configuration. Here is a
//! toy that gossips the largest node id it has heard, each rumour travelling at most
//! `hops` hops (a parameter, declared with its type, range and default), driven by hand
//! through the test [`testkit::Harness`]:
//!
//! ```
//! use linkrev::NodeId;
//! use linkrev::protocol::testkit::Harness;
//! use linkrev::protocol::{
//!     AlgoParams, Ctx, Message, ParamDef, ParamDefault, ParamKind, Protocol, ProtocolConfig,
//! };
//!
//! /// Shared by every node of a run.
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct GossipConfig {
//!     hops: u32,
//! }
//!
//! impl Default for GossipConfig {
//!     fn default() -> Self {
//!         Self { hops: 8 }
//!     }
//! }
//!
//! impl ProtocolConfig for GossipConfig {
//!     const PARAMS: &'static [ParamDef] = &[ParamDef {
//!         name: "hops",
//!         description: "hops a rumour travels",
//!         kind: ParamKind::Int { min: 1, max: 64 },
//!         default: ParamDefault::Int(8),
//!     }];
//!     fn from_params(params: &AlgoParams) -> Self {
//!         Self { hops: params.int("hops") as u32 }
//!     }
//! }
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct Rumour {
//!     max: NodeId,
//!     ttl: u32,
//! }
//!
//! impl Message for Rumour {
//!     const KINDS: &'static [&'static str] = &["Rumour"];
//!     fn kind_index(&self) -> usize {
//!         0
//!     }
//! }
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct Gossip {
//!     max: NodeId,
//!     hops: u32,
//!     neighbours: Vec<NodeId>,
//! }
//!
//! impl Protocol for Gossip {
//!     type Msg = Rumour;
//!     type Config = GossipConfig;
//!
//!     fn initial_states(config: &GossipConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
//!         (0..neighbours.len())
//!             .map(|i| Gossip {
//!                 max: i as NodeId,
//!                 hops: config.hops,
//!                 neighbours: neighbours[i].clone(),
//!             })
//!             .collect()
//!     }
//!
//!     fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Rumour>) {
//!         self.neighbours.push(peer);
//!         ctx.send(peer, Rumour { max: self.max, ttl: self.hops });
//!     }
//!
//!     fn on_link_down(&mut self, peer: NodeId, _ctx: &mut Ctx<Rumour>) {
//!         self.neighbours.retain(|&n| n != peer);
//!     }
//!
//!     fn on_message(&mut self, _from: NodeId, msg: Rumour, ctx: &mut Ctx<Rumour>) {
//!         if msg.max > self.max {
//!             self.max = msg.max;
//!             for &n in self.neighbours.iter().filter(|_| msg.ttl > 1) {
//!                 ctx.send(n, Rumour { max: msg.max, ttl: msg.ttl - 1 });
//!             }
//!         }
//!     }
//! }
//!
//! // A path 0-1-2; node 3 joins at its end, and its id reaches everyone.
//! let mut h = Harness::<Gossip>::configured(&GossipConfig::default(), 4, &[(0, 1), (1, 2)]);
//! h.link_up(2, 3);
//! h.deliver_all(100);
//! assert!(h.nodes.iter().all(|n| n.max == 3));
//! // With one hop, the rumours stop at their first receivers.
//! let params = AlgoParams::resolve(GossipConfig::PARAMS, [("hops", 1.into())]).unwrap();
//! let mut h = Harness::<Gossip>::configured(&GossipConfig::from_params(&params), 4, &[(0, 1), (1, 2)]);
//! h.link_up(2, 3);
//! h.deliver_all(100);
//! assert_eq!(h.nodes.iter().map(|n| n.max).collect::<Vec<_>>(), [0, 1, 3, 3]);
//! ```
//!
//! To simulate it, a protocol also implements its family's view trait ([`LeaderView`]
//! or [`RouteView`], each with [`HeightView`], or [`TokenView`]) and gets one line in [`crate::registry::BUILTIN`], e.g.
//! `mutual_exclusion::<MyProtocol>("me-mine", "one line on what it is")`; its family's
//! conformance suite (`tests/conformance.rs`) then runs on it.

pub mod config;
pub mod le_ingram;
pub mod le_malpani;
pub mod le_tora5;
pub mod me_krl;
pub mod me_raymond;
pub mod me_rl;
pub mod neighbour_map;
pub mod route_gb;
pub mod testkit;

pub use config::{
    AlgoParams, ParamDef, ParamDefault, ParamKind, ParamValue, ProtocolConfig, Routing,
};

use crate::NodeId;
use std::fmt::Debug;
use std::hash::Hash;

/// What the application asks of a mutual-exclusion protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppEvent {
    /// The application wants the critical section (at most one outstanding request).
    RequestCs,
    /// The application leaves the critical section it was granted.
    ReleaseCs,
}

/// An effect a handler asks the driver to carry out.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect<M> {
    /// Send `msg` over the direct link to neighbour `to`.
    Send {
        /// The neighbour at the other end of the link.
        to: NodeId,
        /// Payload, handed to the receiver's [`Protocol::on_message`].
        msg: M,
    },
    /// Send `msg` to any node through the routing layer: hop by hop over a shortest path
    /// of the current graph, waiting while there is none (the Raymond baseline's setting).
    SendRouted {
        /// Destination: any node, not necessarily a neighbour.
        to: NodeId,
        /// Payload, handed to the destination's [`Protocol::on_message`].
        msg: M,
    },
    /// The node enters its critical section now; the application releases it later with
    /// [`AppEvent::ReleaseCs`].
    EnterCs,
    /// Call [`Protocol::on_timer`] with `tag` after `delay_ns` nanoseconds. Timers are the
    /// protocol's only notion of time passing (none of the shipped algorithms needs one;
    /// variants with timeouts do).
    SetTimer {
        /// Simulated delay before the timer fires, nanoseconds.
        delay_ns: u64,
        /// Handed back to [`Protocol::on_timer`], to tell timers apart.
        tag: u64,
    },
}

/// The handler's window on the world: which node it is, the time of the event being
/// handled (as data), and a buffer for effects. The driver reuses one `Ctx` for all
/// events, so handlers never allocate one.
#[derive(Debug)]
pub struct Ctx<M> {
    node: NodeId,
    event_time_ns: u64,
    effects: Vec<Effect<M>>,
}

impl<M> Ctx<M> {
    /// A context for `node` handling an event at `event_time_ns` (nanoseconds),
    /// with no effects yet.
    pub fn new(node: NodeId, event_time_ns: u64) -> Self {
        Self {
            node,
            event_time_ns,
            effects: Vec::new(),
        }
    }

    /// Re-targets the context at another event; the effect buffer must have been drained.
    pub fn reset(&mut self, node: NodeId, event_time_ns: u64) {
        debug_assert!(
            self.effects.is_empty(),
            "effects of the previous event were not applied"
        );
        self.node = node;
        self.event_time_ns = event_time_ns;
    }

    /// The node whose handler is running.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Simulation time of the event being handled, in nanoseconds, supplied by the
    /// driver. It is input data, not a clock: leader election stamps new reference levels
    /// with it (the slides' τ, "the time of the link failure"); nothing schedules on it.
    pub fn event_time_ns(&self) -> u64 {
        self.event_time_ns
    }

    /// Sends `msg` over the direct link to neighbour `to` ([`Effect::Send`]).
    pub fn send(&mut self, to: NodeId, msg: M) {
        self.effects.push(Effect::Send { to, msg });
    }

    /// Sends `msg` to any node `to` through the routing layer
    /// ([`Effect::SendRouted`]).
    pub fn send_routed(&mut self, to: NodeId, msg: M) {
        self.effects.push(Effect::SendRouted { to, msg });
    }

    /// Enters the critical section now ([`Effect::EnterCs`]).
    pub fn enter_cs(&mut self) {
        self.effects.push(Effect::EnterCs);
    }

    /// Asks for [`Protocol::on_timer`] with `tag` after `delay_ns` nanoseconds
    /// ([`Effect::SetTimer`]).
    pub fn set_timer(&mut self, delay_ns: u64, tag: u64) {
        self.effects.push(Effect::SetTimer { delay_ns, tag });
    }

    /// The effects pushed so far, in order, leaving the buffer empty (capacity kept).
    pub fn drain(&mut self) -> std::vec::Drain<'_, Effect<M>> {
        self.effects.drain(..)
    }

    /// Keeps only the effects pushed so far for which `keep` is true, in order: how a
    /// variant that wraps another protocol's node drops some of what its handler does
    /// (`examples/own_algorithm.rs`).
    pub fn retain(&mut self, keep: impl FnMut(&Effect<M>) -> bool) {
        self.effects.retain(keep);
    }

    /// The effects pushed so far, in order, without draining them.
    pub fn effects(&self) -> &[Effect<M>] {
        &self.effects
    }
}

/// A protocol message.
pub trait Message: Clone + Debug + Hash + Eq + Send + Sync + 'static {
    /// The names of every kind of message the protocol sends ("Update", "Request",
    /// "Token", …), as its paper names them. The simulator counts messages per kind; a
    /// family's message columns ([`crate::family::Metric::messages`]) sum kinds by these
    /// names, so every name must be one its family declares (a conformance test checks).
    const KINDS: &'static [&'static str];

    /// This message's kind, as an index into [`Self::KINDS`] (an index, so that counting
    /// a message costs one array increment).
    fn kind_index(&self) -> usize;

    /// This message's kind by name.
    fn kind(&self) -> &'static str {
        Self::KINDS[self.kind_index()]
    }

    /// Whether the message carries the token (the two-tokens monitor counts tokens held
    /// plus tokens in flight; under `drop`, a dropped token is a lost token).
    fn carries_token(&self) -> bool {
        false
    }

    /// This message with every node id in it renamed (`v` becomes `rename[v]`); only
    /// called for protocols whose [`Protocol::renamed`] is `Some`. The default, `None`,
    /// turns symmetry reduction off.
    fn renamed(&self, rename: &[NodeId]) -> Option<Self> {
        let _ = rename;
        None
    }

    /// The two numeric parts of the height this message carries, for the model checker's
    /// height renormalization ([`Protocol::SHIFT_INVARIANT`]); `None`, the default, when
    /// it carries none.
    fn height_parts(&self) -> Option<[i64; 2]> {
        None
    }

    /// Adds `by` to the numeric parts of the height this message carries (nothing, the
    /// default, when it carries none).
    fn shift_heights(&mut self, by: [i64; 2]) {
        let _ = by;
    }

    /// Calls `visit` on every time stamp this message carries (the model checker's
    /// stamp ranking, [`Protocol::STAMP_INVARIANT`]); the default carries none.
    fn for_each_stamp(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        let _ = visit;
    }

    /// Whether a receiver ignores this message when its sender is not its neighbour (the
    /// link failed after it was sent and was not formed again): the handler returns
    /// before changing or sending anything, whatever the receiver's state. The model
    /// checker then drops such a message once its link can never come back
    /// ([`crate::check::dead_messages`]). `false`, the default, is always safe.
    fn ignored_from_non_neighbour(&self) -> bool {
        false
    }

    /// Calls `visit` on the first numeric part (the *level*) of the height this message
    /// carries, for the model checker's level-gap abstraction
    /// ([`Protocol::LEVELS_STEP_BY_ONE`]); the default carries none.
    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        let _ = visit;
    }
}

/// One node's state machine.
pub trait Protocol: Clone + Debug + Hash + Eq + Send + Sync + Sized + 'static {
    /// The messages nodes exchange.
    type Msg: Message;

    /// What every node of a run shares: the algorithm's parameters (`()` for none). Its
    /// name, description and family are not here but in the registry
    /// ([`crate::registry`]), which is the one list of algorithms.
    type Config: ProtocolConfig;

    /// A legal initial state for every node, from the configuration and the t = 0
    /// neighbour sets (each sorted): a leader-oriented DAG per component, a
    /// token-oriented DAG towards the token holder, or a BFS tree, as the algorithm
    /// needs.
    fn initial_states(config: &Self::Config, neighbours: &[Vec<NodeId>]) -> Vec<Self>;

    /// Whether every node is started: [`Self::on_start`] called once per node at
    /// t = 0, as its own event, before anything else happens. Off by default, so a
    /// protocol that needs no start costs no events.
    const STARTS: bool = false;

    /// The run starts (only if [`Self::STARTS`]): a node may act on its initial state,
    /// as a sink of Gafni–Bertsekas link reversal does.
    fn on_start(&mut self, ctx: &mut Ctx<Self::Msg>) {
        let _ = ctx;
    }

    /// A link to `peer` formed. Both endpoints are told.
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Self::Msg>);

    /// The link to `peer` failed (both endpoints are told; messages may still arrive from
    /// `peer` afterwards under the `drain` semantics, and each protocol documents what it
    /// does with them).
    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<Self::Msg>);

    /// `msg` arrived from `from`.
    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<Self::Msg>);

    /// The application asked something. Protocols without an application ignore it.
    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<Self::Msg>) {
        let _ = (event, ctx);
    }

    /// A timer set with [`Ctx::set_timer`] fired.
    fn on_timer(&mut self, tag: u64, ctx: &mut Ctx<Self::Msg>) {
        let _ = (tag, ctx);
    }

    /// Asks the processor to start loading what this node keeps outside its own struct
    /// (neighbour maps, queues) and its next handler will read: the event loop calls it
    /// while handling the event before, on large networks ([`crate::prefetch`]). It
    /// must change nothing; the default does nothing.
    #[inline]
    fn prefetch(&self) {}

    /// This node's state with every node id in it renamed (`v` becomes `rename[v]`),
    /// for the model checker's symmetry reduction ([`crate::check`]); `None`, the
    /// default, when the rules are not symmetric under renaming.
    ///
    /// Renaming is sound only if it commutes with every handler: handling an event and
    /// then renaming must give what renaming and then handling the renamed event gives.
    /// Rules that compare node ids (a height's id as the last tie-break, the lowest id
    /// as leader) break this for every renaming that does not keep the order of ids,
    /// and the only order-keeping renaming is the identity; such protocols keep the
    /// default. A protocol that returns `Some` must rename its messages too
    /// ([`Message::renamed`]); a test checks the commuting on random executions.
    fn renamed(&self, rename: &[NodeId]) -> Option<Self> {
        let _ = rename;
        None
    }

    /// Whether the handlers may read the event time ([`Ctx::event_time_ns`]). The model
    /// checker's partial-order reduction ([`crate::check::explore`]) takes two steps at
    /// different nodes to commute, which fails when each stamps something with the
    /// time it runs at; for a protocol that may, it commutes nothing. On by default,
    /// the safe answer; a protocol whose handlers never read the time turns it off.
    const READS_TIME: bool = true;

    /// Whether the handlers may send routed messages ([`Ctx::send_routed`]), which the
    /// model checker delivers in one step to a node far away. Its persistent sets
    /// ([`crate::check::explore`]) take a node with no message on a link into a chosen
    /// set of nodes to be unable to disturb that set before it acts, which a routed
    /// send breaks. On by default, the safe answer; a protocol that only ever sends to
    /// neighbours turns it off.
    const SENDS_ROUTED: bool = true;

    /// Whether the rules only ever compare heights and derive new ones from old by
    /// adding constants, so that they commute with *shifting*: adding one vector to the
    /// two numeric parts of every height a node keeps (its own, its views, any it
    /// recorded) and every height in the messages it receives. Handling an event and
    /// then shifting must give what shifting and then handling gives. The model checker
    /// then renormalizes heights ([`crate::check::shift`]), which makes the state space
    /// of a component that reverses for ever finite. Off by default; a protocol that
    /// turns it on implements [`Self::height_floor`], [`Self::shift_heights`] and its
    /// message's [`Message::height_parts`] and [`Message::shift_heights`], and a test
    /// checks the commuting on random executions.
    const SHIFT_INVARIANT: bool = false;

    /// The least value of each numeric part over every height this node keeps, `None`
    /// when it keeps none (or the protocol is not [`Self::SHIFT_INVARIANT`]).
    fn height_floor(&self) -> Option<[i64; 2]> {
        None
    }

    /// Adds `by` to the numeric parts of every height this node keeps.
    fn shift_heights(&mut self, by: [i64; 2]) {
        let _ = by;
    }

    /// Whether the first numeric part of a height (its *level*: RL's `h1`, Gafni and
    /// Bertsekas's `a`) is only ever compared with other levels (`<`, `=`, least,
    /// greatest), and every level a handler makes is a level the node already knows
    /// (copied into a view, a message, its own height) or, at most once per handler, one
    /// plus the least or the greatest of some it knows; no level is ever made from a
    /// constant after the initial state, and nothing else is computed from one. Then two
    /// states whose levels differ only in how far apart two runs of levels are, both runs
    /// at least two apart, take the same branches in every handler (a level from the
    /// lower run plus one stays below every level of the upper run), so the model checker
    /// may abstract such gaps ([`crate::check::gaps`]). Implies [`Self::SHIFT_INVARIANT`];
    /// a protocol that turns it on implements [`Self::for_each_level`] and its message's
    /// [`Message::for_each_level`], and a test checks the claim on random executions.
    const LEVELS_STEP_BY_ONE: bool = false;

    /// Calls `visit` on the level (first numeric part) of every height this node keeps:
    /// its own, its views, any it recorded.
    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        let _ = visit;
    }

    /// Whether the rules use the event time only to make *time stamps* that are then
    /// only compared (never added to or subtracted from), and whether every stamp an
    /// event makes exceeds every stamp already present (as event times only grow). Then
    /// renaming the stamps of a state by an order-keeping map changes nothing a future
    /// can tell apart, and the model checker replaces them by their ranks
    /// ([`crate::check::stamps`]). Off by default; a protocol that turns it on
    /// implements [`Self::for_each_stamp`] and its message's [`Message::for_each_stamp`].
    const STAMP_INVARIANT: bool = false;

    /// Calls `visit` on every time stamp this node keeps (its own and its views'),
    /// stamps made from event times only, not the constants the rules start from.
    fn for_each_stamp(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        let _ = visit;
    }
}

/// What monitors read from a node whose links are oriented by heights (leader
/// election, routes): its own height and its views of its neighbours' heights, from
/// which the monitors count stale views and sinks ([`crate::observe::views`]).
pub trait HeightView {
    /// A node's height: totally ordered; each link points from its higher end to its
    /// lower end.
    type Height: Ord + Clone + Debug;
    /// This node's own height.
    fn height(&self) -> Self::Height;
    /// What this node believes neighbour `j`'s height is, if it knows `j`.
    fn neighbour_height(&self, j: NodeId) -> Option<Self::Height>;
    /// Every view this node holds, in any order: exactly the `(j, h)` for which
    /// `neighbour_height(j)` is `Some(h)`. A monitor recounting a node's stale views reads
    /// them in one pass instead of looking each neighbour up.
    fn views(&self) -> impl Iterator<Item = (NodeId, &Self::Height)> + '_;
}

/// What the replay viewer ([`crate::replay`]) draws of a node, in every family: the
/// label next to it, the orientation of its links, and its panel. Text only: the core
/// says what its state is, the viewer decides how it looks.
pub trait ReplayView: Protocol {
    /// The node's height (or whatever orients its links) as a short label, e.g. the
    /// six-tuple `(0, 0, 0, 0, 3, 3)`.
    fn label(&self) -> String;
    /// Whether the link between this node and `peer` (in state `other`) points from
    /// this node to `peer` in the orientation the algorithm maintains (from the higher
    /// height to the lower); `None` for a link the algorithm does not orient (a link
    /// off Raymond's tree).
    fn points_to(&self, peer: NodeId, other: &Self) -> Option<bool>;
    /// The node's state for its panel, one item per line: its height, its view of each
    /// neighbour, its queue.
    fn describe(&self) -> String;
}

/// [`ReplayView::points_to`] for protocols whose links point from the higher height to
/// the lower ([`HeightView`]; heights are distinct, ties broken by node id).
pub fn points_down<P: HeightView>(me: &P, other: &P) -> Option<bool> {
    Some(me.height() > other.height())
}

/// What monitors read from a leader-election node.
pub trait LeaderView: HeightView {
    /// The node this node believes leads its component.
    fn leader(&self) -> NodeId;
}

/// What monitors read from a node of the route family (a destination-oriented DAG).
pub trait RouteView: Protocol + HeightView {
    /// The destination of a run configured with `config` (its height never changes).
    fn destination(config: &Self::Config) -> NodeId;
}

/// The token holder at t = 0, a parameter of the token algorithms (`holder`, default
/// node 0): where the token starts is a property of the experiment, not of the rules.
pub const INITIAL_HOLDER: ParamDef = ParamDef {
    name: "holder",
    description: "node holding the token at t = 0",
    kind: ParamKind::Node,
    default: ParamDefault::Int(0),
};

/// The configuration of the single-token algorithms (RL, Raymond): where the token
/// starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenStart {
    /// The node holding the token at t = 0 ([`INITIAL_HOLDER`]).
    pub holder: NodeId,
}

impl ProtocolConfig for TokenStart {
    const PARAMS: &'static [ParamDef] = &[INITIAL_HOLDER];

    fn from_params(params: &AlgoParams) -> Self {
        Self {
            holder: params.node(INITIAL_HOLDER.name),
        }
    }
}

/// What monitors read from a mutual-exclusion node.
pub trait TokenView: Protocol {
    /// How many tokens a run configured with `config` has: the `k` of "at most `k`
    /// nodes in the critical section, exactly `k` tokens" the monitors check (1 unless a
    /// protocol says otherwise, as k-mutual exclusion does).
    fn tokens(config: &Self::Config) -> u32 {
        let _ = config;
        1
    }

    /// Whether this node holds the token now (in flight does not count).
    fn holds_token(&self) -> bool;
    /// How many tokens this node holds now (at most 1 unless the protocol has several
    /// tokens and lets one node hold more than one).
    fn tokens_held(&self) -> u32 {
        u32::from(self.holds_token())
    }
    /// Whether this node is in its critical section.
    fn in_cs(&self) -> bool;
}
