//! Prints the coverage table of the book's statistics page: each interval method, and the sequential
//! procedure, on distributions with a known mean (see `linkrev::stats::coverage`).
//!
//! `cargo run --release --example interval_coverage [REPETITIONS]` (default 10,000;
//! about a minute on one core).

use linkrev::stats::IntervalMethod::{self, *};
use linkrev::stats::coverage::{self, Coverage, Distribution, Simulation};
use linkrev::stats::{Replications, Target};

fn row(what: &str, method: IntervalMethod, n: &str, c: Coverage) {
    println!(
        "| {what} | {} | {n} | {:.3} ± {:.3} |",
        method.name(),
        c.covered,
        1.96 * c.standard_error(0.95)
    );
}

fn main() {
    let reps: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let boot = (reps / 5).max(200);
    println!("| distribution | interval | runs | coverage of a 95% interval |");
    println!("|---|---|---|---|");
    let normal = Distribution::Normal {
        mean: 10.0,
        sd: 2.0,
    };
    let exp = Distribution::Exponential { mean: 1.0 };
    let lognormal = Distribution::LogNormal { sigma: 1.0 };
    for (d, n) in [
        (normal, 5),
        (normal, 10),
        (exp, 10),
        (exp, 30),
        (lognormal, 10),
        (lognormal, 30),
    ] {
        row(
            &d.name(),
            StudentT,
            &n.to_string(),
            coverage::fixed_n(d, StudentT, (n, 0.95), Simulation::new(reps, 1)),
        );
    }
    for method in [BootstrapPercentile, BootstrapBca] {
        for (d, n) in [(normal, 10), (exp, 10), (exp, 30), (lognormal, 30)] {
            let c = coverage::fixed_n(d, method, (n, 0.95), Simulation::new(boot, 2));
            row(&d.name(), method, &n.to_string(), c);
        }
    }
    for p in [0.05, 0.5, 0.95] {
        let d = Distribution::Bernoulli { p };
        for method in [Wilson, ClopperPearson, StudentT] {
            row(
                &d.name(),
                method,
                "40",
                coverage::fixed_n(d, method, (40, 0.95), Simulation::new(reps, 3)),
            );
        }
    }
    row(
        "ratio Σy/Σx",
        Delta,
        "20",
        coverage::ratio(Delta, (20, 0.95), Simulation::new(reps, 4)),
    );
    let c = coverage::ratio(BootstrapPercentile, (20, 0.95), Simulation::new(boot, 4));
    row("ratio Σy/Σx", BootstrapPercentile, "20", c);
    let schedule = Replications {
        min: 10,
        max: 1000,
        batch: 5,
    };
    for (d, gamma) in [(normal, 0.02), (exp, 0.05), (exp, 0.1), (lognormal, 0.1)] {
        let rule = (schedule, Target::Relative(gamma), 0.95);
        let c = coverage::sequential(d, StudentT, rule, Simulation::new(reps / 5, 5));
        let what = format!("{} sequential, γ = {gamma}", d.name());
        row(&what, StudentT, &format!("{:.0} (mean)", c.mean_n), c);
    }
}
