//! Results as polars DataFrames and their Parquet store.
//!
//! - [`tables`]: run records → long-format DataFrames (`runs`, `changes`, `requests`).
//! - [`aggregate`]: per-group mean/sd/CI/median/p95 and paired differences.
//! - [`store`]: atomic Parquet chunks per batch, resume, compaction, verification.
//! - [`lock`]: one writer per results directory.

pub mod aggregate;
pub mod lock;
pub mod store;
pub mod tables;
