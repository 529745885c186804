//! Raymond's tree token algorithm (`me-raymond`), driven by hand through the test harness,
//! which delivers a routed send as one perfect hop. On a graph whose tree edges are
//! physical links that is exactly what the simulator's shortest-path routing costs, so
//! the counts here are the paper's counts (K. Raymond, ACM TOCS 7(1), 1989).

use linkrev::NodeId;
use linkrev::protocol::me_raymond::{Raymond, RaymondMsg, bfs_tree};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{AppEvent, Message, Protocol, TokenView};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn path(n: NodeId) -> Vec<(NodeId, NodeId)> {
    (1..n).map(|i| (i - 1, i)).collect()
}

fn count(h: &Harness<Raymond>, kind: RaymondMsg) -> usize {
    h.sent.iter().filter(|(_, _, m)| *m == kind).count()
}

/// The messages sent since index `from` of `h.sent`, as (from, to, kind).
fn log_since(h: &Harness<Raymond>, from: usize) -> Vec<(NodeId, NodeId, &'static str)> {
    h.sent[from..]
        .iter()
        .map(|(a, b, m)| (*a, *b, m.kind()))
        .collect()
}

fn neighbours_of(n: usize, links: &[(NodeId, NodeId)]) -> Vec<Vec<NodeId>> {
    let mut nb = vec![Vec::new(); n];
    for &(a, b) in links {
        nb[a as usize].push(b);
        nb[b as usize].push(a);
    }
    for list in &mut nb {
        list.sort_unstable();
        list.dedup();
    }
    nb
}

// ---------------------------------------------------------------------------------------
// 1. Known costs on static trees.
// ---------------------------------------------------------------------------------------

#[test]
fn path_request_from_far_end_costs_one_request_and_one_privilege_per_hop() {
    let mut h = Harness::<Raymond>::new(5, &path(5));
    h.app(4, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(
        log_since(&h, 0),
        vec![
            (4, 3, "Request"),
            (3, 2, "Request"),
            (2, 1, "Request"),
            (1, 0, "Request"),
            (0, 1, "Privilege"),
            (1, 2, "Privilege"),
            (2, 3, "Privilege"),
            (3, 4, "Privilege"),
        ]
    );
    assert_eq!(h.cs_entries, vec![4]);
    assert!(h.nodes[4].in_cs() && h.nodes[4].holds_token());

    // The token stays at 4 after release, and every HOLDER now points at 4, so node 2
    // is two tree hops away: 2 Requests + 2 Privileges.
    h.app(4, AppEvent::ReleaseCs);
    assert_eq!(
        h.sent.len(),
        8,
        "releasing with nobody waiting sends nothing"
    );
    let before = h.sent.len();
    h.app(2, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(
        log_since(&h, before),
        vec![
            (2, 3, "Request"),
            (3, 4, "Request"),
            (4, 3, "Privilege"),
            (3, 2, "Privilege"),
        ]
    );
    assert_eq!(h.cs_entries, vec![4, 2]);
    assert_eq!(count(&h, RaymondMsg::Request), 6);
    assert_eq!(count(&h, RaymondMsg::Privilege), 6);

    // The holder asking again costs nothing: it enters at once.
    h.app(2, AppEvent::ReleaseCs);
    h.app(2, AppEvent::RequestCs);
    assert_eq!(h.sent.len(), 12);
    assert_eq!(h.cs_entries, vec![4, 2, 2]);
}

#[test]
fn branching_tree_costs_follow_tree_distance_to_the_token() {
    // 0 ─ 1, 0 ─ 2 ─ 3: node 3 is 2 hops from the token; then node 1 is 3 hops from it.
    let links = [(0, 1), (0, 2), (2, 3)];
    let mut h = Harness::<Raymond>::new(4, &links);
    h.app(3, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(h.sent.len(), 4);
    h.app(3, AppEvent::ReleaseCs);
    h.app(1, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(
        log_since(&h, 4),
        vec![
            (1, 0, "Request"),
            (0, 2, "Request"),
            (2, 3, "Request"),
            (3, 2, "Privilege"),
            (2, 0, "Privilege"),
            (0, 1, "Privilege"),
        ]
    );
    assert_eq!(h.cs_entries, vec![3, 1]);
}

#[test]
fn asked_suppresses_a_second_request_over_the_same_edge() {
    // Nodes 2 and 3 both want the token at 0 along 0–1–2–3. Node 2 asks first; node 3's
    // request stops at node 2 (ASKED), so edges 2–1 and 1–0 carry one Request each.
    let mut h = Harness::<Raymond>::new(4, &path(4));
    h.app(2, AppEvent::RequestCs);
    h.app(3, AppEvent::RequestCs);
    assert!(h.nodes[2].asked());
    assert_eq!(h.nodes[2].request_q().collect::<Vec<_>>(), vec![2]);
    h.deliver(3, 2);
    assert_eq!(h.nodes[2].request_q().collect::<Vec<_>>(), vec![2, 3]);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![2], "node 3 waits while 2 uses the token");
    h.app(2, AppEvent::ReleaseCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![2, 3]);
    assert_eq!(count(&h, RaymondMsg::Request), 3);
    assert_eq!(count(&h, RaymondMsg::Privilege), 3);
}

#[test]
fn link_events_change_nothing() {
    let mut h = Harness::<Raymond>::new(3, &path(3));
    let before = h.nodes.clone();
    h.link_down(1, 2);
    h.link_up(0, 2);
    assert_eq!(h.nodes, before);
    assert!(h.sent.is_empty());
    // Node 2's logical parent is still 1, now reached through 0 by the routing layer.
    h.app(2, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![2]);
    assert_eq!(h.sent.len(), 4);
}

// ---------------------------------------------------------------------------------------
// Random schedules: a test-local driver and the safety checks.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum App {
    Idle,
    Waiting,
    InCs,
}

/// Drives a harness with seeded random choices among: deliver the oldest message of a
/// random non-empty directed queue, release a node in its CS, or (when `can_request`
/// allows) let an idle node request. After every step it checks mutual exclusion and the
/// single token.
struct Driver {
    h: Harness<Raymond>,
    n: NodeId,
    app: Vec<App>,
    entries_seen: usize,
    rng: ChaCha8Rng,
}

enum Action {
    Deliver(NodeId, NodeId),
    Release(NodeId),
    Request(NodeId),
}

impl Driver {
    fn new(n: NodeId, links: &[(NodeId, NodeId)], seed: u64) -> Self {
        let h = Harness::<Raymond>::new(n as usize, links);
        let d = Self {
            h,
            n,
            app: vec![App::Idle; n as usize],
            entries_seen: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        d.check();
        d
    }

    fn non_empty_queues(&self) -> Vec<(NodeId, NodeId)> {
        let mut out = Vec::new();
        for a in 0..self.n {
            for b in 0..self.n {
                if !self.h.pending(a, b).is_empty() {
                    out.push((a, b));
                }
            }
        }
        out
    }

    fn request(&mut self, i: NodeId) {
        assert_eq!(self.app[i as usize], App::Idle);
        self.app[i as usize] = App::Waiting;
        self.h.app(i, AppEvent::RequestCs);
        self.after_step();
    }

    fn release(&mut self, i: NodeId) {
        assert_eq!(self.app[i as usize], App::InCs);
        self.app[i as usize] = App::Idle;
        self.h.app(i, AppEvent::ReleaseCs);
        self.after_step();
    }

    /// Takes one random step; `wants` says which idle nodes may request now. Returns
    /// false when nothing can happen any more.
    fn step(&mut self, wants: impl Fn(NodeId) -> bool) -> bool {
        let mut actions: Vec<Action> = self
            .non_empty_queues()
            .into_iter()
            .map(|(a, b)| Action::Deliver(a, b))
            .collect();
        for i in 0..self.n {
            match self.app[i as usize] {
                App::InCs => actions.push(Action::Release(i)),
                App::Idle if wants(i) => actions.push(Action::Request(i)),
                _ => {}
            }
        }
        if actions.is_empty() {
            return false;
        }
        match actions[self.rng.random_range(0..actions.len())] {
            Action::Deliver(a, b) => {
                self.h.deliver(a, b).expect("queue was non-empty");
                self.after_step();
            }
            Action::Release(i) => self.release(i),
            Action::Request(i) => self.request(i),
        }
        true
    }

    /// Records new CS entries (each must answer an outstanding request) and checks safety.
    fn after_step(&mut self) {
        while self.entries_seen < self.h.cs_entries.len() {
            let i = self.h.cs_entries[self.entries_seen];
            assert_eq!(
                self.app[i as usize],
                App::Waiting,
                "node {i} entered the CS without an outstanding request"
            );
            self.app[i as usize] = App::InCs;
            self.entries_seen += 1;
        }
        self.check();
    }

    fn check(&self) {
        let in_cs: Vec<NodeId> = (0..self.n)
            .filter(|&i| self.h.nodes[i as usize].in_cs())
            .collect();
        assert!(in_cs.len() <= 1, "two nodes in the CS: {in_cs:?}");
        for i in 0..self.n {
            assert_eq!(
                self.h.nodes[i as usize].in_cs(),
                self.app[i as usize] == App::InCs,
                "node {i}'s USING disagrees with the application"
            );
        }
        let held = self
            .h
            .nodes
            .iter()
            .filter(|node| node.holds_token())
            .count();
        let in_flight: usize = self
            .non_empty_queues()
            .into_iter()
            .map(|(a, b)| {
                self.h
                    .pending(a, b)
                    .iter()
                    .filter(|m| m.carries_token())
                    .count()
            })
            .sum();
        assert_eq!(
            held + in_flight,
            1,
            "tokens: {held} held + {in_flight} in flight"
        );
    }
}

/// A random tree on `n` nodes: node i > 0 hangs under a uniformly chosen node < i, then
/// ids are shuffled so node 0 is not always the tree's natural root.
fn random_tree(n: NodeId, rng: &mut ChaCha8Rng) -> Vec<(NodeId, NodeId)> {
    let mut perm: Vec<NodeId> = (0..n).collect();
    for i in (1..perm.len()).rev() {
        let j = rng.random_range(0..=i);
        perm.swap(i, j);
    }
    (1..n)
        .map(|i| (perm[rng.random_range(0..i) as usize], perm[i as usize]))
        .collect()
}

/// A random connected graph: a random tree plus `extra` random chords.
fn random_graph(n: NodeId, extra: usize, rng: &mut ChaCha8Rng) -> Vec<(NodeId, NodeId)> {
    let mut links = random_tree(n, rng);
    for _ in 0..extra {
        let a = rng.random_range(0..n);
        let b = rng.random_range(0..n);
        if a != b {
            links.push((a, b));
        }
    }
    links
}

// ---------------------------------------------------------------------------------------
// 2. Safety and service under concurrent requests, random delivery orders.
// ---------------------------------------------------------------------------------------

#[test]
fn random_schedules_keep_mutual_exclusion_one_token_and_serve_every_request() {
    const ROUNDS: usize = 3;
    for seed in 0..60u64 {
        let mut graph_rng = ChaCha8Rng::seed_from_u64(1_000 + seed);
        let n: NodeId = graph_rng.random_range(2..=9);
        let links = random_graph(n, 3, &mut graph_rng);
        // Every third run adds node n with no link at t = 0, so the attachment of other
        // components to node 0 (a logical edge with no physical link) is exercised too.
        let n = if seed % 3 == 0 { n + 1 } else { n };
        let mut d = Driver::new(n, &links, seed);
        let mut served = vec![0usize; n as usize];
        let mut steps = 0;
        loop {
            let before = d.h.cs_entries.len();
            let remaining: Vec<bool> = served.iter().map(|&s| s < ROUNDS).collect();
            if !d.step(|i| remaining[i as usize]) {
                break;
            }
            for &i in &d.h.cs_entries[before..] {
                served[i as usize] += 1;
            }
            steps += 1;
            assert!(steps < 100_000, "seed {seed}: no progress");
        }
        assert_eq!(
            served,
            vec![ROUNDS; n as usize],
            "seed {seed}: every request must be served"
        );
        assert_eq!(d.h.in_flight_count(), 0);
        assert!(d.app.iter().all(|&a| a == App::Idle));
    }
}

#[test]
fn all_nodes_requesting_at_once_are_each_served_once() {
    for seed in 0..40u64 {
        let mut d = Driver::new(7, &[(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (5, 6)], seed);
        for i in 0..7 {
            d.request(i);
        }
        while d.step(|_| false) {}
        let mut entered = d.h.cs_entries.clone();
        entered.sort_unstable();
        assert_eq!(entered, (0..7).collect::<Vec<_>>(), "seed {seed}");
    }
}

// ---------------------------------------------------------------------------------------
// 3. Heavy load: messages per CS entry.
// ---------------------------------------------------------------------------------------

/// How long a critical section lasts compared with message delays.
#[derive(Clone, Copy, Debug)]
enum CsLength {
    /// The node in the CS releases only once no message is in flight: every request has
    /// reached its destination, so queues are full. This is the heavy-load regime of
    /// Raymond's analysis (about four messages per entry).
    Long,
    /// Release is one random choice among deliveries: a holder may release and re-enter
    /// before its neighbours' requests reach it, getting entries for free, so the average
    /// is lower.
    Random,
}

/// Every node requests at the start and again immediately after each release, until
/// `entries` CS entries; returns messages per entry.
fn heavy_load(
    n: NodeId,
    links: &[(NodeId, NodeId)],
    cs: CsLength,
    seed: u64,
    entries: usize,
) -> f64 {
    let mut d = Driver::new(n, links, seed);
    for i in 0..n {
        d.request(i);
    }
    while d.h.cs_entries.len() < entries {
        let in_cs: Vec<NodeId> = (0..n).filter(|&i| d.app[i as usize] == App::InCs).collect();
        match cs {
            CsLength::Long if d.h.in_flight_count() > 0 => {
                let queues = d.non_empty_queues();
                let (a, b) = queues[d.rng.random_range(0..queues.len())];
                d.h.deliver(a, b);
                d.after_step();
            }
            CsLength::Long => {
                assert_eq!(
                    in_cs.len(),
                    1,
                    "quiescent under heavy load, yet nobody in CS"
                );
                d.release(in_cs[0]);
            }
            CsLength::Random => assert!(d.step(|_| false), "heavy load ran dry"),
        }
        // Nobody idles: whoever was released requests again at once.
        for i in in_cs {
            if d.app[i as usize] == App::Idle {
                d.request(i);
            }
        }
    }
    d.h.sent.len() as f64 / d.h.cs_entries.len() as f64
}

/// Checks the measured cost against Raymond's "about four under heavy load". With long
/// critical sections the token makes an Euler tour of the tree each round: every one of
/// the n − 1 edges is crossed twice, each crossing one Privilege answering one Request,
/// for n entries, i.e. 4(n − 1)/n per entry (3.6 for n = 10), which is checked too.
fn assert_small_constant(what: &str, n: NodeId, cs: CsLength, per_entry: f64) {
    println!("{what}: {per_entry:.3} messages per CS entry");
    assert!(
        per_entry > 1.0 && per_entry < 4.5,
        "{what}: {per_entry:.3} messages per CS entry"
    );
    if let CsLength::Long = cs {
        let tour = 4.0 * f64::from(n - 1) / f64::from(n);
        assert!(
            (per_entry - tour).abs() < 0.02,
            "{what}: {per_entry:.3} messages per CS entry, expected about {tour:.3}"
        );
    }
}

#[test]
fn heavy_load_on_a_star_costs_a_small_constant_per_entry() {
    let star: Vec<(NodeId, NodeId)> = (1..10).map(|i| (0, i)).collect();
    for cs in [CsLength::Long, CsLength::Random] {
        for seed in 0..3 {
            let per_entry = heavy_load(10, &star, cs, seed, 3_000);
            assert_small_constant(
                &format!("star of 10, {cs:?} CS, seed {seed}"),
                10,
                cs,
                per_entry,
            );
        }
    }
}

#[test]
fn heavy_load_on_random_trees_costs_a_small_constant_per_entry() {
    for cs in [CsLength::Long, CsLength::Random] {
        for seed in 0..3 {
            let mut rng = ChaCha8Rng::seed_from_u64(77 + seed);
            let tree = random_tree(10, &mut rng);
            let per_entry = heavy_load(10, &tree, cs, seed, 3_000);
            assert_small_constant(
                &format!("random tree {tree:?}, {cs:?} CS, seed {seed}"),
                10,
                cs,
                per_entry,
            );
        }
    }
}

#[test]
fn heavy_load_on_a_path_costs_a_small_constant_per_entry() {
    // The deepest tree: the token crosses every edge each round, yet the cost per entry
    // stays bounded because every node on its way uses it.
    let per_entry = heavy_load(10, &path(10), CsLength::Long, 0, 3_000);
    assert_small_constant("path of 10, Long CS", 10, CsLength::Long, per_entry);
}

// ---------------------------------------------------------------------------------------
// 4. bfs_tree and the initial state.
// ---------------------------------------------------------------------------------------

#[test]
fn bfs_tree_takes_the_smallest_id_parent_whatever_the_list_order() {
    // Diamond 0–1–3, 0–2–3: node 3 could hang under 1 or 2; BFS with increasing ids
    // reaches it from 1 first.
    let nb = neighbours_of(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert_eq!(bfs_tree(&nb, 0), vec![None, Some(0), Some(0), Some(1)]);
    let reversed: Vec<Vec<NodeId>> = nb
        .iter()
        .map(|l| l.iter().rev().copied().collect())
        .collect();
    assert_eq!(bfs_tree(&reversed, 0), bfs_tree(&nb, 0));

    // Ids need not follow the path: 0–3–1–2.
    let nb = neighbours_of(4, &[(0, 3), (3, 1), (1, 2)]);
    assert_eq!(bfs_tree(&nb, 0), vec![None, Some(3), Some(1), Some(0)]);
}

#[test]
fn bfs_tree_attaches_other_components_under_node_0() {
    // Components {0, 1}, {2, 3, 4, 5} (a path 2–4–3–5) and the isolated node 6.
    let nb = neighbours_of(7, &[(0, 1), (4, 2), (4, 3), (3, 5)]);
    assert_eq!(
        bfs_tree(&nb, 0),
        vec![
            None,
            Some(0),
            Some(0), // root of {2, 3, 4, 5}: its smallest id, a logical child of 0
            Some(4),
            Some(2),
            Some(3),
            Some(0), // isolated node
        ]
    );
    // Node 0 itself isolated: everyone else's component root hangs under it.
    let nb = neighbours_of(4, &[(1, 2), (2, 3)]);
    assert_eq!(bfs_tree(&nb, 0), vec![None, Some(0), Some(1), Some(2)]);
}

#[test]
fn bfs_tree_of_tiny_graphs() {
    assert_eq!(bfs_tree(&[], 0), Vec::<Option<NodeId>>::new());
    assert_eq!(bfs_tree(&[vec![]], 0), vec![None]);
    assert_eq!(bfs_tree(&[vec![], vec![]], 0), vec![None, Some(0)]);
}

#[test]
fn initial_state_points_every_holder_at_node_0() {
    let links = [(0, 1), (1, 2), (1, 3), (4, 5)];
    let nb = neighbours_of(6, &links);
    let parents = bfs_tree(&nb, 0);
    let nodes = Raymond::initial_states(&Default::default(), &nb);
    for (i, (node, parent)) in nodes.iter().zip(&parents).enumerate() {
        assert_eq!(node.holder(), parent.unwrap_or(i as NodeId));
        assert_eq!(node.holds_token(), i == 0);
        assert!(!node.in_cs() && !node.asked() && node.request_q().len() == 0);
    }
    assert!(RaymondMsg::Privilege.carries_token() && !RaymondMsg::Request.carries_token());
}

/// Independent oracle for bfs_tree on one component, level-synchronous instead of
/// queue-based: level 0 is `root`; the nodes of level d + 1 are ordered by (rank of their
/// first-ranked neighbour in level d, id), and that neighbour is their parent. Returns
/// the parent of every node reached.
fn level_order_parents(nb: &[Vec<NodeId>], root: usize) -> Vec<(usize, Option<usize>)> {
    let mut rank = vec![usize::MAX; nb.len()];
    let mut out = vec![(root, None)];
    rank[root] = 0;
    let mut level = vec![root];
    while !level.is_empty() {
        let mut next: Vec<(usize, usize, usize)> = Vec::new(); // (parent rank, id, parent)
        for v in 0..nb.len() {
            if rank[v] != usize::MAX {
                continue;
            }
            let best = nb[v]
                .iter()
                .map(|&u| u as usize)
                .filter(|u| level.contains(u))
                .min_by_key(|&u| rank[u]);
            if let Some(p) = best {
                next.push((rank[p], v, p));
            }
        }
        next.sort_unstable();
        level.clear();
        for (_, v, p) in next {
            rank[v] = out.len();
            out.push((v, Some(p)));
            level.push(v);
        }
    }
    out
}

#[test]
fn bfs_tree_parent_is_the_first_dequeued_not_the_smallest_id() {
    // Level 2 is dequeued as 5 (found from 1) then 3 (found from 2); 4 touches both.
    let nb = neighbours_of(6, &[(0, 1), (0, 2), (1, 5), (2, 3), (5, 4), (3, 4)]);
    assert_eq!(
        bfs_tree(&nb, 0),
        vec![None, Some(0), Some(0), Some(2), Some(5), Some(1)]
    );
}

proptest! {
    /// On any graph, with lists in any order: one tree over all nodes rooted at 0;
    /// inside each component the BFS tree from its smallest id, as the level-order oracle
    /// computes it; each other component's root is a child of 0.
    #[test]
    fn bfs_tree_matches_a_level_order_oracle(
        n in 1usize..25,
        edges in proptest::collection::vec((0u32..25, 0u32..25), 0..50),
        reverse_lists in any::<bool>(),
    ) {
        let links: Vec<(NodeId, NodeId)> = edges
            .into_iter()
            .filter(|&(a, b)| a != b && (a as usize) < n && (b as usize) < n)
            .collect();
        let mut nb = neighbours_of(n, &links);
        let parents = bfs_tree(&nb, 0);
        if reverse_lists {
            nb.iter_mut().for_each(|l| l.reverse());
            prop_assert_eq!(&bfs_tree(&nb, 0), &parents);
        }
        prop_assert_eq!(parents.len(), n);
        prop_assert_eq!(parents[0], None);
        // Following parents from any node reaches 0 in fewer than n steps (no cycle).
        for start in 0..n {
            let mut at = start;
            let mut steps = 0;
            while let Some(p) = parents[at] {
                at = p as usize;
                steps += 1;
                prop_assert!(steps < n, "cycle through {}", start);
            }
            prop_assert_eq!(at, 0);
        }
        let mut expected: Vec<Option<Option<usize>>> = vec![None; n];
        for root in 0..n {
            if expected[root].is_some() {
                continue;
            }
            for (v, p) in level_order_parents(&nb, root) {
                // A component root other than 0 hangs under node 0.
                let p = if v == root && root != 0 { Some(0) } else { p };
                expected[v] = Some(p);
            }
        }
        let expected: Vec<Option<NodeId>> = expected
            .into_iter()
            .map(|e| e.expect("every node is in a component").map(|p| p as NodeId))
            .collect();
        prop_assert_eq!(parents, expected);
    }
}
