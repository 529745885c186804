//! Changes that can never come: with changes one at a time, a state from which the
//! network can never be quiet again has no change left in its future, whatever its
//! budget says.
//!
//! With `serialize` (the leader-election paper's one change at a time), a topology
//! change is applied only in a state with nothing in flight. Link reversal in a
//! component cut off from its token (RL, k-RL) or its destination (Gafni–Bertsekas)
//! never stops: some node of it is always a sink and reverses, and tells its
//! neighbours. So after a first change that cuts such a part off, the network is never
//! quiet again and the changes left in the budget can never be applied. They still
//! count in the state, though, and while a change remains, heights of different
//! components may still be compared (a link between them could form), so height
//! renormalization ([`super::shift`]) may only shift all of them together: the cut-off
//! part's endless rise against the rest makes every state new, and the search can only
//! be cut.
//!
//! This quotient sets the budget of such a state to zero. It is exact: in a state from
//! which no quiet state is reachable, no change is enabled now or in any future state,
//! so the state with its budget and the state without have the same executions, step
//! for step; and no property reads the budget except through quiescence ("nothing in
//! flight and no change left"), which neither state nor any of their successors has.
//! With no change left, renormalization shifts each component on its own, and the
//! endless rise becomes a cycle.
//!
//! **How "never quiet again" is decided, exactly.** Components evolve independently
//! while no change comes: a node sends only to its current neighbours, which are in its
//! component, and the one way a message crosses between components is one sent before
//! a link broke (`drain`), which its receiver's component reads. So component `C` on
//! its own is a closed system: its nodes, the messages in flight to them, requests at
//! its nodes (at most the budget left, which over-approximates a budget shared with the
//! other components) and releases of its CS holders. Every execution of the whole
//! network, restricted to `C`'s actions, is an execution of that system. If no state
//! of it has nothing in flight, `C` is never quiet, so neither is the network. A
//! component with nothing in flight now is quiet now and is not asked about. Each
//! question is answered in two tries:
//!
//! 1. one fair execution of `C`'s system (deliveries only, its links served in turn,
//!    at most [`TURNS`] of them): if it reaches a quiet state, `C` can be quiet, and
//!    the budget stays. Most questions end here;
//! 2. otherwise a breadth-first search of `C`'s system with no change left (so
//!    renormalized per component, where it is finite), of at most [`SEARCH_STATES`]
//!    states: if it closes without a quiet state, `C` is never quiet and the budget
//!    goes; if it is cut, nothing is proved and the budget stays.
//!
//! Answers are remembered per question (its system's state, with the quotients that
//! rename no node applied), so each is searched once, and an answer depends only on its
//! question. The searches of one check may hold as many states in all as the check's
//! `max_states`, so the quotient at most doubles a check's work; once that quota is
//! spent no more questions are searched (the budgets stay, which is always sound), and
//! a question first asked then is remembered as unanswered, so that every answer is
//! fixed at its first asking and the quotient stays a function of the state for the
//! rest of the check (the liveness pass steps the stored states again and must land on
//! stored states, including where sleep sets skipped the step that first met them). With
//! one thread (the default) the order questions come in is fixed, so verdicts and
//! counts are the same on every run; with more, which questions came before the quota
//! ran out may depend on timing. No check in the book's table comes near the quota but
//! `me-rl` on `path:5` with 3 changes, which is cut by its state bound either way.
//!
//! Applies to protocols whose heights renormalize ([`super::shift`]), with `serialize`,
//! and when nothing is routed (Raymond's routed messages are not partitioned by
//! component: one waits while its destination is unreachable).

use super::state::{CheckState, Step};
use crate::NodeId;
use crate::protocol::Protocol;
use crate::sim::ChangeMode;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The most states one component's breadth-first search may hold before it gives up,
/// proving nothing. The searches that close on the book's table hold up to a few
/// thousand (3,327 for `me-rl` on `path:4` with 3 changes, 18,460 on `path:5`).
pub const SEARCH_STATES: usize = 20_000;

/// Answers already found: for a component's system (its state as the search meets it
/// first), whether it is never quiet; and the states the searches may still take.
#[derive(Debug)]
pub struct Answers<P: Protocol> {
    known: Mutex<HashMap<CheckState<P>, bool>>,
    /// States the breadth-first searches of one check may hold in all: past it no
    /// question is searched (its budget is kept), so the quotient never costs more than
    /// the check's own state bound.
    quota: AtomicUsize,
}

impl<P: Protocol> Answers<P> {
    /// No answer yet; the searches may hold `quota` states in all (a check's
    /// `max_states`).
    pub fn new(quota: usize) -> Self {
        Self {
            known: Mutex::new(HashMap::new()),
            quota: AtomicUsize::new(quota),
        }
    }

    /// Takes `states` from the quota; `false` (and nothing taken) if it has not that many.
    fn spend(&self, states: usize) -> bool {
        self.quota
            .fetch_update(Relaxed, Relaxed, |left| left.checked_sub(states))
            .is_ok()
    }
}

/// What the questions need of the checked system: its steps, and the quotients that
/// rename no node. The checker's model ([`super::model::ProtocolModel`]) is one; a
/// trait, so that the model may use this module without this module depending on it.
pub trait Steps<P: Protocol> {
    /// Appends the steps enabled in `state`.
    fn enabled(&self, state: &CheckState<P>, steps: &mut Vec<Step>);
    /// The state after `step`, unreduced; `None` if it is not enabled.
    fn after(&self, state: &CheckState<P>, step: Step) -> Option<CheckState<P>>;
    /// Applies the quotients that rename no node (this one included), but never freezes
    /// a part ([`super::cut_off`]): the question is whether that part can be quiet.
    fn reduce(&self, state: &mut CheckState<P>);
    /// The answers found so far in this check.
    fn answers(&self) -> &Answers<P>;
}

/// Whether the quotient may apply to `P` with changes in `mode` (module docs).
pub fn applies<P: Protocol>(mode: ChangeMode) -> bool {
    mode == ChangeMode::Serialize && super::shift::applies::<P>()
}

/// Sets `state`'s change budget to zero if the network can never be quiet again from
/// it (module docs); otherwise leaves it as it is.
pub fn forget_dead_changes<P: Protocol>(model: &impl Steps<P>, state: &mut CheckState<P>) {
    if state.changes_left == 0 || state.quiet() || !state.routed.is_empty() {
        return;
    }
    let graph = state.graph();
    let label: Vec<u32> = (0..state.nodes.len())
        .map(|v| graph.label(v as NodeId))
        .collect();
    if label.iter().all(|&l| l == label[0]) {
        // One component: its renormalization is the whole state's either way.
        return;
    }
    let mut asked: Vec<u32> = state
        .queues
        .iter()
        .map(|(_, to, _)| label[to as usize])
        .collect();
    asked.sort_unstable();
    asked.dedup();
    if asked
        .into_iter()
        .any(|c| never_quiet(model, state, |v| label[v as usize] == c))
    {
        state.changes_left = 0;
    }
}

/// Whether the component whose nodes `inside` accepts can never be quiet, on its own,
/// from `state` (module docs); `false` when its search does not close.
fn never_quiet<P: Protocol>(
    model: &impl Steps<P>,
    state: &CheckState<P>,
    inside: impl Fn(NodeId) -> bool,
) -> bool {
    let mut root = state.clone();
    root.changes_left = 0;
    root.queues.retain(|_, to, _| inside(to));
    model.reduce(&mut root);
    if let Some(&known) = lock(model.answers()).get(&root) {
        return known;
    }
    if quiet_by_turns(model, &root) {
        lock(model.answers()).insert(root, false);
        return false;
    }
    if !model.answers().spend(SEARCH_STATES) {
        // Quota spent: no answer, remembered as such (module docs).
        lock(model.answers()).insert(root, false);
        return false;
    }
    let acts_inside = |step: &Step| match *step {
        Step::Deliver { to, .. } => inside(to),
        Step::Request { node } | Step::Release { node } => inside(node),
        Step::Link { .. } | Step::DeliverRouted { .. } => false,
    };
    let mut seen = HashSet::from([root.clone()]);
    let mut queue = VecDeque::from([root.clone()]);
    let mut steps = Vec::new();
    let answer = loop {
        let Some(now) = queue.pop_front() else {
            // Closed, and no state quiet.
            break true;
        };
        if now.quiet() || seen.len() > SEARCH_STATES {
            break false;
        }
        steps.clear();
        model.enabled(&now, &mut steps);
        for step in steps.iter().filter(|s| acts_inside(s)).cloned() {
            if let Some(mut next) = model.after(&now, step) {
                model.reduce(&mut next);
                if !seen.contains(&next) {
                    seen.insert(next.clone());
                    queue.push_back(next);
                }
            }
        }
    };
    // Give back what this search did not use.
    model
        .answers()
        .quota
        .fetch_add(SEARCH_STATES - seen.len().min(SEARCH_STATES), Relaxed);
    let mut answers = lock(model.answers());
    if answer {
        // Every state of a closed search reaches only states of it: none is quiet.
        for state in seen {
            answers.insert(state, true);
        }
    }
    answers.insert(root, answer);
    answer
}

/// Whether one fair execution of a component's system, deliveries only and the links
/// served in turn, reaches a state with nothing in flight within [`TURNS`] deliveries.
///
/// Most questions have such a state (the component with the token settles once its
/// messages are in), but it may lie deep: a token held in flight into the component
/// while the rest of it reverses makes the breadth-first search meet every shorter
/// execution first, of which there are infinitely many. Serving every link in turn
/// delivers the token too, so this finds the quiet state at once; the breadth-first
/// search is left the questions whose answer is "never".
fn quiet_by_turns<P: Protocol>(model: &impl Steps<P>, root: &CheckState<P>) -> bool {
    let mut state = root.clone();
    let mut last = None;
    for _ in 0..TURNS {
        let mut links = state.queues.links().map(|(link, _)| link).peekable();
        let Some(&first) = links.peek() else {
            return true;
        };
        // The next link after the last one served, or the first again.
        let (from, to) = links.find(|&link| Some(link) > last).unwrap_or(first);
        drop(links);
        match model.after(&state, Step::Deliver { from, to }) {
            Some(next) => state = next,
            None => return false,
        }
        last = Some((from, to));
    }
    state.quiet()
}

/// Deliveries [`quiet_by_turns`] makes before it gives up.
pub const TURNS: usize = 1_000;

/// The answers, even if another thread panicked while holding them (they stay valid:
/// each entry is inserted whole).
fn lock<P: Protocol>(
    answers: &Answers<P>,
) -> std::sync::MutexGuard<'_, HashMap<CheckState<P>, bool>> {
    answers
        .known
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckSetup;
    use crate::check::graph::SmallGraph;
    use crate::family::{MutualExclusion, Watches};
    use crate::protocol::me_rl::Rl;

    /// With the quota spent before a question is first asked, the question is
    /// remembered as unanswered: its answer (the budget kept) is then the same whenever
    /// it is asked again, whatever was searched in between.
    #[test]
    fn a_question_asked_after_the_quota_is_spent_keeps_its_answer() {
        let setup = CheckSetup {
            changes: 2,
            change_mode: ChangeMode::Serialize,
            requests: 0,
            // Less than one search's share: no question is ever searched.
            max_states: SEARCH_STATES - 1,
            ..CheckSetup::plain(SmallGraph::parse("path:4").unwrap())
        };
        let mut model = <MutualExclusion as Watches<Rl>>::model(Default::default(), &setup);
        model.renormalize = true;
        // Node 0 holds the token; cutting 1 - 2 leaves 2 and 3 without it, reversing
        // for ever while a change is still to come.
        let cut = model
            .step(
                &model.initial(),
                Step::Link {
                    a: 1,
                    b: 2,
                    up: false,
                },
            )
            .expect("a change from the quiet start");
        assert!(!cut.quiet());
        let mut reduced = cut.clone();
        forget_dead_changes(&model, &mut reduced);
        assert_eq!(reduced.changes_left, 1, "nothing searched, nothing proved");
        let remembered = lock(model.answers()).len();
        assert!(remembered >= 1, "the unanswered question is not remembered");
        let mut again = cut;
        forget_dead_changes(&model, &mut again);
        assert_eq!(again, reduced);
        assert_eq!(lock(model.answers()).len(), remembered);
    }
}
