//! k-mutual exclusion by link reversal (`me-krl`): RL with `k` tokens, after J. E.
//! Walter, G. Cao and M. Mohanty, "A k-mutual exclusion algorithm for wireless ad hoc
//! networks" (ACM workshop on Principles of Mobile Computing, POMC 2001; cited below as
//! *WCM*), which extends RL ([`super::me_rl`]; Walter, Welch, Vaidya 2001) to `k`
//! tokens, so that up to `k` nodes may be in the critical section at once.
//!
//! # What is the paper's and what is reconstructed
//!
//! The text of WCM was not available to us; what we could verify is its abstract and
//! that of its extended version ("A token forwarding k-mutual exclusion algorithm for
//! wireless ad hoc networks"): a fault-tolerant, token-based k-mutual exclusion
//! algorithm that adjusts to node mobility, in which nodes communicate only with their
//! current neighbours, built on RL (which it cites with TORA and the slide mechanism);
//! and a "token forwarding" modification that lowers the waiting time "by circulating
//! unused tokens among participating processors" and spreads the tokens more evenly.
//! Everything below that is more specific is **reconstructed** as the most direct
//! extension of RL to `k` tokens, and is ours, not WCM's:
//!
//! - **Heights, messages and handlers are RL's** (`Request`, `Token`, `LinkInfo`;
//!   `RaiseHeight`, `ForwardRequest`, `GiveTokenToNext`, `receivedLI`, `formHeight`), on
//!   a DAG oriented towards the *set* of token holders: a node without a token that has
//!   no outgoing link raises its height (RL's sink rule), so every node without a token
//!   has a directed path to some holder (WWV §5 Lemma 1 with "the token holder" read as
//!   "a token holder"). Requests go to the lowest neighbour as in RL and end at the
//!   first holder they reach.
//! - **A node may hold several tokens** (`tokenHolder` becomes a count). It uses one for
//!   its own CS; every other token it holds serves the head of its `Q` at once
//!   (`GiveTokenToNext` repeated while a token is free and `Q` is not empty), so up to
//!   `k` nodes can be in the CS. A holder whose only token is in use waits for its CS to
//!   end, as in RL. A node asks for a token back with the one it gives away (RL's
//!   `Request` after `GiveTokenToNext`) only when it has given away its last.
//! - **Initial state**: token `t` (`t = 0 … k−1`) starts at node `t mod n` (random
//!   waypoint numbers nodes in no spatial order, so these are `k` arbitrary places), and
//!   heights are RL's with the hop distance to the *nearest* holder (a multi-source
//!   breadth-first search); components without a holder as in RL.
//! - **Token forwarding** (parameter `forwarding = on`): a node that leaves its CS with
//!   nobody waiting does not keep the token but gives it to its *highest* neighbour (as
//!   if that neighbour had asked: `GiveTokenToNext` with the height prediction and
//!   `receivedLI`), which keeps it. The abstract says only that unused tokens circulate;
//!   to whom and when is ours. The highest neighbour is the direction farthest from the
//!   tokens (heights grow with the distance to a holder), so tokens move towards the
//!   parts of the network whose requests travel furthest, once per use, never in a loop.
//!
//! With `k = 1` and forwarding off every rule above is RL's, and `me-krl` runs exactly as
//! `me-rl` with the token at node 0 (a test compares whole runs). The monitors check at
//! most `k` nodes in the CS and exactly `k` tokens, held plus in flight
//! ([`crate::observe::me`]).

use super::me_rl::{Rl, RlMsg};
use super::{
    AlgoParams, AppEvent, Ctx, ParamDef, ParamDefault, ParamKind, Protocol, ProtocolConfig,
    TokenView,
};
use crate::NodeId;

/// The parameter `k`: how many tokens, so how many nodes may be in the CS at once.
pub const K: ParamDef = ParamDef {
    name: "k",
    description: "tokens: at most k nodes in the critical section at once",
    kind: ParamKind::Int { min: 1, max: 64 },
    default: ParamDefault::Int(2),
};

/// The parameter `forwarding`: WCM's token-forwarding refinement, on or off.
pub const FORWARDING: ParamDef = ParamDef {
    name: "forwarding",
    description: "token forwarding: a node leaving the CS with nobody waiting passes the token to its highest neighbour",
    kind: ParamKind::Choice(&["off", "on"]),
    default: ParamDefault::Word("off"),
};

/// `me-krl`'s configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KrlConfig {
    /// Number of tokens, at least 1.
    pub k: u32,
    /// Token forwarding (module docs).
    pub forwarding: bool,
}

impl Default for KrlConfig {
    fn default() -> Self {
        Self {
            k: 2,
            forwarding: false,
        }
    }
}

impl ProtocolConfig for KrlConfig {
    const PARAMS: &'static [ParamDef] = &[K, FORWARDING];

    fn from_params(params: &AlgoParams) -> Self {
        Self {
            k: u32::try_from(params.int(K.name)).expect("k is declared positive"),
            forwarding: params.word(FORWARDING.name) == "on",
        }
    }
}

/// One node of `me-krl`: an RL node whose token count may exceed one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Krl(Rl);

impl Krl {
    /// The RL state underneath (heights, `Q`, `next`, links).
    pub fn rl(&self) -> &Rl {
        &self.0
    }
}

impl Protocol for Krl {
    type Msg = RlMsg;

    type Config = KrlConfig;

    /// RL's initial state with token `t` at node `t mod n` (module docs).
    fn initial_states(config: &KrlConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        let n = neighbours.len().max(1);
        let holders: Vec<NodeId> = (0..config.k as usize)
            .map(|t| NodeId::try_from(t % n).expect("node count fits NodeId"))
            .collect();
        Rl::initial(&holders, config.forwarding, neighbours)
            .into_iter()
            .map(Krl)
            .collect()
    }

    #[inline]
    fn prefetch(&self) {
        self.0.prefetch();
    }

    /// RL's rules, unchanged by k tokens.
    const SHIFT_INVARIANT: bool = true;

    /// No handler reads the event time.
    const READS_TIME: bool = false;
    const SENDS_ROUTED: bool = false;

    fn height_floor(&self) -> Option<[i64; 2]> {
        self.0.height_floor()
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        self.0.shift_heights(by);
    }

    /// RL's rules, unchanged by k tokens.
    const LEVELS_STEP_BY_ONE: bool = true;

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        self.0.for_each_level(visit);
    }

    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<RlMsg>) {
        self.0.on_link_up(peer, ctx);
    }

    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<RlMsg>) {
        self.0.on_link_down(peer, ctx);
    }

    fn on_message(&mut self, from: NodeId, msg: RlMsg, ctx: &mut Ctx<RlMsg>) {
        self.0.on_message(from, msg, ctx);
    }

    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<RlMsg>) {
        self.0.on_app(event, ctx);
    }
}

impl super::ReplayView for Krl {
    fn label(&self) -> String {
        self.0.label()
    }

    fn points_to(&self, peer: NodeId, other: &Self) -> Option<bool> {
        self.0.points_to(peer, &other.0)
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}

impl TokenView for Krl {
    fn tokens(config: &KrlConfig) -> u32 {
        config.k
    }

    fn holds_token(&self) -> bool {
        self.0.holds_token()
    }

    fn tokens_held(&self) -> u32 {
        self.0.tokens_held()
    }

    fn in_cs(&self) -> bool {
        self.0.in_cs()
    }
}
