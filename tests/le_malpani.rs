//! Malpani–Welch–Vaidya leader election (`protocol::le_malpani`): the slides' overview
//! walk-through and seven-node example as scenario tests, random one-change-at-a-time
//! runs checked with `is_legal`, and the counterexamples those runs found.
//!
//! Letters map to ids in alphabetical order (A = 0, B = 1, …), so that rule E's
//! "lidᵢ > lidⱼ" prefers A over F as the slides' example needs.

use linkrev::NodeId;
use linkrev::protocol::le_malpani::{Height, LeMalpani, LeMsg, RefLevel, is_legal};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{Ctx, HeightView, LeaderView, Protocol};
use proptest::prelude::*;
use std::collections::BTreeSet;

const A: NodeId = 0;
const B: NodeId = 1;
const C: NodeId = 2;
const D: NodeId = 3;
const E: NodeId = 4;
const F: NodeId = 5;
const G: NodeId = 6;
const H: NodeId = 7;

/// The slides' tuple `(lid, τ, oid, r, δ, id)`.
fn ht(lid: NodeId, tau: i64, oid: i64, r: u8, delta: i64, id: NodeId) -> Height {
    let oid = i32::try_from(oid).expect("test oids are small");
    Height::new(lid, tau, oid, r == 1, delta, id)
}

/// Nodes at `heights` (indexed by id) on `links`, each knowing its neighbours' heights.
fn states(heights: &[Height], links: &[(NodeId, NodeId)]) -> Vec<LeMalpani> {
    LeMalpani::with_views(heights, links)
}

fn height(h: &Harness<LeMalpani>, i: NodeId) -> Height {
    h.nodes[i as usize].height()
}

/// The queues with messages in flight, lowest `(from, to)` first.
fn busy_queues(h: &Harness<LeMalpani>) -> Vec<(NodeId, NodeId)> {
    let n = h.nodes.len() as NodeId;
    (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .filter(|&(a, b)| !h.pending(a, b).is_empty())
        .collect()
}

/// Delivers in `Harness::deliver_all`'s order (lowest queue first) until `done` holds;
/// panics if the network goes quiet first.
fn deliver_until(h: &mut Harness<LeMalpani>, done: impl Fn(&Harness<LeMalpani>) -> bool) {
    while !done(h) {
        let &(from, to) = busy_queues(h)
            .first()
            .expect("network went quiet before the expected state");
        h.deliver(from, to);
    }
}

/// Whether `from` sent an Update carrying exactly `height`.
fn sent_update(h: &Harness<LeMalpani>, from: NodeId, height: Height) -> bool {
    h.sent
        .iter()
        .any(|(f, _, LeMsg::Update(x))| *f == from && *x == height)
}

// ---------------------------------------------------------------------------------------
// (a) The overview walk-through (slides "Leader Election Algorithm - An Overview").
// ---------------------------------------------------------------------------------------

/// The slides' five-node walk-through, reconstructed.
///
/// The figures name A–E but not the leader; this reconstruction adds the leader L (id 5)
/// and one more node F (id 6) on the leader's side, so that "the other component still
/// has its leader" says something. Links: L–B, L–C, L–F, A–B, A–D, C–D, C–E, D–E. The
/// starting DAG (lid L everywhere, reference level (0, 0, 0)) has δ: B 1, C 1, F 1,
/// E 2, D 3, A 4, so C → L, B → L, F → L, E → C, D → C, D → E, A → B, A → D, which is
/// what the figures need: C's only outgoing link goes to L; D → E and A → D before they
/// reverse.
///
/// Part 1 (one failure, L–C): C has no outgoing link but incoming ones, so it defines
/// the new level (τ₁, C, 0) (rule A). E's neighbours C and D are on different levels; E
/// takes C's level just below C (rule B): C → E stays, D → E reverses. D then has no
/// outgoing link and takes the level just below E (rule B): C → D and E → D stay, A → D
/// reverses. Everyone is happy: the state is legal with leader L.
///
/// Part 2 (the break L–B cuts A–E off from L): B lost all outgoing links and defines the
/// newest, highest level (τ₂, B, 0) (rule A); A sees all its neighbours on higher levels
/// and is in trouble. The search ends at C, which finds all neighbours on B's level: "C
/// knows that there is no route to the leader" and reflects it (rule C). The reflected
/// sub-level travels back and the originator elects itself (rule D); rule E spreads the
/// new leader.
///
/// Where the slides cannot all be met: they say B lost its outgoing links and defined the
/// new level, and also that the reflection returns to "C (originator)", which then
/// elects itself. Rule A makes the node that lost its last outgoing link the originator
/// (oid := i), and after part 1 C has two outgoing links (to D and E), so no single break
/// can make C the originator; and under one change at a time TORA's reflection reaches
/// only the originator as an all-reflected sink, so with rule D read either way (with or
/// without `oid = i`) the elected node is B, the node the slides show in trouble. A also
/// cannot "create a higher sub-level" (reflect) as the slides draw it: it has the link
/// to D (which part 1 reverses), and D is still on C's level when A is in trouble, so A
/// sees two different levels and applies rule B; the reflection happens at C instead.
/// This test asserts what rules A–E give: the separated component elects B, its
/// originator; L keeps leading L and F. (L's id is larger than B's, which also keeps the
/// run clear of the stale-Update race in `counterexample_stale_update_revives_lost_leader`.)
#[test]
fn slides_walkthrough_five_nodes() {
    const L: NodeId = 5;
    const LF: NodeId = 6;
    let links = [
        (L, B),
        (L, C),
        (L, LF),
        (A, B),
        (A, D),
        (C, D),
        (C, E),
        (D, E),
    ];
    let start = [
        ht(L, 0, 0, 0, 4, A),
        ht(L, 0, 0, 0, 1, B),
        ht(L, 0, 0, 0, 1, C),
        ht(L, 0, 0, 0, 3, D),
        ht(L, 0, 0, 0, 2, E),
        Height::leader(L),
        ht(L, 0, 0, 0, 1, LF),
    ];
    let mut h = Harness::with_states(states(&start, &links), &links);
    is_legal(&h.nodes, &links).expect("the constructed start is a leader-oriented DAG");

    // Part 1: C is in trouble (it has no outgoing link) and becomes the originator of a
    // new, higher reference level.
    h.time_ns = 1_000;
    let tau1 = 1_001;
    assert!(h.nodes[C as usize].has_incoming(), "D and E point at C");
    h.link_down(L, C);
    let links: Vec<_> = links.into_iter().filter(|&l| l != (L, C)).collect();
    assert_eq!(height(&h, C), ht(L, tau1, C.into(), 0, 0, C));
    assert!(
        !h.nodes[C as usize].has_incoming(),
        "C is above D and E now"
    );

    // E is in trouble, sees different levels (C's new one, D's old one) and selects the
    // height just below C.
    h.deliver(C, E);
    assert_eq!(height(&h, E), ht(L, tau1, C.into(), 0, -1, E));
    assert!(height(&h, C) > height(&h, E), "C → E is not reversed");
    assert!(height(&h, E) > height(&h, D), "D → E is reversed to E → D");

    // C's Update alone does not trouble D (its link to E still points down) …
    h.deliver(C, D);
    assert_eq!(height(&h, D), start[D as usize]);
    // … E's does: D goes to the new level just below E.
    h.deliver(E, D);
    assert_eq!(height(&h, D), ht(L, tau1, C.into(), 0, -2, D));
    assert!(height(&h, C) > height(&h, D) && height(&h, E) > height(&h, D));
    assert!(height(&h, D) > height(&h, A), "A → D is reversed to D → A");

    // Everyone is happy.
    h.deliver_all(100);
    is_legal(&h.nodes, &links).expect("legal after part 1");
    assert_eq!(height(&h, A), start[A as usize]);
    assert_eq!(height(&h, B), start[B as usize]);

    // Part 2: the break L–B disconnects A–E from the leader. B has lost all outgoing
    // links and selects a height on a new, highest reference level.
    h.time_ns = 2_000;
    let tau2 = 2_001;
    h.link_down(L, B);
    let links: Vec<_> = links.into_iter().filter(|&l| l != (L, B)).collect();
    assert_eq!(height(&h, B), ht(L, tau2, B.into(), 0, 0, B));
    assert!(height(&h, B).level > height(&h, C).level);

    // A sees all its neighbours on higher levels: it is in trouble.
    h.deliver(B, A);
    assert_eq!(height(&h, A), ht(L, tau2, B.into(), 0, -1, A));

    h.deliver_all(1_000);
    // C found every neighbour on B's level: no route to the leader; it reflected.
    assert!(sent_update(&h, C, ht(L, tau2, B.into(), 1, 0, C)));
    // The reflected sub-level came back to the originator, which elected itself.
    assert!(sent_update(&h, B, Height::leader(B)));

    is_legal(&h.nodes, &links).expect("legal after part 2");
    for i in [A, B, C, D, E] {
        assert_eq!(h.nodes[i as usize].leader(), B, "node {i}");
    }
    for i in [A, C, D, E] {
        assert!(h.nodes[i as usize].has_outgoing(), "node {i} is a sink");
    }
    assert!(!h.nodes[B as usize].has_outgoing());
    assert_eq!(height(&h, L), Height::leader(L));
    assert_eq!(height(&h, LF), ht(L, 0, 0, 0, 1, LF));
    assert!(h.nodes.iter().all(|p| p.uncovered_steps() == 0));
}

// ---------------------------------------------------------------------------------------
// (b) The seven-node example (slides "Example", figs. 1–6).
// ---------------------------------------------------------------------------------------

/// The slides' seven-node example, from fig. 1 to fig. 6.
///
/// Topology (reconstructed from the printed heights): A–B, A–D, B–D (A, B and D have
/// just been cut off from F: B and D are on A's reflected level); E–F, F–H, H–G (E and H
/// at δ 1, G at δ 2 below F); B–E is the link that forms in fig. 3. There is no node C;
/// id 2 is an isolated node that leads itself throughout.
///
/// Fig. 1 is not built by hand but reached from a legal DAG led by F in which A hangs
/// below E (A–E, δ: E 1, H 1, A 2, G 2, D 3, B 4): the failure of A–E at time 1 ns
/// gives A the level (τ = 2, A, 0), as printed; the search and its reflection run
/// through the triangle and A elects itself. The printed fig. 1 tuples then match with
/// the reconstruction of the five-element ones: the leaders' `(A, −1, −1, 0, A)` and
/// `(F, −1, −1, 0, F)` omit one of r and δ, both 0 (rule D), so they are
/// `(A, −1, −1, 0, 0, A)` and `(F, −1, −1, 0, 0, F)`.
#[test]
fn slides_seven_node_example() {
    let links = [(A, B), (A, D), (B, D), (A, E), (E, F), (F, H), (G, H)];
    let start = [
        ht(F, 0, 0, 0, 2, A),
        ht(F, 0, 0, 0, 4, B),
        Height::leader(C),
        ht(F, 0, 0, 0, 3, D),
        ht(F, 0, 0, 0, 1, E),
        Height::leader(F),
        ht(F, 0, 0, 0, 2, G),
        ht(F, 0, 0, 0, 1, H),
    ];
    let mut h = Harness::with_states(states(&start, &links), &links);
    is_legal(&h.nodes, &links).expect("the constructed start is legal");

    // Fig. 1: node A detects a partition and elects itself as leader.
    h.time_ns = 1;
    h.link_down(A, E);
    let mut links: Vec<_> = links.into_iter().filter(|&l| l != (A, E)).collect();
    deliver_until(&mut h, |h| h.nodes[A as usize].is_leader());
    let fig1 = [
        (A, ht(A, -1, -1, 0, 0, A)),
        (D, ht(F, 2, A.into(), 1, -1, D)),
        (E, ht(F, 0, 0, 0, 1, E)),
        (B, ht(F, 2, A.into(), 1, 0, B)),
        (F, ht(F, -1, -1, 0, 0, F)),
        (H, ht(F, 0, 0, 0, 1, H)),
        (G, ht(F, 0, 0, 0, 2, G)),
    ];
    for (i, expected) in fig1 {
        assert_eq!(height(&h, i), expected, "fig. 1, node {i}");
    }

    // Fig. 2: B and D update their heights (rule E: their level was reflected by A).
    h.deliver_all(100);
    assert_eq!(height(&h, D), ht(A, 0, 0, 0, 1, D));
    assert_eq!(height(&h, B), ht(A, 0, 0, 0, 1, B));
    assert_eq!(height(&h, E), ht(F, 0, 0, 0, 1, E));
    is_legal(&h.nodes, &links).expect("two legal components after fig. 2");

    // Fig. 3: B and E detect link formation; E changes leader. Figs. 4–6: F, H and G
    // propagate the change.
    h.time_ns = 2;
    h.link_up(B, E);
    links.push((B, E));
    h.deliver_all(100);
    let fig6 = [
        (D, ht(A, 0, 0, 0, 1, D)),
        (A, ht(A, -1, -1, 0, 0, A)),
        (E, ht(A, 0, 0, 0, 2, E)),
        (B, ht(A, 0, 0, 0, 1, B)),
        (F, ht(A, 0, 0, 0, 3, F)),
        (H, ht(A, 0, 0, 0, 4, H)),
        (G, ht(A, 0, 0, 0, 5, G)),
    ];
    for (i, expected) in fig6 {
        assert_eq!(height(&h, i), expected, "fig. 6, node {i}");
    }
    is_legal(&h.nodes, &links).expect("legal after the merge");
}

// ---------------------------------------------------------------------------------------
// Unit-level behaviour.
// ---------------------------------------------------------------------------------------

#[test]
fn heights_order_by_level_then_delta_then_id() {
    let leader = Height::leader(9);
    let base = ht(0, 0, 0, 0, 5, 1);
    let raised = ht(0, 7, 3, 0, -4, 2);
    let reflected = ht(0, 7, 3, 1, -9, 3);
    let newer = ht(0, 8, 0, 0, -9, 4);
    assert!(leader < base && base < raised && raised < reflected && reflected < newer);
    assert!(ht(0, 0, 0, 0, 1, 1) < ht(0, 0, 0, 0, 1, 2));
    // lid takes no part between nodes.
    assert!(ht(9, 0, 0, 0, 1, 1) < ht(0, 0, 0, 0, 1, 2));
    assert_eq!(RefLevel::LEADER, Height::leader(3).level);
    assert_eq!(ht(4, -1, -1, 0, 0, 4).to_string(), "(4, -1, -1, 0, 0, 4)");
}

#[test]
fn initial_states_lead_each_component_from_its_smallest_id() {
    // Components {0, 2, 3} (a triangle), {1} and {4, 5}.
    let links = [(0, 2), (0, 3), (2, 3), (4, 5)];
    let h: Harness<LeMalpani> = Harness::new(6, &links);
    is_legal(&h.nodes, &links).expect("initial states are legal");
    assert_eq!(height(&h, 0), Height::leader(0));
    assert_eq!(height(&h, 2), ht(0, 0, 0, 0, 1, 2));
    assert_eq!(height(&h, 3), ht(0, 0, 0, 0, 1, 3));
    assert_eq!(height(&h, 1), Height::leader(1));
    assert_eq!(height(&h, 4), Height::leader(4));
    assert_eq!(height(&h, 5), ht(4, 0, 0, 0, 1, 5));
}

#[test]
fn a_new_link_is_neither_direction_until_its_update_arrives() {
    let mut p = LeMalpani::initial_states(&(), &[vec![1], vec![0], vec![]]).remove(1);
    let mut ctx = Ctx::new(1, 0);
    p.on_link_up(2, &mut ctx);
    assert_eq!(
        ctx.drain().count(),
        1,
        "Update(own height) over the new link"
    );
    assert_eq!(p.neighbour_height(2), None);
    // Losing the link to 0 leaves only the unknown neighbour: no outgoing, no incoming
    // link, so rule A elects the node.
    p.on_link_down(0, &mut ctx);
    assert!(p.is_leader());
    let sent: Vec<_> = ctx.drain().collect();
    assert_eq!(
        sent.len(),
        1,
        "the new height goes to the unknown neighbour too"
    );
    // 2's Update arrives: rule E (2 > 1) changes nothing.
    p.on_message(2, LeMsg::Update(Height::leader(2)), &mut ctx);
    assert_eq!(ctx.drain().count(), 0);
    assert_eq!(p.neighbour_height(2), Some(Height::leader(2)));
}

#[test]
fn updates_from_former_neighbours_are_ignored() {
    let mut nodes = LeMalpani::initial_states(&(), &[vec![1, 2], vec![0, 2], vec![0, 1]]);
    let mut ctx = Ctx::new(2, 0);
    nodes[2].on_link_down(1, &mut ctx);
    assert_eq!(ctx.drain().count(), 0, "2 still has its link to 0");
    let before = nodes[2].height();
    nodes[2].on_message(1, LeMsg::Update(ht(0, 99, 1, 0, 0, 1)), &mut ctx);
    assert_eq!(nodes[2].height(), before);
    assert_eq!(nodes[2].neighbour_height(1), None);
    assert_eq!(ctx.drain().count(), 0);
}

// ---------------------------------------------------------------------------------------
// (c) Random topology changes, one at a time.
// ---------------------------------------------------------------------------------------

/// A small deterministic generator for delivery orders (splitmix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// How messages in flight are delivered until quiescence.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// Each step, the front of a uniformly random non-empty queue (any asynchronous
    /// schedule that respects FIFO per link).
    Random,
    /// Unit delays: every message in flight at the start of a round is delivered in that
    /// round, in random order; what they cause is delivered in the next round.
    Rounds,
}

/// Which single changes a run may make.
#[derive(Clone, Copy, Debug)]
struct Changes {
    partitions: bool,
    merges: bool,
}

/// Delivers until quiescence; false if `limit` deliveries did not get there.
fn quiesce(h: &mut Harness<LeMalpani>, rng: &mut Rng, order: Order, limit: usize) -> bool {
    let mut delivered = 0;
    loop {
        let queues = busy_queues(h);
        if queues.is_empty() {
            return true;
        }
        let batch = match order {
            Order::Random => vec![queues[rng.below(queues.len())]],
            Order::Rounds => {
                let mut batch: Vec<_> = queues
                    .iter()
                    .flat_map(|&(a, b)| std::iter::repeat_n((a, b), h.pending(a, b).len()))
                    .collect();
                for k in (1..batch.len()).rev() {
                    batch.swap(k, rng.below(k + 1));
                }
                batch
            }
        };
        for (a, b) in batch {
            if delivered == limit {
                return false;
            }
            h.deliver(a, b);
            delivered += 1;
        }
    }
}

fn components(n: usize, links: &BTreeSet<(NodeId, NodeId)>) -> usize {
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while root[r] != r {
            r = root[r];
        }
        root[x] = r;
        r
    }
    let mut count = n;
    for &(a, b) in links {
        let (ra, rb) = (find(&mut root, a as usize), find(&mut root, b as usize));
        if ra != rb {
            root[ra] = rb;
            count -= 1;
        }
    }
    count
}

/// From the legal initial state of `links`, toggles each pair of `toggles` that `allowed`
/// permits, one at a time, quiescing after each; returns the first illegal state.
fn run_changes(
    n: usize,
    links: &[(NodeId, NodeId)],
    toggles: &[(NodeId, NodeId)],
    allowed: Changes,
    order: Order,
    seed: u64,
) -> Result<(), String> {
    let mut h: Harness<LeMalpani> = Harness::new(n, links);
    let mut current: BTreeSet<(NodeId, NodeId)> =
        links.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    let as_vec = |s: &BTreeSet<(NodeId, NodeId)>| s.iter().copied().collect::<Vec<_>>();
    is_legal(&h.nodes, &as_vec(&current)).map_err(|e| format!("initial state: {e}"))?;
    let mut rng = Rng(seed);
    for (step, &(a, b)) in toggles.iter().enumerate() {
        let key = (a.min(b), a.max(b));
        if a == b {
            continue;
        }
        let before = components(n, &current);
        let mut next = current.clone();
        let up = next.insert(key);
        if !up {
            next.remove(&key);
        }
        let after = components(n, &next);
        if (after > before && !allowed.partitions) || (after < before && !allowed.merges) {
            continue;
        }
        current = next;
        h.time_ns = (step as u64 + 1) * 1_000;
        let what = if up {
            h.link_up(a, b);
            "up"
        } else {
            h.link_down(a, b);
            "down"
        };
        if !quiesce(&mut h, &mut rng, order, 100_000) {
            return Err(format!("{a}-{b} {what} (change {step}): no quiescence"));
        }
        let heights: Vec<String> = h.nodes.iter().map(|p| p.height().to_string()).collect();
        is_legal(&h.nodes, &as_vec(&current)).map_err(|e| {
            format!(
                "{a}-{b} {what} (change {step}): {e}\nlinks {:?}\nheights {heights:?}",
                as_vec(&current)
            )
        })?;
        if let Some(p) = h.nodes.iter().find(|p| p.uncovered_steps() > 0) {
            return Err(format!(
                "{a}-{b} {what} (change {step}): node {} met a case no rule covers",
                p.id()
            ));
        }
    }
    Ok(())
}

/// A random connected graph on 2–8 nodes: a random tree plus random extra links.
fn connected_graph() -> impl Strategy<Value = (usize, Vec<(NodeId, NodeId)>)> {
    (2usize..=8).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(any::<prop::sample::Index>(), n - 1),
            prop::collection::vec((0..n as NodeId, 0..n as NodeId), 0..n),
        )
            .prop_map(|(n, parents, extra)| {
                let mut links = BTreeSet::new();
                for (i, parent) in parents.iter().enumerate() {
                    links.insert((parent.index(i + 1) as NodeId, i as NodeId + 1));
                }
                for (a, b) in extra {
                    if a != b {
                        links.insert((a.min(b), a.max(b)));
                    }
                }
                (n, links.into_iter().collect())
            })
    })
}

/// Pairs to toggle, reduced modulo the node count by the test.
fn toggles() -> impl Strategy<Value = Vec<(NodeId, NodeId)>> {
    prop::collection::vec((0u32..8, 0u32..8), 1..24)
}

fn modulo(toggles: Vec<(NodeId, NodeId)>, n: usize) -> Vec<(NodeId, NodeId)> {
    let n = n as NodeId;
    toggles.into_iter().map(|(a, b)| (a % n, b % n)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Any FIFO schedule, every change that keeps the graph connected: link failures
    /// that leave another route, and link formations. No leader is lost and none merges,
    /// so only rules A–C (TORA's partial reversal and its reflection) run.
    #[test]
    fn random_order_changes_within_a_component_end_legal(
        (n, links) in connected_graph(),
        toggles in toggles(),
        seed in any::<u64>(),
    ) {
        let allowed = Changes { partitions: false, merges: false };
        let result = run_changes(n, &links, &modulo(toggles, n), allowed, Order::Random, seed);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }

    /// Unit delays, and partitions too: a component cut off from its leader elects the
    /// originator of the search (rules A–E). Merges are excluded, see
    /// `counterexample_merge_at_reflected_node`.
    #[test]
    fn unit_delay_changes_with_partitions_end_legal(
        (n, links) in connected_graph(),
        toggles in toggles(),
        seed in any::<u64>(),
    ) {
        let allowed = Changes { partitions: true, merges: false };
        let result = run_changes(n, &links, &modulo(toggles, n), allowed, Order::Rounds, seed);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }

    /// The full property: any FIFO schedule, any single change. It does not hold for the
    /// algorithm as the slides give it; the named counterexamples below are what it finds
    /// (run with `--ignored` to see fresh ones).
    #[test]
    #[ignore = "fails: the slides' algorithm is not correct here, see the counterexample_* tests"]
    fn random_order_any_change_ends_legal(
        (n, links) in connected_graph(),
        toggles in toggles(),
        seed in any::<u64>(),
    ) {
        let allowed = Changes { partitions: true, merges: true };
        let result = run_changes(n, &links, &modulo(toggles, n), allowed, Order::Random, seed);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

// ---------------------------------------------------------------------------------------
// Counterexamples to the slides' algorithm (kept as documentation; they assert the
// failure, so a fix to the algorithm will make them fail and need updating).
// ---------------------------------------------------------------------------------------

/// One link failure; the harness's own delivery order (lowest queue first). Links
/// 0–1, 1–2, 1–3, 2–3; leader 0; 0–1 fails, so {1, 2, 3} is cut off.
///
/// 1 defines (τ, 1, 0); 2 joins just below it, 3 finds both neighbours on it and
/// reflects, 2 follows onto the reflected level and sends its Update, still naming the
/// lost leader 0, to 1 and 3. 1 now sees only reflected neighbours and elects itself
/// (rule D); 3 adopts lid 1 (rule E, "oidᵢ = lidⱼ and rᵢ = 1"). Then 2's older Update,
/// sent before the election over the link 2 → 3, reaches 3: its lid 0 is smaller than
/// 3's new lid 1, so rule E's "lidᵢ > lidⱼ" makes 3 adopt the lost leader again, and
/// from 3 it spreads back over 1 and 2. Nothing in a height tells a stale leader id from
/// a live one. The run ends quiet with every node naming 0, which is not in the
/// component, and no sink at all.
#[test]
fn counterexample_stale_update_revives_lost_leader() {
    let links = [(0, 1), (1, 2), (1, 3), (2, 3)];
    let mut h: Harness<LeMalpani> = Harness::new(4, &links);
    h.time_ns = 1_000;
    h.link_down(0, 1);
    h.deliver_all(1_000);
    assert!(sent_update(&h, 1, Height::leader(1)), "1 was elected");
    for i in 1..4 {
        assert_eq!(h.nodes[i].leader(), 0, "node {i} names the lost leader");
    }
    let err = is_legal(&h.nodes, &links[1..]).unwrap_err();
    assert!(
        err.contains("names leader 0, which is not in its component"),
        "{err}"
    );
}

/// One link failure, the harness's own delivery order: the same race as
/// `counterexample_stale_update_revives_lost_leader`, on a 4-cycle 1–3–2–4 cut off from
/// leader 0 by the failure of 0–1, never ends. 1 elects itself, a stale Update revives
/// lid 0, 1 itself abandons its leadership for it (rule E), the reflected level returns
/// and 1 elects itself again (rule D), round and round, with δ growing without bound.
#[test]
fn counterexample_partition_livelock() {
    let links = [(0, 1), (1, 3), (1, 4), (2, 3), (2, 4)];
    let mut h: Harness<LeMalpani> = Harness::new(5, &links);
    h.time_ns = 1_000;
    h.link_down(0, 1);
    for _ in 0..20_000 {
        let &(from, to) = busy_queues(&h).first().expect("the run went quiet");
        h.deliver(from, to);
    }
    let elections = h
        .sent
        .iter()
        .filter(|(from, _, LeMsg::Update(x))| *from == 1 && *x == Height::leader(1))
        .count();
    assert!(elections > 100, "1 elected itself only {elections} times");
    let deepest = h.nodes.iter().map(|p| p.height().delta.abs()).max();
    assert!(deepest > Some(1_000), "δ stays small: {deepest:?}");
    assert!(h.in_flight_count() > 0);
}

/// Two changes, each followed by quiescence, in any delivery order. Links 0–1, 0–2,
/// 1–2, 1–3; node 4 alone (its own leader).
///
/// The failure of 0–1 leaves 1 without outgoing links (2 is above it), so 1 defines
/// (τ, 1, 0); 3, whose only neighbour is 1, reflects it; the state is legal (3 → 1 → 2
/// → 0). Then 3–4 forms: 4 adopts leader 0 from 3 by rule E, which puts it on (0, 0, 0),
/// below 3's reflected level. 4 is now a sink that is not a leader, and the slides have
/// no rule for it: its only neighbour is on one reflected level that 1, not 4, defined.
/// Rule D read with `oid = i` leaves it a sink (as here); read as printed ("rⱼ = 1 for
/// all j") it makes 4 a second leader whose Update 3 ignores (lid 0 < 4). Either way the
/// merged component stays illegal. Merges through any node on a raised level can end
/// like this, because rule E's (0, 0, 0) lies below every level a failure defines.
#[test]
fn counterexample_merge_at_reflected_node() {
    let links = [(0, 1), (0, 2), (1, 2), (1, 3)];
    let mut h: Harness<LeMalpani> = Harness::new(5, &links);
    h.time_ns = 1_000;
    h.link_down(0, 1);
    h.deliver_all(100);
    let mut links: Vec<_> = links[1..].to_vec();
    is_legal(&h.nodes, &links).expect("legal after the failure");
    assert_eq!(height(&h, 3), ht(0, 1_001, 1, 1, 0, 3));

    h.time_ns = 2_000;
    h.link_up(3, 4);
    links.push((3, 4));
    h.deliver_all(100);
    assert_eq!(height(&h, 4), ht(0, 0, 0, 0, 1, 4));
    assert!(height(&h, 4) < height(&h, 3));
    assert_eq!(h.nodes[4].uncovered_steps(), 1);
    let err = is_legal(&h.nodes, &links).unwrap_err();
    assert!(err.contains("node 4") && err.contains("is a sink"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Counterexamples found in sparse random-waypoint runs (10–40 nodes in 1000 m × 1000 m,
// where the network partitions and merges all the time), shrunk to a few link intervals
// and replayed through the whole simulator in serialize mode: every topology change
// waits until no message is in flight, the setting the paper proves correct.

/// A link timeline from a `tests/data` interval file: `nodes duration`, then one
/// `a b start end` line per link interval (`#` lines are comments).
fn timeline_file(name: &str) -> linkrev::topology::events::LinkTimeline {
    use linkrev::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let (node_count, duration): (usize, f64) = (head[0].parse().unwrap(), head[1].parse().unwrap());
    let mut intervals: Vec<LinkInterval> = lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            LinkInterval {
                a: f[0].parse().unwrap(),
                b: f[1].parse().unwrap(),
                start: f[2].parse().unwrap(),
                end: f[3].parse().unwrap(),
            }
        })
        .collect();
    intervals.sort_by(|x, y| {
        (x.a, x.b)
            .cmp(&(y.a, y.b))
            .then(x.start.total_cmp(&y.start))
    });
    let mut events = Vec::new();
    for iv in &intervals {
        if iv.start > 0.0 {
            events.push(LinkEvent {
                time: iv.start,
                a: iv.a,
                b: iv.b,
                change: LinkChange::Up,
            });
        }
        if iv.end < duration {
            events.push(LinkEvent {
                time: iv.end,
                a: iv.a,
                b: iv.b,
                change: LinkChange::Down,
            });
        }
    }
    events.sort_by(|x, y| x.time.total_cmp(&y.time).then((x.a, x.b).cmp(&(y.a, y.b))));
    LinkTimeline {
        range: 250.0,
        duration,
        node_count,
        intervals,
        events,
    }
}

/// Replays `file` with the default network (1–5 ms hops, drain) in serialize mode.
fn replay_serialized(file: &str, seed: u64) -> linkrev::run::RunSummary {
    replay_with("le-malpani", file, seed)
}

/// [`replay_serialized`] with any leader-election algorithm of the registry.
fn replay_with(algorithm: &str, file: &str, seed: u64) -> linkrev::run::RunSummary {
    use linkrev::sim::{ChangeMode, DelayModel, LinkBreak, NetworkConfig, RunConfig, SimTime};
    let timeline = timeline_file(file);
    let config = RunConfig {
        network: NetworkConfig {
            delay: linkrev::params::DELAY.parse::<DelayModel>().unwrap(),
            link_break: LinkBreak::Drain,
            detection_delay: Default::default(),
            changes: ChangeMode::Serialize,
        },
        workload: None,
        duration: SimTime::from_secs_f64(timeline.duration),
        seed,
        script: None,
        max_events: None,
    };
    linkrev::registry::simulate(
        linkrev::registry::Algorithm::parse(algorithm).unwrap(),
        &timeline,
        config,
    )
    .summary
}

/// Rules A–E have no case for a sink whose neighbours all sit on a reflected level that
/// another node created (TORA's fifth case, "generate a new reference level", is left
/// out): node 3 joins 8 by rule E at (0, 0, 0) below 8's level and is reflected, node 6
/// joins 3 by rule E below that reflected level, and 6 stays a sink that no rule moves.
#[test]
fn counterexample_stranded_sink() {
    let s = replay_serialized("le_stranded_sink.txt", 12_972_905_661_980_995_664);
    let v = s
        .first_violation
        .expect("the published rules strand a sink here");
    assert_eq!(v.kind, "illegal_component");
    assert!(v.detail.contains("is a sink but"), "{}", v.detail);
    assert_eq!(s.safety_violations, 1, "one persistent illegal state");
}

/// Rule E's second clause ("oidᵢ = lidⱼ and rᵢ = 1") moves a node on an old reflected
/// level to the new leader, which spreads; a neighbour on the unreflected level keeps
/// its height, so it sends nothing and hears of no one: two leaders in one component
/// for good.
#[test]
fn counterexample_two_leaders_for_good() {
    let s = replay_serialized("le_two_leaders.txt", 13_349_554_792_982_325_875);
    let v = s
        .first_violation
        .clone()
        .unwrap_or_else(|| panic!("the published rules leave two leaders here: {s:?}"));
    assert_eq!(v.kind, "illegal_component");
    assert!(v.detail.contains("disagreement"), "{}", v.detail);
}

/// A stale Update revives the lost leader 0 after node 2 was elected; then nodes flip
/// for good: rule E's first clause takes them to leader 0, rule B lifts them onto the
/// reflected level (τ, 2, 1), rule E's second clause takes them back to leader 2, and
/// every flip is broadcast, until the message-storm guard stops the run, although
/// serialize mode has frozen the topology meanwhile.
#[test]
fn counterexample_storm_with_the_topology_frozen() {
    let s = replay_serialized("le_storm.txt", 13_765_707_020_557_552_349);
    let aborted = s
        .aborted
        .clone()
        .unwrap_or_else(|| panic!("expected a storm: {s:?}"));
    assert!(aborted.contains("messages in flight"), "{aborted}");
}

/// How a replay ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// No safety violation, no storm.
    Legal,
    /// A safety violation (an illegal quiescent component).
    Illegal,
    /// The message-storm guard stopped the run.
    Storm,
}

fn outcome(s: &linkrev::run::RunSummary) -> Outcome {
    if s.aborted.is_some() {
        Outcome::Storm
    } else if s.safety_violations > 0 {
        Outcome::Illegal
    } else {
        Outcome::Legal
    }
}

/// The shrunk counterexamples of the slides' rules, replayed through every
/// leader-election variant of the registry: which ones each variant survives. A new
/// variant fails here until its row is added, so every variant is measured on them.
///
/// The stranded sink and the two leaders replay one exact schedule (their seeds fix the
/// delays). The storm is a race: whether a stale Update overtakes the election depends
/// on the delays, so it is replayed over 200 delay seeds and the test counts the seeds
/// that storm (for `le-malpani` the shrunk seed is one of them).
#[test]
fn counterexamples_through_every_leader_election_variant() {
    use linkrev::registry::Algorithm;
    const SINK: (&str, u64) = ("le_stranded_sink.txt", 12_972_905_661_980_995_664);
    const TWO: (&str, u64) = ("le_two_leaders.txt", 13_349_554_792_982_325_875);
    const STORM: (&str, u64) = ("le_storm.txt", 13_765_707_020_557_552_349);
    // (variant, stranded sink, two leaders, storm at its shrunk seed, delay seeds of
    // 0..200 that storm), as measured.
    let expected: &[(&str, Outcome, Outcome, Outcome, usize)] = &[
        (
            "le-malpani",
            Outcome::Illegal,
            Outcome::Illegal,
            Outcome::Storm,
            15,
        ),
        (
            "le-tora5",
            Outcome::Legal,
            Outcome::Illegal,
            Outcome::Legal,
            0,
        ),
        (
            "le-ingram",
            Outcome::Legal,
            Outcome::Legal,
            Outcome::Legal,
            0,
        ),
    ];
    for algorithm in Algorithm::all().filter(|a| a.family() == linkrev::family::LEADER_ELECTION) {
        let name = algorithm.name();
        let Some(&(_, sink, two, storm, storms)) = expected.iter().find(|e| e.0 == name) else {
            panic!("{name}: add its expected outcomes on the counterexamples");
        };
        let got = [SINK, TWO, STORM].map(|(file, seed)| outcome(&replay_with(name, file, seed)));
        assert_eq!(
            got,
            [sink, two, storm],
            "{name}: stranded sink, two leaders, storm"
        );
        let stormed = (0..200u64)
            .filter(|&seed| outcome(&replay_with(name, STORM.0, seed)) == Outcome::Storm)
            .count();
        assert_eq!(stormed, storms, "{name}: delay seeds of 0..200 that storm");
    }
}

// ---------------------------------------------------------------------------------------
// (e) What the checker, the replay and the tests read from a node: its neighbour views,
//     the non-neighbour hook, the replay's arrows and panels, the legality check's
//     refusal of links that are not links. (Mutation testing found these unchecked.)
// ---------------------------------------------------------------------------------------

#[test]
fn an_update_from_a_non_neighbour_is_ignored_as_the_hook_says() {
    let mut nodes = LeMalpani::initial_states(&(), &[vec![1], vec![0], vec![]]);
    let mut ctx = Ctx::new(0, 0);
    let before = nodes[0].clone();
    let update = LeMsg::Update(ht(2, 5, 2, 1, 0, 2));
    nodes[0].on_message(2, update, &mut ctx);
    assert_eq!(nodes[0], before, "node 0 has no link to 2");
    assert_eq!(ctx.drain().count(), 0);
    use linkrev::protocol::Message as _;
    assert!(
        update.ignored_from_non_neighbour(),
        "the hook the checker's reductions read must say so"
    );
}

#[test]
fn a_node_lists_its_neighbours_with_the_last_height_heard() {
    // A path 0 - 1 - 2: node 1 knows both ends' initial heights.
    let nodes = LeMalpani::initial_states(&(), &[vec![1], vec![0, 2], vec![1]]);
    let mut one = nodes[1].clone();
    let listed: Vec<_> = one.neighbours().collect();
    assert_eq!(
        listed,
        [(0, Some(nodes[0].height())), (2, Some(nodes[2].height()))]
    );
    // A new link to 3: listed, with no height until its Update arrives.
    let mut ctx = Ctx::new(1, 0);
    one.on_link_up(3, &mut ctx);
    let listed: Vec<_> = one.neighbours().collect();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[2], (3, None));
    one.on_message(3, LeMsg::Update(Height::leader(3)), &mut ctx);
    assert_eq!(one.neighbours().nth(2), Some((3, Some(Height::leader(3)))));
}

#[test]
fn initial_states_ignore_self_loops() {
    // Node 0 lists itself.
    let nodes = LeMalpani::initial_states(&(), &[vec![0, 1], vec![0]]);
    let of_0: Vec<NodeId> = nodes[0].neighbours().map(|(j, _)| j).collect();
    assert_eq!(of_0, [1]);
    is_legal(&nodes, &[(0, 1)]).expect("a legal start");
}

#[test]
fn the_legality_check_refuses_links_that_are_not_links() {
    let nodes = LeMalpani::initial_states(&(), &[vec![1], vec![0], vec![]]);
    for bad in [(0, 3), (3, 0), (1, 1)] {
        let err = is_legal(&nodes, &[(0, 1), bad]).unwrap_err();
        assert!(
            err.contains("is not between two of the 3 nodes"),
            "{bad:?}: {err}"
        );
    }
    is_legal(&nodes, &[(0, 1)]).expect("the real links");
}

#[test]
fn the_replay_draws_each_link_once_from_the_higher_height_and_shows_each_view() {
    use linkrev::protocol::ReplayView;
    // The five-node walkthrough's start, then a change, quiesced: every link of the
    // final state drawn once, downwards.
    let links = [(A, B), (B, C), (C, D), (D, E), (B, D)];
    let mut h: Harness<LeMalpani> = Harness::new(5, &links);
    h.link_down(C, D);
    h.link_up(A, E);
    h.deliver_all(10_000);
    let now = [(A, B), (B, C), (D, E), (B, D), (A, E)];
    for &(i, j) in &now {
        let (p, q) = (&h.nodes[i as usize], &h.nodes[j as usize]);
        let down = p.height() > q.height();
        assert_eq!(p.points_to(j, q), Some(down), "{i} → {j}");
        assert_eq!(q.points_to(i, p), Some(!down), "{j} → {i}");
    }
    for p in &h.nodes {
        assert_eq!(p.label(), p.height().to_string());
        let panel = p.describe();
        assert!(
            panel.starts_with(&format!("height {}\nleader {}\n", p.height(), p.leader())),
            "{panel}"
        );
        for (j, seen) in p.neighbours() {
            let line = format!("view of {j}: {}", seen.expect("quiesced"));
            assert!(panel.contains(&line), "{panel} lacks {line}");
        }
    }
    // A view not yet heard says so.
    let mut lone = LeMalpani::initial_states(&(), &[vec![], vec![]]).remove(0);
    lone.on_link_up(1, &mut Ctx::new(0, 0));
    assert!(lone.describe().contains("view of 1: (no Update yet)"));
}
