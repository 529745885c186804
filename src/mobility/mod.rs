//! Mobility: trajectories, the trace formats that carry them, and the random-waypoint
//! generator. Nothing here knows about links or protocols.
//!
//! - [`trace`]: the model (`Trace` → `Trajectory` → `Leg`), positions in O(log legs).
//! - [`ns2`]: ns-2 `setdest` reader (tolerant, located errors) and writer; footer counts.
//! - [`activity`]: SUMO's activity file (when each vehicle is present).
//! - [`bonnmotion`]: BonnMotion `.movements[.gz]` + `.params` reader and writer.
//! - [`mod@format`]: picks a reader or writer from a file name (`trace convert`).
//! - [`rwp`]: seeded random-waypoint generator, classic and stationary start, and the
//!   analytic RWP formulas used as oracles.

pub mod activity;
pub mod bonnmotion;
pub mod format;
pub mod ns2;
pub mod rwp;
pub mod trace;

pub use trace::{Area, Leg, NodeId, Point, Trace, Trajectory};
