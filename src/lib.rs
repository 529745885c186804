//! linkrev: trace-driven analysis of link-reversal algorithms on mobile ad hoc networks.
//!
//! # Code map
//!
//! Data flows one way:
//!
//! ```text
//! traces/*.tcl, *.movements ─┐
//! rwp generator ─────────────┴─► Trace ─► LinkEvents ─► (engine, protocols: later issues)
//!                               mobility    topology
//! ```
//!
//! - [`input`]: located errors and warnings for everything a user hands us.
//! - [`output`]: atomic file writes (complete or absent, never half-written).
//! - [`mobility`]: the trace model, ns-2 and BonnMotion formats, the RWP generator.
//! - [`topology`]: exact link up/down events, connected components, mobility statistics.
//! - [`cli`]: the `linkrev` command line (a thin layer; `src/main.rs` only calls it).

pub mod cli;
pub mod input;
pub mod mobility;
pub mod output;
pub mod topology;
