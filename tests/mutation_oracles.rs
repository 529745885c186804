//! The protocol cores' oracles in one test binary, for mutation testing: the family
//! conformance suites, each protocol's own tests (the seed's worked examples, brute-force
//! and property checks), the checker's quotient claims step by step, small checker
//! verdicts replayed through the simulator, and the replay views the slides' figures
//! are checked against. cargo-mutants builds and runs only this
//! target for each mutant (`.cargo/mutants.toml`), so a mutant costs one incremental
//! build and one link instead of fifty.
//!
//! The files are the same test files `cargo test` runs on their own; nothing here is a
//! copy. Not built by a plain `cargo test` (`test = false` in `Cargo.toml`), which runs
//! each of them already: `cargo test --test mutation_oracles` builds and runs it.

// Each file brings its helpers; not every helper is used by every file.
#![allow(dead_code, unused_imports)]

#[path = "check_quotients.rs"]
mod check_quotients;
#[path = "check_replay.rs"]
mod check_replay;
#[path = "conformance.rs"]
mod conformance;
#[path = "le_ingram.rs"]
mod le_ingram;
#[path = "le_malpani.rs"]
mod le_malpani;
#[path = "me_krl.rs"]
mod me_krl;
#[path = "me_raymond.rs"]
mod me_raymond;
#[path = "me_rl.rs"]
mod me_rl;
#[path = "protocol_parts.rs"]
mod protocol_parts;
#[path = "replay.rs"]
mod replay;
#[path = "route_gb.rs"]
mod route_gb;
