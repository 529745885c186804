//! Oracle nobody here wrote: setdest's own footer. Replaying each shipped trace at 250 m
//! must reproduce the footer's total link changes and its per-node column exactly.

use linkrev::mobility::ns2;
use linkrev::topology::events::link_timeline;
use linkrev::topology::stats::mobility_stats;
use std::path::Path;

fn check(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name);
    let file = ns2::read(&path).expect("shipped trace parses");
    let footer = file.footer.as_ref().expect("setdest footer");
    let timeline = link_timeline(&file.trace, 250.0);
    let stats = mobility_stats(&file.trace, &timeline);
    assert_eq!(
        Some(stats.link_changes as u64),
        footer.link_changes,
        "{name}: total link changes"
    );
    assert_eq!(
        footer.per_node.len(),
        file.trace.node_count(),
        "{name}: per-node rows"
    );
    for row in &footer.per_node {
        assert_eq!(
            stats.link_changes_per_node[row.node as usize] as u64, row.link_changes,
            "{name}: node {} link changes",
            row.node
        );
    }
}

#[test]
fn v1_n20_matches_footer() {
    check("setdest_v1_n20_p10_M10_t200_800x400.tcl");
}

#[test]
fn v2_n30_uniform_speed_uniform_pause_matches_footer() {
    check("setdest_v2_n30_s1_m1_M15_P2_p5_t300_1000x500.tcl");
}

#[test]
fn v2_n50_normal_speed_matches_footer() {
    check("setdest_v2_n50_s2_m2_M10_P1_p0_t300_1500x300.tcl");
}
