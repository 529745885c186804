//! Waiting times some of which never end: the Kaplan–Meier estimate and the restricted
//! mean.
//!
//! A CS request still waiting when its run ends has waited at least until then, and
//! its wait is right-censored there. Averaging only the requests that were served
//! drops exactly the longest waits, so the algorithm that leaves more requests
//! unserved looks faster. The Kaplan–Meier estimate of the survival function S(t) =
//! P(wait > t) (Kaplan & Meier, JASA 53(282), 1958) uses every request: a censored one
//! counts as at risk until its censoring time. The mean of a wait whose tail is
//! censored is not identified, but the *restricted mean* up to a horizon τ,
//! E[min(W, τ)] = ∫₀^τ S(t) dt, is whenever some request is followed that long
//! (Irwin 1949; Royston & Parmar, BMC Med. Res. Methodol. 13:152, 2013). Without
//! censoring and with every wait below τ it is the plain mean.

/// One waiting time: how long, and whether it ended (a served request) or was cut off
/// (still waiting at the end of the run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observed {
    /// The wait, or the time followed until the run ended.
    pub time: f64,
    /// Whether the wait ended at `time` (false: censored there).
    pub ended: bool,
}

/// The Kaplan–Meier restricted mean ∫₀^τ Ŝ(t) dt of `waits` up to `horizon` > 0.
///
/// At a time where waits end and others are censored, the censored ones count as still
/// at risk (the usual convention). When the longest wait followed is censored before
/// the horizon, Ŝ is not identified beyond it, and is held at its last value up to the
/// horizon (Gill's convention; Gill, "Censoring and Stochastic Integrals", 1980): a
/// request still waiting counts as waiting until τ, which never flatters the algorithm
/// that left it. `None` without waits.
pub fn restricted_mean(waits: &[Observed], horizon: f64) -> Option<f64> {
    assert!(horizon > 0.0, "the horizon must be positive");
    if waits.is_empty() {
        return None;
    }
    let mut sorted: Vec<Observed> = waits.to_vec();
    // Ends before censorings at the same time: a censored wait is at risk there.
    sorted.sort_by(|a, b| a.time.total_cmp(&b.time).then(b.ended.cmp(&a.ended)));
    let mut at_risk = sorted.len();
    let (mut survival, mut area, mut last) = (1.0_f64, 0.0_f64, 0.0_f64);
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i].time;
        if t >= horizon {
            break;
        }
        area += survival * (t - last);
        last = t;
        // Every wait at t: the ends lower S, then all leave the risk set.
        let same = sorted[i..].iter().take_while(|w| w.time == t).count();
        let ended = sorted[i..i + same].iter().filter(|w| w.ended).count();
        survival *= 1.0 - ended as f64 / at_risk as f64;
        at_risk -= same;
        i += same;
    }
    Some(area + survival * (horizon - last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(time: f64) -> Observed {
        Observed { time, ended: true }
    }

    fn censored(time: f64) -> Observed {
        Observed { time, ended: false }
    }

    /// Efron's redistribute-to-the-right (JASA 1967 discussion; the same estimate by
    /// another route): each censored wait hands its mass in equal shares to every wait
    /// after it; the restricted mean is Σ mass × min(t, τ), with mass left at the end
    /// counted at τ.
    fn redistribute(waits: &[Observed], horizon: f64) -> f64 {
        let mut w: Vec<Observed> = waits.to_vec();
        w.sort_by(|a, b| a.time.total_cmp(&b.time).then(b.ended.cmp(&a.ended)));
        let mut mass = vec![1.0 / w.len() as f64; w.len()];
        for i in 0..w.len() {
            if !w[i].ended {
                let later = w.len() - i - 1;
                if later > 0 {
                    let share = mass[i] / later as f64;
                    for m in &mut mass[i + 1..] {
                        *m += share;
                    }
                    mass[i] = 0.0;
                }
            }
        }
        w.iter()
            .zip(&mass)
            .map(|(o, m)| {
                m * if o.ended {
                    o.time.min(horizon)
                } else {
                    horizon
                }
            })
            .sum()
    }

    #[test]
    fn without_censoring_it_is_the_mean_of_the_waits_below_the_horizon() {
        let waits = [ended(1.0), ended(3.0), ended(2.0), ended(6.0)];
        assert_eq!(restricted_mean(&waits, 10.0), Some(3.0));
        // Capped at τ = 2.5: (1 + 2.5 + 2 + 2.5) / 4.
        assert_eq!(restricted_mean(&waits, 2.5), Some(2.0));
    }

    #[test]
    fn it_agrees_with_redistribute_to_the_right() {
        // Ties between ends and censorings included; the last wait ends.
        let waits = [
            ended(1.0),
            censored(2.0),
            ended(2.0),
            censored(3.5),
            ended(4.0),
            censored(4.0),
            ended(7.0),
            ended(9.0),
        ];
        for horizon in [0.5, 2.0, 3.0, 5.0, 8.0, 20.0] {
            let km = restricted_mean(&waits, horizon).unwrap();
            let efron = redistribute(&waits, horizon);
            assert!((km - efron).abs() < 1e-12, "τ = {horizon}: {km} vs {efron}");
        }
    }

    #[test]
    fn a_tail_censored_before_the_horizon_is_held_to_it() {
        // Half end at 1, half are still waiting at 5: S = 1/2 from 1 on, held to τ.
        let waits = [ended(1.0), censored(5.0)];
        assert_eq!(restricted_mean(&waits, 10.0), Some(1.0 + 0.5 * 9.0));
        assert_eq!(restricted_mean(&waits, 4.0), Some(1.0 * 0.5 + 0.5 * 4.0));
        assert_eq!(restricted_mean(&[], 1.0), None);
    }

    /// The point of the estimator: an algorithm that serves 90% of its requests fast
    /// and leaves 10% waiting from early on has the lower mean over served requests,
    /// but the higher restricted mean.
    #[test]
    fn leaving_requests_unserved_does_not_look_faster() {
        let all_served: Vec<Observed> = (0..100).map(|_| ended(1.0)).collect();
        let mut some_left: Vec<Observed> = (0..90).map(|_| ended(0.5)).collect();
        some_left.extend((0..10).map(|_| censored(500.0)));
        let served_mean = |w: &[Observed]| {
            let s: Vec<f64> = w.iter().filter(|o| o.ended).map(|o| o.time).collect();
            s.iter().sum::<f64>() / s.len() as f64
        };
        assert!(served_mean(&some_left) < served_mean(&all_served));
        let (a, b) = (
            restricted_mean(&all_served, 300.0).unwrap(),
            restricted_mean(&some_left, 300.0).unwrap(),
        );
        assert_eq!(a, 1.0);
        assert!((b - (0.9 * 0.5 + 0.1 * 300.0)).abs() < 1e-9, "{b}");
        assert!(b > a);
    }
}
