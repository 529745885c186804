//! The trace model: every node's trajectory as contiguous piecewise-linear legs.
//!
//! Everything downstream (link events, statistics, the simulator) reads positions from
//! here, so the model is deliberately small and exact: a leg stores where it starts and
//! its velocity, and a position is `origin + velocity · (t − start)`. There is no
//! sampling anywhere, which is what lets link events be solved in closed form.
//!
//! Times are seconds as `f64` (trace files carry decimal seconds); the simulator converts
//! to integer nanoseconds at its own boundary.

use std::fmt;

/// The latest time a trace file may give, seconds (about 32 years). Mobility studies
/// span hours; a later time is a unit mistake (milliseconds or nanoseconds written as
/// seconds), and accepting it would make a run simulate for ages instead of failing.
pub const MAX_TRACE_TIME: f64 = crate::input::MAX_SECONDS;

pub use crate::MAX_NODES;

/// Why `t` (seconds) cannot be a trace time, if it is beyond [`MAX_TRACE_TIME`]: the
/// message the trace readers attach to the line and field that hold it.
pub fn time_beyond_limit(t: f64) -> Option<String> {
    (t > MAX_TRACE_TIME).then(|| {
        format!(
            "{t} s is later than the limit of {MAX_TRACE_TIME:.0e} s (about 32 years): trace \
             times are seconds; is this one in milliseconds or nanoseconds?"
        )
    })
}

/// A point (or displacement) in the plane, metres.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// Horizontal component: metres for a position, m/s for a velocity.
    pub x: f64,
    /// Vertical component: metres for a position, m/s for a velocity.
    pub y: f64,
}

impl Point {
    /// The point (or vector) `(x, y)`.
    pub const fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }

    /// Euclidean distance to `other`, metres.
    pub fn distance(self, other: Point) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }

    /// Euclidean length of the vector (the speed, m/s, when it is a velocity).
    pub fn norm(self) -> f64 {
        self.x.hypot(self.y)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub use crate::NodeId;

/// The simulation area `[0, width] × [0, height]`, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Extent along x, metres.
    pub width: f64,
    /// Extent along y, metres.
    pub height: f64,
}

impl Area {
    /// Whether `p` lies inside the area, allowing `slack` metres for printed rounding.
    pub fn contains(&self, p: Point, slack: f64) -> bool {
        p.x >= -slack && p.y >= -slack && p.x <= self.width + slack && p.y <= self.height + slack
    }
}

/// One straight, constant-velocity piece of a trajectory, valid on `[start, end]`.
/// A pause is a leg with zero velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    /// Time the leg begins, seconds.
    pub start: f64,
    /// Time the leg ends, seconds (`end > start`).
    pub end: f64,
    /// Position at `start`.
    pub origin: Point,
    /// Velocity, metres per second.
    pub velocity: Point,
}

impl Leg {
    /// Position at time `t`; `t` is not clamped to the leg so callers can extrapolate.
    #[inline]
    pub fn position_at(&self, t: f64) -> Point {
        let dt = t - self.start;
        Point::new(
            self.origin.x + self.velocity.x * dt,
            self.origin.y + self.velocity.y * dt,
        )
    }

    /// Position at the leg's `end` time.
    pub fn end_position(&self) -> Point {
        self.position_at(self.end)
    }

    /// Speed along the leg, metres per second (0 for a pause).
    pub fn speed(&self) -> f64 {
        self.velocity.norm()
    }

    /// Length of the leg in seconds (`end - start`, always positive).
    pub fn duration(&self) -> f64 {
        self.end - self.start
    }

    /// Whether the node stands still on this leg (velocity exactly zero).
    pub fn is_pause(&self) -> bool {
        self.velocity.x == 0.0 && self.velocity.y == 0.0
    }
}

/// A node's whole trajectory: legs that tile `[0, duration]` without gaps.
///
/// The invariant (first leg starts at 0, each leg starts where and when the previous one
/// ended, last leg ends at the trace duration) is established by [`Trajectory::new`] and
/// never broken afterwards, so `position` can binary-search without checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    legs: Vec<Leg>,
}

/// Why a list of legs is not a valid trajectory.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrajectoryError {
    /// No legs at all.
    #[error("a trajectory needs at least one leg")]
    Empty,
    /// The first leg starts at this time (seconds) instead of 0.
    #[error("the first leg starts at {0} s, not at 0")]
    NotFromZero(f64),
    /// A leg does not start when the previous one ends.
    #[error("leg {index} starts at {start} s but the previous leg ends at {prev_end} s")]
    Gap {
        /// Position of the leg in the list.
        index: usize,
        /// Its start time, seconds.
        start: f64,
        /// End time of the previous leg, seconds.
        prev_end: f64,
    },
    /// A leg that does not end after it starts.
    #[error("leg {index} has non-positive length [{start}, {end}] s")]
    ZeroLength {
        /// Position of the leg in the list.
        index: usize,
        /// Its start time, seconds.
        start: f64,
        /// Its end time, seconds (not after `start`).
        end: f64,
    },
    /// A leg's time, position or velocity is NaN or infinite.
    #[error("leg {index} has a non-finite value")]
    NotFinite {
        /// Position of the leg in the list.
        index: usize,
    },
}

impl Trajectory {
    /// Builds a trajectory, checking the tiling invariant exactly.
    pub fn new(legs: Vec<Leg>) -> Result<Self, TrajectoryError> {
        let first = legs.first().ok_or(TrajectoryError::Empty)?;
        if first.start != 0.0 {
            return Err(TrajectoryError::NotFromZero(first.start));
        }
        for (index, leg) in legs.iter().enumerate() {
            let finite = [
                leg.start,
                leg.end,
                leg.origin.x,
                leg.origin.y,
                leg.velocity.x,
                leg.velocity.y,
            ]
            .iter()
            .all(|v| v.is_finite());
            if !finite {
                return Err(TrajectoryError::NotFinite { index });
            }
            if leg.end <= leg.start {
                return Err(TrajectoryError::ZeroLength {
                    index,
                    start: leg.start,
                    end: leg.end,
                });
            }
            if index > 0 && legs[index - 1].end != leg.start {
                return Err(TrajectoryError::Gap {
                    index,
                    start: leg.start,
                    prev_end: legs[index - 1].end,
                });
            }
        }
        Ok(Self { legs })
    }

    /// A node that stays at `p` for `[0, duration]`.
    pub fn stationary(p: Point, duration: f64) -> Self {
        Self {
            legs: vec![Leg {
                start: 0.0,
                end: duration,
                origin: p,
                velocity: Point::default(),
            }],
        }
    }

    /// The legs in time order; they tile `[0, end_time()]`.
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// When the last leg ends, seconds (the trace duration, within a [`Trace`]).
    pub fn end_time(&self) -> f64 {
        self.legs[self.legs.len() - 1].end
    }

    /// Index of the leg in force at `t` (the later leg at a shared boundary).
    /// Times outside `[0, duration]` map to the first or last leg.
    pub fn leg_index_at(&self, t: f64) -> usize {
        // Number of legs whose start is <= t, minus one.
        self.legs
            .partition_point(|leg| leg.start <= t)
            .saturating_sub(1)
    }

    /// Position at `t` in O(log legs). Before 0 or after the end, the position is held.
    pub fn position(&self, t: f64) -> Point {
        let leg = &self.legs[self.leg_index_at(t)];
        leg.position_at(t.clamp(leg.start, leg.end))
    }

    /// Velocity at `t` (of the later leg at a boundary).
    pub fn velocity(&self, t: f64) -> Point {
        self.legs[self.leg_index_at(t)].velocity
    }
}

/// A mobility trace: the area, the duration and one trajectory per node.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The area the nodes move in, metres.
    pub area: Area,
    /// Length of the trace in seconds: every node's legs tile `[0, duration]`.
    pub duration: f64,
    /// One trajectory per node, indexed by [`NodeId`].
    pub nodes: Vec<Trajectory>,
    /// When each node takes part in the network (`[start, stop]`, seconds), from an
    /// activity file ([`crate::mobility::activity`]); `None`: every node, throughout.
    /// Outside its interval a node has no links, wherever the trajectory puts it.
    pub presence: Option<Vec<(f64, f64)>>,
}

/// Why the parts do not form a trace.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// A node's legs do not form a trajectory.
    #[error("node {node}: {source}")]
    Trajectory {
        /// Index of the node.
        node: usize,
        /// What is wrong with its legs.
        source: TrajectoryError,
    },
    /// A node's trajectory does not end at the trace's duration.
    #[error("node {node} ends at {end} s but the trace lasts {duration} s")]
    WrongEnd {
        /// Index of the node.
        node: usize,
        /// When its last leg ends, seconds.
        end: f64,
        /// The trace's duration, seconds.
        duration: f64,
    },
    /// The duration (seconds) is zero, negative, NaN or infinite.
    #[error("the duration must be positive and finite, got {0}")]
    BadDuration(f64),
}

impl Trace {
    /// Assembles a trace, checking that every trajectory spans exactly `[0, duration]`.
    pub fn new(area: Area, duration: f64, nodes: Vec<Trajectory>) -> Result<Self, TraceError> {
        if !(duration.is_finite() && duration > 0.0) {
            return Err(TraceError::BadDuration(duration));
        }
        for (node, trajectory) in nodes.iter().enumerate() {
            if trajectory.end_time() != duration {
                return Err(TraceError::WrongEnd {
                    node,
                    end: trajectory.end_time(),
                    duration,
                });
            }
        }
        Ok(Self {
            area,
            duration,
            nodes,
            presence: None,
        })
    }

    /// Builds a trace from raw leg lists, reporting which node is malformed.
    pub fn from_legs(area: Area, duration: f64, legs: Vec<Vec<Leg>>) -> Result<Self, TraceError> {
        let nodes = legs
            .into_iter()
            .enumerate()
            .map(|(node, legs)| {
                Trajectory::new(legs).map_err(|source| TraceError::Trajectory { node, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(area, duration, nodes)
    }

    /// Number of nodes (trajectories).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Position (metres) of `node` at `t` seconds; held before 0 and after the end.
    /// Panics if `node` is out of range.
    pub fn position(&self, node: NodeId, t: f64) -> Point {
        self.nodes[node as usize].position(t)
    }

    /// Number of legs over all nodes.
    pub fn total_legs(&self) -> usize {
        self.nodes.iter().map(|n| n.legs().len()).sum()
    }

    /// Largest speed of any leg: bounds how far a node can move in a time window.
    pub fn max_speed(&self) -> f64 {
        self.nodes
            .iter()
            .flat_map(|n| n.legs())
            .map(Leg::speed)
            .fold(0.0, f64::max)
    }

    /// The largest difference between two traces, or `None` when their shapes differ (node
    /// or leg counts): over the area, the duration, and every leg's start and end times and
    /// start and end positions. Velocities are compared through the end positions, because
    /// a 12-decimal time on a 10 ms leg already moves the velocity by ~1e-9 m/s while no
    /// position moves by more than ~1e-11 m. Round-trip tests compare against 1e-9.
    pub fn max_difference(&self, other: &Trace) -> Option<f64> {
        if self.nodes.len() != other.nodes.len() {
            return None;
        }
        let mut worst = (self.duration - other.duration)
            .abs()
            .max((self.area.width - other.area.width).abs())
            .max((self.area.height - other.area.height).abs());
        for (a, b) in self.nodes.iter().zip(&other.nodes) {
            if a.legs().len() != b.legs().len() {
                return None;
            }
            for (la, lb) in a.legs().iter().zip(b.legs()) {
                let (ea, eb) = (la.end_position(), lb.end_position());
                for d in [
                    la.start - lb.start,
                    la.end - lb.end,
                    la.origin.x - lb.origin.x,
                    la.origin.y - lb.origin.y,
                    ea.x - eb.x,
                    ea.y - eb.y,
                ] {
                    worst = worst.max(d.abs());
                }
            }
        }
        Some(worst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_leg() -> Trajectory {
        Trajectory::new(vec![
            Leg {
                start: 0.0,
                end: 10.0,
                origin: Point::new(0.0, 0.0),
                velocity: Point::new(1.0, 0.0),
            },
            Leg {
                start: 10.0,
                end: 20.0,
                origin: Point::new(10.0, 0.0),
                velocity: Point::default(),
            },
        ])
        .unwrap()
    }

    #[test]
    fn position_interpolates_and_holds() {
        let t = two_leg();
        assert_eq!(t.position(5.0), Point::new(5.0, 0.0));
        assert_eq!(t.position(10.0), Point::new(10.0, 0.0));
        assert_eq!(t.position(15.0), Point::new(10.0, 0.0));
        assert_eq!(t.position(25.0), Point::new(10.0, 0.0));
        assert_eq!(t.position(-1.0), Point::new(0.0, 0.0));
        assert_eq!(t.leg_index_at(10.0), 1);
    }

    #[test]
    fn rejects_gaps_and_late_starts() {
        let leg = Leg {
            start: 1.0,
            end: 2.0,
            origin: Point::default(),
            velocity: Point::default(),
        };
        assert!(matches!(
            Trajectory::new(vec![leg]),
            Err(TrajectoryError::NotFromZero(_))
        ));
        let a = Leg {
            start: 0.0,
            end: 1.0,
            ..leg
        };
        let b = Leg {
            start: 1.5,
            end: 2.0,
            ..leg
        };
        assert!(matches!(
            Trajectory::new(vec![a, b]),
            Err(TrajectoryError::Gap { index: 1, .. })
        ));
        assert!(matches!(
            Trajectory::new(vec![]),
            Err(TrajectoryError::Empty)
        ));
    }
}
