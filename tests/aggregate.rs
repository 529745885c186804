//! Aggregation against hand-computed values on a small fixed `runs`-like table.
//!
//! wait_mean by (algorithm, rate, replication); seeds are shared by the algorithms of
//! one (rate, replication), as in a real sweep:
//!
//! | rate | me-rl          | me-raymond  | other            |
//! |------|----------------|-------------|------------------|
//! | 0.1  | 1, 2, 3, 6     | 2, 2, 5, 7  | le-malpani: 50   |
//! | 0.5  | 4, null, 8, 6  | 5, 9, 10, 8 |                  |
//! | 0.9  | 7 (rep 0 only) |             |                  |

use linkrev::results::aggregate::{IntervalSpec, paired_difference, summarize};
use linkrev::stats::Support;
use linkrev::stats::quantiles::student_t as student_t_quantile;

/// The interval of the tests: 95% Student-t, on any real.
const T: IntervalSpec = IntervalSpec::t95(Support::Any);
use polars::prelude::*;

/// t_{0.975,3} and t_{0.975,2} (the latter in closed form: 0.95·√(2/0.0975)).
const T3: f64 = 3.182_446_305_284_263;
const T2: f64 = 4.302_652_729_749_464;
const EPS: f64 = 1e-9;

fn table() -> DataFrame {
    let mut algorithm = Vec::new();
    let mut rate = Vec::new();
    let mut replication = Vec::new();
    let mut seed = Vec::new();
    let mut wait = Vec::new();
    let mut push = |alg: &str, r: f64, rep: u32, value: Option<f64>| {
        algorithm.push(alg.to_string());
        rate.push(r);
        replication.push(rep);
        seed.push((r * 1000.0) as u64 + u64::from(rep));
        wait.push(value);
    };
    // Interleaved and out of order on purpose: the output order must not depend on it.
    for (rep, (rl, ray)) in [(1.0, 2.0), (2.0, 2.0), (3.0, 5.0), (6.0, 7.0)]
        .into_iter()
        .enumerate()
        .rev()
    {
        push("me-raymond", 0.1, rep as u32, Some(ray));
        push("me-rl", 0.1, rep as u32, Some(rl));
    }
    for (rep, (rl, ray)) in [
        (Some(4.0), 5.0),
        (None, 9.0),
        (Some(8.0), 10.0),
        (Some(6.0), 8.0),
    ]
    .into_iter()
    .enumerate()
    {
        push("me-rl", 0.5, rep as u32, rl);
        push("me-raymond", 0.5, rep as u32, Some(ray));
    }
    push("me-rl", 0.9, 0, Some(7.0));
    push("le-malpani", 0.1, 0, Some(50.0));
    let n = algorithm.len();
    df! {
        "experiment" => vec!["e1"; n],
        "algorithm" => algorithm,
        "replication" => replication,
        "seed" => seed,
        "rate" => rate,
        "wait_mean" => wait,
    }
    .unwrap()
}

fn f(df: &DataFrame, name: &str, row: usize) -> Option<f64> {
    df.column(name).unwrap().f64().unwrap().get(row)
}

fn n(df: &DataFrame, name: &str, row: usize) -> u64 {
    df.column(name).unwrap().u64().unwrap().get(row).unwrap()
}

fn close(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: null, want {want}"));
    assert!((got - want).abs() < EPS, "{what}: {got} vs {want}");
}

struct Want {
    n: u64,
    mean: f64,
    sd: f64,
    t: f64,
    median: f64,
    p95: f64,
}

fn check(df: &DataFrame, row: usize, w: Want) {
    assert_eq!(n(df, "n", row), w.n, "n of row {row}");
    close(f(df, "mean", row), w.mean, "mean");
    close(f(df, "sd", row), w.sd, "sd");
    let half = w.t * w.sd / (w.n as f64).sqrt();
    close(f(df, "ci_low", row), w.mean - half, "ci_low");
    close(f(df, "ci_high", row), w.mean + half, "ci_high");
    close(f(df, "median", row), w.median, "median");
    close(f(df, "p95", row), w.p95, "p95");
}

#[test]
fn t_quantile_matches_the_constants_used_below() {
    assert!((student_t_quantile(0.975, 3) - T3).abs() < 1e-12);
    assert!((student_t_quantile(0.975, 2) - T2).abs() < 1e-12);
}

#[test]
fn summarize_by_algorithm_and_rate() {
    let s = summarize(&table(), &["algorithm", "rate"], "wait_mean", T).unwrap();
    let names: Vec<&str> = s.get_column_names().iter().map(|c| c.as_str()).collect();
    assert_eq!(
        names,
        [
            "algorithm",
            "rate",
            "n",
            "mean",
            "sd",
            "ci_low",
            "ci_high",
            "median",
            "p95",
            "half_width",
            "ci_cut",
            "ci_rough",
            "interval"
        ]
    );
    let algs: Vec<Option<&str>> = s
        .column("algorithm")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    let rates: Vec<Option<f64>> = s.column("rate").unwrap().f64().unwrap().iter().collect();
    assert_eq!(
        algs,
        [
            "le-malpani",
            "me-raymond",
            "me-raymond",
            "me-rl",
            "me-rl",
            "me-rl"
        ]
        .map(Some)
    );
    assert_eq!(rates, [0.1, 0.1, 0.5, 0.1, 0.5, 0.9].map(Some));

    // me-raymond 0.1: 2, 2, 5, 7 → mean 4, SS 18, sd √6; p95 at position 2.85: 5 + 0.85·2.
    #[rustfmt::skip]
    check(&s, 1, Want { n: 4, mean: 4.0, sd: 6f64.sqrt(), t: T3, median: 3.5, p95: 6.7 });
    // me-raymond 0.5: 5, 8, 9, 10 → mean 8, SS 14; p95 9 + 0.85·1.
    #[rustfmt::skip]
    check(&s, 2, Want { n: 4, mean: 8.0, sd: (14.0f64 / 3.0).sqrt(), t: T3, median: 8.5, p95: 9.85 });
    // me-rl 0.1: 1, 2, 3, 6 → mean 3, SS 14; p95 3 + 0.85·3.
    #[rustfmt::skip]
    check(&s, 3, Want { n: 4, mean: 3.0, sd: (14.0f64 / 3.0).sqrt(), t: T3, median: 2.5, p95: 5.55 });
    // me-rl 0.5: the null is skipped → 4, 6, 8: mean 6, sd 2, t with 2 df; p95 at 1.9: 6 + 0.9·2.
    #[rustfmt::skip]
    check(&s, 4, Want { n: 3, mean: 6.0, sd: 2.0, t: T2, median: 6.0, p95: 7.8 });

    // n = 1: a mean, no spread, no interval.
    for row in [0, 5] {
        assert_eq!(n(&s, "n", row), 1);
        for col in ["sd", "ci_low", "ci_high"] {
            assert_eq!(f(&s, col, row), None, "{col} of row {row}");
        }
    }
    assert_eq!(f(&s, "mean", 5), Some(7.0));
    assert_eq!(f(&s, "median", 5), Some(7.0));
    assert_eq!(f(&s, "p95", 5), Some(7.0));
}

#[test]
fn summarize_without_groups_is_one_row() {
    let s = summarize(&table(), &[], "wait_mean", T).unwrap();
    assert_eq!(s.height(), 1);
    assert_eq!(s.width(), 11);
    assert_eq!(n(&s, "n", 0), 17);
    close(f(&s, "mean", 0), 135.0 / 17.0, "mean");
}

#[test]
fn summarize_is_deterministic_under_row_order() {
    let t = table();
    let reversed = t.reverse();
    let a = summarize(&t, &["algorithm", "rate"], "wait_mean", T).unwrap();
    let b = summarize(&reversed, &["algorithm", "rate"], "wait_mean", T).unwrap();
    assert!(a.equals_missing(&b));
}

#[test]
fn paired_difference_rl_minus_raymond() {
    let p = paired_difference(&table(), &["rate"], "wait_mean", "me-rl", "me-raymond", T).unwrap();
    let names: Vec<&str> = p.get_column_names().iter().map(|c| c.as_str()).collect();
    assert_eq!(
        names,
        [
            "rate",
            "n",
            "mean",
            "sd",
            "ci_low",
            "ci_high",
            "median",
            "p95",
            "half_width",
            "ci_cut",
            "ci_rough",
            "interval",
            "mean_a",
            "mean_b",
            "unpaired"
        ]
    );
    let rates: Vec<Option<f64>> = p.column("rate").unwrap().f64().unwrap().iter().collect();
    assert_eq!(rates, [0.1, 0.5, 0.9].map(Some));

    // 0.1: d = −1, 0, −2, −1 → mean −1, SS 2, sd √(2/3); sorted −2, −1, −1, 0.
    #[rustfmt::skip]
    check(&p, 0, Want { n: 4, mean: -1.0, sd: (2.0f64 / 3.0).sqrt(), t: T3, median: -1.0, p95: -0.15 });
    close(f(&p, "mean_a", 0), 3.0, "mean_a");
    close(f(&p, "mean_b", 0), 4.0, "mean_b");
    assert_eq!(n(&p, "unpaired", 0), 0);

    // 0.5: replication 1 has a null on the RL side → d = −1, −2, −2: mean −5/3,
    // SS 2/3, sd √(1/3); mean_b over the same three pairs: (5 + 10 + 8)/3.
    #[rustfmt::skip]
    check(&p, 1, Want { n: 3, mean: -5.0 / 3.0, sd: (1.0f64 / 3.0).sqrt(), t: T2, median: -2.0, p95: -1.1 });
    close(f(&p, "mean_a", 1), 6.0, "mean_a");
    close(f(&p, "mean_b", 1), 23.0 / 3.0, "mean_b");
    assert_eq!(n(&p, "unpaired", 1), 0);

    // 0.9: RL alone → no pair, one unpaired row.
    assert_eq!(n(&p, "n", 2), 0);
    assert_eq!(n(&p, "unpaired", 2), 1);
    for col in [
        "mean", "sd", "ci_low", "ci_high", "median", "p95", "mean_a", "mean_b",
    ] {
        assert_eq!(f(&p, col, 2), None, "{col}");
    }
}

#[test]
fn paired_difference_is_antisymmetric() {
    let t = table();
    let ab = paired_difference(&t, &["rate"], "wait_mean", "me-rl", "me-raymond", T).unwrap();
    let ba = paired_difference(&t, &["rate"], "wait_mean", "me-raymond", "me-rl", T).unwrap();
    for row in 0..2 {
        close(f(&ba, "mean", row), -f(&ab, "mean", row).unwrap(), "mean");
        close(f(&ba, "sd", row), f(&ab, "sd", row).unwrap(), "sd");
        close(
            f(&ba, "ci_low", row),
            -f(&ab, "ci_high", row).unwrap(),
            "ci",
        );
    }
}

#[test]
fn ambiguous_pairing_and_bad_columns_are_errors() {
    let t = table();
    // Without `rate` in the groups and without seeds, replication 0 of me-rl appears
    // at three rates: pairing would be ambiguous.
    let no_seed = t.drop("seed").unwrap();
    let err = paired_difference(&no_seed, &[], "wait_mean", "me-rl", "me-raymond", T).unwrap_err();
    assert!(format!("{err:#}").contains("ambiguous pairing"), "{err:#}");
    assert!(paired_difference(&no_seed, &["rate"], "wait_mean", "me-rl", "me-raymond", T).is_ok());
    assert!(paired_difference(&t, &["algorithm"], "wait_mean", "me-rl", "me-raymond", T).is_err());
    let err = summarize(&t, &["speed"], "wait_mean", T).unwrap_err();
    assert!(err.to_string().contains("speed"), "{err}");
    assert!(summarize(&t, &["rate"], "no_metric", T).is_err());
}

/// Brute force for one group: n, mean, sample sd (two-pass), median and p95 of the
/// sorted values by the definition (linear between the two nearest ranks).
fn brute_force(values: &[f64]) -> (u64, Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (0, None, None, None, None);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.len() >= 2)
        .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let pos = q * (n - 1.0);
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
    };
    (
        values.len() as u64,
        Some(mean),
        sd,
        Some(rank(0.5)),
        Some(rank(0.95)),
    )
}

fn agree(got: Option<f64>, want: Option<f64>, what: &str) {
    match (got, want) {
        (None, None) => {}
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}: {g} vs {w}"
        ),
        _ => panic!("{what}: {got:?} vs {want:?}"),
    }
}

proptest::proptest! {
    /// Random tables (a text key and a number key, nulls in the metric and in the number
    /// key, rows in any order): every group of `summarize` is a distinct key pair, the groups come
    /// sorted, and each row's statistics are those of a brute-force pass over the rows
    /// of that group; the paired difference's mean is mean_a − mean_b over n pairs.
    #[test]
    fn summaries_match_brute_force_on_random_tables(
        rows in proptest::collection::vec(
            (0..3u8, proptest::option::weighted(0.9, 0..3u8), 0..4u32,
             proptest::option::weighted(0.8, -50i32..50)),
            0..60,
        )
    ) {
        let algorithm: Vec<String> = rows.iter().map(|r| ["me-rl", "me-raymond", "me-krl"][r.0 as usize].to_string()).collect();
        let speed: Vec<Option<f64>> = rows.iter().map(|r| r.1.map(|s| f64::from(s) * 2.5)).collect();
        let replication: Vec<u32> = rows.iter().map(|r| r.2).collect();
        let value: Vec<Option<f64>> = rows.iter().map(|r| r.3.map(|v| f64::from(v) / 8.0)).collect();
        let df = df! {
            "algorithm" => algorithm.clone(),
            "speed" => speed.clone(),
            "replication" => replication.clone(),
            "wait" => value.clone(),
        }.unwrap();

        let s = summarize(&df, &["algorithm", "speed"], "wait", T).unwrap();
        let keys: Vec<(Option<String>, Option<f64>)> = (0..s.height())
            .map(|i| (
                s.column("algorithm").unwrap().str().unwrap().get(i).map(str::to_string),
                f(&s, "speed", i),
            ))
            .collect();
        let mut expected_keys: Vec<(Option<String>, Option<f64>)> = algorithm.iter().cloned().map(Some).zip(speed.iter().copied()).collect();
        // polars sorts nulls first, then ascending.
        expected_keys.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.is_some().cmp(&b.1.is_some())).then(a.1.partial_cmp(&b.1).unwrap()));
        expected_keys.dedup();
        proptest::prop_assert_eq!(&keys, &expected_keys);
        for (i, (alg, sp)) in keys.iter().enumerate() {
            let group: Vec<f64> = (0..rows.len())
                .filter(|&r| Some(&algorithm[r]) == alg.as_ref() && speed[r] == *sp)
                .filter_map(|r| value[r])
                .collect();
            let (count, mean, sd, median, p95) = brute_force(&group);
            proptest::prop_assert_eq!(n(&s, "n", i), count);
            agree(f(&s, "mean", i), mean, "mean");
            agree(f(&s, "sd", i), sd, "sd");
            agree(f(&s, "median", i), median, "median");
            agree(f(&s, "p95", i), p95, "p95");
        }

        let whole = summarize(&df, &[], "wait", T).unwrap();
        let all: Vec<f64> = value.iter().flatten().copied().collect();
        proptest::prop_assert_eq!(whole.height(), usize::from(!rows.is_empty()));
        if !rows.is_empty() {
            proptest::prop_assert_eq!(n(&whole, "n", 0), all.len() as u64);
            agree(f(&whole, "mean", 0), brute_force(&all).1, "mean of all");
        }

        // Pairs need a unique (replication) per algorithm and speed: keep the first.
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<bool> = (0..rows.len()).map(|r| seen.insert((rows[r].0, rows[r].1, rows[r].2))).collect();
        let mask: BooleanChunked = unique.iter().copied().collect();
        let df = df.filter(&mask).unwrap();
        let p = paired_difference(&df, &["speed"], "wait", "me-rl", "me-raymond", T).unwrap();
        let mut speeds: Vec<Option<f64>> = (0..rows.len())
            .filter(|&r| unique[r] && (algorithm[r] == "me-rl" || algorithm[r] == "me-raymond"))
            .map(|r| speed[r])
            .collect();
        speeds.sort_by(|a, b| a.is_some().cmp(&b.is_some()).then(a.partial_cmp(b).unwrap()));
        speeds.dedup();
        let got: Vec<Option<f64>> = (0..p.height()).map(|i| f(&p, "speed", i)).collect();
        proptest::prop_assert_eq!(got, speeds);
        for i in 0..p.height() {
            let sp = f(&p, "speed", i);
            let row_of = |alg: &str, rep: u32| (0..rows.len()).find(|&r| unique[r] && algorithm[r] == alg && speed[r] == sp && replication[r] == rep);
            let (mut d, mut pairs, mut rows_ab) = (Vec::new(), 0u64, 0u64);
            let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
            for r in 0..rows.len() {
                if unique[r] && speed[r] == sp && (algorithm[r] == "me-rl" || algorithm[r] == "me-raymond") {
                    rows_ab += 1;
                }
            }
            for rep in 0..4 {
                if let (Some(ra), Some(rb)) = (row_of("me-rl", rep), row_of("me-raymond", rep)) {
                    pairs += 1;
                    if let (Some(va), Some(vb)) = (value[ra], value[rb]) {
                        d.push(va - vb);
                        of_a.push(va);
                        of_b.push(vb);
                    }
                }
            }
            let (count, mean, sd, median, p95) = brute_force(&d);
            proptest::prop_assert_eq!(n(&p, "n", i), count);
            proptest::prop_assert_eq!(n(&p, "unpaired", i), rows_ab - 2 * pairs);
            agree(f(&p, "mean", i), mean, "paired mean");
            agree(f(&p, "sd", i), sd, "paired sd");
            agree(f(&p, "median", i), median, "paired median");
            agree(f(&p, "p95", i), p95, "paired p95");
            agree(f(&p, "mean_a", i), brute_force(&of_a).1, "mean_a");
            agree(f(&p, "mean_b", i), brute_force(&of_b).1, "mean_b");
        }
    }
}

/// Means are compensated sums, not plain ones: ten runs of 0.1 average to 0.1 exactly,
/// where adding them up naively gives 0.9999999999999999 and a mean one ulp low.
#[test]
fn means_do_not_lose_the_rounding_of_each_addition() {
    assert_ne!([0.1f64; 10].iter().sum::<f64>() / 10.0, 0.1);
    let df = df! { "algorithm" => vec!["me-rl"; 10], "wait" => vec![0.1f64; 10] }.unwrap();
    let s = summarize(&df, &["algorithm"], "wait", T).unwrap();
    assert_eq!(f(&s, "mean", 0), Some(0.1));
    // sd 0 up to rounding; median and p95 are values of the table, as they are.
    assert_eq!(f(&s, "median", 0), Some(0.1));
    assert_eq!(f(&s, "p95", 0), Some(0.1));
}

/// An infinite value stays infinite in the median and p95 of its group (an interpolation
/// between two infinities would give NaN).
#[test]
fn quantiles_between_equal_infinities_are_infinite() {
    let df = df! {
        "algorithm" => vec!["me-rl"; 3],
        "wait" => vec![1.0, f64::INFINITY, f64::INFINITY],
    }
    .unwrap();
    let s = summarize(&df, &[], "wait", T).unwrap();
    assert_eq!(f(&s, "median", 0), Some(f64::INFINITY));
    assert_eq!(f(&s, "p95", 0), Some(f64::INFINITY));
}

#[test]
fn shares_and_pooled_ratios_stay_in_their_support() {
    use linkrev::results::aggregate::{summarize_ratio, summarize_share};
    use linkrev::stats::IntervalMethod;
    let t = table();
    let wilson = IntervalSpec {
        method: IntervalMethod::Wilson,
        support: Support::UnitInterval,
        confidence: 0.95,
        least_runs: 0,
    };
    // The share of runs whose wait is above 8 s, as a 0/1 column.
    let waits: Vec<Option<f64>> = t
        .column("wait_mean")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .map(|w| w.map(|w| if w > 8.0 { 1.0 } else { 0.0 }))
        .collect();
    let mut t2 = t.clone();
    t2.with_column(Column::new("slow".into(), waits)).unwrap();
    let s = summarize_share(&t2, &["algorithm"], "slow", wilson).unwrap();
    for row in 0..s.height() {
        let (lo, hi) = (
            f(&s, "ci_low", row).unwrap(),
            f(&s, "ci_high", row).unwrap(),
        );
        let p = f(&s, "mean", row).unwrap();
        assert!(
            (0.0..=p).contains(&lo) && (p..=1.0).contains(&hi),
            "{lo} {p} {hi}"
        );
        let with = n(&s, "runs_with", row) as f64;
        close(Some(p), with / n(&s, "n", row) as f64, "share");
    }
    // A pooled ratio is Σy / Σx, not the mean of the per-run ratios.
    let delta = IntervalSpec {
        method: IntervalMethod::Delta,
        support: Support::NonNegative,
        confidence: 0.95,
        least_runs: 0,
    };
    let r = summarize_ratio(&t, &[], ("wait_mean", "rate"), delta).unwrap();
    let ys = t.column("wait_mean").unwrap().f64().unwrap().clone();
    let xs = t.column("rate").unwrap().f64().unwrap().clone();
    let (mut sy, mut sx) = (0.0, 0.0);
    for (y, x) in ys.iter().zip(xs.iter()) {
        if let (Some(y), Some(x)) = (y, x) {
            sy += y;
            sx += x;
        }
    }
    close(f(&r, "mean", 0), sy / sx, "pooled");
    assert!(f(&r, "ci_low", 0).unwrap() >= 0.0);
}
