//! Seeded random-waypoint (RWP) generator, with a classic and a stationary start, and the
//! analytic RWP formulas used as oracles.
//!
//! # The model
//!
//! Each node repeatedly picks a waypoint uniformly in the area, travels to it in a straight
//! line at a speed drawn afresh for the leg, then pauses. A [`StartMode::Classic`] run
//! starts every node at a uniform waypoint, moving, at a fresh speed. That initial state is
//! not the model's steady state: slow legs last longer, so over time the population
//! drifts towards slow, long-lasting legs and the mean speed decays from the naive
//! (vmin+vmax)/2 to the harmonic mean 1/`E[1/V]` (Yoon, Liu and Noble 2003, "Random
//! waypoint considered harmful"); positions likewise drift towards the centre. Results
//! measured on a classic run therefore depend on how long it has run.
//!
//! [`StartMode::Stationary`] draws each node's initial state from the stationary
//! distribution itself (the "perfect simulation" of Navidi and Camp 2004, as in ns-3's
//! `SteadyStateRandomWaypointMobilityModel`), so every time instant of the run, t = 0
//! included, has the same distribution:
//!
//! - with probability `E[P]`/(`E[P]` + `E[L]`·`E[1/V]`) the node is paused: waypoints
//!   are uniform, so its position is uniform; the pause it is in is length-biased (long
//!   pauses are more likely to cover a given instant) and a uniform fraction of it is
//!   left;
//! - otherwise it is moving: its leg is length-biased, so an endpoint pair is drawn
//!   uniformly and accepted with probability |p2 − p1| / diagonal; it is at a uniform
//!   point of that leg heading to p2; and its speed has density ∝ f(v)/v (time spent at
//!   speed v is proportional to 1/v).
//!
//! After the initial state both modes continue identically: move, pause, move, ….
//!
//! # Decisions
//!
//! - **One stream per node.** Node `i` draws from ChaCha8 seeded with `seed` on stream
//!   `i`, so its trajectory depends only on `(seed, i)` and the other parameters, never
//!   on the node count: adding nodes to a scenario keeps the existing ones' movement
//!   (common random numbers across node-count sweeps). The same parameters give the same
//!   trace bit for bit on one platform; speeds and pauses go through `ln`, `exp`, `powf`
//!   and `cos`, whose last bit may differ between platforms' maths libraries.
//! - **Normal speed** ([`SpeedDist::Normal`], setdest `-s 2`): mean (min+max)/2, sd
//!   (max−min)/4, and a value outside [min, max] is redrawn (a truncated normal), not
//!   clipped, so no probability mass piles up on the bounds.
//! - **Stationary normal speed** (density ∝ f(v)/v on [min, max]): proposals come from the
//!   density ∝ 1/v (v = min·(max/min)ᵘ) and are accepted with probability φ(v)/φ(mean).
//!   On [mean − 2sd, mean + 2sd] that ratio is at least e⁻², so at most ~7.4 proposals are
//!   needed on average whatever `min` is; proposing from f and accepting with min/v would
//!   need ~1/(min·`E[1/V]`) proposals, unbounded as `min` approaches 0.
//! - **No speed 0.** A drawn speed of 0 (possible with min = 0 in a classic run) is
//!   redrawn, so a moving leg always moves; pauses are the only zero-velocity legs.
//! - **No empty legs.** A pause of length 0 emits no leg (so pause 0 gives back-to-back
//!   moves). A move whose duration is lost in the rounding of the current time (a
//!   waypoint equal or within ~1e-13 m of the current position) is skipped, the node
//!   taking the waypoint's position.
//! - **Waypoints are exact.** The leg after a move starts at the drawn waypoint itself,
//!   not at the previous leg's computed `end_position()`, so rounding never accumulates
//!   along a trajectory; the two differ by rounding only (~1e-13 m), and positions leave
//!   the area by no more than that.
//! - **Safety net.** Should skipped moves repeat (an area tiny compared with speed × time
//!   resolution) the generator reports an error on `--area` instead of looping.
//! - The last leg of every node is cut at exactly `duration`.
//! - **Bounded size.** [`RwpParams::validate`] refuses parameters expected to produce more
//!   than [`MAX_LEGS`] legs (a unit mistake, such as an area in km, would otherwise
//!   exhaust memory rather than fail with a message); it is reported on `--duration`.

mod analytic;
mod walk;

pub use analytic::{expected_leg_length, paused_probability, stationary_mean_speed};

use crate::input::InputError;
use crate::mobility::{Area, Trace};

/// Everything that determines a random-waypoint trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RwpParams {
    /// Number of nodes, at least 1.
    pub nodes: usize,
    /// The area `[0, width] × [0, height]`, metres.
    pub area: Area,
    /// Speed of each leg, drawn independently per leg.
    pub speed: SpeedDist,
    /// Pause after each leg, drawn independently per pause.
    pub pause: PauseDist,
    /// Trace length, seconds.
    pub duration: f64,
    /// How nodes are placed and set moving at t = 0.
    pub start: StartMode,
    /// Master seed; node `i` uses stream `i` of ChaCha8 seeded with it.
    pub seed: u64,
}

/// Distribution of a leg's speed, m/s, as setdest's `-s` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpeedDist {
    /// Uniform on `[min, max]` (setdest `-s 1`); `min == max` is a constant speed.
    Uniform {
        /// Lowest speed, m/s (at least 0).
        min: f64,
        /// Highest speed, m/s (at least `min`).
        max: f64,
    },
    /// Normal with mean (min+max)/2 and sd (max−min)/4, redrawn until inside
    /// `[min, max]` (setdest `-s 2`).
    Normal {
        /// Lower truncation bound, m/s: draws below it are redrawn.
        min: f64,
        /// Upper truncation bound, m/s: draws above it are redrawn.
        max: f64,
    },
}

/// Distribution of a pause, seconds, as setdest's `-P` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PauseDist {
    /// Always this long (setdest `-P 1`).
    Constant(f64),
    /// Uniform on `[0, 2·mean]` (setdest `-P 2`).
    Uniform {
        /// Mean pause, seconds; pauses are uniform on `[0, 2·mean]`.
        mean: f64,
    },
}

/// The initial state of the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartMode {
    /// Uniform position, moving to a uniform waypoint at a fresh speed, no initial pause:
    /// the textbook (and ns-2) model, which is not in steady state at t = 0.
    Classic,
    /// Initial state drawn from the stationary distribution (Navidi and Camp 2004).
    Stationary,
}

impl RwpParams {
    /// Checks every parameter, naming the offending command-line option in the error.
    ///
    /// Besides each value's own range, a stationary start needs vmin > 0, and the
    /// expected size of the trace must stay under [`MAX_LEGS`] (reported on `--duration`).
    pub fn validate(&self) -> Result<(), InputError> {
        if self.nodes == 0 {
            return Err(InputError::parameter(
                "nodes",
                "need at least 1 node, got 0",
            ));
        }
        if self.nodes > super::trace::MAX_NODES {
            return Err(InputError::parameter(
                "nodes",
                format!(
                    "{} nodes is beyond the limit of {}",
                    self.nodes,
                    super::trace::MAX_NODES
                ),
            ));
        }
        let Area { width, height } = self.area;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !(positive(width) && positive(height) && width.hypot(height).is_finite()) {
            return Err(InputError::parameter(
                "area",
                format!("width and height must be positive and finite, got {width} x {height}"),
            ));
        }
        let (min, max) = self.speed.bounds();
        if !(min.is_finite() && max.is_finite() && min >= 0.0 && min <= max) {
            return Err(InputError::parameter(
                "speed",
                format!("need finite speeds with 0 <= min <= max, got min {min}, max {max}"),
            ));
        }
        if max <= 0.0 {
            return Err(InputError::parameter(
                "speed",
                "the maximum speed must be positive (nodes with speed 0 never move)",
            ));
        }
        if self.start == StartMode::Stationary && min <= 0.0 {
            return Err(InputError::parameter(
                "speed",
                "random waypoint with vmin = 0 has no steady state (E[1/V] is infinite), so a \
                 stationary start needs a positive minimum speed; use a positive min or a \
                 classic start",
            ));
        }
        let pause = self.pause.mean();
        if !(pause.is_finite() && pause >= 0.0 && (2.0 * pause).is_finite()) {
            return Err(InputError::parameter(
                "pause",
                format!("the pause must be finite and >= 0 s, got {pause}"),
            ));
        }
        if let Some(problem) = crate::input::span_problem(self.duration, true) {
            return Err(InputError::parameter("duration", problem));
        }
        let legs = self.estimated_legs();
        // Finite or +inf (overflow), never NaN: every input is positive and finite here.
        if legs > MAX_LEGS {
            return Err(InputError::parameter(
                "duration",
                format!(
                    "with these --nodes, --area, --speed and --pause the trace would have about \
                     {legs:.2e} legs (the limit is {MAX_LEGS:.0e}, about 5 GB); check the units, \
                     or use fewer nodes or a shorter duration"
                ),
            ));
        }
        Ok(())
    }

    /// A slight over-estimate of the number of legs the trace will hold.
    ///
    /// A cycle (move + pause) lasts `E[L]`·`E[1/V]` + `E[P]` on average; `E[1/V]` ≥ 1/`E[V]`
    /// (Jensen), and 1/`E[V]` stays finite when vmin = 0, so `E[L]`/`E[V]` + `E[P]` is used.
    fn estimated_legs(&self) -> f64 {
        let cycle = expected_leg_length(self.area.width, self.area.height) / self.speed.mean()
            + self.pause.mean();
        let legs_per_cycle = if self.pause.mean() > 0.0 { 2.0 } else { 1.0 };
        self.nodes as f64 * (self.duration / cycle + 1.0) * legs_per_cycle
    }
}

/// Upper limit on [`RwpParams`]' expected number of legs (48 bytes each). Parameters
/// beyond it are almost certainly a unit mistake (an area in km, a duration in ms), and
/// would otherwise exhaust memory instead of failing with a message.
pub const MAX_LEGS: f64 = 1e8;

/// Generates the random-waypoint trace for `params` (validated first).
///
/// Deterministic: the same parameters give an identical trace, and node `i`'s trajectory
/// does not depend on `params.nodes` (see the module docs).
pub fn generate(params: &RwpParams) -> Result<Trace, InputError> {
    params.validate()?;
    let plan = walk::Plan::new(params);
    let legs = (0..params.nodes)
        .map(|node| walk::node_legs(params, &plan, node as u64))
        .collect::<Result<Vec<_>, _>>()?;
    // The walker emits legs that start at 0, tile without gaps, have positive lengths and
    // end at `duration`, from finite validated inputs: a failure here is a bug, not input.
    Ok(Trace::from_legs(params.area, params.duration, legs)
        .expect("random-waypoint legs tile [0, duration] by construction"))
}
