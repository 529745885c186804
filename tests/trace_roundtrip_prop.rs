//! Property: any trace in the readers' normal form (continuous, no two pauses in a row,
//! legs not shorter than 10 ms, speeds of at least 1 cm/s) survives both writers.

use linkrev::mobility::{Area, Leg, Point, Trace, bonnmotion, ns2};
use proptest::prelude::*;

/// One leg to generate: `None` speed is a pause.
type LegSpec = (Option<(f64, f64)>, f64);

fn leg_spec() -> impl Strategy<Value = LegSpec> {
    (
        prop::option::of((0.0..std::f64::consts::TAU, 0.01..30.0)),
        0.01..60.0,
    )
}

fn build(start: Vec<(f64, f64)>, specs: Vec<Vec<LegSpec>>) -> Trace {
    let mut nodes: Vec<Vec<Leg>> = Vec::new();
    for ((x, y), specs) in start.into_iter().zip(specs) {
        let mut legs: Vec<Leg> = Vec::new();
        let (mut t, mut pos) = (0.0, Point::new(x, y));
        for (motion, dt) in specs {
            let velocity = match motion {
                Some((angle, speed)) => Point::new(speed * angle.cos(), speed * angle.sin()),
                None => Point::default(),
            };
            let leg = Leg {
                start: t,
                end: t + dt,
                origin: pos,
                velocity,
            };
            if let Some(last) = legs.last_mut()
                && last.is_pause()
                && leg.is_pause()
            {
                last.end = leg.end;
            } else {
                legs.push(leg);
            }
            t = leg.end;
            pos = leg.end_position();
        }
        nodes.push(legs);
    }
    let duration = nodes
        .iter()
        .map(|legs| legs.last().map_or(0.0, |l| l.end))
        .fold(0.0, f64::max);
    for legs in &mut nodes {
        let Some(last) = legs.last().copied() else {
            continue;
        };
        if duration - last.end < 0.01 || last.is_pause() {
            if let Some(l) = legs.last_mut() {
                l.end = duration;
            }
        } else {
            legs.push(Leg {
                start: last.end,
                end: duration,
                origin: last.end_position(),
                velocity: Point::default(),
            });
        }
    }
    Trace::from_legs(
        Area {
            width: 1000.0,
            height: 800.0,
        },
        duration,
        nodes,
    )
    .unwrap()
}

fn trace() -> impl Strategy<Value = Trace> {
    (1usize..6).prop_flat_map(|n| {
        (
            prop::collection::vec((0.0..1000.0, 0.0..800.0), n),
            prop::collection::vec(prop::collection::vec(leg_spec(), 1..12), n),
        )
            .prop_map(|(start, specs)| build(start, specs))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn ns2_writer_round_trips(trace in trace()) {
        let mut out = Vec::new();
        ns2::write(&trace, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = ns2::parse(&text, "prop.tcl").unwrap();
        let diff = trace.max_difference(&back.trace);
        prop_assert!(diff.is_some_and(|d| d < 1e-9), "{diff:?}\n{text}");
    }

    #[test]
    fn bonnmotion_writer_round_trips(trace in trace()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prop.movements");
        bonnmotion::write(&trace, &path).unwrap();
        let back = bonnmotion::read(&path).unwrap();
        let diff = trace.max_difference(&back.trace);
        prop_assert!(diff.is_some_and(|d| d < 1e-9), "{diff:?}");
    }
}
