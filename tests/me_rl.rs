//! The Reverse Link token algorithm (`me-rl`; Walter, Welch, Vaidya, Wireless Networks
//! 2001), driven by hand through the test harness: FIFO links, `drain` link breaks
//! (messages in flight survive a `LinkDown`), the test choosing every delivery.

use linkrev::NodeId;
use linkrev::protocol::me_rl::{Height, Rl, RlMsg, Status};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{AppEvent, Message, TokenView};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn hgt(h1: i64, h2: i64, id: NodeId) -> Height {
    Height::new(h1, h2, id)
}

fn path(n: NodeId) -> Vec<(NodeId, NodeId)> {
    (1..n).map(|i| (i - 1, i)).collect()
}

fn n_of(h: &Harness<Rl>) -> NodeId {
    NodeId::try_from(h.nodes.len()).unwrap()
}

/// The messages sent since index `from` of `h.sent`.
fn log_since(h: &Harness<Rl>, from: usize) -> Vec<(NodeId, NodeId, RlMsg)> {
    h.sent[from..].to_vec()
}

fn heights(h: &Harness<Rl>) -> Vec<Height> {
    h.nodes.iter().map(Rl::height).collect()
}

/// Tokens held plus tokens in flight.
fn tokens(h: &Harness<Rl>) -> usize {
    let n = n_of(h);
    let held = h.nodes.iter().filter(|p| p.holds_token()).count();
    let mut flying = 0;
    for a in 0..n {
        for b in 0..n {
            flying += h.pending(a, b).iter().filter(|m| m.carries_token()).count();
        }
    }
    held + flying
}

/// The non-empty `(from, to)` queues, in increasing order.
fn busy_links(h: &Harness<Rl>) -> Vec<(NodeId, NodeId)> {
    let n = n_of(h);
    let mut busy = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if !h.pending(a, b).is_empty() {
                busy.push((a, b));
            }
        }
    }
    busy
}

/// Delivers the oldest message of a non-empty queue picked by `pick` (modulo their
/// number); `false` if nothing is in flight.
fn deliver_pick(h: &mut Harness<Rl>, pick: usize) -> bool {
    let busy = busy_links(h);
    if busy.is_empty() {
        return false;
    }
    let (from, to) = busy[pick % busy.len()];
    h.deliver(from, to).is_some()
}

fn deliver_random(h: &mut Harness<Rl>, rng: &mut ChaCha8Rng) -> bool {
    let pick = rng.random_range(0..usize::MAX);
    deliver_pick(h, pick)
}

/// After quiescence on a connected graph: every view is exact, no LinkInfo is awaited,
/// and every node but the token holder has a lower neighbour — the token-oriented DAG of
/// WWV §5 (Lemma 1: token oriented iff no sinks).
fn assert_token_oriented(h: &Harness<Rl>) {
    assert_eq!(h.in_flight_count(), 0, "not quiescent");
    let n = n_of(h);
    for i in 0..n {
        let p = &h.nodes[i as usize];
        let mut has_lower = false;
        for j in 0..n {
            if i == j || !h.linked(i, j) {
                assert_eq!(p.neighbour_height(j), None, "{i} lists {j}");
                continue;
            }
            let actual = h.nodes[j as usize].height();
            assert_eq!(p.neighbour_height(j), Some(actual), "{i}'s view of {j}");
            assert!(p.received_li(j) && !p.forming(j), "{i}-{j} still settling");
            has_lower |= actual < p.height();
        }
        assert!(
            p.holds_token() || has_lower,
            "{i} is a sink without the token: {:?}",
            p
        );
    }
}

// ---------------------------------------------------------------------------------------
// 1. A request down a path, the token back up it.
// ---------------------------------------------------------------------------------------

#[test]
fn token_travels_along_a_path_and_back() {
    let mut h = Harness::<Rl>::new(4, &path(4));
    assert_eq!(
        heights(&h),
        vec![hgt(0, 0, 0), hgt(0, 1, 1), hgt(0, 2, 2), hgt(0, 3, 3)]
    );
    assert!(h.nodes[0].holds_token());
    assert_eq!(
        h.nodes.iter().map(Rl::next).collect::<Vec<_>>(),
        vec![0, 0, 1, 2]
    );

    h.app(3, AppEvent::RequestCs);
    assert!(h.nodes[3].waiting());
    h.deliver_all(100);

    use RlMsg::{LinkInfo as Li, Request as Req, Token as Tok};
    assert_eq!(
        log_since(&h, 0),
        vec![
            // The request walks down to the token holder: each hop enqueues the sender
            // (which is higher) and, its Q having just become [j], forwards.
            (3, 2, Req(hgt(0, 3, 3))),
            (2, 1, Req(hgt(0, 2, 2))),
            (1, 0, Req(hgt(0, 1, 1))),
            // The token walks back up; each receiver goes just below the sender, tells
            // all its neighbours (the sender included), and passes the token on.
            (0, 1, Tok(hgt(0, 0, 0))),
            (1, 0, Li(hgt(0, -1, 1))),
            (1, 2, Li(hgt(0, -1, 1))),
            (1, 2, Tok(hgt(0, -1, 1))),
            (2, 1, Li(hgt(0, -2, 2))),
            (2, 3, Li(hgt(0, -2, 2))),
            (2, 3, Tok(hgt(0, -2, 2))),
            (3, 2, Li(hgt(0, -3, 3))),
        ]
    );
    assert_eq!(h.cs_entries, vec![3]);
    assert!(h.nodes[3].in_cs() && h.nodes[3].holds_token());
    assert_eq!(h.nodes[3].status(), Status::InCs);
    assert_eq!(
        heights(&h),
        vec![hgt(0, 0, 0), hgt(0, -1, 1), hgt(0, -2, 2), hgt(0, -3, 3)]
    );
    // Each giver pointed `next` at the receiver; the holder points at itself.
    assert_eq!(
        h.nodes.iter().map(Rl::next).collect::<Vec<_>>(),
        vec![1, 2, 3, 3]
    );
    assert_token_oriented(&h);

    // A second requester at the far end is served when 3 releases.
    h.app(0, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![3], "3 is still in its CS");
    assert_eq!(h.nodes[3].queue().collect::<Vec<_>>(), vec![2]);
    let before = h.sent.len();
    h.app(3, AppEvent::ReleaseCs);
    h.deliver_all(100);
    let tokens_sent: Vec<_> = log_since(&h, before)
        .into_iter()
        .filter(|(_, _, m)| m.carries_token())
        .collect();
    assert_eq!(
        tokens_sent,
        vec![
            (3, 2, Tok(hgt(0, -3, 3))),
            (2, 1, Tok(hgt(0, -4, 2))),
            (1, 0, Tok(hgt(0, -5, 1))),
        ]
    );
    assert_eq!(h.cs_entries, vec![3, 0]);
    assert_eq!(
        heights(&h),
        vec![hgt(0, -6, 0), hgt(0, -5, 1), hgt(0, -4, 2), hgt(0, -3, 3)]
    );
    h.app(0, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
}

// ---------------------------------------------------------------------------------------
// 2. Link failure: RaiseHeight, and the request is still served.
// ---------------------------------------------------------------------------------------

#[test]
fn losing_the_only_outgoing_link_raises_height_and_the_request_is_served() {
    // Diamond 0–1, 0–2, 1–3, 2–3: node 1's only outgoing link is to 0.
    let mut h = Harness::<Rl>::new(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert_eq!(
        heights(&h),
        vec![hgt(0, 0, 0), hgt(0, 1, 1), hgt(0, 1, 2), hgt(0, 2, 3)]
    );
    h.app(1, AppEvent::RequestCs);
    assert_eq!(h.pending(1, 0), vec![RlMsg::Request(hgt(0, 1, 1))]);

    let before = h.sent.len();
    h.link_down(0, 1);
    // 1 is now a sink without the token: h1 := 1 + min h1 (3's 0); no neighbour at
    // level 1, so h2 is kept. It tells its neighbours and re-sends its request.
    assert_eq!(h.nodes[1].height(), hgt(1, 1, 1));
    assert_eq!(
        log_since(&h, before),
        vec![
            (1, 3, RlMsg::LinkInfo(hgt(1, 1, 1))),
            (1, 3, RlMsg::Request(hgt(1, 1, 1))),
        ]
    );
    assert_eq!(h.nodes[1].next(), 3);

    // The old request still arrives at 0 (drain) and is ignored: 1 is not a neighbour.
    let before = h.sent.len();
    assert_eq!(h.deliver(1, 0), Some(RlMsg::Request(hgt(0, 1, 1))));
    assert_eq!(h.sent.len(), before);
    assert_eq!(h.nodes[0].queue().len(), 0);

    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![1]);
    let path: Vec<_> = h.sent[before..]
        .iter()
        .filter(|(_, _, m)| m.kind() != "LinkInfo")
        .map(|&(a, b, ref m)| (a, b, m.kind()))
        .collect();
    assert_eq!(
        path,
        vec![
            (3, 2, "Request"),
            (2, 0, "Request"),
            (0, 2, "Token"),
            (2, 3, "Token"),
            (3, 1, "Token"),
        ]
    );
    assert_eq!(
        heights(&h),
        vec![hgt(0, 0, 0), hgt(0, -3, 1), hgt(0, -1, 2), hgt(0, -2, 3)]
    );
    h.app(1, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
}

#[test]
fn raise_height_goes_just_below_the_neighbours_already_at_the_new_level() {
    // 0–1, 0–2, 1–2, 1–3, 2–4, 3–4. Breaking 0–1 makes 1 a sink: it rises to level 1.
    // That makes 3 a sink: its lowest h1 is 4's 0, so it goes to level 1 too, and since
    // 1 is already there with h2 = 1, 3 takes h2 = 0, just below 1 (and above 4).
    let links = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 4), (3, 4)];
    let mut h = Harness::<Rl>::new(5, &links);
    assert_eq!(
        heights(&h),
        vec![
            hgt(0, 0, 0),
            hgt(0, 1, 1),
            hgt(0, 1, 2),
            hgt(0, 2, 3),
            hgt(0, 2, 4)
        ]
    );
    h.link_down(0, 1);
    assert_eq!(h.nodes[1].height(), hgt(1, 1, 1));
    h.deliver_all(100);
    assert_eq!(h.nodes[3].height(), hgt(1, 0, 3));
    assert_eq!(
        heights(&h),
        vec![
            hgt(0, 0, 0),
            hgt(1, 1, 1),
            hgt(0, 1, 2),
            hgt(1, 0, 3),
            hgt(0, 2, 4)
        ]
    );
    assert_token_oriented(&h);
    for i in [1, 3] {
        h.app(i, AppEvent::RequestCs);
    }
    for _ in 0..1000 {
        if let Some(i) = h.nodes.iter().position(|p| p.in_cs()) {
            h.app(i as NodeId, AppEvent::ReleaseCs);
        } else if !deliver_pick(&mut h, 0) {
            break;
        }
    }
    assert_eq!(h.cs_entries, vec![1, 3]);
    assert_token_oriented(&h);
}

// ---------------------------------------------------------------------------------------
// 3. Link formation.
// ---------------------------------------------------------------------------------------

#[test]
fn link_formation_exchanges_link_info_and_a_new_request_takes_the_new_lower_link() {
    let mut h = Harness::<Rl>::new(4, &path(4));
    let before = h.sent.len();
    h.link_up(0, 3);
    assert_eq!(
        log_since(&h, before),
        vec![
            (0, 3, RlMsg::LinkInfo(hgt(0, 0, 0))),
            (3, 0, RlMsg::LinkInfo(hgt(0, 3, 3))),
        ]
    );
    // Until the peer's LinkInfo arrives the link is forming and the peer is not in N.
    assert!(h.nodes[0].forming(3) && h.nodes[3].forming(0));
    assert_eq!(h.nodes[0].form_height(3), Some(hgt(0, 0, 0)));
    assert_eq!(h.nodes[3].form_height(0), Some(hgt(0, 3, 3)));
    assert_eq!(h.nodes[0].neighbour_height(3), None);
    assert_eq!(h.nodes[3].neighbours().collect::<Vec<_>>(), vec![2]);

    let before = h.sent.len();
    h.deliver_all(100);
    // Neither height changed meanwhile, so nobody sends LinkInfo again.
    assert_eq!(h.sent.len(), before);
    assert!(!h.nodes[0].forming(3) && !h.nodes[3].forming(0));
    assert_eq!(h.nodes[3].neighbours().collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!(h.nodes[3].neighbour_height(0), Some(hgt(0, 0, 0)));
    assert_token_oriented(&h);

    // 3's lowest neighbour is now 0: the request takes the new link, one hop each way.
    h.app(3, AppEvent::RequestCs);
    h.deliver_all(100);
    let kinds: Vec<_> = h.sent[before..]
        .iter()
        .filter(|(_, _, m)| m.kind() != "LinkInfo")
        .map(|&(a, b, ref m)| (a, b, m.kind()))
        .collect();
    assert_eq!(kinds, vec![(3, 0, "Request"), (0, 3, "Token")]);
    assert_eq!(h.cs_entries, vec![3]);
    assert_eq!(h.nodes[3].height(), hgt(0, -1, 3));
    h.app(3, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
}

#[test]
fn a_pending_request_keeps_its_route_when_a_lower_link_forms() {
    // RL re-routes a pending request only when `next` stops being lower (LinkInfo slide:
    // `myHeight < height[next]`), not because a better link appeared.
    let mut h = Harness::<Rl>::new(4, &path(4));
    h.app(3, AppEvent::RequestCs);
    h.link_up(0, 3);
    h.deliver(0, 3); // 0's LinkInfo: 3 learns of a lower neighbour
    assert_eq!(h.nodes[3].next(), 2);
    assert_eq!(h.pending(3, 2), vec![RlMsg::Request(hgt(0, 3, 3))]);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![3]);
    // The token came the long way round, through 1 and 2.
    let tokens: Vec<_> = h
        .sent
        .iter()
        .filter(|(_, _, m)| m.carries_token())
        .map(|&(a, b, _)| (a, b))
        .collect();
    assert_eq!(tokens, vec![(0, 1), (1, 2), (2, 3)]);
    h.app(3, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
}

#[test]
fn a_height_change_while_forming_is_resent_over_the_new_link() {
    let mut h = Harness::<Rl>::new(4, &path(4));
    h.app(1, AppEvent::RequestCs);
    h.deliver(1, 0); // 0 gives 1 the token
    assert!(!h.nodes[0].received_li(1));
    assert_eq!(h.nodes[0].neighbour_height(1), Some(hgt(0, -1, 1)));

    h.link_up(1, 3);
    assert_eq!(h.nodes[1].form_height(3), Some(hgt(0, 1, 1)));
    let before = h.sent.len();
    h.deliver(0, 1); // the token: 1 goes to (0, -1, 1)
    assert_eq!(h.cs_entries, vec![1]);
    // 3 is not in N yet, so the token's LinkInfo goes to 0 and 2 only.
    assert_eq!(
        log_since(&h, before),
        vec![
            (1, 0, RlMsg::LinkInfo(hgt(0, -1, 1))),
            (1, 2, RlMsg::LinkInfo(hgt(0, -1, 1))),
        ]
    );
    // 3's LinkInfo arrives: 1's height is no longer formHeight[3], so 1 sends it again.
    let before = h.sent.len();
    h.deliver(3, 1);
    assert_eq!(
        log_since(&h, before),
        vec![(1, 3, RlMsg::LinkInfo(hgt(0, -1, 1)))]
    );
    assert!(!h.nodes[1].forming(3));
    assert_eq!(h.nodes[1].neighbour_height(3), Some(hgt(0, 3, 3)));
    // 3 sees the stale formation height first, then the fresh one.
    h.deliver(1, 3);
    assert_eq!(h.nodes[3].neighbour_height(1), Some(hgt(0, 1, 1)));
    h.deliver(1, 3);
    assert_eq!(h.nodes[3].neighbour_height(1), Some(hgt(0, -1, 1)));
    // 0 accepts 1's LinkInfo: it carries the height 0 predicted.
    h.deliver(1, 0);
    assert!(h.nodes[0].received_li(1));
    h.deliver_all(100);
    h.app(1, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
    // 3's lowest neighbour is now 1, over the new link.
    let before = h.sent.len();
    h.app(3, AppEvent::RequestCs);
    assert_eq!(
        log_since(&h, before),
        vec![(3, 1, RlMsg::Request(hgt(0, 3, 3)))]
    );
}

#[test]
fn a_request_from_the_token_receiver_is_ignored_until_its_link_info() {
    // Path 0–1–2; 2's request reaches 0 through 1, then 2 is cut off, so 1's queue empties
    // and 1 asks for itself while the token is already on its way to 1.
    let mut h = Harness::<Rl>::new(3, &path(3));
    h.app(2, AppEvent::RequestCs);
    h.deliver(2, 1);
    assert_eq!(h.pending(1, 0), vec![RlMsg::Request(hgt(0, 1, 1))]);
    h.link_down(1, 2);
    assert_eq!(h.nodes[1].queue().len(), 0);
    h.deliver(1, 0);
    assert_eq!(h.pending(0, 1), vec![RlMsg::Token(hgt(0, 0, 0))]);
    assert!(!h.nodes[0].received_li(1));

    h.app(1, AppEvent::RequestCs);
    let before = h.sent.len();
    assert_eq!(h.deliver(1, 0), Some(RlMsg::Request(hgt(0, 1, 1))));
    // receivedLI[1] is false: the request (and the stale height it carries) is ignored.
    assert_eq!(h.sent.len(), before);
    assert_eq!(h.nodes[0].queue().len(), 0);
    assert_eq!(h.nodes[0].neighbour_height(1), Some(hgt(0, -1, 1)));

    h.deliver(0, 1);
    assert_eq!(h.cs_entries, vec![1]);
    assert_eq!(h.deliver(1, 0), Some(RlMsg::LinkInfo(hgt(0, -1, 1))));
    assert!(h.nodes[0].received_li(1));
    assert_eq!(h.in_flight_count(), 0);
}

#[test]
fn isolated_requester_resends_when_a_link_forms() {
    // Where the algorithm as published is undefined (documented in `me_rl`): 2 loses its
    // only link while requesting, so `N = ∅` (no RaiseHeight, no ForwardRequest target;
    // `next := 2`). When the link comes back its peer is *lower*, so the LinkInfo
    // handler's re-route test `myHeight < height[next]` would be false for the old
    // `next = 1` and the request would never be re-sent; reading `next ∉ N` as "re-route"
    // (the Link Failures slide's rule) serves it.
    let mut h = Harness::<Rl>::new(3, &path(3));
    h.app(2, AppEvent::RequestCs);
    h.deliver(2, 1);
    h.link_down(1, 2);
    assert_eq!(h.nodes[2].next(), 2);
    assert_eq!(
        h.nodes[2].height(),
        hgt(0, 2, 2),
        "no RaiseHeight with N = ∅"
    );
    h.deliver_all(100);
    h.app(1, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![1]);

    h.link_up(1, 2);
    h.deliver_all(100);
    assert_eq!(h.nodes[2].next(), 1);
    assert_eq!(h.nodes[1].queue().collect::<Vec<_>>(), vec![2]);
    h.app(1, AppEvent::ReleaseCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![1, 2]);
    h.app(2, AppEvent::ReleaseCs);
    assert_token_oriented(&h);
}

#[test]
fn messages_from_a_former_neighbour() {
    // Token and LinkInfo in flight over a link that breaks (drain): the token is kept,
    // the LinkInfo does not put the old neighbour back into N.
    let mut h = Harness::<Rl>::new(3, &[(0, 1), (1, 2), (0, 2)]);
    h.app(1, AppEvent::RequestCs);
    h.deliver(1, 0);
    assert_eq!(h.pending(0, 1), vec![RlMsg::Token(hgt(0, 0, 0))]);
    h.link_down(0, 1);
    assert_eq!(tokens(&h), 1);
    h.deliver(0, 1);
    assert!(h.nodes[1].holds_token() && h.nodes[1].in_cs());
    assert_eq!(h.nodes[1].height(), hgt(0, -1, 1));
    assert_eq!(h.nodes[1].neighbours().collect::<Vec<_>>(), vec![2]);
    // 1 raised nothing (it holds the token); its LinkInfo goes to 2 only.
    h.deliver_all(100);
    assert_eq!(h.nodes[0].neighbours().collect::<Vec<_>>(), vec![2]);
    h.app(1, AppEvent::ReleaseCs);
    assert_token_oriented(&h);

    // A LinkInfo in flight when the link breaks is dropped on arrival.
    h.link_up(0, 1);
    h.link_down(0, 1);
    assert_eq!(h.pending(0, 1).len(), 1);
    h.deliver_all(100);
    assert_eq!(h.nodes[1].neighbours().collect::<Vec<_>>(), vec![2]);
    assert!(!h.nodes[1].forming(0));
    assert_token_oriented(&h);
}

#[test]
fn initial_state_orients_every_component() {
    // 0–1–2 reaches the token; 3–4–5 (lowest id 3) does not.
    let links = [(0, 1), (1, 2), (3, 4), (4, 5)];
    let h = Harness::<Rl>::new(6, &links);
    assert_eq!(
        heights(&h),
        vec![
            hgt(0, 0, 0),
            hgt(0, 1, 1),
            hgt(0, 2, 2),
            hgt(0, 6, 3),
            hgt(0, 7, 4),
            hgt(0, 8, 5),
        ]
    );
    assert_eq!(
        h.nodes.iter().map(Rl::next).collect::<Vec<_>>(),
        vec![0, 0, 1, 3, 3, 4]
    );
    assert_eq!(
        h.nodes.iter().filter(|p| p.holds_token()).count(),
        1,
        "only node 0"
    );
    assert!(h.nodes[3].is_sink(), "a tokenless component has a sink");
    for (i, p) in h.nodes.iter().enumerate() {
        assert_eq!(p.id(), i as NodeId);
        assert_eq!(p.status(), Status::Remainder);
        assert_eq!(p.queue().len(), 0);
    }
}

/// The model checker drops a message from a non-neighbour that its receiver ignores
/// (`Message::ignored_from_non_neighbour`), so the hook must say exactly what RL does:
/// a Request or a LinkInfo from a node the receiver keeps no link record of changes
/// nothing and sends nothing; a Token is taken. Each is counted under its own kind.
#[test]
fn the_hooks_on_messages_say_what_rl_does() {
    use linkrev::protocol::{Ctx, Protocol as _};
    let h = Harness::<Rl>::new(3, &[(0, 1), (1, 2)]);
    let h0 = hgt(0, 0, 0);
    for (msg, kind) in [
        (RlMsg::Request(h0), "Request"),
        (RlMsg::Token(h0), "Token"),
        (RlMsg::LinkInfo(h0), "LinkInfo"),
    ] {
        assert_eq!(msg.kind(), kind);
        // Node 2 has never been linked to node 0.
        let mut node = h.nodes[2].clone();
        let mut ctx = Ctx::new(2, 0);
        node.on_message(0, msg, &mut ctx);
        let ignored = node == h.nodes[2] && ctx.effects().is_empty();
        assert_eq!(ignored, msg.ignored_from_non_neighbour(), "{msg:?}");
        assert_eq!(ignored, !matches!(msg, RlMsg::Token(_)), "{msg:?}");
    }
}

#[test]
fn the_sink_of_a_tokenless_initial_component_raises_when_it_requests() {
    // 3–4–5 cannot reach the token at t = 0, so its lowest node 3 starts as a sink. The
    // slide's RequestCS would send 3's request up to 4, which ignores a request from a
    // lower node, and nothing would ever wake 3 (documented choice in `me_rl`: a
    // requester that is a sink raises first, which is dead code from a legal start).
    let links = [(0, 1), (1, 2), (3, 4), (4, 5)];
    let mut h = Harness::<Rl>::new(6, &links);
    h.link_up(2, 5);
    h.deliver_all(100);
    assert!(h.nodes[3].is_sink());
    let before = h.sent.len();
    h.app(3, AppEvent::RequestCs);
    // h1 := 1 + 4's h1; nobody at level 1, so h2 is kept.
    assert_eq!(h.nodes[3].height(), hgt(1, 6, 3));
    assert_eq!(
        log_since(&h, before),
        vec![
            (3, 4, RlMsg::LinkInfo(hgt(1, 6, 3))),
            (3, 4, RlMsg::Request(hgt(1, 6, 3))),
        ]
    );
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..1000 {
        if h.nodes[3].in_cs() {
            h.app(3, AppEvent::ReleaseCs);
        } else if !deliver_random(&mut h, &mut rng) {
            break;
        }
    }
    assert_eq!(h.cs_entries, vec![3]);
    assert_token_oriented(&h);
}

#[test]
fn a_tokenless_component_keeps_reversing_until_it_rejoins() {
    // A property of RL, not a choice: cut off from the token, 1 and 2 take turns being
    // the sink and raising above each other, one LinkInfo at a time, for as long as the
    // partition lasts (WWV §5's no-starvation argument assumes the token is reachable).
    let mut h = Harness::<Rl>::new(3, &path(3));
    h.link_down(0, 1);
    for _ in 0..1000 {
        assert!(deliver_pick(&mut h, 0), "the reversal stopped");
    }
    assert_eq!(h.in_flight_count(), 1);
    assert!(h.nodes[1].height().h1 >= 500 && h.nodes[2].height().h1 >= 500);
    // Rejoining stops it, and requests are served again.
    h.link_up(0, 2);
    h.app(1, AppEvent::RequestCs);
    for _ in 0..1000 {
        if h.nodes[1].in_cs() {
            h.app(1, AppEvent::ReleaseCs);
        } else if !deliver_pick(&mut h, 0) {
            break;
        }
    }
    assert_eq!(h.cs_entries, vec![1]);
    assert_token_oriented(&h);
}

#[test]
fn token_goes_back_and_forth_over_one_link() {
    // The token's receiver sends LinkInfo to its sender too: that is what sets the
    // sender's receivedLI back to true. Were it skipped, 0 would ignore 1's later
    // requests for ever.
    let mut h = Harness::<Rl>::new(2, &path(2));
    for (round, i) in [1, 0, 1, 0, 1].into_iter().enumerate() {
        h.app(i, AppEvent::RequestCs);
        h.deliver_all(100);
        assert_eq!(h.cs_entries.len(), round + 1, "round {round}");
        assert!(h.nodes[i as usize].in_cs());
        h.app(i, AppEvent::ReleaseCs);
        assert!(h.nodes[0].received_li(1) && h.nodes[1].received_li(0));
    }
    assert_eq!(h.nodes[1].height(), hgt(0, -5, 1));
    assert_token_oriented(&h);
}

// ---------------------------------------------------------------------------------------
// 4. Mutual exclusion under concurrency, random delivery orders.
// ---------------------------------------------------------------------------------------

#[test]
fn concurrent_requests_are_all_served_one_at_a_time() {
    // A ring of 6 with two chords.
    let links = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 0),
        (1, 4),
        (0, 3),
    ];
    for seed in 0..200 {
        let mut h = Harness::<Rl>::new(6, &links);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut asked = [0usize; 6];
        for i in 0..6 {
            h.app(i, AppEvent::RequestCs);
            asked[i as usize] += 1;
        }
        let mut steps = 0;
        loop {
            assert!(steps < 10_000, "seed {seed}: no progress");
            steps += 1;
            let in_cs: Vec<_> = (0..6).filter(|&i| h.nodes[i].in_cs()).collect();
            assert!(in_cs.len() <= 1, "seed {seed}: {in_cs:?} in CS together");
            assert_eq!(tokens(&h), 1, "seed {seed}");
            if let [i] = in_cs[..] {
                let i = i as NodeId;
                h.app(i, AppEvent::ReleaseCs);
                // Some nodes come back for a second turn.
                if asked[i as usize] == 1 && rng.random_range(0..2) == 0 {
                    h.app(i, AppEvent::RequestCs);
                    asked[i as usize] += 1;
                }
            } else if !deliver_random(&mut h, &mut rng) {
                break;
            }
        }
        for i in 0..6 {
            let served = h.cs_entries.iter().filter(|&&e| e == i).count();
            assert_eq!(served, asked[i as usize], "seed {seed}: node {i}");
        }
        assert_token_oriented(&h);
    }
}

// ---------------------------------------------------------------------------------------
// 5. Random graphs, link flips, requests and delivery orders.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    /// Toggle the link between two nodes (indices taken modulo n).
    Flip(usize, usize),
    Request(usize),
    /// Release the node in its CS, if any.
    Release,
    /// Deliver from the k-th non-empty queue (modulo their number).
    Deliver(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..8usize, 0..8usize).prop_map(|(a, b)| Op::Flip(a, b)),
        2 => (0..8usize).prop_map(Op::Request),
        2 => Just(Op::Release),
        8 => any::<usize>().prop_map(Op::Deliver),
    ]
}

/// A connected graph on `n` nodes: a random tree plus random extra links.
fn connected_graph() -> impl Strategy<Value = (usize, Vec<(NodeId, NodeId)>)> {
    (2..=8usize).prop_flat_map(|n| {
        let parents = proptest::collection::vec(any::<usize>(), n - 1);
        let extra = proptest::collection::vec((0..n, 0..n), 0..=n);
        (Just(n), parents, extra).prop_map(|(n, parents, extra)| {
            let mut links = Vec::new();
            for (i, p) in parents.into_iter().enumerate() {
                let child = i + 1;
                links.push(((p % child) as NodeId, child as NodeId));
            }
            for (a, b) in extra {
                if a != b {
                    links.push((a.min(b) as NodeId, a.max(b) as NodeId));
                }
            }
            links.sort_unstable();
            links.dedup();
            (n, links)
        })
    })
}

fn check_safety(h: &Harness<Rl>) -> Result<(), TestCaseError> {
    let in_cs = h.nodes.iter().filter(|p| p.in_cs()).count();
    prop_assert!(in_cs <= 1, "{in_cs} nodes in CS");
    prop_assert_eq!(tokens(h), 1);
    // Between events no non-holder with neighbours is a sink: every handler that could
    // leave one raises it (so `RequestCS`'s sink test never fires from a legal start).
    for p in &h.nodes {
        prop_assert!(!p.is_sink(), "{} is a sink at rest: {:?}", p.id(), p);
        // `next` (WWV §4): the holder points to itself; a node that waits for the token
        // (its queue holds a request) has sent that request to `next`, a neighbour, or
        // has no neighbour and points to itself until one appears.
        if p.holds_token() {
            prop_assert_eq!(p.next(), p.id(), "the holder's next: {:?}", p);
        } else if p.queue().len() > 0 {
            let next = p.next();
            let mut n = p.neighbours().peekable();
            let lonely = n.peek().is_none();
            prop_assert!(
                n.any(|j| j == next) || (next == p.id() && lonely),
                "a waiting node's next is not a neighbour: {:?}",
                p
            );
        }
    }
    Ok(())
}

/// Adds links until the graph is connected (component of 0 joined to each other one).
fn connect(h: &mut Harness<Rl>) {
    let n = n_of(h);
    loop {
        let mut seen = vec![false; n as usize];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for v in 0..n {
                if !seen[v as usize] && h.linked(u, v) {
                    seen[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        match seen.iter().position(|s| !s) {
            Some(v) => h.link_up(0, v as NodeId),
            None => return,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutual_exclusion_and_no_starvation_under_link_changes(
        (n, links) in connected_graph(),
        ops in proptest::collection::vec(op(), 0..300),
        seed in any::<u64>(),
    ) {
        let mut h = Harness::<Rl>::new(n, &links);
        let mut asked = vec![0usize; n];
        for op in ops {
            match op {
                Op::Flip(a, b) => {
                    let (a, b) = ((a % n) as NodeId, (b % n) as NodeId);
                    if a != b {
                        if h.linked(a, b) {
                            h.link_down(a, b);
                        } else {
                            h.link_up(a, b);
                        }
                    }
                }
                Op::Request(i) => {
                    let i = i % n;
                    if h.nodes[i].status() == Status::Remainder {
                        h.app(i as NodeId, AppEvent::RequestCs);
                        asked[i] += 1;
                    }
                }
                Op::Release => {
                    if let Some(i) = h.nodes.iter().position(|p| p.in_cs()) {
                        h.app(i as NodeId, AppEvent::ReleaseCs);
                    }
                }
                Op::Deliver(k) => {
                    deliver_pick(&mut h, k);
                }
            }
            check_safety(&h)?;
        }

        // Changes stop; the graph is made connected; everything is delivered.
        connect(&mut h);
        check_safety(&h)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut steps = 0;
        loop {
            prop_assert!(steps < 200_000, "no quiescence");
            steps += 1;
            if let Some(i) = h.nodes.iter().position(|p| p.in_cs()) {
                h.app(i as NodeId, AppEvent::ReleaseCs);
            } else if !deliver_random(&mut h, &mut rng) {
                break;
            }
            check_safety(&h)?;
        }
        for (i, &count) in asked.iter().enumerate() {
            let served = h.cs_entries.iter().filter(|&&e| e as usize == i).count();
            prop_assert_eq!(served, count, "node {} starved", i);
            prop_assert_eq!(h.nodes[i].status(), Status::Remainder);
        }
        assert_token_oriented(&h);
    }
}

#[test]
fn a_holder_in_its_cs_never_requests_its_own_token() {
    // The LinkInfo slide re-routes a pending request when `myHeight < height[next]`. At
    // the token holder in its CS `next = i`, and the test is false: `height[i]` is its
    // own height, and ForwardRequest is "called when a node i does not hold the token"
    // (slide "ForwardRequest"). An earlier reading took `next ∉ N` as "re-route" there
    // too, so every LinkInfo reaching a holder in its CS with waiters sent a Request for
    // the token it held, to its lowest neighbour.
    let mut h = Harness::<Rl>::new(4, &path(3));
    h.app(0, AppEvent::RequestCs);
    assert_eq!(h.cs_entries, vec![0]);
    h.app(1, AppEvent::RequestCs);
    h.deliver_all(100);
    assert_eq!(h.nodes[0].queue().collect::<Vec<_>>(), vec![1]);
    let before = h.sent.len();
    // Three LinkInfos reach the holder in its CS: two link formations and a height
    // change of a neighbour.
    h.link_up(0, 2);
    h.link_up(0, 3);
    h.deliver_all(100);
    let requests_by_holder = log_since(&h, before)
        .iter()
        .filter(|(from, _, m)| *from == 0 && m.kind() == "Request")
        .count();
    assert_eq!(requests_by_holder, 0, "{:?}", log_since(&h, before));
    assert_eq!(h.nodes[0].next(), 0, "the holder keeps next = i");
    // Its waiter is then served as before.
    h.app(0, AppEvent::ReleaseCs);
    h.deliver_all(100);
    assert_eq!(h.cs_entries, vec![0, 1]);
    assert_token_oriented(&h);
}

/// What the monitors, the replay and the checker read from a node and a message, each
/// against what RL did (mutation testing found these unchecked).
#[test]
fn what_a_node_and_a_message_show_is_what_rl_holds() {
    let mut h = Harness::<Rl>::new(4, &path(4));
    let start = heights(&h);
    // Views: every neighbour at its height, nobody else.
    for i in 0..4u32 {
        for j in 0..4u32 {
            let linked = i.abs_diff(j) == 1;
            let seen = h.nodes[i as usize].neighbour_height(j);
            assert_eq!(
                seen,
                linked.then_some(start[j as usize]),
                "{i}'s view of {j}"
            );
        }
    }
    // Waiting from the request until the CS is entered, and not before or after.
    assert!(h.nodes.iter().all(|p| !p.waiting()));
    h.app(3, AppEvent::RequestCs);
    assert!(h.nodes[3].waiting());
    h.deliver_all(100);
    assert_eq!(h.nodes[3].status(), Status::InCs);
    assert!(!h.nodes[3].waiting());

    // A message's height parts are its height's numbers, and shifting moves exactly them.
    for make in [RlMsg::Request, RlMsg::Token, RlMsg::LinkInfo] {
        let mut msg = make(hgt(3, -2, 1));
        assert_eq!(msg.height_parts(), Some([3, -2]), "{msg:?}");
        msg.shift_heights([1, 5]);
        assert_eq!(msg, make(hgt(4, 3, 1)));
    }
}

/// The square 0-1, 0-2, 1-3, 2-3 with the token at 0: 1 and 2 one hop above it, 3 on
/// top with `next = 1` (the lower of its two neighbours).
fn square() -> Harness<Rl> {
    let h = Harness::<Rl>::new(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert_eq!(h.nodes[3].next(), 1);
    h
}

fn requests_from(h: &Harness<Rl>, since: usize, node: NodeId) -> Vec<NodeId> {
    h.sent[since..]
        .iter()
        .filter(|(from, _, m)| *from == node && matches!(m, RlMsg::Request(_)))
        .map(|&(_, to, _)| to)
        .collect()
}

#[test]
fn a_lost_link_resends_the_request_only_when_it_was_next_and_someone_waits() {
    // Waiting at 3, and the link that is not `next` fails: nothing is re-sent.
    let mut h = square();
    h.app(3, AppEvent::RequestCs);
    let since = h.sent.len();
    h.link_down(2, 3);
    assert_eq!(requests_from(&h, since, 3), Vec::<NodeId>::new());
    // Waiting at 3, and `next` fails: the request goes to the neighbour left.
    let mut h = square();
    h.app(3, AppEvent::RequestCs);
    let since = h.sent.len();
    h.link_down(1, 3);
    assert_eq!(requests_from(&h, since, 3), vec![2]);
    assert_eq!(h.nodes[3].next(), 2);
    // Nobody waiting at 3, and `next` fails: nothing to re-send.
    let mut h = square();
    let since = h.sent.len();
    h.link_down(1, 3);
    assert_eq!(requests_from(&h, since, 3), Vec::<NodeId>::new());
}

#[test]
fn the_replay_draws_each_link_once_from_the_higher_height_and_shows_the_state() {
    use linkrev::protocol::ReplayView;
    let mut h = square();
    h.app(3, AppEvent::RequestCs);
    h.link_down(1, 3);
    h.deliver_all(1000);
    for (i, j) in [(0, 1), (0, 2), (2, 3)] {
        let (p, q) = (&h.nodes[i as usize], &h.nodes[j as usize]);
        let down = p.height() > q.height();
        assert_eq!(p.points_to(j, q), Some(down), "{i} → {j}");
        assert_eq!(q.points_to(i, p), Some(!down), "{j} → {i}");
    }
    for p in &h.nodes {
        assert_eq!(p.label(), p.height().to_string());
        let panel = p.describe();
        let head = format!(
            "height {}\nstatus {:?}\ntokens {}\nnext {}\n",
            p.height(),
            p.status(),
            usize::from(p.holds_token()),
            p.next()
        );
        assert!(panel.starts_with(&head), "{panel}");
    }
}

#[test]
fn with_forwarding_a_released_token_nobody_waits_for_goes_to_the_highest_neighbour() {
    use linkrev::protocol::me_krl::{Krl, KrlConfig};
    // A path 0 - 1 - 2, and 0 linked to 1 and 2 (both one hop up, 2 the higher by
    // id): the holder's highest neighbour takes the token and keeps it.
    for (links, holder_after) in [(path(3), 1), (vec![(0, 1), (0, 2)], 2)] {
        for forwarding in [false, true] {
            let config = KrlConfig { k: 1, forwarding };
            let n = links.iter().map(|&(a, b)| a.max(b)).max().unwrap() as usize + 1;
            let mut h = Harness::<Krl>::configured(&config, n, &links);
            h.app(0, AppEvent::RequestCs);
            h.deliver_all(100);
            h.app(0, AppEvent::ReleaseCs);
            h.deliver_all(100);
            let holder = (0..n).find(|&i| h.nodes[i].holds_token()).unwrap();
            let expected = if forwarding { holder_after } else { 0 };
            assert_eq!(holder, expected, "{links:?}, forwarding {forwarding}");
            // The holder points to itself.
            assert_eq!(h.nodes[holder].rl().next() as usize, holder);
        }
    }
}
