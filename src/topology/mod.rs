//! Topology: exact unit-disk link events from a trace, connected components, and the
//! mobility statistics that depend on links.

pub mod components;
pub mod events;
pub mod stats;
