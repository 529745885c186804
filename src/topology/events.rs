//! Exact link up/down events of the unit-disk graph defined by a trace.
//!
//! # The link rule
//!
//! Nodes `a` and `b` are linked at time `t` iff `|p_a(t) − p_b(t)| < range`, setdest's rule
//! (ns-2.35 hard-codes 250 m and a strict `<`). Between two leg boundaries both nodes move
//! linearly, so the squared distance minus `range²` is a quadratic in `t`; the pair is
//! linked exactly where that quadratic is negative. We solve it in closed form per pair
//! per overlapping pair of legs, so events are exact up to floating-point rounding, not
//! sampled.
//!
//! Because the linked set `{t : d(t) < range}` is open, every link interval has positive
//! length, and the state reported for an instant `t` is the state just after `t` (right
//! limit). Consequences, written down because each is a real edge case:
//!
//! - Tangential contact from outside (distance touches `range` and recedes) is no event.
//! - Tangential contact from inside (distance rises to exactly `range` and falls back) is
//!   no event either: the link is down only at one instant, which has no duration.
//! - A pause at exactly distance `range` is "not linked" (the rule is strict).
//! - Coincident nodes (distance 0) are linked; identical velocities give a constant
//!   distance, decided once for the whole segment.
//! - Floating-point rounding can split one physical contact into two intervals separated
//!   by a sliver at a leg boundary (the two legs' positions at their shared time differ by
//!   ~1e-12 m). Intervals separated by at most [`MERGE_GAP`] seconds are therefore merged,
//!   and intervals no longer than [`MERGE_GAP`] are dropped. No physical contact lasts a
//!   nanosecond, and the simulator's clock resolution is one nanosecond anyway.
//! - A pair linked just after `t = 0` is an initial link, not an `Up` event; an interval
//!   still open at the end of the trace has no `Down` event. So "link changes" counts flips
//!   after `t = 0`, which is what setdest's footer counts.
//! - The end of a trace is only known to the precision it was printed with: setdest's files
//!   end at their last event, which is often the very link change that the footer counts,
//!   and the replayed root can land 1e-13 s after the printed time. So the last legs are
//!   extended by [`MERGE_GAP`], and a link that comes up or goes down within that tail is
//!   reported at `duration`.
//!
//! Events are sorted by time, then by the pair `(a, b)` with `a < b`; a pair's events
//! strictly alternate Up, Down, Up, …, starting with Up iff the pair is not an initial link.
//!
//! # Cost
//!
//! Time is cut into windows short enough that no node moves further than `range` in one.
//! Per window, each node's bounding box is computed from its legs, and a sort-and-sweep
//! over the boxes (grown by `range`) yields the candidate pairs; only those are solved.
//! Cost grows with legs × local neighbours instead of n² × legs.

use crate::mobility::{Leg, NodeId, Trace};
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Link intervals separated by a gap of at most this many seconds are one interval, and
/// intervals no longer than this are dropped (see the module docs).
pub const MERGE_GAP: f64 = 1e-9;

/// Whether a link appeared or disappeared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkChange {
    /// The pair came within range.
    Up,
    /// The pair went out of range.
    Down,
}

/// A link between `a` and `b` (`a < b`) came up or went down at `time` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkEvent {
    /// When the link changed, seconds from the start of the trace.
    pub time: f64,
    /// Lower-numbered endpoint.
    pub a: NodeId,
    /// Higher-numbered endpoint.
    pub b: NodeId,
    /// Whether the link came up or went down.
    pub change: LinkChange,
}

/// A maximal time interval `(start, end)` during which `a` and `b` (`a < b`) are linked.
/// `start == 0` means linked from the beginning, `end == duration` means still linked at
/// the end of the trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkInterval {
    /// Lower-numbered endpoint.
    pub a: NodeId,
    /// Higher-numbered endpoint.
    pub b: NodeId,
    /// When the link came up, seconds (0: linked from the start).
    pub start: f64,
    /// When the link went down, seconds (`duration`: still up at the end).
    pub end: f64,
}

impl LinkInterval {
    /// How long the link lasted, seconds.
    pub fn length(&self) -> f64 {
        self.end - self.start
    }
}

/// Every link of a trace over its whole duration, as intervals and as events.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkTimeline {
    /// Radio range, metres: nodes are linked while closer than this.
    pub range: f64,
    /// Length of the trace, seconds.
    pub duration: f64,
    /// Number of nodes in the trace.
    pub node_count: usize,
    /// Sorted by `(a, b, start)`.
    pub intervals: Vec<LinkInterval>,
    /// Sorted by `(time, a, b)`.
    pub events: Vec<LinkEvent>,
}

impl LinkTimeline {
    /// Pairs linked at `t = 0` (just after it), sorted.
    pub fn initial_links(&self) -> Vec<(NodeId, NodeId)> {
        self.intervals
            .iter()
            .filter(|iv| iv.start == 0.0)
            .map(|iv| (iv.a, iv.b))
            .collect()
    }

    /// Neighbour set of every node at `t = 0`, each sorted.
    pub fn initial_neighbours(&self) -> Vec<Vec<NodeId>> {
        let mut neighbours = vec![Vec::new(); self.node_count];
        for (a, b) in self.initial_links() {
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
        for list in &mut neighbours {
            list.sort_unstable();
        }
        neighbours
    }

    /// Number of link changes (ups plus downs) after `t = 0`.
    pub fn link_changes(&self) -> usize {
        self.events.len()
    }
}

/// Computes the exact link timeline of `trace` for radio range `range` metres.
///
/// # Panics
/// If `range` is not positive and finite (callers validate user input first).
pub fn link_timeline(trace: &Trace, range: f64) -> LinkTimeline {
    try_link_timeline(trace, range, usize::MAX).expect("no limit on link intervals")
}

/// Link intervals a timeline may hold before [`try_link_timeline`] gives up: about
/// 1.5 GB of intervals and the maps that stitch them. The shipped studies and `bench
/// scale` (1,600 nodes, 300 s) stay far below; 20,000 nodes packed within range of each
/// other have 200 million links at once.
pub const MAX_LINK_INTERVALS: usize = 20_000_000;

/// [`MAX_LINK_INTERVALS`], or the environment variable `LINKREV_MAX_LINKS` (1 to
/// 4,000,000,000) where a machine has the memory for more.
pub fn link_limit() -> Result<usize, crate::input::InputError> {
    match std::env::var("LINKREV_MAX_LINKS") {
        Err(_) => Ok(MAX_LINK_INTERVALS),
        Ok(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| (1..=4_000_000_000).contains(&n))
            .ok_or_else(|| {
                crate::input::InputError::parameter(
                    "LINKREV_MAX_LINKS",
                    format!("expected a number of links from 1 to 4000000000, got `{text}`"),
                )
            }),
    }
}

/// A trace too dense to hold in memory: more link intervals than the limit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{nodes} nodes at range {range} m have more than {limit} link intervals by t = \
     {at:.3} s (about {bytes_per} bytes each): too dense to simulate in memory; use a \
     smaller range or fewer nodes, or raise the limit with LINKREV_MAX_LINKS"
)]
pub struct TooManyLinks {
    /// Nodes of the trace.
    pub nodes: usize,
    /// The radio range, m.
    pub range: f64,
    /// The limit that was reached.
    pub limit: usize,
    /// Simulated time the solver had reached, s.
    pub at: f64,
    /// Approximate memory per interval.
    pub bytes_per: usize,
}

/// [`link_timeline`], stopping with [`TooManyLinks`] once more than `limit` link
/// intervals are held (the trace would exhaust memory long before finishing).
pub fn try_link_timeline(
    trace: &Trace,
    range: f64,
    limit: usize,
) -> Result<LinkTimeline, TooManyLinks> {
    assert!(
        range.is_finite() && range > 0.0,
        "range must be positive, got {range}"
    );
    let mut intervals = solve_intervals(trace, range, limit).map_err(|at| TooManyLinks {
        nodes: trace.node_count(),
        range,
        limit,
        at,
        bytes_per: 64,
    })?;
    if let Some(presence) = &trace.presence {
        intervals = within_presence(intervals, presence, trace.duration);
    }
    let events = events_from_intervals(&intervals, trace.duration);
    for iv in &mut intervals {
        iv.start = iv.start.min(trace.duration);
        iv.end = iv.end.min(trace.duration);
    }
    Ok(LinkTimeline {
        range,
        duration: trace.duration,
        node_count: trace.node_count(),
        intervals,
        events,
    })
}

/// Cuts each link interval to the time both ends are present (see
/// [`crate::mobility::activity`]). An interval reaching the end of the trace stays
/// unclamped when both ends are present to the end; what becomes a sliver is dropped by
/// the rule of [`MERGE_GAP`].
fn within_presence(
    intervals: Vec<LinkInterval>,
    presence: &[(f64, f64)],
    duration: f64,
) -> Vec<LinkInterval> {
    intervals
        .into_iter()
        .filter_map(|iv| {
            let (pa, pb) = (presence[iv.a as usize], presence[iv.b as usize]);
            let from = pa.0.max(pb.0);
            let until = pa.1.min(pb.1);
            let start = iv.start.max(from);
            let end = if until >= duration {
                iv.end
            } else {
                iv.end.min(until)
            };
            let kept = LinkInterval { start, end, ..iv };
            (start == 0.0 || kept.length() > MERGE_GAP || kept.end >= duration).then_some(kept)
        })
        .collect()
}

/// Window length: a node moves at most `2 · range` within one window. Shorter windows give
/// tighter boxes (fewer candidate pairs) but split every pair's legs at more window
/// boundaries; measured on 100 nodes in 1500×300 m, factors 1 to 8 cost the same within
/// noise and 0.5 cost twice as much.
///
/// The number of windows is bounded by the size of the input ([`max_windows`]): with the
/// window set by the fastest leg alone, one outlier (a leg at 1e9 m/s, a BonnMotion leg a
/// nanosecond long, a time written in nanoseconds that stretches the trace to 1e12 s)
/// would cut the trace into billions of windows and never finish. Longer windows only
/// make the boxes of the nodes that move far within one larger, so the events are the
/// same; the bound never binds on the traces setdest, BonnMotion or our generator write.
fn window_length(trace: &Trace, range: f64) -> f64 {
    let vmax = trace.max_speed();
    let uniform = if vmax > 0.0 {
        (2.0 * range / vmax).min(trace.duration)
    } else {
        trace.duration
    };
    uniform.max(trace.duration / max_windows(trace))
}

/// At most this many windows: 16 per leg of the average node, plus 1,024. A random
/// waypoint node crosses about `range` per window at its top speed, and a leg spans a
/// few windows at most, so ordinary traces stay far below it; each window costs a sort of
/// the `n` boxes, so the bound keeps that part of the cost within O(legs · log n).
fn max_windows(trace: &Trace) -> f64 {
    let legs: usize = trace.nodes.iter().map(|t| t.legs().len()).sum();
    16.0 * legs as f64 / trace.node_count().max(1) as f64 + 1024.0
}

/// Axis-aligned box of a node's positions during a window, and its legs there.
#[derive(Clone)]
struct NodeBox {
    node: NodeId,
    legs: Range<usize>,
    min_x: f64,
    max_x: f64,
    min_y: f64,
    max_y: f64,
}

/// Solves every candidate pair window by window and stitches the pieces into maximal
/// intervals (unclamped: ends may reach into the end-of-trace tail), sorted by
/// `(a, b, start)`.
/// The link intervals of `trace`; `Err(t)` once more than `limit` are held, `t` the
/// start of the window being solved.
fn solve_intervals(trace: &Trace, range: f64, limit: usize) -> Result<Vec<LinkInterval>, f64> {
    let n = trace.node_count();
    let duration = trace.duration;
    let horizon = duration + MERGE_GAP;
    let window = window_length(trace, range);
    let range_sq = range * range;
    let mut stitcher = Stitcher::new(horizon);
    let mut pieces = Vec::new();
    // First leg of each node that may overlap the current window; only moves forward.
    let mut cursor = vec![0usize; n];
    let mut boxes: Vec<NodeBox> = Vec::with_capacity(n);
    let mut active: Vec<NodeBox> = Vec::new();
    let mut k = 0u64;
    loop {
        // Window bounds computed from the index, so no drift accumulates over many windows.
        let from = k as f64 * window;
        if from >= duration {
            break;
        }
        let mut to = ((k + 1) as f64 * window).min(duration);
        if to == duration {
            to = horizon;
        }
        k += 1;
        let span = Window { from, to, duration };
        boxes.clear();
        for (node, trajectory) in trace.nodes.iter().enumerate() {
            let legs = trajectory.legs();
            while cursor[node] + 1 < legs.len() && legs[cursor[node]].end <= from {
                cursor[node] += 1;
            }
            let first = cursor[node];
            let count = legs[first..].partition_point(|leg| leg.start < to).max(1);
            boxes.push(window_box(node as NodeId, first..first + count, legs, span));
        }
        boxes.sort_unstable_by(|p, q| p.min_x.total_cmp(&q.min_x).then(p.node.cmp(&q.node)));
        active.clear();
        for current in &boxes {
            active.retain(|other| other.max_x + range >= current.min_x);
            for other in &active {
                if other.min_y - range > current.max_y || current.min_y - range > other.max_y {
                    continue;
                }
                let (lo, hi) = if other.node < current.node {
                    (other, current)
                } else {
                    (current, other)
                };
                let legs_a = &trace.nodes[lo.node as usize].legs()[lo.legs.clone()];
                let legs_b = &trace.nodes[hi.node as usize].legs()[hi.legs.clone()];
                pieces.clear();
                pair_intervals(
                    lo.node,
                    hi.node,
                    legs_a,
                    legs_b,
                    span,
                    range_sq,
                    &mut pieces,
                );
                stitcher.add_pair(&pieces, span);
            }
            if stitcher.held() > limit {
                return Err(from);
            }
            active.push(current.clone());
        }
        stitcher.end_window();
    }
    Ok(stitcher.finish())
}

/// Joins each pair's pieces, within a window and across window boundaries, into maximal
/// intervals, so no global sort of the (many) pieces is needed.
struct Stitcher {
    horizon: f64,
    /// Intervals that reached the end of the previous window, by pair.
    carried: FxHashMap<(NodeId, NodeId), LinkInterval>,
    /// Intervals reaching the end of the current window.
    next: FxHashMap<(NodeId, NodeId), LinkInterval>,
    done: Vec<LinkInterval>,
}

impl Stitcher {
    fn new(horizon: f64) -> Self {
        Self {
            horizon,
            carried: FxHashMap::default(),
            next: FxHashMap::default(),
            done: Vec::new(),
        }
    }

    /// Keeps a finished interval unless it is a sliver (see [`MERGE_GAP`]); an interval
    /// open from the start or still open at the horizon is never a sliver.
    fn close(&mut self, iv: LinkInterval) {
        if iv.start == 0.0 || iv.length() > MERGE_GAP || iv.end >= self.horizon {
            self.done.push(iv);
        }
    }

    /// Takes one pair's time-ordered pieces within `span`.
    fn add_pair(&mut self, pieces: &[LinkInterval], span: Window) {
        let mut current: Option<LinkInterval> = None;
        for &piece in pieces {
            current = Some(match current {
                None if piece.start - span.from <= MERGE_GAP => {
                    match self.carried.remove(&(piece.a, piece.b)) {
                        Some(prev) => LinkInterval {
                            start: prev.start,
                            ..piece
                        },
                        None => piece,
                    }
                }
                None => piece,
                Some(cur) if piece.start - cur.end <= MERGE_GAP => LinkInterval {
                    end: cur.end.max(piece.end),
                    ..cur
                },
                Some(cur) => {
                    self.close(cur);
                    piece
                }
            });
        }
        if let Some(cur) = current {
            if span.to - cur.end <= MERGE_GAP {
                self.next.insert((cur.a, cur.b), cur);
            } else {
                self.close(cur);
            }
        }
    }

    /// Intervals held: finished, and open in either map.
    fn held(&self) -> usize {
        self.done.len() + self.carried.len() + self.next.len()
    }

    /// Closes the intervals that did not continue into this window.
    fn end_window(&mut self) {
        let ended: Vec<_> = self.carried.drain().map(|(_, iv)| iv).collect();
        for iv in ended {
            self.close(iv);
        }
        std::mem::swap(&mut self.carried, &mut self.next);
    }

    fn finish(mut self) -> Vec<LinkInterval> {
        self.end_window();
        self.end_window();
        // Times are non-negative, and non-negative floats order like their bit patterns.
        self.done
            .sort_unstable_by_key(|iv| (iv.a, iv.b, iv.start.to_bits()));
        self.done
    }
}

fn window_box(node: NodeId, legs: Range<usize>, all: &[Leg], span: Window) -> NodeBox {
    let mut b = NodeBox {
        node,
        legs: legs.clone(),
        min_x: f64::INFINITY,
        max_x: f64::NEG_INFINITY,
        min_y: f64::INFINITY,
        max_y: f64::NEG_INFINITY,
    };
    for leg in &all[legs] {
        for t in [leg.start.max(span.from), span.leg_end(leg).min(span.to)] {
            let p = leg.position_at(t);
            b.min_x = b.min_x.min(p.x);
            b.max_x = b.max_x.max(p.x);
            b.min_y = b.min_y.min(p.y);
            b.max_y = b.max_y.max(p.y);
        }
    }
    b
}

/// The time span one pair is solved over. The last leg of every node ends at `duration`
/// and is extrapolated up to `to` when the window reaches past it (the end-of-trace tail).
#[derive(Clone, Copy)]
struct Window {
    from: f64,
    to: f64,
    duration: f64,
}

impl Window {
    /// End of `leg` for solving: a trajectory's last leg runs on into the tail.
    #[inline]
    fn leg_end(&self, leg: &Leg) -> f64 {
        if leg.end >= self.duration {
            f64::INFINITY
        } else {
            leg.end
        }
    }
}

/// Appends the intervals within the window where nodes `a` and `b` are closer than
/// `sqrt(range_sq)`, one piece per pair of overlapping legs.
fn pair_intervals(
    a: NodeId,
    b: NodeId,
    legs_a: &[Leg],
    legs_b: &[Leg],
    window: Window,
    range_sq: f64,
    out: &mut Vec<LinkInterval>,
) {
    let (mut i, mut j) = (0, 0);
    while i < legs_a.len() && j < legs_b.len() {
        let (la, lb) = (&legs_a[i], &legs_b[j]);
        let start = window.from.max(la.start).max(lb.start);
        let end = window.to.min(window.leg_end(la)).min(window.leg_end(lb));
        if end > start
            && let Some((lo, hi)) = below_range(la, lb, start, end, range_sq)
        {
            out.push(LinkInterval {
                a,
                b,
                start: lo,
                end: hi,
            });
        }
        // Advance whichever leg finishes first (both when they end together).
        if la.end <= lb.end {
            i += 1;
        }
        if lb.end <= la.end {
            j += 1;
        }
    }
}

/// The sub-interval of `[start, end]` where the distance between the two legs' positions
/// is below the range: `q(s) = A s² + B s + C < 0` with `s = t − start`.
#[inline]
fn below_range(la: &Leg, lb: &Leg, start: f64, end: f64, range_sq: f64) -> Option<(f64, f64)> {
    let pa = la.position_at(start);
    let pb = lb.position_at(start);
    let (dx, dy) = (pa.x - pb.x, pa.y - pb.y);
    let (dvx, dvy) = (la.velocity.x - lb.velocity.x, la.velocity.y - lb.velocity.y);
    let qa = dvx * dvx + dvy * dvy;
    let qb = 2.0 * (dx * dvx + dy * dvy);
    let qc = dx * dx + dy * dy - range_sq;
    let span = end - start;
    if qa == 0.0 {
        // Same velocity: the distance is constant over the segment.
        return (qc < 0.0).then_some((start, end));
    }
    // Most segments lie wholly inside or wholly outside the range; settle those from the
    // endpoint values without a square root. q is convex (qa > 0), so inside at both ends
    // means inside throughout.
    let q_end = (qa * span + qb) * span + qc;
    let inside_at_start = qc < 0.0;
    let inside_at_end = q_end < 0.0;
    if inside_at_start && inside_at_end {
        return Some((start, end));
    }
    let disc = qb * qb - 4.0 * qa * qc;
    if disc <= 0.0 {
        // Never strictly inside (a double root is a tangential contact: no interval).
        return None;
    }
    if !inside_at_start && !inside_at_end {
        // Outside at both ends: inside somewhere only if the vertex -qb/(2qa) lies strictly
        // within the segment (the discriminant already says its value is negative).
        let vertex_inside = qb < 0.0 && -qb < 2.0 * qa * span;
        if !vertex_inside {
            return None;
        }
    }
    // Numerically stable roots: avoid subtracting nearly equal numbers.
    let root = disc.sqrt();
    let half = -0.5 * (qb + root.copysign(qb));
    let (r1, r2) = {
        let (x, y) = (half / qa, qc / half);
        if x < y { (x, y) } else { (y, x) }
    };
    let lo = r1.max(0.0);
    let hi = r2.min(span);
    (hi > lo).then_some((start + lo, if r2 >= span { end } else { start + hi }))
}

/// Events of the merged intervals, whose ends may reach into the end-of-trace tail.
fn events_from_intervals(intervals: &[LinkInterval], duration: f64) -> Vec<LinkEvent> {
    let horizon = duration + MERGE_GAP;
    let mut events = Vec::with_capacity(intervals.len() * 2);
    for iv in intervals {
        if iv.start > 0.0 {
            events.push(LinkEvent {
                time: iv.start.min(duration),
                a: iv.a,
                b: iv.b,
                change: LinkChange::Up,
            });
        }
        if iv.end < horizon {
            events.push(LinkEvent {
                time: iv.end.min(duration),
                a: iv.a,
                b: iv.b,
                change: LinkChange::Down,
            });
        }
    }
    // Times are non-negative, and non-negative floats order like their bit patterns.
    events.sort_unstable_by_key(|e| (e.time.to_bits(), e.a, e.b));
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mobility::{Area, Point, Trajectory};

    fn leg(start: f64, end: f64, origin: (f64, f64), velocity: (f64, f64)) -> Leg {
        Leg {
            start,
            end,
            origin: Point::new(origin.0, origin.1),
            velocity: Point::new(velocity.0, velocity.1),
        }
    }

    fn trace(nodes: Vec<Vec<Leg>>, duration: f64) -> Trace {
        Trace::from_legs(
            Area {
                width: 1000.0,
                height: 1000.0,
            },
            duration,
            nodes,
        )
        .unwrap()
    }

    #[test]
    fn head_on_pass_gives_up_then_down_at_exact_times() {
        // Node 1 moves along x at 10 m/s from x=0; node 0 sits at x=500. Range 100:
        // linked for x in (400, 600), i.e. t in (40, 60).
        let t = trace(
            vec![
                vec![leg(0.0, 100.0, (500.0, 0.0), (0.0, 0.0))],
                vec![leg(0.0, 100.0, (0.0, 0.0), (10.0, 0.0))],
            ],
            100.0,
        );
        let tl = link_timeline(&t, 100.0);
        assert_eq!(tl.events.len(), 2);
        assert!((tl.events[0].time - 40.0).abs() < 1e-12 && tl.events[0].change == LinkChange::Up);
        assert!(
            (tl.events[1].time - 60.0).abs() < 1e-12 && tl.events[1].change == LinkChange::Down
        );
    }

    #[test]
    fn tangential_and_exact_range_contacts_are_not_links() {
        // Node 1 passes node 0 at a closest distance of exactly 100 (tangent from outside).
        let tangent = trace(
            vec![
                vec![leg(0.0, 100.0, (500.0, 100.0), (0.0, 0.0))],
                vec![leg(0.0, 100.0, (0.0, 0.0), (10.0, 0.0))],
            ],
            100.0,
        );
        assert!(link_timeline(&tangent, 100.0).intervals.is_empty());
        // Both paused exactly 100 apart.
        let paused = trace(
            vec![
                vec![leg(0.0, 10.0, (0.0, 0.0), (0.0, 0.0))],
                vec![leg(0.0, 10.0, (100.0, 0.0), (0.0, 0.0))],
            ],
            10.0,
        );
        assert!(link_timeline(&paused, 100.0).intervals.is_empty());
    }

    #[test]
    fn touching_range_from_inside_is_one_interval() {
        // Node 1 moves out to exactly distance 100 by t=10, pauses there, comes back:
        // d < 100 on [0,10) and (20,30], = 100 on [10,20]. So: linked, down at 10, up at 20.
        let n1 = vec![
            leg(0.0, 10.0, (50.0, 0.0), (5.0, 0.0)),
            leg(10.0, 20.0, (100.0, 0.0), (0.0, 0.0)),
            leg(20.0, 30.0, (100.0, 0.0), (-5.0, 0.0)),
        ];
        let t = trace(vec![vec![leg(0.0, 30.0, (0.0, 0.0), (0.0, 0.0))], n1], 30.0);
        let tl = link_timeline(&t, 100.0);
        let kinds: Vec<_> = tl.events.iter().map(|e| (e.time, e.change)).collect();
        assert_eq!(
            kinds,
            vec![(10.0, LinkChange::Down), (20.0, LinkChange::Up)]
        );
        assert_eq!(tl.initial_links(), vec![(0, 1)]);

        // Without the pause, the distance touches 100 at a single instant: no event at all.
        let n1 = vec![
            leg(0.0, 10.0, (50.0, 0.0), (5.0, 0.0)),
            leg(10.0, 20.0, (100.0, 0.0), (-5.0, 0.0)),
        ];
        let t = trace(vec![vec![leg(0.0, 20.0, (0.0, 0.0), (0.0, 0.0))], n1], 20.0);
        let tl = link_timeline(&t, 100.0);
        assert!(tl.events.is_empty(), "{:?}", tl.events);
        assert_eq!(tl.intervals.len(), 1);
    }

    #[test]
    fn changes_at_the_last_instant_are_reported_at_the_end() {
        // Node 1 approaches node 0 at 10 m/s and reaches distance 100 exactly at t = 40,
        // the end of the trace: setdest would print that link change at the final time.
        let approach = trace(
            vec![
                vec![leg(0.0, 40.0, (500.0, 0.0), (0.0, 0.0))],
                vec![leg(0.0, 40.0, (0.0, 0.0), (10.0, 0.0))],
            ],
            40.0,
        );
        let tl = link_timeline(&approach, 100.0);
        assert_eq!(tl.events.len(), 1, "{:?}", tl.events);
        assert_eq!(
            (tl.events[0].time, tl.events[0].change),
            (40.0, LinkChange::Up)
        );
        // Receding: the link goes down exactly at the end.
        let recede = trace(
            vec![
                vec![leg(0.0, 6.0, (0.0, 0.0), (0.0, 0.0))],
                vec![leg(0.0, 6.0, (40.0, 0.0), (10.0, 0.0))],
            ],
            6.0,
        );
        let tl = link_timeline(&recede, 100.0);
        assert_eq!(tl.events.len(), 1, "{:?}", tl.events);
        assert_eq!(
            (tl.events[0].time, tl.events[0].change),
            (6.0, LinkChange::Down)
        );
        assert_eq!(tl.intervals[0].end, 6.0);
    }

    #[test]
    fn coincident_nodes_are_linked() {
        let same = vec![leg(0.0, 10.0, (3.0, 4.0), (1.0, 1.0))];
        let t = trace(vec![same.clone(), same], 10.0);
        let tl = link_timeline(&t, 1.0);
        assert_eq!(tl.initial_links(), vec![(0, 1)]);
        assert!(tl.events.is_empty());
    }

    #[test]
    fn an_outlier_leg_neither_multiplies_the_windows_nor_loses_its_contact() {
        // Node 1 crosses node 0's range at 1e9 m/s (0.2 µs in range); node 2 drifts at
        // 1 m/s; the trace lasts 1e12 s (a time written in nanoseconds). With windows
        // set by the fastest leg this was 1e16 windows; now it is bounded by the legs.
        let t = trace(
            vec![
                vec![leg(0.0, 1e12, (500.0, 0.0), (0.0, 0.0))],
                vec![
                    leg(0.0, 1.0, (0.0, 0.0), (0.0, 0.0)),
                    leg(1.0, 1.0 + 1e-6, (0.0, 0.0), (1e9, 0.0)),
                    leg(1.0 + 1e-6, 1e12, (1000.0, 0.0), (0.0, 0.0)),
                ],
                vec![
                    leg(0.0, 300.0, (500.0, 900.0), (0.0, -1.0)),
                    leg(300.0, 1e12, (500.0, 600.0), (0.0, 0.0)),
                ],
            ],
            1e12,
        );
        assert!(t.duration / window_length(&t, 100.0) <= max_windows(&t));
        let tl = link_timeline(&t, 100.0);
        let got: Vec<_> = tl.events.iter().map(|e| (e.a, e.b, e.change)).collect();
        assert_eq!(
            got,
            vec![(0, 1, LinkChange::Up), (0, 1, LinkChange::Down)],
            "{:?}",
            tl.events
        );
        assert!((tl.events[0].time - (1.0 + 4e-7)).abs() < 1e-12);
        assert!((tl.events[1].time - (1.0 + 6e-7)).abs() < 1e-12);
    }

    #[test]
    fn static_trace_uses_one_window() {
        let nodes: Vec<_> = (0..5)
            .map(|i| Trajectory::stationary(Point::new(i as f64 * 60.0, 0.0), 50.0))
            .collect();
        let t = Trace::new(
            Area {
                width: 300.0,
                height: 1.0,
            },
            50.0,
            nodes,
        )
        .unwrap();
        let tl = link_timeline(&t, 100.0);
        assert_eq!(tl.initial_links(), vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(tl.initial_neighbours()[2], vec![1, 3]);
    }
}
