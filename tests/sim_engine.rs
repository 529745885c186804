//! The simulator's network model and workload, checked with a toy protocol whose only
//! job is to send numbered messages and log what arrives.

use linkrev::NodeId;
use linkrev::protocol::{AppEvent, Ctx, Message, Protocol};
use linkrev::sim::{
    ChangeMode, CsTime, Duration, LinkBreak, NetworkConfig, Observer, RunConfig, SimTime,
    Simulation, WorkloadConfig, World,
};
use linkrev::topology::events::LinkChange;

mod common;
use common::timeline;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Numbered {
    seq: u32,
    token: bool,
}

impl Message for Numbered {
    const KINDS: &'static [&'static str] = &["Numbered"];
    fn kind_index(&self) -> usize {
        0
    }
    fn carries_token(&self) -> bool {
        self.token
    }
}

/// No routed destination.
const NOWHERE: NodeId = NodeId::MAX;

/// On every link-up, node 0 sends `BURST` numbered messages to the new neighbour (or, if
/// `ROUTE_TO` is a node, one routed message to that node). Every node logs arrivals. On a
/// CS request a node enters at once (no exclusion: this exercises the workload only).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Toy<const BURST: u32 = 0, const ROUTE_TO: NodeId = NOWHERE> {
    id: NodeId,
    log: Vec<(NodeId, u32, u64)>,
    downs: Vec<(NodeId, u64)>,
    /// Timers fired: (tag, time ns). Every link-up sets one, 7 ms later, tagged with the peer.
    timers: Vec<(u64, u64)>,
}

impl<const BURST: u32, const ROUTE_TO: NodeId> Protocol for Toy<BURST, ROUTE_TO> {
    type Msg = Numbered;
    type Config = ();

    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        (0..neighbours.len() as NodeId)
            .map(|id| Toy {
                id,
                ..Toy::default()
            })
            .collect()
    }

    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Numbered>) {
        ctx.set_timer(7_000_000, u64::from(peer));
        if self.id != 0 {
            return;
        }
        if ROUTE_TO != NOWHERE {
            ctx.send_routed(
                ROUTE_TO,
                Numbered {
                    seq: 0,
                    token: true,
                },
            );
        } else {
            (0..BURST).for_each(|seq| ctx.send(peer, Numbered { seq, token: false }));
        }
    }

    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<Numbered>) {
        self.downs.push((peer, ctx.event_time_ns()));
    }

    fn on_message(&mut self, from: NodeId, msg: Numbered, ctx: &mut Ctx<Numbered>) {
        self.log.push((from, msg.seq, ctx.event_time_ns()));
    }

    fn on_timer(&mut self, tag: u64, ctx: &mut Ctx<Numbered>) {
        self.timers.push((tag, ctx.event_time_ns()));
    }

    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<Numbered>) {
        if event == AppEvent::RequestCs {
            ctx.enter_cs();
        }
    }
}

fn config(delay: &str, link_break: LinkBreak, changes: ChangeMode) -> RunConfig {
    RunConfig {
        network: NetworkConfig {
            delay: delay.parse().unwrap(),
            link_break,
            detection_delay: Duration(0),
            changes,
        },
        workload: None,
        duration: SimTime::from_secs_f64(100.0),
        seed: 42,
        script: None,
        max_events: None,
    }
}

/// The topology changes applied: (time ns, change, a, b, messages in flight then).
struct ChangeLog(Vec<(u64, LinkChange, NodeId, NodeId, usize)>);

impl<P: Protocol> Observer<P> for ChangeLog {
    fn on_change(&mut self, change: LinkChange, a: NodeId, b: NodeId, world: &World<'_, P>) {
        self.0
            .push((world.now.nanos(), change, a, b, world.in_flight));
    }
}

#[test]
fn links_are_fifo_under_widely_varying_delays() {
    let tl = timeline(2, 10.0, &[], &[(1.0, 0, 1, LinkChange::Up)]);
    let mut sim = Simulation::<Toy<200>>::new(
        &tl,
        config("uniform:1ms:100ms", LinkBreak::Drain, ChangeMode::Overlap),
    );
    sim.run(&mut ());
    let log = &sim.nodes()[1].log;
    assert_eq!(log.len(), 200);
    assert!(
        log.windows(2).all(|w| w[0].1 < w[1].1 && w[0].2 <= w[1].2),
        "out of order: {log:?}"
    );
    // FIFO stretched the burst: the last message cannot arrive before the largest delay.
    assert!(
        log.iter()
            .all(|&(_, _, t)| (1_001_000_000..=1_100_000_000).contains(&t))
    );
    assert_eq!(sim.counters().messages, 200);
}

/// Node 0 sends 5 messages when the link comes up at 1 s; the link breaks at 1.005 s,
/// while all of them are still in flight (constant 10 ms delay).
fn break_in_flight(link_break: LinkBreak) -> (usize, u64) {
    let tl = timeline(
        2,
        10.0,
        &[],
        &[(1.0, 0, 1, LinkChange::Up), (1.005, 0, 1, LinkChange::Down)],
    );
    let mut sim =
        Simulation::<Toy<5>>::new(&tl, config("const:10ms", link_break, ChangeMode::Overlap));
    sim.run(&mut ());
    assert_eq!(sim.nodes()[0].downs, vec![(1, 1_005_000_000)]);
    (sim.nodes()[1].log.len(), sim.counters().messages_lost)
}

#[test]
fn drain_delivers_and_drop_loses_messages_in_flight_at_a_break() {
    assert_eq!(break_in_flight(LinkBreak::Drain), (5, 0));
    assert_eq!(break_in_flight(LinkBreak::Drop), (0, 5));
}

#[test]
fn serialize_defers_changes_until_nothing_is_in_flight() {
    // Two link-ups 1 ms apart; each triggers 3 messages taking 10 ms.
    let events = [(1.0, 0, 1, LinkChange::Up), (1.001, 0, 2, LinkChange::Up)];
    let tl = timeline(3, 10.0, &[], &events);
    for (mode, second_at) in [
        (ChangeMode::Overlap, 1_001_000_000),
        (ChangeMode::Serialize, 1_010_000_000),
    ] {
        let mut sim = Simulation::<Toy<3>>::new(&tl, config("const:10ms", LinkBreak::Drain, mode));
        let mut log = ChangeLog(Vec::new());
        sim.run(&mut log);
        assert_eq!(log.0.len(), 2);
        assert_eq!(log.0[1].0, second_at, "{mode:?}");
        if mode == ChangeMode::Serialize {
            assert!(
                log.0.iter().all(|c| c.4 == 0),
                "a change was applied with messages in flight"
            );
        }
        assert_eq!(sim.nodes()[2].log.len(), 3);
    }
}

#[test]
fn routed_messages_take_shortest_paths_and_wait_for_one() {
    // Path 1-2-3 exists; at 1 s link 0-1 forms and node 0 routes a message to 4, which
    // is unreachable until 3-4 forms at 2 s. Hops 0→1→2→3 happen at once, 3→4 after 2 s.
    let events = [(1.0, 0, 1, LinkChange::Up), (2.0, 3, 4, LinkChange::Up)];
    let tl = timeline(5, 10.0, &[(1, 2), (2, 3)], &events);
    let mut sim = Simulation::<Toy<0, 4>>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap),
    );
    sim.run(&mut ());
    let log = &sim.nodes()[4].log;
    assert_eq!(log.len(), 1, "delivered once");
    assert_eq!(log[0].0, 0, "the receiver sees the original sender");
    // Parked at node 0 (no path), released at 2 s, then 4 hops of 1 ms.
    assert_eq!(log[0].2, 2_004_000_000);
    assert_eq!(sim.counters().messages, 4, "one message per hop");
    // Intermediate nodes never see the message as theirs.
    assert!((1..4).all(|i| sim.nodes()[i].log.is_empty()));
}

#[test]
fn workload_is_a_poisson_process_with_one_outstanding_request() {
    // A single node that enters at once: requests form a renewal process with mean cycle
    // 1/λ + CS time, so over T seconds about T / (1/λ + cs) requests.
    let tl = timeline(1, 20_000.0, &[], &[]);
    let mut cfg = config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap);
    cfg.duration = SimTime::from_secs_f64(20_000.0);
    cfg.workload = Some(WorkloadConfig {
        rate: 0.5,
        cs_time: CsTime::Exponential {
            mean: Duration::from_secs_f64(1.0),
        },
    });
    let mut sim = Simulation::<Toy>::new(&tl, cfg);
    sim.run(&mut ());
    let requests = sim.requests();
    let expected = 20_000.0 / (2.0 + 1.0);
    let got = requests.len() as f64;
    assert!(
        (got / expected - 1.0).abs() < 0.03,
        "{got} requests, expected about {expected}"
    );
    // One outstanding: each request starts after the previous one's release.
    assert!(
        requests
            .windows(2)
            .all(|w| w[1].requested >= w[0].exited.unwrap())
    );
    let mean_cs = requests
        .iter()
        .filter_map(|r| Some((r.exited?.since(r.entered?)).as_secs_f64()))
        .sum::<f64>()
        / got;
    assert!((mean_cs - 1.0).abs() < 0.05, "mean CS time {mean_cs}");
}

#[test]
fn same_seed_same_run() {
    let tl = timeline(
        3,
        50.0,
        &[(0, 1)],
        &[(1.0, 1, 2, LinkChange::Up), (2.0, 0, 1, LinkChange::Down)],
    );
    let mut cfg = config("exp:1ms:5ms", LinkBreak::Drain, ChangeMode::Overlap);
    cfg.workload = Some(WorkloadConfig {
        rate: 1.0,
        cs_time: CsTime::Constant(Duration(1_000_000)),
    });
    let run = || {
        let mut sim = Simulation::<Toy>::new(&tl, cfg.clone());
        sim.run(&mut ());
        (sim.counters().clone(), sim.requests().to_vec())
    };
    assert_eq!(run(), run());
}

#[test]
fn timers_fire_after_their_delay() {
    let tl = timeline(
        3,
        10.0,
        &[],
        &[(1.0, 0, 1, LinkChange::Up), (2.5, 1, 2, LinkChange::Up)],
    );
    let mut sim = Simulation::<Toy>::new(
        &tl,
        config("const:1ms", LinkBreak::Drain, ChangeMode::Overlap),
    );
    sim.run(&mut ());
    assert_eq!(sim.nodes()[0].timers, vec![(1, 1_007_000_000)]);
    assert_eq!(
        sim.nodes()[1].timers,
        vec![(0, 1_007_000_000), (2, 2_507_000_000)]
    );
    assert_eq!(sim.nodes()[2].timers, vec![(1, 2_507_000_000)]);
}

/// A protocol whose every message triggers two more: the run must stop with an
/// explanation instead of filling memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Storm;

impl Protocol for Storm {
    type Msg = Numbered;
    type Config = ();
    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        vec![Storm; neighbours.len()]
    }
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Numbered>) {
        ctx.send(
            peer,
            Numbered {
                seq: 0,
                token: false,
            },
        );
    }
    fn on_link_down(&mut self, _: NodeId, _: &mut Ctx<Numbered>) {}
    fn on_message(&mut self, from: NodeId, msg: Numbered, ctx: &mut Ctx<Numbered>) {
        for _ in 0..2 {
            ctx.send(from, msg.clone());
        }
    }
}

#[test]
fn a_message_storm_aborts_the_run_with_a_reason() {
    let tl = timeline(2, 100.0, &[], &[(1.0, 0, 1, LinkChange::Up)]);
    let mut sim = Simulation::<Storm>::new(
        &tl,
        config("uniform:1ms:2ms", LinkBreak::Drain, ChangeMode::Overlap),
    );
    sim.run(&mut ());
    let why = sim.counters().aborted.clone().expect("aborted");
    assert!(why.contains("message storm"), "{why}");
    assert!(linkrev::sim::engine::is_storm(&why), "{why}");
    assert!(sim.in_flight() > linkrev::sim::engine::MAX_IN_FLIGHT);
}

/// The same storm under an event budget it reaches first is stopped by the budget,
/// and its reason does not read as a storm: the report counts it in `cut_short`, not
/// in `stormed`.
#[test]
fn a_run_stopped_by_its_event_budget_is_not_called_a_storm() {
    let tl = timeline(2, 100.0, &[], &[(1.0, 0, 1, LinkChange::Up)]);
    let mut config = config("uniform:1ms:2ms", LinkBreak::Drain, ChangeMode::Overlap);
    config.max_events = Some(50);
    let mut sim = Simulation::<Storm>::new(&tl, config);
    sim.run(&mut ());
    let why = sim.counters().aborted.clone().expect("aborted");
    assert!(why.contains("event budget of 50 events"), "{why}");
    assert!(!linkrev::sim::engine::is_storm(&why), "{why}");
}
