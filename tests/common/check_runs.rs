//! Random executions of a checker model, for the tests that check the checker's
//! reductions step by step (`check_quotients.rs`, `check_gaps.rs`).

use linkrev::check::model::{ProtocolModel, Step};
use linkrev::check::state::CheckState;
use linkrev::protocol::Protocol;
use stateright::Model as _;

/// A random real execution of `model` (no quotient), the actions chosen by `choices`:
/// the states passed, each with the action taken from it.
pub fn execution<P: Protocol>(
    model: &ProtocolModel<P>,
    choices: &[u16],
) -> Vec<(CheckState<P>, Step)> {
    let mut state = model.initial();
    let mut out = Vec::new();
    let mut actions = Vec::new();
    for &choice in choices {
        actions.clear();
        model.actions(&state, &mut actions);
        if actions.is_empty() {
            break;
        }
        let action = actions[choice as usize % actions.len()].clone();
        let next = model.step(&state, action.clone()).expect("enabled");
        out.push((state, action));
        state = next;
    }
    out
}
