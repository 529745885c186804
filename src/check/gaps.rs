//! Level-gap abstraction: how far apart two runs of levels lie is forgotten once they
//! are at least [`WIDE`] apart.
//!
//! # Why it is needed
//!
//! Renormalization ([`super::shift`]) makes a component that reverses for ever close
//! into a cycle, but only when nothing holds still while it rises. With topology changes
//! overlapping traffic, something does: RL's token sent over a link that then fails is
//! still in flight (the `drain` semantics), its height fixed, while every node, all
//! token-less, reverses and rises above it; a Gafni–Bertsekas component cut off from the
//! destination rises while a change is still to come. The distance between the two runs
//! of levels (the first numeric part of a height: RL's `h1`, Gafni and Bertsekas's `a`)
//! grows without bound, every value a new state, and the search cannot close.
//!
//! # The abstraction
//!
//! In each renormalization group (the whole state, or each component once no change can
//! come), sort the distinct levels the group holds (its nodes' own, their views, the
//! messages they will receive); wherever two consecutive ones are at least [`WIDE`]
//! apart (a *wide gap*), move everything above down so that the gap is exactly `WIDE`.
//! A stored state with a gap of `WIDE` stands for every state that differs from it only
//! in that gap being `WIDE` or more.
//!
//! # Why it is sound: an over-approximation
//!
//! For protocols whose levels *step by one* ([`Protocol::LEVELS_STEP_BY_ONE`]: a level is
//! only compared with levels, and every new one is a known one, or one plus the least or
//! greatest of some known ones), take a state `s` whose wide gaps are `g₁, g₂, … ≥ WIDE`
//! and the state `r` equal to it but with each `gᵢ` replaced by `min(gᵢ, WIDE + 1)`. In
//! any handler, every comparison between two levels on opposite sides of a wide gap, each
//! possibly plus one, comes out the same in `s` and in `r` (the lower one, even plus one,
//! stays below: the gap is at least 2 in both); comparisons inside a run see the same
//! differences. So the same branches run, every new level is made from the same old level
//! in both, and the next states differ only in their gaps: each new gap is the old one
//! plus the same `e ≥ −1` in both (a new level just above the lower run narrows it by
//! one; levels that disappear widen or merge gaps). A gap `≥ WIDE + 2` in `s` is still
//! `≥ WIDE + 1` after the step, and `r`'s, `WIDE + 1` before, is still `≥ WIDE` after:
//! both are wide, and abstracting both gives the same state. Gaps equal in `s` and `r`
//! stay equal. Hence: **the successors of the stored state are the abstracted successors
//! of its representatives**, the states with each wide gap at `WIDE` or at `WIDE + 1`
//! ([`representatives`]; since a gap that does not narrow in the step ends wide from
//! either value, it is enough to put at `WIDE` at most as many gaps as the step runs
//! handlers, each making at most one new level), and every execution of the real system is matched, step by
//! step and action by action, by an execution of the abstract one. The properties read
//! only the order of heights and whether views equal heights, which the abstraction
//! keeps, and which actions are enabled does not depend on levels.
//!
//! What follows for verdicts:
//!
//! - **holds** is proved: every real execution (fair ones included, as fairness speaks of
//!   actions, which the matching keeps) is matched by one the search has judged.
//! - A **violation** found in the abstraction may be spurious (a run that must cross a
//!   wide gap in many steps may cross it in fewer in the abstraction, or never). The
//!   checker replays it on the real system ([`super::outcomes`](super)) and reports it
//!   only if it replays; a lasso must come back to its first state up to the exact
//!   quotients. Otherwise the verdict is unknown, and says why.
//!
//! The abstraction is off without changes (no height rises), with symmetry reduction,
//! with more than one thread (stateright takes one successor per action), and with
//! changes one at a time, where the
//! dead-change proofs ([`super::dead_changes`]) search the real system and the state
//! spaces already close.

use super::shift;
use super::state::CheckState;
use crate::protocol::{Message, Protocol};

/// The least distance between two consecutive levels that the abstraction forgets
/// beyond (module docs): a wide gap stands for any distance from `WIDE` up.
pub const WIDE: i64 = 2;

/// Whether the abstraction can apply to `P` (module docs for the other conditions).
pub fn applies<P: Protocol>() -> bool {
    P::LEVELS_STEP_BY_ONE && P::SHIFT_INVARIANT
}

/// Calls `visit` with each level in `state` and the renormalization group it belongs to
/// (a node's levels to its group, a message's to its receiver's): `group[v]` is node
/// `v`'s (all zero for one group).
pub fn for_each_level<P: Protocol>(
    state: &mut CheckState<P>,
    group: &[usize],
    visit: &mut dyn FnMut(usize, &mut i64),
) {
    for (v, node) in state.nodes.iter_mut().enumerate() {
        node.for_each_level(&mut |level| visit(group[v], level));
    }
    state.queues.for_each_mut(|_, to, msg| {
        msg.for_each_level(&mut |level| visit(group[to as usize], level));
    });
    for (_, to, msg) in &mut state.routed {
        msg.for_each_level(&mut |level| visit(group[*to as usize], level));
    }
}

/// The distinct levels of each group, sorted.
fn levels_by_group<P: Protocol>(state: &mut CheckState<P>, group: &[usize]) -> Vec<Vec<i64>> {
    let count = group.iter().max().map_or(0, |g| g + 1);
    let mut levels: Vec<Vec<i64>> = vec![Vec::new(); count];
    for_each_level(state, group, &mut |g, level| levels[g].push(*level));
    for run in &mut levels {
        run.sort_unstable();
        run.dedup();
    }
    levels
}

/// Moves the levels of each group so that gap `i` of the group (between its distinct
/// levels `i` and `i + 1`) becomes `gap(g, i, old)`; levels keep their order.
fn respace<P: Protocol>(
    state: &mut CheckState<P>,
    group: &[usize],
    levels: &[Vec<i64>],
    gap: impl Fn(usize, usize, i64) -> i64,
) {
    let targets: Vec<Vec<i64>> = levels
        .iter()
        .enumerate()
        .map(|(g, run)| {
            let mut target = Vec::with_capacity(run.len());
            for (i, &level) in run.iter().enumerate() {
                let value = match i {
                    0 => level,
                    _ => target[i - 1] + gap(g, i - 1, level - run[i - 1]),
                };
                target.push(value);
            }
            target
        })
        .collect();
    if targets == levels {
        return;
    }
    for_each_level(state, group, &mut |g, level| {
        let i = levels[g]
            .binary_search(level)
            .expect("every level was collected");
        *level = targets[g][i];
    });
}

/// Abstracts `state` (module docs): every gap of at least [`WIDE`] between consecutive
/// distinct levels of a group becomes exactly `WIDE`. Keeps each group's least level, so
/// a renormalized state stays renormalized.
pub fn abstract_gaps<P: Protocol>(state: &mut CheckState<P>) {
    let group = shift::groups(state);
    let levels = levels_by_group(state, &group);
    respace(state, &group, &levels, |_, _, old| old.min(WIDE));
}

/// The states an abstracted `state` stands for that the successors by a step running
/// `handlers` node handlers must be taken from (module docs): every wide gap at `WIDE +
/// 1`, and each way of putting at most `handlers` of them at `WIDE` instead (each handler
/// makes at most one new level, so at most that many gaps narrow in the step; a gap that
/// does not narrow stays wide from `WIDE` as from `WIDE + 1`, and the abstracted
/// successors agree). Just `state` when it has no wide gap.
pub fn representatives<P: Protocol>(state: &CheckState<P>, handlers: usize) -> Vec<CheckState<P>> {
    let mut state = state.clone();
    let group = shift::groups(&state);
    let levels = levels_by_group(&mut state, &group);
    let wide: Vec<(usize, usize)> = levels
        .iter()
        .enumerate()
        .flat_map(|(g, run)| {
            run.windows(2)
                .enumerate()
                .filter(|(_, pair)| pair[1] - pair[0] >= WIDE)
                .map(move |(i, _)| (g, i))
        })
        .collect();
    if wide.is_empty() {
        return vec![state];
    }
    // The sets of gaps put at `WIDE`: none, each one, each pair, … up to `handlers`.
    let mut narrow_sets: Vec<Vec<usize>> = vec![Vec::new()];
    let mut last: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..handlers.min(wide.len()) {
        let next: Vec<Vec<usize>> = last
            .iter()
            .flat_map(|set| {
                let from = set.last().map_or(0, |&i| i + 1);
                (from..wide.len()).map(move |i| {
                    let mut bigger = set.clone();
                    bigger.push(i);
                    bigger
                })
            })
            .collect();
        narrow_sets.extend(next.iter().cloned());
        last = next;
    }
    narrow_sets
        .into_iter()
        .map(|narrow| {
            let mut rep = state.clone();
            respace(&mut rep, &group, &levels, |g, i, old| {
                match wide.iter().position(|&w| w == (g, i)) {
                    Some(index) if narrow.contains(&index) => WIDE,
                    Some(_) => WIDE + 1,
                    None => old,
                }
            });
            rep
        })
        .collect()
}
