//! Random executions, for configurations too large to explore exhaustively.
//!
//! A graph of 6 to 10 nodes has far more states than a breadth-first search can visit,
//! but a violation is often reached by many executions. This strategy runs `N`
//! executions from the initial state, each choosing uniformly among the enabled actions
//! (deliveries, changes, requests, releases) with a seeded generator, up to the depth
//! bound or a terminal state, and judges every state it passes as the exhaustive search
//! does. A violation comes with its execution (replayable like any other, though not a
//! shortest one). No violation is reported as "no violation in N executions", never as
//! "holds": random executions prove nothing about the ones they did not take.

use super::model::{ProtocolModel, Step, When};
use super::{CheckReport, CheckSetup, Explored, PropertyOutcome, Verdict, describe, when_text};
use crate::protocol::Protocol;
use rand::{RngExt as _, SeedableRng as _};
use stateright::Model as _;
use std::time::Instant;

/// Runs `executions` random executions of `model` (generator seeded with `seed`).
pub fn run<P: Protocol>(
    algorithm: &str,
    model: ProtocolModel<P>,
    setup: &CheckSetup,
    (executions, seed): (u64, u64),
) -> CheckReport {
    let started = Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut found: Vec<Option<(String, Vec<Step>)>> = vec![None; model.properties.len()];
    let (mut states, mut deepest, mut cut) = (0usize, 0usize, false);
    let mut enabled = Vec::new();
    let mut run = 0u64;
    for execution in 1..=executions {
        run = execution;
        let mut state = model.initial();
        let mut path: Vec<Step> = Vec::new();
        loop {
            states += 1;
            for (index, slot) in found.iter_mut().enumerate() {
                if slot.is_none()
                    && let Err(detail) = model.judge(index, &state)
                {
                    *slot = Some((detail, path.clone()));
                }
            }
            if path.len() >= setup.max_depth {
                cut = true;
                break;
            }
            enabled.clear();
            model.actions(&state, &mut enabled);
            if enabled.is_empty() {
                break;
            }
            let action = enabled.swap_remove(rng.random_range(0..enabled.len()));
            match model.step(&state, action.clone()) {
                Some(next) => {
                    state = next;
                    path.push(action);
                }
                None => break,
            }
        }
        deepest = deepest.max(path.len());
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    let properties = model
        .properties
        .iter()
        .zip(found)
        .map(|(property, found)| PropertyOutcome {
            name: property.name,
            description: property.description,
            // A random execution is finite: it can show a stuck state, never a cycle.
            judged_in: match property.when {
                When::Eventually => "terminal states of random executions",
                when => when_text(when),
            },
            verdict: match found {
                Some((detail, path)) => Verdict::Violated {
                    detail,
                    steps: path.iter().map(describe).collect(),
                    path,
                },
                None => Verdict::NoViolationFound { executions },
            },
        })
        .collect();
    setup.report(
        algorithm,
        Explored {
            states,
            states_generated: states,
            depth_reached: deepest,
            symmetry: false,
            renormalized: None,
            partial_order: false,
            persistent_sets: false,
            persistent_after: None,
            gaps_abstracted: false,
            cut_off: model.cuts_off(),
            cut_by: cut.then_some("depth bound"),
            strategy: format!("random: {run} of {executions} executions, seed {seed}"),
            seconds: started.elapsed().as_secs_f64(),
        },
        properties,
    )
}
