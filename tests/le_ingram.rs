//! `le-ingram` driven by hand: the wave of a lost leader (new reference level, reflection,
//! election of the originator, adoption by priority) on a path, with both clocks, and the
//! forming set.

use linkrev::NodeId;
use linkrev::protocol::le_ingram::{Clock, IngramConfig, LeIngram};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{HeightView, LeaderView};

fn leaders(h: &Harness<LeIngram>) -> Vec<NodeId> {
    h.nodes.iter().map(LeaderView::leader).collect()
}

/// The path 0–1–2 led by 0 loses the link 0–1. Node 1, a sink, starts a new reference
/// level; node 2, now a sink below it, reflects it; the reflection returns to node 1,
/// its originator, which elects itself; node 2 adopts the newer leader pair. Node 0,
/// left alone, renews its own leadership.
#[test]
fn a_lost_leader_is_replaced_by_the_originator_of_the_reflected_wave() {
    for clock in [Clock::Perfect, Clock::Causal] {
        let mut h = Harness::<LeIngram>::configured(&IngramConfig { clock }, 3, &[(0, 1), (1, 2)]);
        assert_eq!(leaders(&h), [0, 0, 0]);
        h.time_ns = 1_000;
        h.link_down(0, 1);
        let h1 = h.nodes[1].height();
        assert_eq!(
            (h1.level.oid, h1.level.r, h1.delta),
            (1, false, 0),
            "{clock:?}"
        );
        assert!(h1.level.tau > 0);
        h.time_ns = 2_000;
        // 1 → 2: the new level; 2 reflects it.
        h.deliver(1, 2).expect("node 1 announced its new level");
        let h2 = h.nodes[2].height();
        assert_eq!(
            (h2.level.oid, h2.level.r),
            (1, true),
            "{clock:?}: 2 reflects"
        );
        // 2 → 1: the reflection is back at its originator, which elects itself.
        h.deliver(2, 1).expect("node 2 announced the reflection");
        assert_eq!(h.nodes[1].leader(), 1, "{clock:?}");
        assert_eq!(h.nodes[1].elections(), 1);
        h.deliver_all(100);
        assert_eq!(leaders(&h), [0, 1, 1], "{clock:?}");
        assert!(
            h.nodes[1].height() < h.nodes[2].height(),
            "the leader is the sink"
        );
        assert_eq!(
            h.nodes[0].elections(),
            1,
            "alone, node 0 renews its leadership"
        );
    }
}

/// A new link joins `N` only with its first Update: until then the peer is forming and
/// takes no part in the sink test; then the two components merge under the newer
/// leader pair, which wins over the older one whatever the ids.
#[test]
fn a_new_link_is_forming_until_its_first_update_and_the_newer_leader_wins() {
    let mut h = Harness::<LeIngram>::new(4, &[(0, 1), (2, 3)]);
    // Node 3 loses 2 and re-forms: it becomes a leader elected at t = 5 µs, newer than 0.
    h.time_ns = 5_000;
    h.link_down(2, 3);
    assert_eq!(h.nodes[3].leader(), 3);
    h.link_up(1, 3);
    assert_eq!(h.nodes[1].forming().collect::<Vec<_>>(), [3]);
    assert_eq!(
        h.nodes[1].neighbour_height(3),
        None,
        "no view before the first Update"
    );
    h.deliver_all(100);
    assert_eq!(h.nodes[1].forming().count(), 0);
    // Node 3's election (nlts = −5001) is newer than node 0's initial one (nlts = 0).
    assert_eq!(leaders(&h)[..2], [3, 3]);
    assert_eq!(leaders(&h)[3], 3);
}

/// With causal clocks a new reference level can rank below a stale one that its
/// originator never heard of, and a change that leaves the leader reachable then elects
/// a new one (module docs, "What the conformance suite found"); with the perfect clock
/// the same changes elect no one.
///
/// The graph 0–1–2–3–4 plus 0–3, led by 0. (a) 0–3 fails: node 3, a sink, starts the
/// level `(τa, 3, 0)`; node 4 reflects it; node 3 has node 2 below it and stays. The
/// level lingers at 3 and 4. (b) 0–4 forms: node 4 now points to 0. (c) 0–1 fails:
/// node 1, a sink, starts `(τc, 1, 0)`. Under causal clocks node 1 has had no event
/// since the start, so `τc = τa = 1`, and `(1, 1, 0)` ranks below the stale `(1, 3, 0)`:
/// node 2 propagates the stale level, node 1 reflects it, and node 2 hands the
/// reflection to node 3, whose neighbours now all sit on its own reflected level. Node 3
/// elects itself although 0 is two hops away through 4.
#[test]
fn causal_clocks_can_rank_a_new_reference_level_below_a_stale_one() {
    for clock in [Clock::Perfect, Clock::Causal] {
        let mut h = Harness::<LeIngram>::configured(
            &IngramConfig { clock },
            5,
            &[(0, 1), (1, 2), (2, 3), (0, 3), (3, 4)],
        );
        h.time_ns = 1_000;
        h.link_down(0, 3);
        h.deliver_all(100);
        let stale = h.nodes[3].height().level;
        assert_eq!(
            (stale.oid, stale.r),
            (3, false),
            "{clock:?}: 3 started a level"
        );
        assert!(h.nodes[4].height().level.r, "{clock:?}: 4 reflected it");
        assert_eq!(leaders(&h), [0; 5], "{clock:?}");
        h.time_ns = 2_000;
        h.link_up(0, 4);
        h.deliver_all(100);
        assert!(
            h.nodes[4].height() > h.nodes[0].height(),
            "{clock:?}: 4 points to 0"
        );
        h.time_ns = 3_000;
        h.link_down(0, 1);
        let fresh = h.nodes[1].height().level;
        assert_eq!(fresh.oid, 1, "{clock:?}: 1 started a level");
        h.deliver_all(100);
        let elections: u32 = h.nodes.iter().map(LeIngram::elections).sum();
        match clock {
            Clock::Perfect => {
                assert!(fresh > stale, "the later level ranks higher");
                assert_eq!(leaders(&h), [0; 5]);
                assert_eq!(elections, 0);
            }
            Clock::Causal => {
                assert_eq!((fresh.tau, stale.tau), (1, 1), "no causal path from 3 to 1");
                assert!(fresh < stale, "the new level ranks below the stale one");
                assert_eq!(leaders(&h), [3; 5], "node 3 elected itself");
                assert_eq!(h.nodes[3].elections(), 1);
                assert_eq!(elections, 1);
            }
        }
    }
}
