//! Metric collectors and safety monitors: they watch a run through the simulator's
//! [`crate::sim::Observer`] hooks and the protocols' view traits, and produce records.
//!
//! - [`le`]: leader election: per-topology-change convergence records, leaderless
//!   node-time, leader changes, and the legality monitor.
//! - [`me`]: mutual exclusion: the two-nodes-in-CS and token-conservation monitors.
//! - [`safety`]: how a violation is counted and its first occurrence kept as a
//!   reproducer (never a panic: a broken invariant is a result to report).

pub mod le;
pub mod me;
pub mod safety;
