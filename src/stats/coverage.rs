//! The statistics tested by simulation: how often each interval method, and the
//! sequential procedure, cover the true value of distributions whose mean is known.
//!
//! A 95% interval should hold the true mean in 95% of repetitions. Whether it does
//! depends on the method, the distribution and the sample size, and no formula says
//! by how much a skewed metric with ten runs falls short; repeating the experiment
//! thousands of times does. `tests/interval_coverage.rs` asserts the coverage within
//! stated bounds (seeded, a few thousand repetitions); `examples/interval_coverage.rs`
//! prints the table of the book's statistics page with more.
//!
//! The samplers are the textbook transforms of uniform numbers (Box–Muller for the
//! normal, −ln U for the exponential), seeded, so every number here is reproducible.

use super::intervals::{IntervalMethod, Sample, interval_resampled};
use super::sequential::{Replications, Target};
use super::{Interval, Support};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

/// A distribution with a known mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Normal(μ, σ).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
    },
    /// Exponential with this mean (skewness 2).
    Exponential {
        /// Mean.
        mean: f64,
    },
    /// exp(Normal(0, σ)): mean e^{σ²/2}, heavy right tail.
    LogNormal {
        /// σ of the underlying normal.
        sigma: f64,
    },
    /// 1 with probability p, else 0.
    Bernoulli {
        /// Success probability.
        p: f64,
    },
}

impl Distribution {
    /// The true mean.
    pub fn mean(self) -> f64 {
        match self {
            Distribution::Normal { mean, .. } | Distribution::Exponential { mean } => mean,
            Distribution::LogNormal { sigma } => (sigma * sigma / 2.0).exp(),
            Distribution::Bernoulli { p } => p,
        }
    }

    /// Where its values lie.
    pub fn support(self) -> Support {
        match self {
            Distribution::Normal { .. } => Support::Any,
            Distribution::Exponential { .. } | Distribution::LogNormal { .. } => {
                Support::NonNegative
            }
            Distribution::Bernoulli { .. } => Support::UnitInterval,
        }
    }

    /// A name for tables: `normal(10, 2)`.
    pub fn name(self) -> String {
        match self {
            Distribution::Normal { mean, sd } => format!("normal({mean}, {sd})"),
            Distribution::Exponential { mean } => format!("exponential(mean {mean})"),
            Distribution::LogNormal { sigma } => format!("lognormal(0, {sigma})"),
            Distribution::Bernoulli { p } => format!("Bernoulli({p})"),
        }
    }

    /// One draw.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            Distribution::Normal { mean, sd } => mean + sd * standard_normal(rng),
            Distribution::Exponential { mean } => -mean * (1.0 - rng.random::<f64>()).ln(),
            Distribution::LogNormal { sigma } => (sigma * standard_normal(rng)).exp(),
            Distribution::Bernoulli { p } => f64::from(u8::from(rng.random::<f64>() < p)),
        }
    }
}

/// Box–Muller: one standard normal from two uniforms.
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// What a coverage simulation found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coverage {
    /// Share of repetitions whose interval held the true value.
    pub covered: f64,
    /// Repetitions.
    pub repetitions: u32,
    /// Mean sample size (fixed, or where the sequential procedure stopped).
    pub mean_n: f64,
    /// Share of intervals that had to be cut at the support.
    pub cut: f64,
}

impl Coverage {
    /// The Monte-Carlo standard error of `covered` at the nominal `level`.
    pub fn standard_error(&self, level: f64) -> f64 {
        (level * (1.0 - level) / f64::from(self.repetitions)).sqrt()
    }
}

/// How a simulation runs: repetitions, generator seed, and bootstrap resamples per
/// interval (the report uses [`super::intervals::BOOTSTRAP_RESAMPLES`]; a test can
/// afford fewer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simulation {
    /// Independent repetitions.
    pub repetitions: u32,
    /// Seed of the generator.
    pub seed: u64,
    /// Resamples of each bootstrap interval.
    pub resamples: usize,
}

impl Simulation {
    /// `repetitions` with `seed`, bootstrap intervals as the report draws them.
    pub fn new(repetitions: u32, seed: u64) -> Simulation {
        Simulation {
            repetitions,
            seed,
            resamples: super::intervals::BOOTSTRAP_RESAMPLES,
        }
    }

    /// The same with `resamples` per bootstrap interval.
    pub fn resampling(self, resamples: usize) -> Simulation {
        Simulation { resamples, ..self }
    }

    /// The seeded generator and an empty tally a simulation starts from.
    fn start(self) -> (ChaCha8Rng, Tally) {
        (ChaCha8Rng::seed_from_u64(self.seed), Tally::default())
    }
}

/// Counts, over the repetitions of a simulation, the intervals that held the truth.
#[derive(Default)]
struct Tally {
    covered: u32,
    cut: u32,
    runs: u64,
    repetitions: u32,
}

impl Tally {
    /// One repetition: its interval (if any), the true value and its sample size.
    fn add(&mut self, found: Option<Interval>, truth: f64, n: usize) {
        self.covered += u32::from(found.is_some_and(|i| i.low <= truth && truth <= i.high));
        self.cut += u32::from(found.is_some_and(|i| i.cut));
        self.runs += n as u64;
        self.repetitions += 1;
    }

    fn coverage(&self) -> Coverage {
        let reps = f64::from(self.repetitions.max(1));
        Coverage {
            covered: f64::from(self.covered) / reps,
            repetitions: self.repetitions,
            mean_n: self.runs as f64 / reps,
            cut: f64::from(self.cut) / reps,
        }
    }
}

/// The coverage of `method` at `level` for samples of `n` from `dist`. Proportion
/// methods see the successes of the draws; the others, the draws.
pub fn fixed_n(
    dist: Distribution,
    method: IntervalMethod,
    (n, level): (usize, f64),
    sim: Simulation,
) -> Coverage {
    let (repetitions, resamples) = (sim.repetitions, sim.resamples);
    let (mut rng, mut tally) = sim.start();
    let mut values = vec![0.0; n];
    for _ in 0..repetitions {
        for v in values.iter_mut() {
            *v = dist.draw(&mut rng);
        }
        let found = one_interval(&values, method, level, (dist.support(), resamples));
        tally.add(found, dist.mean(), n);
    }
    tally.coverage()
}

fn one_interval(
    values: &[f64],
    method: IntervalMethod,
    level: f64,
    (support, resamples): (Support, usize),
) -> Option<Interval> {
    let sample = match method {
        IntervalMethod::Wilson | IntervalMethod::ClopperPearson => Sample::Proportion {
            successes: values.iter().filter(|&&v| v > 0.0).count() as u64,
            n: values.len() as u64,
        },
        _ => Sample::Values(values),
    };
    interval_resampled(sample, method, level, support, resamples)
}

/// The coverage of a ratio of sums Σy/Σx by `method`: x ~ 1 + Exponential(mean 4)
/// events per run, y = 3·x + Normal(0, 2) messages; the true ratio is 3.
pub fn ratio(method: IntervalMethod, (n, level): (usize, f64), sim: Simulation) -> Coverage {
    let (repetitions, resamples) = (sim.repetitions, sim.resamples);
    let (mut rng, mut tally) = sim.start();
    let events = Distribution::Exponential { mean: 4.0 };
    let noise = Distribution::Normal { mean: 0.0, sd: 2.0 };
    let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..repetitions {
        for i in 0..n {
            x[i] = 1.0 + events.draw(&mut rng);
            y[i] = 3.0 * x[i] + noise.draw(&mut rng);
        }
        let sample = Sample::Ratio {
            numerators: &y,
            denominators: &x,
        };
        let found = interval_resampled(sample, method, level, Support::NonNegative, resamples);
        tally.add(found, 3.0, n);
    }
    tally.coverage()
}

/// The coverage of the sequential procedure ([`super::sequential`]): replications of
/// `dist` grow by `schedule` until the `method` interval at `level` meets `target`;
/// the final interval is judged.
pub fn sequential(
    dist: Distribution,
    method: IntervalMethod,
    (schedule, target, level): (Replications, Target, f64),
    sim: Simulation,
) -> Coverage {
    let (repetitions, resamples) = (sim.repetitions, sim.resamples);
    let (mut rng, mut tally) = sim.start();
    for _ in 0..repetitions {
        let mut values: Vec<f64> = (0..schedule.min).map(|_| dist.draw(&mut rng)).collect();
        let found = loop {
            let found = interval_resampled(
                Sample::Values(&values),
                method,
                level,
                dist.support(),
                resamples,
            );
            let met = found.as_ref().is_some_and(|i| target.met_by(i));
            match schedule.next(values.len() as u32) {
                Some(more) if !met => {
                    while values.len() < more as usize {
                        values.push(dist.draw(&mut rng));
                    }
                }
                _ => break found,
            }
        };
        tally.add(found, dist.mean(), values.len());
    }
    tally.coverage()
}
