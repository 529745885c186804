//! The harness points: which point of which shipped study, and which statistic of it,
//! the coverage harness measures. Each is there for a shape of data the textbook
//! distributions do not have.

use crate::registry::Algorithm;
use crate::stats::{IntervalMethod, Support};

/// What is estimated at a point, as the figures estimate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// The mean over runs of a per-run metric (a line figure's point), by the metric's
    /// declared interval.
    Mean {
        /// The algorithm's registry name.
        algorithm: &'static str,
        /// The runs-table column.
        metric: &'static str,
    },
    /// Σ numerator / Σ denominator over runs (a pooled metric such as messages per
    /// change), by the delta method.
    PooledRatio {
        /// The algorithm's registry name.
        algorithm: &'static str,
        /// The pooled metric's column, as figures name it.
        metric: &'static str,
    },
    /// The share of runs with an indicator set (`violated`, `stormed`), by the default
    /// proportion interval.
    Share {
        /// The algorithm's registry name.
        algorithm: &'static str,
        /// The indicator ([`crate::report::INDICATORS`]).
        indicator: &'static str,
    },
    /// The mean of per-replication differences a − b (a paired figure's point), by the
    /// metric's declared interval with no support.
    PairedDifference {
        /// The algorithm subtracted from.
        a: &'static str,
        /// The algorithm subtracted.
        b: &'static str,
        /// The runs-table column.
        metric: &'static str,
    },
}

impl Statistic {
    /// The algorithms whose runs the statistic reads.
    pub fn algorithms(&self) -> Vec<&'static str> {
        match *self {
            Statistic::Mean { algorithm, .. }
            | Statistic::PooledRatio { algorithm, .. }
            | Statistic::Share { algorithm, .. } => vec![algorithm],
            Statistic::PairedDifference { a, b, .. } => vec![a, b],
        }
    }

    /// The metric a precision target would name (`None` for an indicator's share,
    /// which no target names).
    pub fn metric(&self) -> Option<&'static str> {
        match *self {
            Statistic::Mean { metric, .. }
            | Statistic::PooledRatio { metric, .. }
            | Statistic::PairedDifference { metric, .. } => Some(metric),
            Statistic::Share { .. } => None,
        }
    }

    /// The runs-table columns it reads (a pooled ratio: its numerator and denominator).
    ///
    /// # Errors
    /// If the algorithm is unknown or its family has no such metric.
    pub fn columns(&self) -> Result<Vec<&'static str>, String> {
        Ok(match *self {
            Statistic::Mean { algorithm, metric }
            | Statistic::PairedDifference {
                a: algorithm,
                metric,
                ..
            } => {
                metric_of(algorithm, metric)?;
                vec![metric]
            }
            Statistic::PooledRatio { algorithm, metric } => {
                let m = metric_of(algorithm, metric)?;
                let (num, den) = m
                    .pooled
                    .ok_or_else(|| format!("{metric} of {algorithm} is not a pooled ratio"))?;
                vec![num, den]
            }
            Statistic::Share { indicator, .. } => {
                if !crate::report::INDICATORS
                    .iter()
                    .any(|(i, _)| *i == indicator)
                {
                    return Err(format!("no indicator {indicator}"));
                }
                vec![indicator]
            }
        })
    }

    /// The fewest runs its metric's interval is trusted from
    /// ([`crate::family::Metric::least_runs`]; 0 for a share of runs).
    pub fn least_runs(&self) -> u32 {
        match *self {
            Statistic::Mean { algorithm, metric }
            | Statistic::PooledRatio { algorithm, metric }
            | Statistic::PairedDifference {
                a: algorithm,
                metric,
                ..
            } => metric_of(algorithm, metric).map_or(0, |m| m.least_runs),
            Statistic::Share { .. } => 0,
        }
    }

    /// The interval method and support the figures use for it.
    pub fn method(&self) -> (IntervalMethod, Support) {
        match *self {
            Statistic::Mean { algorithm, metric } => {
                let m = metric_of(algorithm, metric).expect("checked by columns()");
                (m.interval, m.support)
            }
            Statistic::PairedDifference { a, metric, .. } => {
                let m = metric_of(a, metric).expect("checked by columns()");
                (m.interval, Support::Any)
            }
            Statistic::PooledRatio { .. } => (IntervalMethod::Delta, Support::NonNegative),
            Statistic::Share { .. } => (IntervalMethod::ClopperPearson, Support::UnitInterval),
        }
    }

    /// A short description: "mean wait_mean of me-rl", "me-rl − me-raymond wait_mean".
    pub fn label(&self) -> String {
        match *self {
            Statistic::Mean { algorithm, metric } => format!("{metric} of {algorithm}"),
            Statistic::PooledRatio { algorithm, metric } => {
                format!("{metric} of {algorithm} (pooled)")
            }
            Statistic::Share {
                algorithm,
                indicator,
            } => {
                format!("{indicator} share of {algorithm}")
            }
            Statistic::PairedDifference { a, b, metric } => format!("{metric}, {a} − {b}"),
        }
    }
}

fn metric_of(algorithm: &str, metric: &str) -> Result<&'static crate::family::Metric, String> {
    let algo = Algorithm::parse(algorithm).ok_or_else(|| format!("no algorithm {algorithm}"))?;
    algo.family()
        .metric(metric)
        .ok_or_else(|| format!("{algorithm} has no metric {metric}"))
}

/// One point of the harness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HarnessPoint {
    /// Its name on the command line and in the table.
    pub name: &'static str,
    /// The shape of data it stands for.
    pub shape: &'static str,
    /// The study's spec, a file of the analysis directory.
    pub study: &'static str,
    /// The point's axis values as in run keys (`rate=0.02`), one per axis of the study
    /// that varies.
    pub at: &'static [&'static str],
    /// What is estimated.
    pub statistic: Statistic,
    /// Sequential settings to measure besides the study's own, with the study's
    /// precision metrics: (min, max, batch, relative half-width).
    pub also: &'static [(u32, u32, u32, f64)],
    /// Fixed replication counts to measure besides the study's own: where the
    /// coverage of the statistic's interval reaches its level, which sets the metric's
    /// least runs ([`crate::family::Metric::least_runs`]).
    pub fixed: &'static [u32],
}

/// The built-in points: one for each shape of data the studies report.
pub fn harness_points() -> &'static [HarnessPoint] {
    &POINTS
}

const POINTS: [HarnessPoint; 7] = [
    HarnessPoint {
        name: "wait-low-load",
        shape: "low-load waiting time (heavy-tailed)",
        study: "me_load.toml",
        at: &["rate=0.02", "speed_max=2.0"],
        statistic: Statistic::Mean {
            algorithm: "me-rl",
            metric: "wait_mean",
        },
        // The setting that showed the problem: the first-look rule stopped at 15 runs
        // claiming ±8.5% where 60 runs give ±138%.
        also: &[(5, 60, 5, 0.10)],
        fixed: &[100, 300],
    },
    HarnessPoint {
        name: "wait-restricted",
        shape: "low-load waiting time with censored waits kept (restricted mean)",
        study: "me_load.toml",
        at: &["rate=0.02", "speed_max=2.0"],
        statistic: Statistic::Mean {
            algorithm: "me-rl",
            metric: "wait_rmean",
        },
        also: &[(5, 60, 5, 0.10)],
        fixed: &[100, 300],
    },
    HarnessPoint {
        name: "wait-paired",
        shape: "paired difference of waiting times",
        study: "me_load.toml",
        at: &["rate=0.2", "speed_max=20.0"],
        statistic: Statistic::PairedDifference {
            a: "me-rl",
            b: "me-raymond",
            metric: "wait_mean",
        },
        also: &[],
        fixed: &[10, 30, 100],
    },
    HarnessPoint {
        name: "msgs-per-cs",
        shape: "ratio of sums",
        study: "me_load.toml",
        at: &["rate=0.2", "speed_max=20.0"],
        statistic: Statistic::PooledRatio {
            algorithm: "me-raymond",
            metric: "msgs_per_cs",
        },
        also: &[],
        fixed: &[10, 30, 100],
    },
    HarnessPoint {
        name: "storms",
        shape: "messages per change with le-malpani's storms (bimodal)",
        study: "le_variants.toml",
        at: &["changes=overlap", "nodes=40", "speed_max=20.0"],
        statistic: Statistic::PooledRatio {
            algorithm: "le-malpani",
            metric: "msgs_per_change",
        },
        also: &[],
        fixed: &[50, 100, 200],
    },
    HarnessPoint {
        name: "violations-rare",
        shape: "rare violation fraction",
        study: "le_variants.toml",
        // About one run in twenty: with the study's 20 replications, p ≈ 1/n, the
        // regime where Wilson's interval dips.
        at: &["changes=overlap", "nodes=40", "speed_max=2.0"],
        statistic: Statistic::Share {
            algorithm: "le-malpani",
            indicator: "violated",
        },
        also: &[],
        fixed: &[],
    },
    HarnessPoint {
        name: "reversals-near-zero",
        shape: "near-zero reversal counts",
        study: "gb_reversal.toml",
        at: &["nodes=20", "speed_max=2.0"],
        statistic: Statistic::Mean {
            algorithm: "gb-partial",
            metric: "reversals_per_change",
        },
        also: &[],
        fixed: &[30, 100, 200],
    },
];
