//! Parameter sweeps: an experiment spec (TOML) expands into a plan of runs, each with a
//! stable key and derived seeds; the executor runs them in parallel and streams results
//! to the store.
//!
//! - [`specs`]: the experiment spec (TOML): its schema, the walk that reads it with
//!   located errors and suggestions, the cross-checks, seeds, and its expansion into a plan.
//! - [`plan`]: the plan: axes, the cartesian product × replications × algorithms, run
//!   keys and seeds.
//! - [`execute`]: runs a plan (or one shard of it) in parallel into the store.
//! - [`fingerprints`]: what each trace held when the stored runs were made, so a
//!   changed trace is never mixed in.
//! - [`sequential`]: a sweep with a precision target: the runs each point needs,
//!   decided from the runs stored, a wave at a time.
//! - [`slurm`]: batch scripts that run the shards as a Slurm array job, then merge.

pub mod execute;
pub mod fingerprints;
pub mod plan;
pub mod sequential;
pub mod slurm;
pub mod spec_copy;
pub mod specs;
