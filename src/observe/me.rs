//! Mutual-exclusion monitors: never two nodes in the critical section, and exactly one
//! token in the system (held plus in flight), checked after every event.
//!
//! A violation is counted at its onset (the event that breaks the invariant), not once per
//! event while it lasts, so a count is a number of incidents. Under the `drop` link-break
//! semantics the token can be lost; that is counted by the simulator as `tokens_lost`, and
//! a token count of zero after a loss is not a violation.

use super::safety::{SafetyLog, Violation};
use crate::NodeId;
use crate::protocol::{Protocol, TokenView};
use crate::sim::{Observer, World};

/// Watches a token-based mutual-exclusion run.
#[derive(Debug, Default)]
pub struct MeMonitor {
    held_by: Vec<bool>,
    held: u32,
    two_in_cs: bool,
    bad_token_count: bool,
    /// Violations of the two invariants (`two_in_cs`, `token_count`), per incident.
    pub safety: SafetyLog,
}

impl MeMonitor {
    /// A monitor with nothing recorded yet.
    pub fn new() -> Self {
        Self::default()
    }
}

fn nodes_where<P>(nodes: &[P], keep: impl Fn(&P) -> bool) -> Vec<NodeId> {
    nodes
        .iter()
        .enumerate()
        .filter(|(_, p)| keep(p))
        .map(|(i, _)| i as NodeId)
        .collect()
}

impl<P: Protocol + TokenView> Observer<P> for MeMonitor {
    fn on_start(&mut self, world: &World<'_, P>) {
        self.held_by = world.nodes.iter().map(TokenView::holds_token).collect();
        self.held = self.held_by.iter().filter(|&&h| h).count() as u32;
    }

    fn after_event(&mut self, world: &World<'_, P>) {
        for &node in world.touched {
            let now = world.nodes[node as usize].holds_token();
            let before = std::mem::replace(&mut self.held_by[node as usize], now);
            self.held = self.held + u32::from(now) - u32::from(before);
        }
        let two = world.in_cs > 1;
        if two && !self.two_in_cs {
            self.safety.record(|| Violation {
                kind: "two_in_cs",
                time_s: world.now.as_secs_f64(),
                event_index: world.event_index,
                nodes: nodes_where(world.nodes, TokenView::in_cs),
                detail: format!("{} nodes in the critical section", world.in_cs),
            });
        }
        self.two_in_cs = two;
        let tokens = self.held + world.tokens_in_flight;
        let bad = tokens > 1 || (tokens == 0 && world.counters.tokens_lost == 0);
        if bad && !self.bad_token_count {
            self.safety.record(|| Violation {
                kind: "token_count",
                time_s: world.now.as_secs_f64(),
                event_index: world.event_index,
                nodes: nodes_where(world.nodes, TokenView::holds_token),
                detail: format!("{} held + {} in flight", self.held, world.tokens_in_flight),
            });
        }
        self.bad_token_count = bad;
    }
}
