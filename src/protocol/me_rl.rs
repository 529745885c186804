//! The Reverse Link (RL) token algorithm for mutual exclusion on a mobile ad hoc network.
//!
//! J. E. Walter, J. L. Welch, N. H. Vaidya, "A Mutual Exclusion Algorithm for Ad Hoc
//! Mobile Networks", Wireless Networks 7(6), 2001 (cited below as *WWV*; §4 is the
//! algorithm and its pseudocode, §5 the correctness proof). The seed slides
//! (the course slides, "Notion of Height" to "Link formation") present the
//! same algorithm, extracted from pictures; where they are garbled this file follows WWV
//! and says so.
//!
//! # Idea
//!
//! Every node has a distinct [`Height`]; a link is directed from the higher end to the
//! lower. The token holder is the lowest node, and requests flow downhill to it: a
//! node's `next` is its lowest neighbour. When link changes leave a node without the
//! token and without an outgoing link (a *sink*), it raises its height above a
//! neighbour (`RaiseHeight`, the Gafni–Bertsekas link reversal), so the links again lead
//! to the token (WWV §5 Lemma 1: a DAG is token oriented iff it has no sink). The token
//! carries its holder's height; the receiver puts itself just below it, so the token's
//! height only ever decreases (`h2` goes down by one per hop).
//!
//! # State
//!
//! Exactly the slides' "Data Structures" list: `status`, `N`, `myHeight`, `height[j]`,
//! `tokenHolder`, `next`, `Q`, `receivedLI[j]`, `forming[j]`, `formHeight[j]`. The
//! per-neighbour variables are kept in one record per link this node has been told is up
//! ([`Rl`]'s `links`), in one of two states: *forming* (the link formed but no `LinkInfo`
//! from `j` has arrived yet: `j ∉ N`, `forming[j]`, `formHeight[j]`) or *neighbour*
//! (`j ∈ N`, `height[j]`, `receivedLI[j]`). A link that failed has no record, which is the
//! slides' reset on failure (`receivedLI[j] := true`, `j` out of `N` and `Q`) and ours
//! (`forming[j] := false`, see below). So `forming[j]` and `j ∈ N` can never both hold,
//! and `height[j]` can never be read for a non-neighbour.
//!
//! # Choices where the slides and the paper are silent or undefined
//!
//! - **Messages from a node that is not a neighbour** (the simulator's `drain` link-break
//!   semantics delivers messages already in flight after both ends were told `LinkDown`):
//!   a `Token` is always accepted, so the token is never lost (its sender already gave it
//!   up); `height[j]` is then not recorded, as `j ∉ N`. A `Request` from `j ∉ N` is
//!   ignored: `j` was told of the failure too and re-routes its request itself (slide
//!   "Link Failures": `next ∉ N` ⇒ `ForwardRequest`). A `LinkInfo` from `j` is processed
//!   only if `j ∈ N` or the link to `j` is forming; otherwise it is stale and ignored (in
//!   particular it must not put `j` back into `N`, or this node would send over a link
//!   that no longer exists).
//! - **Link failure also clears `forming[j]`** (the slide resets `receivedLI[j]` only),
//!   for the same reason: a late `LinkInfo` over the dead link is not a formation.
//! - **A node with no neighbours** (`N = ∅`) is not treated as a sink: `RaiseHeight`
//!   takes a minimum over `N`, undefined for the empty set, and there is nobody to send
//!   `LinkInfo` to. `ForwardRequest` with `N = ∅` sends nothing and sets `next := i`
//!   (no route).
//! - **A pending request is re-sent when `next ∉ N`, except at the token holder.** The
//!   `LinkInfo` handler re-routes when `myHeight < height[next]` (slides, WWV §4). At the
//!   token holder `next = i` (slides "Token(h) msg received" and "GiveTokenToNext"), and
//!   the test is false: `height[i]` can only be the node's own height, and
//!   `ForwardRequest` is "called when a node i does not hold the token" (its slide); the
//!   holder serves its `Q` when it leaves the CS. For a non-holder the test is undefined
//!   when `next` is no longer a neighbour, which happens only after the node was isolated
//!   (`ForwardRequest` with `N = ∅` sets `next := i`). We read it as true there, the
//!   reading the "Link Failures" slide uses (`next ∉ N_i` ⇒ `ForwardRequest`, "if next
//!   has failed"). Without it an isolated requester whose old `next` comes back as a
//!   *lower* neighbour would never re-send (see the test
//!   `isolated_requester_resends_when_a_link_forms`). An earlier version applied this reading also
//!   applied at the holder, which then sent a `Request` for the token it held on every
//!   `LinkInfo` it received in its CS with waiters (test
//!   `a_holder_in_its_cs_never_requests_its_own_token`).
//! - **`Q` holds each node at most once** (`Enqueue` does nothing if the node is
//!   there). WWV §5's variant function speaks of *the* position of `p_{j-1}` in
//!   `Q_{p_j}`; a neighbour re-routing to the same node would otherwise be served twice.
//! - **`Request(h)` re-routes only when `Q = [j]`**, as the slide shows. (A version of
//!   the handler that also re-routes when `next` became higher would behave the same:
//!   under FIFO links the `LinkInfo` that reveals the change always arrives before the
//!   `Request` and re-routes already.)
//! - **`Token(h)` handling sends `LinkInfo(myHeight)` to every neighbour, the sender
//!   included** (WWV §4: the receiver informs all its neighbours). It must include the
//!   sender: the sender set `receivedLI[i] := false`, and only a `LinkInfo` from `i`
//!   carrying the height it predicted, `(h1, h2 − 1, i)`, sets it back (WWV §4's
//!   `LinkInfo` handler: if `receivedLI[j]` record `h`, else if `height[j] = h` set
//!   `receivedLI[j] := true`; the slide shows this as a second `receivedLI[j] = True`
//!   box). Otherwise the sender would ignore `i`'s requests for ever (test
//!   `token_goes_back_and_forth_over_one_link`).
//! - **`RaiseHeight`** follows WWV §4 (the slides only draw it): `h1 := 1 + min h1` over
//!   `N`; if some neighbours have that new `h1`, `h2 := (their least h2) − 1`, else `h2`
//!   is kept; then delete from `Q` the neighbours that are now lower (their link became
//!   outgoing, and they re-route when they get our `LinkInfo`), send `LinkInfo` to `N`,
//!   and `ForwardRequest` if `Q` is not empty.
//! - **`RequestCS` at the token holder** calls `GiveTokenToNext` (WWV §4); the holder in
//!   the remainder section always has an empty `Q`, so that enters the CS at once, as the
//!   slide draws it. An application event that does not fit the status (a second
//!   `RequestCs`, a `ReleaseCs` outside the CS) is ignored: the workload is trusted to
//!   keep at most one request outstanding.
//! - **A requester that is a sink raises its height first.** The slide's `RequestCS`
//!   sends `Request(myHeight)` to the lowest neighbour; if that neighbour is *higher* (the
//!   requester is a sink) it does not enqueue the lower requester and the request is lost.
//!   From a token-oriented start this never happens: every handler that can make a
//!   non-holder a sink (failure, `LinkInfo`, `Request`) raises it at once, so between
//!   events no non-holder with neighbours is a sink (the property test checks this after
//!   every step), and the added check never fires. It matters only for the initial sink
//!   of a component that cannot reach the token at t = 0 (next point), which no message
//!   may ever wake: there `RequestCS` calls `RaiseHeight`, which forwards the request.
//! - **Initial state** ([`Protocol::initial_states`]): the initial holder `h` (parameter
//!   `holder`, node 0 by default: the paper lets any node start with the token) holds it
//!   at `(0, 0, h)`; a node at hop distance `d` from `h` gets `(0, d, i)`, so it has a
//!   neighbour at `d − 1` below it and the graph is a token-oriented DAG. A component
//!   that cannot reach `h` has no token, so it must have a sink: its lowest-id node
//!   `r`, and its node at distance `d` from `r` gets `(0, n + d, i)`. Every such height is
//!   above every height of `h`'s component (`d < n`), so when the components meet, the
//!   new link points towards the token. `r` raises itself when it requests (previous
//!   point), or when a request, a `LinkInfo` or a link change reaches it, as any sink
//!   does; until then the component is quiet. All `height[j]` views are exact,
//!   `receivedLI` all true, `Q` empty, `status` Remainder, `next` the lowest neighbour
//!   (`i` itself for the token holder and for sinks).
//!
//! # Partitions
//!
//! WWV §5 proves no starvation once link changes cease, for a graph in which the token is
//! reachable. Once a sink in a component without the token raises (a link failure cut
//! it off, or a request woke it), its `LinkInfo` makes a neighbour the sink, and so on:
//! `RaiseHeight` goes on as long as the component stays cut off, like Gafni–Bertsekas
//! link reversal without a destination (test
//! `a_tokenless_component_keeps_reversing_until_it_rejoins`). The simulator will see that as a steady stream of `LinkInfo` messages
//! during partitions; it stops when the component rejoins the token's.
//!
//! # Assumptions on the driver
//!
//! Links are FIFO per direction (the `receivedLI` and `formHeight` mechanisms rely on it),
//! and a node is told `LinkUp` before a message sent over the new link reaches it.

use super::neighbour_map::NeighbourMap;
use super::{AppEvent, Ctx, Message, Protocol, TokenStart, TokenView};
use crate::NodeId;
use crate::graph::bfs_forest_from;
use std::collections::VecDeque;
use std::fmt;

/// A node's height `(h1, h2, i)` (slide "Notion of Height"), compared lexicographically:
/// the field order makes the derived `Ord` exactly that. The node id `i` makes heights
/// distinct, so every link has a direction: from the higher end to the lower.
///
/// `h1` is raised by `RaiseHeight` (link reversal); `h2` goes down by one each time the
/// token moves, so it can be negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Height {
    /// Raised by `RaiseHeight` (link reversal).
    pub h1: i64,
    /// One below the sender's on each token hop, so it can be negative.
    pub h2: i64,
    /// The node's id; it breaks ties, so heights are distinct.
    pub id: NodeId,
}

impl Height {
    /// The height `(h1, h2, id)`.
    pub const fn new(h1: i64, h2: i64, id: NodeId) -> Self {
        Self { h1, h2, id }
    }

    /// The height the token's receiver `id` takes from the sender's height `self`: same
    /// `h1`, `h2` one below (slide "Token(h) msg received"; slide "GiveTokenToNext" makes
    /// the sender predict exactly this value for `height[next]`).
    pub const fn just_below(self, id: NodeId) -> Self {
        Self::new(self.h1, self.h2 - 1, id)
    }

    /// The numeric parts, `[h1, h2]` (the model checker's renormalization).
    const fn parts(self) -> [i64; 2] {
        [self.h1, self.h2]
    }

    /// This height with `by` added to its numeric parts.
    const fn shifted(self, by: [i64; 2]) -> Self {
        Self::new(self.h1 + by[0], self.h2 + by[1], self.id)
    }
}

/// The componentwise least of two height parts.
fn floor_of(a: Option<[i64; 2]>, b: [i64; 2]) -> Option<[i64; 2]> {
    Some(a.map_or(b, |a| [a[0].min(b[0]), a[1].min(b[1])]))
}

impl fmt::Display for Height {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.h1, self.h2, self.id)
    }
}

/// `status` (slide "Data Structures"; WWV §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not interested in the critical section.
    Remainder,
    /// Requested the critical section and not yet entered it.
    Waiting,
    /// In the critical section.
    InCs,
}

/// RL's three messages; each carries the sender's height when it was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RlMsg {
    /// "Send me the token": routed downhill to the token holder, one `next` at a time.
    Request(Height),
    /// The token; the receiver goes just below the carried height.
    Token(Height),
    /// "My height is now h": sent on height changes and on link formation.
    LinkInfo(Height),
}

impl Message for RlMsg {
    /// `on_request` and `on_link_info` return at once when the sender has no link record
    /// (the link failed and did not form again); a token is always accepted.
    fn ignored_from_non_neighbour(&self) -> bool {
        !matches!(self, RlMsg::Token(_))
    }

    const KINDS: &'static [&'static str] = &["Request", "Token", "LinkInfo"];

    fn kind_index(&self) -> usize {
        match self {
            RlMsg::Request(_) => 0,
            RlMsg::Token(_) => 1,
            RlMsg::LinkInfo(_) => 2,
        }
    }

    fn carries_token(&self) -> bool {
        matches!(self, RlMsg::Token(_))
    }

    fn height_parts(&self) -> Option<[i64; 2]> {
        match self {
            RlMsg::Request(h) | RlMsg::Token(h) | RlMsg::LinkInfo(h) => Some(h.parts()),
        }
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        match self {
            RlMsg::Request(h) | RlMsg::Token(h) | RlMsg::LinkInfo(h) => *h = h.shifted(by),
        }
    }

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        match self {
            RlMsg::Request(h) | RlMsg::Token(h) | RlMsg::LinkInfo(h) => visit(&mut h.h1),
        }
    }
}

/// What this node keeps about one link it has been told is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Link {
    /// The link formed and no `LinkInfo` from the peer has arrived yet: the peer is not
    /// in `N`, `forming[j]` is true and `formHeight[j]` is our height when it formed
    /// (slide "Link formation").
    Forming { form_height: Height },
    /// The peer is in `N`; `height` is `height[j]`, `received_li` is `receivedLI[j]`.
    Neighbour { height: Height, received_li: bool },
}

/// One node of the RL algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rl {
    /// `i`.
    me: NodeId,
    status: Status,
    /// `myHeight`.
    my_height: Height,
    /// `tokenHolder`, as a count: RL has one token, so 0 or 1; k-mutual exclusion
    /// ([`super::me_krl`]) lets a node hold several.
    tokens: u32,
    /// [`super::me_krl`]'s token forwarding: on leaving the CS with nobody waiting, pass
    /// the token on instead of keeping it. Off in RL.
    forwarding: bool,
    /// `next`: where this node's requests go (its lowest neighbour when it last
    /// forwarded); the node the token was last given to; `me` when it keeps the token or
    /// has no route.
    next: NodeId,
    /// `Q`: nodes (neighbours, and `me` for its own request) waiting for the token
    /// through this node, oldest first; each at most once.
    queue: VecDeque<NodeId>,
    /// `N`, `height`, `receivedLI`, `forming`, `formHeight`, by peer id (sorted): one
    /// entry per link this node was told is up.
    links: NeighbourMap<Link>,
}

impl Rl {
    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.me
    }

    /// `status`: whether the node is idle, waiting for or in the critical section.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Whether the application asked for the CS and has not entered it yet.
    pub fn waiting(&self) -> bool {
        self.status == Status::Waiting
    }

    /// `myHeight`.
    pub fn height(&self) -> Height {
        self.my_height
    }

    /// `height[j]`: this node's view of neighbour `j`'s height; `None` if `j ∉ N`.
    pub fn neighbour_height(&self, j: NodeId) -> Option<Height> {
        match self.link(j)? {
            Link::Neighbour { height, .. } => Some(*height),
            Link::Forming { .. } => None,
        }
    }

    /// `N`, in increasing id order.
    pub fn neighbours(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.links.iter().filter_map(|(&j, link)| match link {
            Link::Neighbour { .. } => Some(j),
            Link::Forming { .. } => None,
        })
    }

    /// `next`.
    pub fn next(&self) -> NodeId {
        self.next
    }

    /// `Q`, oldest first.
    pub fn queue(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.queue.iter().copied()
    }

    /// `receivedLI[j]`: false only between giving `j` the token and receiving `j`'s
    /// `LinkInfo` with the height predicted for it. True for non-neighbours (it is reset
    /// to true when a link fails, slide "Link Failures").
    pub fn received_li(&self, j: NodeId) -> bool {
        match self.link(j) {
            Some(Link::Neighbour { received_li, .. }) => *received_li,
            _ => true,
        }
    }

    /// `forming[j]`: the link to `j` formed and `j`'s first `LinkInfo` has not arrived.
    pub fn forming(&self, j: NodeId) -> bool {
        matches!(self.link(j), Some(Link::Forming { .. }))
    }

    /// `formHeight[j]` while `forming[j]` holds: `myHeight` when the link formed.
    pub fn form_height(&self, j: NodeId) -> Option<Height> {
        match self.link(j)? {
            Link::Forming { form_height } => Some(*form_height),
            Link::Neighbour { .. } => None,
        }
    }

    /// WWV §5 Definition 1: a node is a sink if it does not hold the token and every
    /// neighbour is higher (by its view). A node without neighbours is not one (see the
    /// module docs: there is nothing to raise above).
    pub fn is_sink(&self) -> bool {
        !self.holds_token() && self.has_neighbours() && self.no_outgoing_links()
    }

    fn link(&self, j: NodeId) -> Option<&Link> {
        self.links.get(&j)
    }

    fn link_mut(&mut self, j: NodeId) -> Option<&mut Link> {
        self.links.get_mut(&j)
    }

    fn in_n(&self, j: NodeId) -> bool {
        matches!(self.link(j), Some(Link::Neighbour { .. }))
    }

    /// `N` with `height[j]`.
    fn n_heights(&self) -> impl Iterator<Item = (NodeId, Height)> + '_ {
        self.links.iter().filter_map(|(&j, link)| match link {
            Link::Neighbour { height, .. } => Some((j, *height)),
            Link::Forming { .. } => None,
        })
    }

    fn has_neighbours(&self) -> bool {
        self.n_heights().next().is_some()
    }

    /// "No outgoing links": every neighbour is higher (vacuously true for `N = ∅`).
    fn no_outgoing_links(&self) -> bool {
        self.n_heights().all(|(_, h)| self.my_height < h)
    }

    /// The re-route test of the `LinkInfo` slide, `myHeight < height[next]`: false at
    /// the token holder (`next = i`, and `height[i]` is `myHeight`), true for a
    /// non-holder whose `next ∉ N` (module docs).
    fn next_not_below(&self) -> bool {
        !self.holds_token()
            && self
                .neighbour_height(self.next)
                .is_none_or(|h| self.my_height < h)
    }

    /// `Enqueue(Q, j)`, keeping each node at most once (module docs).
    fn enqueue(&mut self, j: NodeId) {
        if !self.queue.contains(&j) {
            self.queue.push_back(j);
        }
    }

    fn send_link_info_to_n(&self, ctx: &mut Ctx<RlMsg>) {
        for (j, _) in self.n_heights() {
            ctx.send(j, RlMsg::LinkInfo(self.my_height));
        }
    }

    /// Slide "Procedure GiveTokenToNext" (WWV §4): serve the head of `Q` — ourselves
    /// (enter the CS), or a neighbour: give it the token with our height, predict its new
    /// height as just below ours, distrust its height reports until its `LinkInfo`
    /// confirms the prediction (`receivedLI[next] := false`), and if others still wait
    /// here, ask for the token back at once.
    fn give_token_to_next(&mut self, ctx: &mut Ctx<RlMsg>) {
        let Some(next) = self.queue.pop_front() else {
            debug_assert!(false, "GiveTokenToNext with an empty Q");
            return;
        };
        self.next = next;
        if next == self.me {
            self.status = Status::InCs;
            ctx.enter_cs();
            return;
        }
        self.tokens -= 1;
        let predicted = self.my_height.just_below(next);
        match self.link_mut(next) {
            Some(Link::Neighbour {
                height,
                received_li,
            }) => {
                *height = predicted;
                *received_li = false;
            }
            _ => debug_assert!(false, "Q holds {next}, which is not in N"),
        }
        ctx.send(next, RlMsg::Token(self.my_height));
        if self.tokens == 0 && !self.queue.is_empty() {
            ctx.send(next, RlMsg::Request(self.my_height));
        }
    }

    /// Tokens held and not in use by this node's own CS.
    fn free_tokens(&self) -> u32 {
        self.tokens - u32::from(self.status == Status::InCs)
    }

    /// `GiveTokenToNext` for as long as a token is free and someone waits: once in RL
    /// (one token), and for each free token in k-mutual exclusion. A node that still
    /// holds a token afterwards keeps `next = i`.
    fn serve_queue(&mut self, ctx: &mut Ctx<RlMsg>) {
        while self.free_tokens() > 0 && !self.queue.is_empty() {
            self.give_token_to_next(ctx);
        }
        if self.tokens > 0 {
            self.next = self.me;
        }
    }

    /// [`super::me_krl`]'s token forwarding: the token just released, with nobody
    /// waiting, goes to the highest neighbour (as if it had asked), where it is kept.
    fn forward_idle_token(&mut self, ctx: &mut Ctx<RlMsg>) {
        if let Some((highest, _)) = self.n_heights().max_by_key(|&(_, h)| h) {
            self.queue.push_back(highest);
            self.give_token_to_next(ctx);
            if self.tokens > 0 {
                self.next = self.me;
            }
        }
    }

    /// Slide "Procedure ForwardRequest" (WWV §4): `next` := the lowest neighbour; send it
    /// `Request(myHeight)`. With `N = ∅` nothing can be sent; `next := i` records that
    /// there is no route, so the request is re-sent once a neighbour appears.
    fn forward_request(&mut self, ctx: &mut Ctx<RlMsg>) {
        match self.n_heights().min_by_key(|&(_, h)| h) {
            Some((lowest, _)) => {
                self.next = lowest;
                ctx.send(lowest, RlMsg::Request(self.my_height));
            }
            None => self.next = self.me,
        }
    }

    /// Slide "Procedure RaiseHeight" (drawn only; WWV §4 gives the rule): go one level
    /// above the lowest neighbour's `h1` and, among neighbours already at that level, just
    /// below the lowest, so that this node has an outgoing link again; drop from `Q` the
    /// neighbours that are now lower (they re-route on our `LinkInfo`); tell `N`; re-send
    /// the pending request.
    fn raise_height(&mut self, ctx: &mut Ctx<RlMsg>) {
        let Some(min_h1) = self.n_heights().map(|(_, h)| h.h1).min() else {
            debug_assert!(false, "RaiseHeight with N = ∅");
            return;
        };
        let h1 = min_h1 + 1;
        let level_min_h2 = self
            .n_heights()
            .filter(|(_, h)| h.h1 == h1)
            .map(|(_, h)| h.h2)
            .min();
        self.my_height.h1 = h1;
        if let Some(m) = level_min_h2 {
            self.my_height.h2 = m - 1;
        }
        let mut queue = std::mem::take(&mut self.queue);
        queue.retain(|&k| self.neighbour_height(k).is_none_or(|h| h > self.my_height));
        self.queue = queue;
        self.send_link_info_to_n(ctx);
        if !self.queue.is_empty() {
            self.forward_request(ctx);
        }
    }

    /// Slide "Request(h) msg received" (WWV §4).
    fn on_request(&mut self, j: NodeId, h: Height, ctx: &mut Ctx<RlMsg>) {
        match self.link_mut(j) {
            // `receivedLI[j] = false`: `j` was given the token after sending this; its
            // request is obsolete and its height stale. Ignore.
            Some(Link::Neighbour {
                received_li: false, ..
            }) => return,
            Some(Link::Neighbour { height, .. }) => *height = h,
            // Not a neighbour (a late message over a failed link): `j` re-routes itself.
            _ => return,
        }
        if self.my_height < h {
            self.enqueue(j);
        }
        if self.holds_token() {
            // RL: only an idle holder serves (status = Remainder); in the CS its one
            // token is in use. With several tokens, any free one serves.
            self.serve_queue(ctx);
        } else if self.no_outgoing_links() {
            self.raise_height(ctx);
        } else if self.queue.len() == 1 && self.queue[0] == j {
            self.forward_request(ctx);
        }
    }

    /// Slide "Token(h) msg received" (WWV §4): hold the token, go just below the sender,
    /// tell every neighbour (the sender included, module docs), serve `Q` or keep the
    /// token (`next := i`).
    fn on_token(&mut self, j: NodeId, h: Height, ctx: &mut Ctx<RlMsg>) {
        self.tokens += 1;
        if let Some(Link::Neighbour { height, .. }) = self.link_mut(j) {
            *height = h;
        }
        self.my_height = h.just_below(self.me);
        self.send_link_info_to_n(ctx);
        if self.queue.is_empty() {
            self.next = self.me;
        } else {
            self.serve_queue(ctx);
        }
    }

    /// Slide "LinkInfo(h) recvd from j" (WWV §4).
    fn on_link_info(&mut self, j: NodeId, h: Height, ctx: &mut Ctx<RlMsg>) {
        let my_height = self.my_height;
        let Some(link) = self.link_mut(j) else {
            // The link failed since `j` sent this: stale, and `j` must not re-enter `N`.
            return;
        };
        match *link {
            // First `LinkInfo` over a new link: `N := N ∪ {j}`, `forming[j] := false`;
            // if our height changed since we sent ours, `j` has a stale one: re-send.
            // `receivedLI[j]` is true for a new link, so `height[j] := h`.
            Link::Forming { form_height } => {
                *link = Link::Neighbour {
                    height: h,
                    received_li: true,
                };
                if my_height != form_height {
                    ctx.send(j, RlMsg::LinkInfo(my_height));
                }
            }
            Link::Neighbour {
                ref mut height,
                received_li: true,
            } => *height = h,
            // Waiting for `j`'s answer to the token: only the height we predicted for it
            // is that answer (WWV §4); anything else was sent before `j` got the token.
            Link::Neighbour {
                height,
                ref mut received_li,
            } => {
                if height == h {
                    *received_li = true;
                }
            }
        }
        if !self.holds_token() && self.no_outgoing_links() {
            self.raise_height(ctx);
        } else if !self.queue.is_empty() && self.next_not_below() {
            self.forward_request(ctx);
        }
    }
}

impl Rl {
    /// The legal initial states (module docs, "Initial state") with a token at each node
    /// of `holders` (a node listed twice holds two), and token forwarding on or off.
    pub(super) fn initial(
        holders: &[NodeId],
        forwarding: bool,
        neighbours: &[Vec<NodeId>],
    ) -> Vec<Self> {
        let heights = initial_heights(neighbours, holders);
        heights
            .iter()
            .enumerate()
            .map(|(i, &my_height)| {
                let me = node_id(i);
                let links: NeighbourMap<Link> = neighbours[i]
                    .iter()
                    .map(|&j| {
                        let link = Link::Neighbour {
                            height: heights[j as usize],
                            received_li: true,
                        };
                        (j, link)
                    })
                    .collect();
                let next = links
                    .keys()
                    .map(|&j| heights[j as usize])
                    .filter(|h| *h < my_height)
                    .min()
                    .map_or(me, |h| h.id);
                Rl {
                    me,
                    status: Status::Remainder,
                    my_height,
                    tokens: holders.iter().filter(|&&h| h == me).count() as u32,
                    forwarding,
                    next,
                    queue: VecDeque::new(),
                    links,
                }
            })
            .collect()
    }
}

impl Protocol for Rl {
    type Msg = RlMsg;

    type Config = TokenStart;

    /// A token-oriented DAG towards the initial holder (node 0 by default) on its
    /// component; other components oriented towards their lowest id, above the holder's
    /// (module docs, "Initial state").
    fn initial_states(config: &TokenStart, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        Rl::initial(&[config.holder], false, neighbours)
    }

    #[inline]
    fn prefetch(&self) {
        self.links.prefetch();
        crate::prefetch::deque(&self.queue);
    }

    /// Slide "Link formation": send `LinkInfo(myHeight)` to `j`, `forming[j] := true`,
    /// `formHeight[j] := myHeight`. `j` joins `N` when its `LinkInfo` arrives.
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<RlMsg>) {
        let link = Link::Forming {
            form_height: self.my_height,
        };
        let twice = self.links.insert(peer, link).is_some();
        debug_assert!(!twice, "link {}-{peer} formed twice", self.me);
        ctx.send(peer, RlMsg::LinkInfo(self.my_height));
    }

    /// Slide "Link Failures": `N := N − {j}`, `Delete(Q, j)`, `receivedLI[j] := true` (and
    /// `forming[j] := false`): all by dropping the link's record. Then a node without the
    /// token that lost its last outgoing link raises its height; one that lost `next`
    /// re-sends its pending request.
    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<RlMsg>) {
        self.links.remove(&peer);
        self.queue.retain(|&k| k != peer);
        if !self.holds_token() {
            if self.is_sink() {
                self.raise_height(ctx);
            } else if !self.queue.is_empty() && !self.in_n(self.next) {
                self.forward_request(ctx);
            }
        }
    }

    /// Every rule compares heights or derives one from another by a constant step
    /// (`RaiseHeight`'s `1 + min h1` and `least h2 − 1`, the token's `h2 − 1`); only
    /// the initial heights are absolute.
    const SHIFT_INVARIANT: bool = true;

    /// No handler reads the event time.
    const READS_TIME: bool = false;
    const SENDS_ROUTED: bool = false;

    fn height_floor(&self) -> Option<[i64; 2]> {
        self.links
            .values()
            .map(|link| match link {
                Link::Forming { form_height } => form_height.parts(),
                Link::Neighbour { height, .. } => height.parts(),
            })
            .fold(Some(self.my_height.parts()), floor_of)
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        self.my_height = self.my_height.shifted(by);
        for link in self.links.values_mut() {
            match link {
                Link::Forming { form_height: h } | Link::Neighbour { height: h, .. } => {
                    *h = h.shifted(by);
                }
            }
        }
    }

    /// `h1` is only compared, or made as `1 + min h1` (`RaiseHeight`) or copied (the
    /// token's receiver, every view); `h2` is not a level.
    const LEVELS_STEP_BY_ONE: bool = true;

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        visit(&mut self.my_height.h1);
        for link in self.links.values_mut() {
            match link {
                Link::Forming { form_height: h } | Link::Neighbour { height: h, .. } => {
                    visit(&mut h.h1);
                }
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: RlMsg, ctx: &mut Ctx<RlMsg>) {
        match msg {
            RlMsg::Request(h) => self.on_request(from, h, ctx),
            RlMsg::Token(h) => self.on_token(from, h, ctx),
            RlMsg::LinkInfo(h) => self.on_link_info(from, h, ctx),
        }
    }

    /// Slides "Request for CS" and "Release the CS" (WWV §4).
    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<RlMsg>) {
        match event {
            AppEvent::RequestCs => {
                if self.status != Status::Remainder {
                    return;
                }
                self.status = Status::Waiting;
                self.enqueue(self.me);
                if self.holds_token() {
                    debug_assert_eq!(self.queue.len(), 1, "idle holder with waiters");
                    self.serve_queue(ctx);
                } else if self.queue.len() == 1 {
                    // Not on the slide: a sink raises first (module docs, "A requester
                    // that is a sink"); RaiseHeight then forwards the request.
                    if self.is_sink() {
                        self.raise_height(ctx);
                    } else {
                        self.forward_request(ctx);
                    }
                }
            }
            AppEvent::ReleaseCs => {
                if self.status != Status::InCs {
                    return;
                }
                self.status = Status::Remainder;
                if !self.queue.is_empty() {
                    self.serve_queue(ctx);
                } else if self.forwarding {
                    self.forward_idle_token(ctx);
                }
            }
        }
    }
}

impl super::ReplayView for Rl {
    fn label(&self) -> String {
        self.my_height.to_string()
    }

    /// From the higher height to the lower, by the nodes' own heights (each node's view
    /// of the other may lag).
    fn points_to(&self, _peer: NodeId, other: &Self) -> Option<bool> {
        Some(self.my_height > other.my_height)
    }

    fn describe(&self) -> String {
        let mut out = format!(
            "height {}\nstatus {:?}\ntokens {}\nnext {}\nqueue {:?}\n",
            self.my_height, self.status, self.tokens, self.next, self.queue
        );
        for (j, link) in self.links.iter() {
            match link {
                Link::Forming { form_height } => out.push_str(&format!(
                    "link to {j} forming (height then {form_height})\n"
                )),
                Link::Neighbour {
                    height,
                    received_li,
                } => out.push_str(&format!(
                    "view of {j}: {height}{}\n",
                    if *received_li {
                        ""
                    } else {
                        " (LinkInfo awaited)"
                    }
                )),
            }
        }
        out
    }
}

impl TokenView for Rl {
    /// `tokenHolder`: cleared when the token is sent, so a token in flight is held by
    /// nobody.
    fn holds_token(&self) -> bool {
        self.tokens > 0
    }

    fn tokens_held(&self) -> u32 {
        self.tokens
    }

    fn in_cs(&self) -> bool {
        self.status == Status::InCs
    }
}

fn node_id(i: usize) -> NodeId {
    NodeId::try_from(i).expect("node count fits NodeId")
}

/// The initial heights (module docs, "Initial state"): `(0, d, i)` at hop distance `d`
/// from the nearest token holder; `(0, n + d, i)` at distance `d` from the lowest id of
/// a component that does not contain a holder.
///
/// # Panics
///
/// If a list names a node `>= neighbours.len()` (the lists come from the simulator, so
/// that is a bug, not bad input).
fn initial_heights(neighbours: &[Vec<NodeId>], holders: &[NodeId]) -> Vec<Height> {
    let offset = i64::try_from(neighbours.len()).expect("node count fits i64");
    let forest = bfs_forest_from(neighbours, holders);
    (0..neighbours.len())
        .map(|i| {
            let base = if holders.contains(&forest.root[i]) {
                0
            } else {
                offset
            };
            Height::new(0, base + i64::from(forest.depth[i]), node_id(i))
        })
        .collect()
}
