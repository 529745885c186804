//! Results as polars DataFrames and their Parquet store.
//!
//! - [`tables`]: run records → long-format DataFrames (`runs`, `changes`, `requests`).
//! - [`store`]: atomic Parquet chunks per batch, resume, compaction.

pub mod store;
pub mod tables;
