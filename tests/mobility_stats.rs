//! Mobility statistics against independent estimates: sampled snapshots of the graph
//! (degree, components, connectivity) and the analytic random-waypoint speed.

use linkrev::mobility::rwp::{self, PauseDist, RwpParams, SpeedDist, StartMode};
use linkrev::mobility::{Area, Leg, Point, Trace};
use linkrev::topology::components::count_components;
use linkrev::topology::events::link_timeline;
use linkrev::topology::stats::mobility_stats;

fn rwp_trace(nodes: usize, duration: f64, seed: u64) -> Trace {
    rwp::generate(&RwpParams {
        nodes,
        area: Area {
            width: 1000.0,
            height: 600.0,
        },
        speed: SpeedDist::Uniform {
            min: 1.0,
            max: 19.0,
        },
        pause: PauseDist::Constant(10.0),
        duration,
        start: StartMode::Stationary,
        seed,
    })
    .expect("valid parameters")
}

#[test]
fn time_averages_agree_with_dense_snapshots() {
    let trace = rwp_trace(40, 300.0, 3);
    let range = 200.0;
    let stats = mobility_stats(&trace, &link_timeline(&trace, range));
    let n = trace.node_count() as u32;
    let samples = 6000;
    let (mut degree, mut components, mut connected) = (0.0, 0.0, 0.0);
    for k in 0..samples {
        let t = (k as f64 + 0.5) * trace.duration / samples as f64;
        let mut edges = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if trace.position(a, t).distance(trace.position(b, t)) < range {
                    edges.push((a, b));
                }
            }
        }
        degree += 2.0 * edges.len() as f64 / n as f64;
        let c = count_components(n as usize, edges);
        components += c as f64;
        connected += f64::from(c == 1);
    }
    let s = samples as f64;
    let (degree, components, connected) = (degree / s, components / s, connected / s);
    // Midpoint sampling of piecewise-smooth functions: agreement to well under 1%.
    assert!(
        (stats.mean_degree / degree - 1.0).abs() < 0.005,
        "{} vs {degree}",
        stats.mean_degree
    );
    assert!(
        (stats.mean_components / components - 1.0).abs() < 0.01,
        "{} vs {components}",
        stats.mean_components
    );
    assert!(
        (stats.frac_time_connected - connected).abs() < 0.01,
        "{} vs {connected}",
        stats.frac_time_connected
    );
    assert!(
        stats.mean_components > 1.0,
        "the test should exercise partitions"
    );
}

#[test]
fn mean_speed_matches_the_stationary_random_waypoint_formula() {
    let params = RwpParams {
        nodes: 2000,
        area: Area {
            width: 1000.0,
            height: 1000.0,
        },
        speed: SpeedDist::Uniform {
            min: 1.0,
            max: 19.0,
        },
        pause: PauseDist::Constant(10.0),
        duration: 200.0,
        start: StartMode::Stationary,
        seed: 11,
    };
    let trace = rwp::generate(&params).unwrap();
    let stats = mobility_stats(&trace, &link_timeline(&trace, 1.0));
    let expected = rwp::stationary_mean_speed(&params); // 5.47 m/s: the analytic value for these parameters
    assert!((expected - 5.47).abs() < 0.01);
    assert!(
        (stats.mean_speed / expected - 1.0).abs() < 0.02,
        "{} vs {expected}",
        stats.mean_speed
    );
}

#[test]
fn link_duration_and_counts_of_a_hand_made_pass() {
    // Node 1 drives past node 0 at 10 m/s with closest approach 60 m; range 100 m:
    // linked while |x − 500| < 80, i.e. for 16 s, from t = 42 to t = 58.
    let legs = vec![
        vec![Leg {
            start: 0.0,
            end: 100.0,
            origin: Point::new(500.0, 60.0),
            velocity: Point::default(),
        }],
        vec![Leg {
            start: 0.0,
            end: 100.0,
            origin: Point::new(0.0, 0.0),
            velocity: Point::new(10.0, 0.0),
        }],
        vec![Leg {
            start: 0.0,
            end: 100.0,
            origin: Point::new(900.0, 900.0),
            velocity: Point::default(),
        }],
    ];
    let trace = Trace::from_legs(
        Area {
            width: 1000.0,
            height: 1000.0,
        },
        100.0,
        legs,
    )
    .unwrap();
    let stats = mobility_stats(&trace, &link_timeline(&trace, 100.0));
    assert_eq!(
        (stats.link_ups, stats.link_downs, stats.completed_links),
        (1, 1, 1)
    );
    assert!((stats.mean_link_duration.unwrap() - 16.0).abs() < 1e-9);
    assert_eq!(stats.link_changes_per_node, vec![2, 2, 0]);
    // Degree: 2 · 16 s / (3 nodes · 100 s). Components: 3 except 2 while linked.
    assert!((stats.mean_degree - 32.0 / 300.0).abs() < 1e-12);
    assert!((stats.mean_components - (3.0 - 0.16)).abs() < 1e-12);
    assert_eq!(stats.frac_time_connected, 0.0);
    assert!((stats.mean_speed - 10.0 / 3.0).abs() < 1e-12);
}
