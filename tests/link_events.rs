//! Link events checked against brute force: between consecutive events the link state
//! derived from the events must equal the distance rule evaluated directly at sample
//! instants, on random traces with pauses, shared leg boundaries and coincident starts.

use linkrev::mobility::{Area, Leg, Point, Trace};
use linkrev::topology::events::{LinkChange, link_timeline};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// One node's random trajectory: alternating moves and pauses on a coarse time grid, so
/// that many legs of different nodes start at the same instant.
fn trajectory(area: f64, duration: f64) -> impl Strategy<Value = Vec<Leg>> {
    (
        (0.0..area, 0.0..area),
        prop::collection::vec(((1u32..8), (0.0..area, 0.0..area), prop::bool::ANY), 1..12),
    )
        .prop_map(move |((x0, y0), steps)| {
            let mut legs = Vec::new();
            let mut t = 0.0;
            let mut p = Point::new(x0, y0);
            for (len, (tx, ty), pause) in steps {
                if t >= duration {
                    break;
                }
                let end = (t + len as f64).min(duration);
                let velocity = if pause {
                    Point::default()
                } else {
                    Point::new((tx - p.x) / len as f64, (ty - p.y) / len as f64)
                };
                let leg = Leg {
                    start: t,
                    end,
                    origin: p,
                    velocity,
                };
                p = leg.end_position();
                legs.push(leg);
                t = end;
            }
            if t < duration {
                legs.push(Leg {
                    start: t,
                    end: duration,
                    origin: p,
                    velocity: Point::default(),
                });
            }
            legs
        })
}

fn random_trace() -> impl Strategy<Value = Trace> {
    let (area, duration) = (100.0, 30.0);
    prop::collection::vec(trajectory(area, duration), 2..8).prop_map(move |legs| {
        Trace::from_legs(
            Area {
                width: area,
                height: area,
            },
            duration,
            legs,
        )
        .expect("valid by construction")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn events_match_brute_force_sampling(trace in random_trace(), range in 10.0f64..60.0) {
        let timeline = link_timeline(&trace, range);
        let n = trace.node_count() as u32;

        // Per pair: events alternate, starting with Up iff not initially linked.
        let mut linked: BTreeSet<(u32, u32)> = timeline.initial_links().into_iter().collect();
        let mut state = linked.clone();
        for e in &timeline.events {
            prop_assert!(e.a < e.b);
            let was = state.contains(&(e.a, e.b));
            prop_assert_eq!(was, e.change == LinkChange::Down, "event {:?} does not alternate", e);
            if was { state.remove(&(e.a, e.b)); } else { state.insert((e.a, e.b)); }
        }
        prop_assert!(timeline.events.windows(2).all(|w| w[0].time <= w[1].time));

        // Between consecutive event times, sample and compare with the distance rule.
        let mut times: Vec<f64> = vec![0.0];
        times.extend(timeline.events.iter().map(|e| e.time));
        times.push(trace.duration);
        let mut next_event = 0;
        for w in times.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            // Apply every event at `lo` (the state just after `lo`).
            while next_event < timeline.events.len() && timeline.events[next_event].time <= lo {
                let e = timeline.events[next_event];
                match e.change {
                    LinkChange::Up => { linked.insert((e.a, e.b)); }
                    LinkChange::Down => { linked.remove(&(e.a, e.b)); }
                }
                next_event += 1;
            }
            if hi - lo < 1e-6 {
                continue;
            }
            for frac in [0.01, 0.25, 0.5, 0.75, 0.99] {
                let t = lo + frac * (hi - lo);
                for a in 0..n {
                    for b in a + 1..n {
                        let d = trace.position(a, t).distance(trace.position(b, t));
                        if (d - range).abs() < 1e-7 {
                            continue; // too close to call in floating point
                        }
                        prop_assert_eq!(
                            linked.contains(&(a, b)),
                            d < range,
                            "pair ({}, {}) at t={} d={} range={}", a, b, t, d, range
                        );
                    }
                }
            }
        }
    }
}
