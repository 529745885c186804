//! How often the intervals linkrev prints hold the truth, measured on linkrev's own
//! metrics (`linkrev bench coverage`).
//!
//! [`crate::stats::coverage`] measures each interval method on textbook distributions
//! (normal, exponential, lognormal). The metrics the studies report look like none of
//! them: a low-load waiting time is mostly small with rare huge values (a request waits
//! out a partition), le-malpani's messages per change are bimodal (a storm or not),
//! violation fractions are rare events, reversal counts sit near zero. An interval can
//! keep its promise on the textbook and break it on these, so the harness measures it
//! here, on real replications:
//!
//! 1. A [harness point](points) names one point of a shipped study (its spec in
//!    `analysis/`, the axis values) and one statistic: a mean, a pooled ratio, a share
//!    of runs or a paired difference.
//! 2. Its [reference sample](reference) is the point's first `R` replications, run
//!    exactly as the study runs them (same keys, seeds and parameters; the study's own
//!    replications are the first blocks). The statistic over all `R` is the truth; its
//!    own standard error is reported beside it, and must be far below the intervals'
//!    half-widths for the table to mean anything.
//! 3. Each [procedure](procedures) the study uses (its fixed count, or its sequential
//!    rule with its settings, judged by the very code the sweeps stop with) is applied
//!    to disjoint consecutive blocks of the reference sample, in replication order,
//!    never resampling them. Coverage is the share of blocks whose interval holds the
//!    truth, with its own Clopper–Pearson interval over the blocks.

pub mod points;
pub mod procedures;
pub mod reference;

pub use points::{HarnessPoint, Statistic, harness_points};
pub use procedures::{Block, CoverageRow, Procedure, blocks, measure};
pub use reference::{ReferenceSample, run_reference};
