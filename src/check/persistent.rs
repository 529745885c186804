//! Persistent sets for the states after the environment has spent its budgets: which of
//! a state's enabled steps the search must take, so that the others may wait.
//!
//! Once every change and every request is spent, only deliveries and releases remain,
//! and in the mutual-exclusion searches that is where most states are (on ring:4 with
//! two overlapping changes and two requests, 87 % of the states at three million
//! transitions; about six messages in flight in each). Most of them are the same
//! height messages delivered at different nodes in different orders. Sleep sets
//! ([`super::explore`]) prune transitions but keep every state; persistent sets
//! (Godefroid, *Partial-Order Methods for the Verification of Concurrent Systems*, LNCS
//! 1032, 1996, ch. 4 and 6; Peled, "All from one, one for all", CAV 1993) prune
//! states: from a state `s` only the steps of a set `T` are taken, chosen so that no
//! execution from `s` can do anything that interferes with `T` before a step of `T`
//! is taken.
//!
//! **The set.** `T` is every enabled step (delivery or release) of a set `N` of nodes.
//! A step outside `T` is a step at a node outside `N`, and it commutes with every step
//! of `T` (different nodes, [`super::explore`]'s independence), so the one thing to
//! rule out is that such steps *enable* a new step at a node of `N`, which would then
//! compete with `T` (two steps at one node are dependent). A node of `N` gets a new
//! enabled step only when a message is put on an empty link into it: a message put
//! behind others leaves the head, and so the step, as it was; a release needs the node
//! to enter its critical section, which only its own step does; no message is routed
//! ([`crate::protocol::Protocol::SENDS_ROUTED`]), no change or request remains, and a
//! message sent over a link that is down is lost. So `N` is closed under: *a node `x`
//! outside `N` that can act before `N` does, with a link up to a node `m` of `N` and
//! no message on `x → m`, is in `N`*. A node can act only if it has an enabled step or
//! is reached, over links that are up and through nodes outside `N` (the nodes of `N`
//! do not act in such an execution), from one that has. Each node with an enabled step
//! gives one closure of itself; the smallest (fewest enabled steps, then lowest node)
//! that passes the two conditions below is taken, and when none does, or it is every
//! enabled step, the state is expanded fully.
//!
//! **Visibility.** The properties must see the same executions up to steps that change
//! nothing they read: every step of `T` must leave each property's judgement of the
//! state (holds or not) as it was, in every successor; the judgements are the
//! propositions the verdicts are made of, so a reduced execution passes through states
//! judged as the full one's are, in the same order, with steps that change no
//! judgement dropped or moved (stuttering).
//!
//! **Cycles.** A step outside `T` may be postponed round a cycle for ever (the
//! *ignoring* problem). The search is breadth-first, and a state is expanded fully if
//! one of `T`'s successors is one already expanded (itself included). On any cycle of
//! reduced moves, take the state whose expansion came last: its successor on the cycle
//! was expanded before, so it was expanded fully. Every cycle, and so every infinite
//! path, passes through fully expanded states; with the gap abstraction
//! ([`super::gaps`]) this holds of the finite abstract graph, which every real cycle
//! and infinite path maps onto, since the choice of `T` reads only what the
//! abstraction keeps (which links carry messages, the links, and the judgements).
//!
//! **What is kept.** With the three conditions, every execution of the full system
//! from a state has one in the reduced graph that passes through the same judgements in
//! the same order (Peled's theorem for the next-free temporal logic: the first step of
//! `T` the execution takes is moved to the front, past steps it commutes with; if it
//! takes none, a step of `T`, which changes no judgement and commutes with all of them,
//! is put in front), and every terminal state is reached. Hence a state violating a
//! safety property, and a terminal state violating `requests_served`, are found if they
//! exist.
//!
//! For the *eventually* properties the execution is a fair one that stays bad for ever,
//! and the reduced one is fair too. Every step of `T` is owed (a delivery or a
//! release) and stays enabled until a step of `T` is taken, so a fair execution takes a
//! step of `T`: only the first case of the construction happens, and the reduced
//! execution takes the same steps, each node the same ones in the same order (steps are
//! moved only past steps at other nodes). So a delivery or release it takes finitely
//! often is one the original takes finitely often, which, being fair, ends it disabled
//! for good (a link with nothing more sent on it, empty; a node out of its critical
//! section), and the reduced execution, with the same steps at each node, ends in the
//! same. Its states from some point on lie in one strongly connected component of bad
//! states of the stored graph, where every owed step enabled throughout is taken or,
//! somewhere, disabled: the test [`super::liveness`] applies finds a fair cycle there.
//! The moves it follows are real ones between stored states, so the cycle it reports
//! is a real execution.
//!
//! **Why a second try.** Sleep sets ([`super::explore`]) are off where persistent sets
//! are on: the sleep-set argument (every state reached by a path on which no step is
//! asleep) needs every state's successors by every step not asleep, which a persistent
//! set does not give, and no argument is made here that the two together keep the
//! judgements. Without sleep sets a reduced state generates more transitions: on
//! complete:4 with one change and one request, me-rl's search with sleep sets closes at
//! 880,019 transitions, the one with persistent sets reaches 274,499 states and is cut
//! at the 1,000,000. So [`super::run`] takes persistent sets as a second try, when the
//! search with sleep sets alone is cut by its budget; and the breadth-first order of a
//! reduced graph is not the system's, so a violation it finds may not be a shortest
//! one: the first search's violations are kept.
//!
//! Where the environment ends: a step that spends the last change or request is never
//! left asleep in the states before, so every state where persistent sets begin is
//! reached (the sleep-set argument covers the states before, whose budgets every path to
//! them leaves unspent).

use super::model::{ProtocolModel, Step, When};
use super::sets::NodeSet;
use super::state::CheckState;
use crate::NodeId;
use crate::protocol::Protocol;
use crate::sim::ChangeMode;

/// Whether persistent sets may be used for `model` at all: a protocol that reads no
/// time (else nothing commutes) and routes nothing, no symmetry reduction (it renames
/// steps), changes overlapping traffic (with `serialize`, the dead-changes quotient may
/// end the change budget at any step, [`super::dead_changes`]) and no property judged
/// only in quiescent states (quiescence is not among the judgements kept visible).
pub fn applies<P: Protocol>(model: &ProtocolModel<P>) -> bool {
    !P::READS_TIME
        && !P::SENDS_ROUTED
        && !model.symmetry
        && model.change_mode == ChangeMode::Overlap
        && model.properties.iter().all(|p| p.when != When::Quiescent)
}

/// Whether `state` is one where persistent sets are used: every change and request
/// spent, nothing routed.
pub fn after_environment<P: Protocol>(state: &CheckState<P>) -> bool {
    state.changes_left == 0 && state.requests_left == 0 && state.routed.is_empty()
}

/// Whether taking `step` in `state` (not after the environment) leads to a state after
/// the environment: the last change when no request remains, or the reverse. Such a
/// step is never left asleep ([`super::explore`]), so every state where the persistent
/// sets begin is reached.
pub fn ends_environment<P: Protocol>(state: &CheckState<P>, step: &Step) -> bool {
    match step {
        Step::Link { .. } => state.changes_left == 1 && state.requests_left == 0,
        Step::Request { .. } => state.requests_left == 1 && state.changes_left == 0,
        _ => false,
    }
}

/// The node a delivery or release is taken at.
fn node_of(step: &Step) -> Option<NodeId> {
    match *step {
        Step::Deliver { to, .. } => Some(to),
        Step::Release { node } => Some(node),
        Step::DeliverRouted { .. } | Step::Request { .. } | Step::Link { .. } => None,
    }
}

/// The smallest set of nodes containing `seed` closed under the rule of the module
/// docs.
fn closure<P: Protocol>(
    model: &ProtocolModel<P>,
    state: &CheckState<P>,
    acting: NodeSet,
    seed: NodeId,
) -> NodeSet {
    let up = |a: NodeId, b: NodeId| state.links.contains((a.min(b), a.max(b)));
    let carries =
        |from: NodeId, to: NodeId| state.queues.links().any(|((f, t), _)| (f, t) == (from, to));
    let nodes = model.nodes as NodeId;
    let mut set = NodeSet::from_iter([seed]);
    loop {
        // The nodes outside the set that can act before it does.
        let mut can_act: NodeSet = acting.iter().filter(|n| !set.contains(*n)).collect();
        let mut frontier: Vec<NodeId> = can_act.iter().collect();
        while let Some(x) = frontier.pop() {
            for y in (0..nodes).filter(|&y| y != x && !set.contains(y) && up(x, y)) {
                if can_act.insert(y) {
                    frontier.push(y);
                }
            }
        }
        let joining: Vec<NodeId> = can_act
            .iter()
            .filter(|&x| set.iter().any(|m| up(x, m) && !carries(x, m)))
            .collect();
        if joining.is_empty() {
            return set;
        }
        for x in joining {
            set.insert(x);
        }
    }
}

/// The steps to take from `state` (after the environment, `enabled` its enabled
/// steps), each with its successors, when a persistent set smaller than `enabled`
/// passes the visibility and cycle conditions (module docs); `None`: take every step.
/// `expanded` says whether a successor is a state already expanded.
pub fn choose<P: Protocol>(
    model: &ProtocolModel<P>,
    state: &CheckState<P>,
    enabled: &[Step],
    expanded: impl Fn(&CheckState<P>) -> bool,
) -> Option<Vec<(Step, Vec<CheckState<P>>)>> {
    debug_assert!(after_environment(state));
    let acting: NodeSet = enabled.iter().filter_map(node_of).collect();
    if acting.len() < 2 {
        return None;
    }
    let mut candidates: Vec<(usize, NodeId, NodeSet)> = acting
        .iter()
        .map(|seed| {
            let set = closure(model, state, acting, seed);
            let steps = enabled
                .iter()
                .filter(|s| node_of(s).is_some_and(|n| set.contains(n)))
                .count();
            (steps, seed, set)
        })
        .filter(|&(steps, ..)| steps < enabled.len())
        .collect();
    candidates.sort_by_key(|&(steps, seed, _)| (steps, seed));
    // Two seeds may close to one set: try it once.
    let mut tried: Vec<NodeSet> = Vec::new();
    candidates.retain(|&(_, _, set)| {
        let first = !tried.contains(&set);
        tried.push(set);
        first
    });
    let judged = |s: &CheckState<P>| -> Vec<bool> {
        model
            .properties
            .iter()
            .map(|p| (p.judge)(model, s).is_ok())
            .collect()
    };
    let before = judged(state);
    let mut successors: Vec<Option<Vec<CheckState<P>>>> = vec![None; enabled.len()];
    let mut invisible: Vec<Option<bool>> = vec![None; enabled.len()];
    for (_, _, set) in candidates {
        let chosen: Vec<usize> = (0..enabled.len())
            .filter(|&i| node_of(&enabled[i]).is_some_and(|n| set.contains(n)))
            .collect();
        let all_invisible = chosen.iter().all(|&i| {
            *invisible[i].get_or_insert_with(|| {
                let after =
                    successors[i].get_or_insert_with(|| model.successors(state, &enabled[i]));
                after.iter().all(|a| judged(a) == before)
            })
        });
        if !all_invisible {
            continue;
        }
        let steps: Vec<(Step, Vec<CheckState<P>>)> = chosen
            .into_iter()
            .map(|i| {
                let after = successors[i]
                    .take()
                    .unwrap_or_else(|| model.successors(state, &enabled[i]));
                (enabled[i].clone(), after)
            })
            .collect();
        // The cycle condition: a successor already expanded means full expansion.
        if steps.iter().flat_map(|(_, after)| after).any(&expanded) {
            return None;
        }
        return Some(steps);
    }
    None
}
