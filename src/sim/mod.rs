//! The discrete-event simulator: drives any [`crate::protocol::Protocol`] over a link
//! timeline with a stated network model and a mutual-exclusion workload.
//!
//! - [`time`]: integer-nanosecond `SimTime`.
//! - [`queue`]: the event queue, ordered by `(time, sequence)`.
//! - [`delay`]: per-hop delay distributions.
//! - [`engine`]: the event loop (events in time order to the protocol handlers,
//!   `overlap`/`serialize` topology changes, observers after every event).
//! - [`network`]: the network model: FIFO links, link epochs and `drain`/`drop`
//!   breaks, detection delay, routed sends.
//! - [`workload`]: the CS request process and its records.
//! - [`hold`]: the hold-model benchmark of the event queue against a bare heap.
//! - [`seeds`]: independent random streams derived from one run seed.

pub mod delay;
pub mod engine;
pub mod hold;
pub mod network;
pub mod queue;
pub mod seeds;
pub mod time;
pub mod workload;

pub use delay::DelayModel;
pub use engine::{Observer, RunConfig, RunCounters, Simulation, World};
pub use network::{ChangeMode, LinkBreak, NetworkConfig};
pub use time::{Duration, SimTime};
pub use workload::{CsTime, RequestRecord, WorkloadConfig};
