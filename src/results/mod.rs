//! Results as polars DataFrames and their Parquet store.
//!
//! - [`tables`]: run records → long-format DataFrames (`runs`, `changes`, `requests`).
//! - [`aggregate`]: per-group mean/sd/CI/median/p95 and paired differences.
//! - [`store`]: atomic Parquet chunks per batch, resume, compaction.

pub mod aggregate;
pub mod store;
pub mod tables;
