//! Leader election by link reversal with TORA's fifth case: the slides' rules A–E of
//! Malpani, Welch and Vaidya ([`super::le_malpani`]), plus one rule from TORA, so that
//! the effect of that one rule can be measured.
//!
//! # Where each rule comes from
//!
//! - Heights, rules A–E, the order of rules within a step, message handling and the
//!   initial state: exactly [`super::le_malpani`] (the seed slides; Malpani, Welch and
//!   Vaidya, DIALM 2000), with every choice documented there.
//! - The added rule is the fifth of TORA's five route-maintenance cases (Park and
//!   Corson, "A highly adaptive distributed routing algorithm for mobile wireless
//!   networks", INFOCOM 1997; also the IETF draft `draft-ietf-manet-tora-spec`): generate,
//!   propagate, reflect, detect a partition, and — when a node without downstream links
//!   finds every neighbour on one *reflected* reference level that another node
//!   originated (`r = 1`, `oid ≠ i`) — generate a new reference level `(τ, i, 0)`,
//!   `δ = 0`, and tell its neighbours. Cases 1–4 are the slides' rules A (generate),
//!   B (propagate), C (reflect) and D (the reflection returned: in leader election the
//!   originator elects itself instead of reporting a partition); the slides have no
//!   rule for case 5, where `le-malpani` keeps its height and counts the step as
//!   uncovered. The case numbering is from a reading of TORA's published descriptions;
//!   the condition and the action are as the issue that asked for this variant states
//!   them.
//!
//! # What had to be chosen
//!
//! - τ of the new level is the event time in nanoseconds plus one, as rule A's (module
//!   docs of [`super::le_malpani`]), so it lies above every level an earlier failure
//!   defined and above rule E's `(0, 0, 0)`.
//! - TORA reaches its fifth case only after a link failure's reflection; here the same
//!   sink also arises after rule E leaves a merging node on `(0, 0, 0)` below a reflected
//!   level (the stranded sink of `tests/le_malpani.rs`), and the rule applies there too:
//!   it is the same local condition.
//! - Nothing else changes: the stale-Update revival of a lost leader and rule E's other
//!   races are left as they are, so that the difference from `le-malpani` is this rule.

use super::le_malpani::{LeNode, RuleSet};

/// The slides' rules plus TORA's fifth case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tora5;

impl RuleSet for Tora5 {
    /// TORA's fifth case: start a new reference level and propagate it.
    fn sink_below_foreign_reflection(node: &mut LeNode<Self>, time_ns: u64) {
        node.new_reference_level(time_ns);
    }
}

/// A node of `le-tora5`.
pub type LeTora5 = LeNode<Tora5>;
