//! Mutual-exclusion monitors, checked after every event: at most `k` nodes in the
//! critical section and exactly `k` tokens in the system (held plus in flight), where `k`
//! is the protocol's token count ([`TokenView::tokens`]: 1 for RL and Raymond, the
//! parameter `k` of k-mutual exclusion). The monitor also attributes messages to components that hold
//! no token.
//!
//! A violation is counted at its onset (the event that breaks the invariant), not once per
//! event while it lasts, so a count is a number of incidents. Under the `drop` link-break
//! semantics tokens can be lost; that is counted by the simulator as `tokens_lost`, and
//! the token invariant becomes: held + in flight + lost = `k`.
//!
//! # Messages in a component without a token
//!
//! A message counts as *tokenless* when, after the event during which it was sent, its
//! sender's connected component (of the links as applied) contains no token: no node of
//! it holds one, and no token in flight is heading to one of its nodes (a token on its
//! hop counts for the hop's receiver, a parked routed token for the node where it waits).
//! Judging after the event means a link failure that cuts a component off the token
//! counts the messages its endpoints send in reaction as tokenless, and a node that
//! receives the token counts the messages it sends on receiving it as not. For RL these
//! are the rising heights of a partition that cannot reach the token (the module docs of
//! [`crate::protocol::me_rl`], "Partitions").

use super::safety::{SafetyLog, Violation};
use crate::NodeId;
use crate::protocol::{Protocol, TokenView};
use crate::sim::{Observer, World};

/// Watches a token-based mutual-exclusion run.
#[derive(Debug, Default)]
pub struct MeMonitor {
    /// Tokens held per node.
    held_by: Vec<u32>,
    /// Tokens held, in all.
    held: u32,
    /// The nodes holding a token now (at most `k`, so a short list).
    holders: Vec<NodeId>,
    /// The `k` of the invariants.
    k: u32,
    too_many_in_cs: bool,
    bad_token_count: bool,
    /// Component labels holding a token, rebuilt per event (scratch).
    token_components: Vec<u32>,
    /// Violations of the two invariants (`too_many_in_cs`, `token_count`), per incident.
    pub safety: SafetyLog,
    /// Messages sent in a component without a token (module docs).
    pub messages_tokenless: u64,
}

impl MeMonitor {
    /// A monitor of a run with `k` tokens ([`TokenView::tokens`]), with nothing
    /// recorded yet.
    pub fn new(k: u32) -> Self {
        Self {
            k,
            ..Self::default()
        }
    }

    fn count_tokenless<P>(&mut self, world: &World<'_, P>) {
        if world.sent_by.is_empty() {
            return;
        }
        let graph = world.graph;
        self.token_components.clear();
        self.token_components.extend(
            self.holders
                .iter()
                .chain(world.token_places)
                .map(|&n| graph.label(n)),
        );
        let tokenless: u64 = world
            .sent_by
            .iter()
            .filter(|(n, _)| !self.token_components.contains(&graph.label(*n)))
            .map(|(_, messages)| messages)
            .sum();
        self.messages_tokenless += tokenless;
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
        self.held_by = world.nodes.iter().map(TokenView::tokens_held).collect();
        self.held = self.held_by.iter().sum();
        self.holders = nodes_where(world.nodes, TokenView::holds_token);
        // A wrong initial token count is a violation at the start.
        self.after_event(world);
    }

    fn after_event(&mut self, world: &World<'_, P>) {
        for &node in world.touched {
            let now = world.nodes[node as usize].tokens_held();
            let before = std::mem::replace(&mut self.held_by[node as usize], now);
            self.held = self.held + now - before;
            if now > 0 && before == 0 {
                self.holders.push(node);
            } else if before > 0 && now == 0 {
                self.holders.retain(|&h| h != node);
            }
        }
        self.count_tokenless(world);
        let k = self.k;
        let too_many = world.in_cs > k;
        if too_many && !self.too_many_in_cs {
            self.safety.record(|| Violation {
                kind: "too_many_in_cs",
                time_s: world.now.as_secs_f64(),
                event_index: world.event_index,
                nodes: nodes_where(world.nodes, TokenView::in_cs),
                detail: format!(
                    "{} nodes in the critical section, at most {k} allowed",
                    world.in_cs
                ),
            });
        }
        self.too_many_in_cs = too_many;
        let held = self.held;
        let tokens = held + world.tokens_in_flight;
        // Every token is held, in flight, or counted lost (`drop`).
        let bad = u64::from(tokens) + world.counters.tokens_lost != u64::from(k);
        if bad && !self.bad_token_count {
            self.safety.record(|| Violation {
                kind: "token_count",
                time_s: world.now.as_secs_f64(),
                event_index: world.event_index,
                nodes: self.holders.clone(),
                detail: format!(
                    "{held} held + {} in flight, {k} expected",
                    world.tokens_in_flight
                ),
            });
        }
        self.bad_token_count = bad;
    }
}
