//! Parts cut off for good: once no topology change remains, a component that no property
//! can read again is frozen, its nodes in one fixed form and nothing in flight to them.
//!
//! Mutual exclusion's properties read the tokens, the critical section and the requests
//! waiting in a component that holds a token ([`crate::family::MutualExclusion`]). Once
//! changes stop, a component that holds no token (none held by its nodes, none in
//! flight to them, nobody in its CS) never gets one: a token moves only over a link, and
//! no link will join it to another component again. Yet RL's nodes there keep reversing
//! for ever when one of them waits (a sink with a request raises its height, its
//! neighbour becomes a sink, and so on), and under `overlap` the link-state messages
//! they send each other pile up on a link whose receiver lags: no renormalization makes
//! those states repeat, so the search cannot close. Nothing in that component is read by
//! any property, so nothing in it needs to be told apart.
//!
//! **The quotient.** In the first state with no change left (right after the last
//! change; a budget dropped by [`super::dead_changes`] records no part, since that may
//! happen after any step and sleep sets need the moment fixed, [`super::explore`]), the
//! family names the components no property reads (its [`CutOff`] rule) and the state records their nodes
//! ([`CheckState::cut_off`]); from then on, in every state, each recorded node's
//! protocol state is replaced by one fixed form per node (the first such state the
//! search met there: any fixed one will do, see below), and every message in flight to
//! a recorded node is dropped (none carries a token, or its component would hold one).
//! The waiting set is kept, so a request is enabled at a recorded node exactly when it is
//! in the real system; a request there runs the handler on the fixed form, and what it
//! sends stays inside the part and is dropped.
//!
//! **Why it keeps every verdict.** After the last change the recorded part and the rest
//! share no link: nothing the part does from then on reaches another node (a message to
//! a node that is not a neighbour is never queued; what the part sent before, still in
//! flight over a broken link, is kept and belongs to the rest), and nothing reaches it
//! (the same). So every
//! execution of the real system is an interleaving of an execution of the rest with one
//! of the part, and the rest's executions are those of the quotient system, requests at
//! recorded nodes included (each takes one from the budget and marks its node waiting,
//! in both). The properties read only the rest: the part holds no token and nobody in
//! it is in the CS, now or later, and a waiting node there is in a component holding no
//! token, which `requests_eventually_served` does not count. Fairness projects: a fair
//! execution of the real system is fair on the rest, and a fair execution of the rest
//! extends to a fair one of the whole by interleaving any fair execution of the part.
//! So a stuck state or a fair cycle of bad states exists in one exactly when it does in
//! the other ([`super::liveness`]).
//!
//! **What it assumes of the protocol**: a node gets a token only by receiving one, and
//! enters its CS only holding one (RL and k-RL: a token count rises only in the token
//! handler). A variant that broke this could make a token inside a frozen part, from a
//! message the quotient dropped, and the token count would not see it. A request at a
//! recorded node still runs its handler; if a token or the CS appears there, the state
//! is left unfrozen, so the token count and the CS count judge it as it is.
//!
//! One judgement changes its meaning: *terminal* (no action enabled) now means nothing
//! left to happen outside the recorded parts, where a real execution may still reverse
//! for ever. `requests_served` judged there fails exactly when a node waits, in a
//! component that holds a token, with nothing left that could serve it: a violation of
//! the claim it bounds.
//!
//! The record is taken once, at the moment the budget runs out, and not recomputed: a
//! component that loses its token later (sent over a link that is down) is not frozen.
//! Freezing it at that step would make the step dependent on every step in its
//! component, which sleep sets would then have to know in advance ([`super::explore`]).
//!
//! Applies where the family gives a rule (mutual exclusion) and the exact quotients are
//! on (`--renormalize`).

use super::sets::NodeSet;
use super::state::CheckState;
use crate::NodeId;
use crate::protocol::{Message, Protocol};
use std::sync::OnceLock;

/// Which nodes' components no property reads once changes stop, as the family defines
/// it; judged on a state with no change left.
pub type Unread<P> = Box<dyn Fn(&CheckState<P>) -> NodeSet + Send + Sync>;

/// The tokens held and in flight in a state, as the family counts them.
pub type Tokens<P> = Box<dyn Fn(&CheckState<P>) -> u32 + Send + Sync>;

/// A family's rule for parts cut off for good, and the fixed form of each node there.
pub struct CutOff<P: Protocol> {
    /// The family's rule; `None`: every part may be read (leader election, routes).
    unread: Option<Unread<P>>,
    /// The family's count of tokens held and in flight (for [`Self::keeps_tokens`]).
    tokens: Option<Tokens<P>>,
    /// Per node, its fixed form while recorded: the first one met. Which one does not
    /// matter (module docs); that it never changes does, so equal states stay equal.
    forms: Vec<OnceLock<P>>,
}

impl<P: Protocol> CutOff<P> {
    /// No part is ever cut off.
    pub fn never() -> Self {
        Self {
            unread: None,
            tokens: None,
            forms: Vec::new(),
        }
    }

    /// Parts named by `unread`, with tokens counted by `tokens`, in a system of `nodes`
    /// nodes.
    pub fn by(unread: Unread<P>, tokens: Tokens<P>, nodes: usize) -> Self {
        Self {
            unread: Some(unread),
            tokens: Some(tokens),
            forms: (0..nodes).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Whether the family gives a rule.
    pub fn applies(&self) -> bool {
        self.unread.is_some()
    }

    /// Whether a request or a release at one node, leading from `before` to `after`,
    /// leaves every token where it was or sends it to a neighbour over a link that is
    /// up: no token lost, none made or destroyed. Such a step changes no component's
    /// holding a token in any graph that keeps that link, so it commutes with the last
    /// change made elsewhere, record included ([`super::explore`]).
    pub fn keeps_tokens(&self, before: &CheckState<P>, after: &CheckState<P>) -> bool {
        let Some(tokens) = &self.tokens else {
            return true;
        };
        // A routed token (Raymond's) may leave the component: never independent.
        let routed = |s: &CheckState<P>| s.routed.iter().filter(|m| m.2.carries_token()).count();
        after.tokens_lost == before.tokens_lost
            && tokens(after) == tokens(before)
            && routed(after) == routed(before)
    }

    /// Records the parts no property reads, if no change remains and they are not
    /// recorded yet, and freezes the recorded parts (module docs).
    pub fn freeze(&self, state: &mut CheckState<P>) {
        let Some(unread) = &self.unread else {
            return;
        };
        if state.changes_left > 0 {
            return;
        }
        let frozen = match state.cut_off {
            Some(frozen) => frozen,
            None => {
                let frozen = unread(state);
                state.cut_off = Some(frozen);
                frozen
            }
        };
        if frozen.is_empty() {
            return;
        }
        let unread_now = unread(state);
        if !frozen.iter().all(|v| unread_now.contains(v)) {
            // A token or the CS appeared in a recorded part, which the protocol should
            // never allow (module docs): leave the state as it is, for the properties to
            // judge.
            return;
        }
        state
            .queues
            .retain(|_, to, msg| !frozen.contains(to) || msg.carries_token());
        state
            .routed
            .retain(|&(_, dest, ref msg)| !frozen.contains(dest) || msg.carries_token());
        for v in frozen.iter() {
            let node = &mut state.nodes[v as usize];
            let form = self.forms[v as usize].get_or_init(|| node.clone());
            if node != form {
                *node = form.clone();
            }
        }
    }
}

/// The nodes of `state` whose component holds no token: no node of it holds one, none is
/// in flight to one of its nodes (on a link, even a broken one, since a message in
/// flight is still delivered; or routed along a path), and none of its nodes is in the
/// CS. Mutual exclusion's rule for [`CutOff`].
pub fn tokenless<P: Protocol>(state: &CheckState<P>, holds: impl Fn(&P) -> bool) -> NodeSet {
    let graph = state.graph();
    let mut has_token = vec![false; state.nodes.len()];
    for (v, node) in state.nodes.iter().enumerate() {
        if holds(node) || state.in_cs.contains(v as NodeId) {
            has_token[graph.label(v as NodeId) as usize] = true;
        }
    }
    for (_, to, m) in state.queues.iter() {
        if m.carries_token() {
            has_token[graph.label(to) as usize] = true;
        }
    }
    for (origin, dest, m) in &state.routed {
        if m.carries_token() && graph.connected(*origin, *dest) {
            has_token[graph.label(*dest) as usize] = true;
        }
    }
    (0..state.nodes.len() as NodeId)
        .filter(|&v| !has_token[graph.label(v) as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckSetup;
    use crate::check::graph::SmallGraph;
    use crate::check::model::{ProtocolModel, Step};
    use crate::family::{MutualExclusion, Watches};
    use crate::protocol::TokenView;
    use crate::protocol::me_rl::Rl;

    fn ring_cut_in_two(cut_off: bool) -> (ProtocolModel<Rl>, CheckState<Rl>) {
        let setup = CheckSetup {
            changes: 2,
            requests: 2,
            renormalize: true,
            cut_off,
            ..CheckSetup::plain(SmallGraph::parse("ring:4").unwrap())
        };
        let mut model = <MutualExclusion as Watches<Rl>>::model(Default::default(), &setup);
        model.renormalize = true;
        if !cut_off {
            model.cut_off = CutOff::never();
        }
        let mut state = model.initial();
        model.exact_quotients(&mut state);
        // ring:4 is 0-1-2-3-0; failing 1-2 and 3-0 leaves {0, 1} and {2, 3}.
        for (a, b) in [(1, 2), (0, 3)] {
            state = model.step(&state, Step::Link { a, b, up: false }).unwrap();
            model.exact_quotients(&mut state);
        }
        (model, state)
    }

    /// Cutting a ring in two away from the token records the tokenless half, once; a
    /// request there makes messages the real system would keep, and here changes only
    /// the budget and the waiting set, however many requests come.
    #[test]
    fn a_request_in_a_part_cut_off_from_every_token_changes_only_the_budget() {
        let (model, state) = ring_cut_in_two(true);
        let holder = (0..4).find(|&v| state.nodes[v as usize].holds_token());
        assert!(matches!(holder, Some(0 | 1)), "the token is in {{0, 1}}");
        let recorded = state.cut_off.expect("recorded at the last change");
        assert_eq!(recorded.iter().collect::<Vec<_>>(), vec![2, 3]);

        let (plain, plain_state) = ring_cut_in_two(false);
        let real = plain.step(&plain_state, Step::Request { node: 2 }).unwrap();
        assert!(
            real.queues.iter().any(|(from, to, _)| (from, to) == (2, 3)),
            "a request at a sink cut off from the token raises it and tells its neighbour"
        );

        let mut after = model.step(&state, Step::Request { node: 2 }).unwrap();
        model.exact_quotients(&mut after);
        assert_eq!(after.cut_off, Some(recorded), "the record is fixed");
        assert!(after.queues.iter().all(|(_, to, _)| !recorded.contains(to)));
        assert_eq!(after.requests_left, state.requests_left - 1);
        assert!(after.waiting.contains(2));
        let mut expected = state.clone();
        expected.requests_left -= 1;
        expected.waiting.insert(2);
        assert_eq!(after, expected, "nothing else changed");

        let mut again = model.step(&after, Step::Request { node: 3 }).unwrap();
        model.exact_quotients(&mut again);
        expected.requests_left -= 1;
        expected.waiting.insert(3);
        assert_eq!(again, expected);
    }

    /// A token appearing in a recorded part (which RL never allows: here, planted in
    /// flight to it) leaves the state unfrozen, for the token count to judge.
    #[test]
    fn a_token_in_a_recorded_part_stops_the_freezing() {
        let (model, state) = ring_cut_in_two(true);
        let mut planted = model.step(&state, Step::Request { node: 2 }).unwrap();
        let height = planted.nodes[3].height();
        planted
            .queues
            .push(3, 2, crate::protocol::me_rl::RlMsg::Token(height));
        let before = planted.clone();
        model.exact_quotients(&mut planted);
        assert_eq!(planted.queues, before.queues, "nothing dropped");
        assert_eq!(planted.nodes, before.nodes, "nothing reset");
        assert_eq!(planted.cut_off, state.cut_off, "the record stays");
    }

    /// The part holding the token is never frozen: a request there is served as in the
    /// real system.
    #[test]
    fn the_part_holding_the_token_runs_as_in_the_real_system() {
        let (model, state) = ring_cut_in_two(true);
        let (plain, plain_state) = ring_cut_in_two(false);
        let mut here = model.step(&state, Step::Request { node: 1 }).unwrap();
        model.exact_quotients(&mut here);
        let mut real = plain.step(&plain_state, Step::Request { node: 1 }).unwrap();
        plain.exact_quotients(&mut real);
        assert_eq!(here.nodes[..2], real.nodes[..2]);
        let live = |s: &CheckState<Rl>| {
            s.queues
                .iter()
                .filter(|&(_, to, _)| to < 2)
                .map(|(f, t, m)| (f, t, *m))
                .collect::<Vec<_>>()
        };
        assert_eq!(live(&here), live(&real));
        assert!(!live(&here).is_empty(), "node 1 asks node 0 for the token");
    }
}
