//! Experiment specs. (Being written.)
