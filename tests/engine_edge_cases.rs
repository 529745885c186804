//! Edge cases of the network model and the leader-election monitor, each found in review
//! as a bug and kept as a regression test: detection-delay notifications, `serialize`
//! with pending notifications, FIFO bounds after a `drop` break, per-component
//! quiescence and onset counting, and the documented RL + `serialize` freeze.

use linkrev::NodeId;
use linkrev::observe::le::{LeMonitor, check_component};
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::{Ctx, Message, Protocol};
use linkrev::sim::{
    ChangeMode, Duration, LinkBreak, NetworkConfig, Observer, RunConfig, SimTime, Simulation, World,
};
use linkrev::topology::events::LinkChange;

mod common;
use common::timeline;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Msg(u32);
impl Message for Msg {
    const KINDS: &'static [&'static str] = &["Msg"];
    fn kind_index(&self) -> usize {
        0
    }
}

/// Logs every link notification (peer, up?, time) and every arrival.
/// Node 0 sends BURST messages to a peer on each link-up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Logger<const BURST: u32 = 0> {
    id: NodeId,
    links: Vec<(NodeId, bool, u64)>,
    arrivals: Vec<(NodeId, u32, u64)>,
    sent: u32,
}

impl<const BURST: u32> Protocol for Logger<BURST> {
    type Msg = Msg;
    type Config = ();
    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        (0..neighbours.len() as NodeId)
            .map(|id| Logger {
                id,
                ..Default::default()
            })
            .collect()
    }
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Msg>) {
        self.links.push((peer, true, ctx.event_time_ns()));
        if self.id == 0 {
            for _ in 0..BURST {
                ctx.send(peer, Msg(self.sent));
                self.sent += 1;
            }
        }
    }
    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<Msg>) {
        self.links.push((peer, false, ctx.event_time_ns()));
    }
    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<Msg>) {
        self.arrivals.push((from, msg.0, ctx.event_time_ns()));
    }
}

fn config(delay: &str, link_break: LinkBreak, changes: ChangeMode, detect_ms: u64) -> RunConfig {
    RunConfig {
        network: NetworkConfig {
            delay: delay.parse().unwrap(),
            link_break,
            detection_delay: Duration(detect_ms * 1_000_000),
            changes,
        },
        workload: None,
        duration: SimTime::from_secs_f64(10.0),
        seed: 7,
        script: None,
        max_events: None,
    }
}

/// Detection delay 10 ms: a break that heals before it is detected is never notified
/// (the endpoints did not notice); one that heals after detection is notified Down, then
/// Up, in that order. (Review found the endpoints could hear Up before Down.)
/// What node 0 is told when link 0-1 breaks at 1.0 s and heals at `heal_at`, with a
/// 10 ms detection delay: (peer, up?, time ns) per notification.
fn notifications_for_heal_at(heal_at: f64) -> Vec<(NodeId, bool, u64)> {
    let tl = timeline(
        2,
        10.0,
        &[(0, 1)],
        &[
            (1.0, 0, 1, LinkChange::Down),
            (heal_at, 0, 1, LinkChange::Up),
        ],
    );
    let mut sim = Simulation::<Logger>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap, 10),
    );
    sim.run(&mut ());
    sim.nodes()[0].links.clone()
}

#[test]
fn a_break_healed_before_detection_is_never_notified() {
    assert_eq!(
        notifications_for_heal_at(1.01),
        vec![],
        "the endpoints never noticed the break"
    );
    // Healing after detection: Down at 1.01 (detected), then Up at 1.02, in that order.
    assert_eq!(
        notifications_for_heal_at(1.02),
        vec![(1, false, 1_010_000_000), (1, true, 1_020_000_000)]
    );
}

/// Same scenario with the real leader-election protocol: the component {0, 1} is
/// physically connected at the end but node 0 has dropped 1 from its neighbour set.
#[test]
fn le_stays_legal_when_a_break_heals_before_detection() {
    let tl = timeline(
        2,
        10.0,
        &[(0, 1)],
        &[(1.0, 0, 1, LinkChange::Down), (1.01, 0, 1, LinkChange::Up)],
    );
    let mut sim = Simulation::<LeMalpani>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap, 10),
    );
    let mut mon = LeMonitor::new();
    sim.run(&mut mon);
    assert_eq!(sim.in_flight(), 0);
    let r = check_component(sim.nodes(), sim.graph(), &[0, 1]);
    assert_eq!(
        r.map_err(|e| e.0),
        Ok(()),
        "safety count {}",
        mon.safety.count
    );
}

/// Records, for each applied change, how many notifications were still pending.
struct PendingAtChange(Vec<(u64, usize, usize)>);
impl<P: Protocol> Observer<P> for PendingAtChange {
    fn on_change(&mut self, _: LinkChange, _: NodeId, _: NodeId, world: &World<'_, P>) {
        self.0.push((
            world.now.nanos(),
            world.in_flight,
            world.pending_notifications,
        ));
    }
}

/// (4) `serialize` + detection delay: node 0's burst over link 0-5 is in flight until
/// 1.010 s, so two link failures (1-2 at 1.001 s, 3-4 at 1.002 s) queue up. When the
/// burst lands both are applied in the same instant: the second one while the first
/// one's LinkDown has not even been delivered ("one change at a time" is not honoured).
#[test]
fn serialize_waits_for_pending_notifications() {
    let tl = timeline(
        6,
        10.0,
        &[(1, 2), (3, 4)],
        &[
            (1.0, 0, 5, LinkChange::Up),
            (1.001, 1, 2, LinkChange::Down),
            (1.002, 3, 4, LinkChange::Down),
        ],
    );
    let mut sim = Simulation::<Logger<1>>::new(
        &tl,
        config("const:10ms", LinkBreak::Drain, ChangeMode::Serialize, 10),
    );
    let mut log = PendingAtChange(Vec::new());
    sim.run(&mut log);
    assert_eq!(log.0.len(), 3);
    assert!(
        log.0
            .iter()
            .all(|&(_, in_flight, pending)| in_flight == 0 && pending == 0),
        "a change was applied while another change was still being notified: {:?}",
        log.0
    );
}

/// (6) With a detection delay, LeMonitor's quiescence uses the *global*
/// `pending_notifications`, so an unrelated pending notification in another component
/// delays the convergence of a record. Components {0,1} and {2,3}; 0-1 fails at 1.0 s
/// (notified at 1.010 s, after which both halves are singletons and legal); 2-3 fails at
/// 1.005 s (notified at 1.015 s). The first record converges at 1.010 s, i.e. 10 ms.
#[test]
fn le_convergence_is_not_delayed_by_unrelated_notifications() {
    let tl = timeline(
        4,
        10.0,
        &[(0, 1), (2, 3)],
        &[
            (1.0, 0, 1, LinkChange::Down),
            (1.005, 2, 3, LinkChange::Down),
        ],
    );
    let mut sim = Simulation::<LeMalpani>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap, 10),
    );
    let mut mon = LeMonitor::new();
    sim.run(&mut mon);
    let r = &mon.records[0];
    assert!(r.converged && !r.censored, "{r:?}");
    let t = r.convergence_time_s.unwrap();
    assert!(
        (t - 0.010).abs() < 1e-6,
        "record 0 converged after {t} s, expected 0.010 s: {:?}",
        mon.records
    );
}

/// (2) Under `drop`, the FIFO bound `last_delivery` of messages that were dropped at a
/// break is kept, so a message sent over the re-formed link waits behind messages that
/// no longer exist. Burst of 50 with delays up to 500 ms at 1.0 s; break at 1.001 s
/// (all 50 dropped); re-form at 1.002 s, new burst of 50: the first new message could
/// arrive by 1.002 + 0.5 s at worst but is held until the last dropped one's time.
#[test]
fn drop_resets_the_fifo_bound_at_a_break() {
    let tl = timeline(
        2,
        10.0,
        &[],
        &[
            (1.0, 0, 1, LinkChange::Up),
            (1.001, 0, 1, LinkChange::Down),
            (1.002, 0, 1, LinkChange::Up),
        ],
    );
    let mut sim = Simulation::<Logger<50>>::new(
        &tl,
        config("uniform:1ms:500ms", LinkBreak::Drop, ChangeMode::Overlap, 0),
    );
    sim.run(&mut ());
    assert_eq!(sim.counters().messages_lost, 50);
    let arrivals = &sim.nodes()[1].arrivals;
    assert_eq!(arrivals.len(), 50);
    // Replay the delay stream: draws 0..50 went to the dropped burst, draw 50 to the
    // first message over the re-formed link. On a fresh link it arrives 1.002 s + draw.
    let model: linkrev::sim::DelayModel = "uniform:1ms:500ms".parse().unwrap();
    let mut rng = linkrev::sim::seeds::stream(7, linkrev::sim::seeds::Purpose::Delay, 0);
    let draws: Vec<u64> = (0..51).map(|_| model.sample(&mut rng).0).collect();
    assert_eq!(
        arrivals[0].2,
        1_002_000_000 + draws[50],
        "held behind dropped messages (last dropped due {} ns)",
        draws[..50].iter().map(|d| 1_000_000_000 + d).max().unwrap()
    );
}

/// `serialize` with RL: a component cut off from the token keeps reversing (me_rl.rs
/// docs), so a message is always in flight and the healing link-up is never applied.
/// That is the documented freeze, and it must be reported, not hidden.
/// Path 0-1-2-3, token at 0; 1-2 fails at 1 s and comes back at 2 s.
#[test]
fn rl_under_serialize_freezes_and_reports_the_pending_change() {
    use linkrev::protocol::me_rl::Rl;
    let tl = timeline(
        4,
        10.0,
        &[(0, 1), (1, 2), (2, 3)],
        &[(1.0, 1, 2, LinkChange::Down), (2.0, 1, 2, LinkChange::Up)],
    );
    let mut cfg = config("const:1ms", LinkBreak::Drain, ChangeMode::Serialize, 0);
    cfg.workload = Some(linkrev::sim::WorkloadConfig {
        rate: 1.0,
        cs_time: linkrev::sim::CsTime::Constant(Duration(1_000_000)),
    });
    let mut sim = Simulation::<Rl>::new(&tl, cfg);
    let mut log = PendingAtChange(Vec::new());
    sim.run(&mut log);
    assert_eq!(sim.counters().topology_changes, 1, "{:?}", log.0);
    assert_eq!(sim.counters().changes_pending_at_end, 1);
}

/// Node 0 alternates direct and routed sends to its new neighbour (100 per link-up).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Mixed {
    id: NodeId,
    sent: u32,
    arrivals: Vec<(u32, u64)>,
}
impl Protocol for Mixed {
    type Msg = Msg;
    type Config = ();
    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        (0..neighbours.len() as NodeId)
            .map(|id| Mixed {
                id,
                ..Default::default()
            })
            .collect()
    }
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Msg>) {
        if self.id == 0 {
            for _ in 0..100 {
                if self.sent.is_multiple_of(2) {
                    ctx.send(peer, Msg(self.sent));
                } else {
                    ctx.send_routed(peer, Msg(self.sent));
                }
                self.sent += 1;
            }
        }
    }
    fn on_link_down(&mut self, _: NodeId, _: &mut Ctx<Msg>) {}
    fn on_message(&mut self, _: NodeId, msg: Msg, ctx: &mut Ctx<Msg>) {
        self.arrivals.push((msg.0, ctx.event_time_ns()));
    }
}

/// (1) FIFO holds for direct and routed hops sharing a link, and across a break and
/// re-form under `drain` (expected to pass).
#[test]
fn fifo_holds_for_mixed_direct_and_routed_sends_across_reform() {
    let tl = timeline(
        2,
        10.0,
        &[],
        &[
            (1.0, 0, 1, LinkChange::Up),
            (1.01, 0, 1, LinkChange::Down),
            (1.02, 0, 1, LinkChange::Up),
        ],
    );
    let mut sim = Simulation::<Mixed>::new(
        &tl,
        config(
            "uniform:1ms:300ms",
            LinkBreak::Drain,
            ChangeMode::Overlap,
            0,
        ),
    );
    sim.run(&mut ());
    let a = &sim.nodes()[1].arrivals;
    assert_eq!(a.len(), 200);
    assert!(
        a.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
        "{a:?}"
    );
}

/// A "protocol" that never elects: every node follows itself, and its views of its
/// neighbours (their ids, which are their heights) are always right.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SelfLeader {
    id: NodeId,
    links: Vec<NodeId>,
}
impl Protocol for SelfLeader {
    type Msg = Msg;
    type Config = ();
    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        (0..neighbours.len() as NodeId)
            .map(|id| SelfLeader {
                id,
                links: neighbours[id as usize].clone(),
            })
            .collect()
    }
    fn on_link_up(&mut self, peer: NodeId, _: &mut Ctx<Msg>) {
        self.links.push(peer);
    }
    fn on_link_down(&mut self, peer: NodeId, _: &mut Ctx<Msg>) {
        self.links.retain(|&j| j != peer);
    }
    fn on_message(&mut self, _: NodeId, _: Msg, _: &mut Ctx<Msg>) {}
}
impl linkrev::protocol::LeaderView for SelfLeader {
    fn leader(&self) -> NodeId {
        self.id
    }
}
impl linkrev::protocol::HeightView for SelfLeader {
    type Height = NodeId;
    fn height(&self) -> NodeId {
        self.id
    }
    fn neighbour_height(&self, j: NodeId) -> Option<NodeId> {
        self.links.contains(&j).then_some(j)
    }
    fn views(&self) -> impl Iterator<Item = (NodeId, &NodeId)> + '_ {
        self.links.iter().map(|j| (*j, j))
    }
}

/// (6, safety) The illegal-component onset flag is global: once one component is
/// illegal, a second, independent component turning illegal later is not counted.
#[test]
fn le_safety_counts_each_illegal_component_once() {
    let tl = timeline(
        4,
        10.0,
        &[],
        &[(1.0, 0, 1, LinkChange::Up), (2.0, 2, 3, LinkChange::Up)],
    );
    let mut sim = Simulation::<SelfLeader>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap, 0),
    );
    let mut mon = LeMonitor::new();
    sim.run(&mut mon);
    // Leaderless node-time: {0,1} from 1 s, {2,3} from 2 s, to the end at 10 s.
    assert!((mon.leaderless_node_time - (2.0 * 9.0 + 2.0 * 8.0)).abs() < 1e-9);
    assert_eq!(mon.safety.count, 2, "{:?}", mon.safety.first);
}
