//! The discrete-event simulator: drives any [`crate::protocol::Protocol`] over a link
//! timeline with a stated network model and a mutual-exclusion workload.
//!
//! - [`time`]: integer-nanosecond `SimTime`.
//! - [`queue`]: the event queue, ordered by `(time, sequence)`.
//! - [`delay`]: per-hop delay distributions.
//! - [`engine`]: the event loop, the network model (FIFO links, `drain`/`drop` link
//!   breaks, detection delay, `overlap`/`serialize` topology changes, routed sends) and
//!   the workload.
//! - [`hold`]: the hold-model benchmark of the event queue against a bare heap.
//! - [`seeds`]: independent random streams derived from one run seed.

pub mod delay;
pub mod engine;
pub mod hold;
pub mod queue;
pub mod seeds;
pub mod time;

pub use delay::DelayModel;
pub use engine::{
    ChangeMode, CsTime, LinkBreak, NetworkConfig, Observer, RequestRecord, RunConfig, RunCounters,
    Simulation, WorkloadConfig, World,
};
pub use time::{Duration, SimTime};
