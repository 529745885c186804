//! One node's random walk: drawing the initial state and the legs that follow.

use super::analytic::normal_kernel;
use super::{PauseDist, RwpParams, SpeedDist, StartMode, paused_probability};
use crate::input::InputError;
use crate::mobility::{Leg, Point};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How many consecutive moves may vanish in time rounding before the generator gives up
/// (see "No empty legs" in the module docs). Isolated ones are legitimate.
const MAX_STALLS: u32 = 1000;

/// Per-trace quantities shared by all nodes, computed once.
pub(crate) struct Plan {
    /// Steady-state probability of being paused (stationary start only).
    paused: f64,
    /// The area's diagonal: the longest possible leg, normalising the length bias.
    diagonal: f64,
}

impl Plan {
    pub(crate) fn new(params: &RwpParams) -> Self {
        let paused = match params.start {
            StartMode::Classic => 0.0,
            StartMode::Stationary => paused_probability(params),
        };
        Self {
            paused,
            diagonal: params.area.width.hypot(params.area.height),
        }
    }
}

/// The legs of node `node`, drawn from its own stream.
pub(crate) fn node_legs(
    params: &RwpParams,
    plan: &Plan,
    node: u64,
) -> Result<Vec<Leg>, InputError> {
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    rng.set_stream(node);
    let mut walker = Walker {
        params,
        rng,
        legs: Vec::new(),
        t: 0.0,
        pos: Point::default(),
        stalls: 0,
    };
    match params.start {
        StartMode::Classic => walker.pos = walker.waypoint(),
        StartMode::Stationary => walker.stationary_start(plan)?,
    }
    while !walker.done() {
        let target = walker.waypoint();
        let speed = walker.speed();
        walker.move_to(target, speed)?;
        if walker.done() {
            break;
        }
        let pause = walker.pause();
        walker.pause_for(pause);
    }
    Ok(walker.legs)
}

struct Walker<'a> {
    params: &'a RwpParams,
    rng: ChaCha8Rng,
    legs: Vec<Leg>,
    /// Time the next leg starts: the previous leg's `end`, bit for bit.
    t: f64,
    pos: Point,
    /// Consecutive moves lost to time rounding.
    stalls: u32,
}

impl Walker<'_> {
    fn done(&self) -> bool {
        self.t >= self.params.duration
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    fn waypoint(&mut self) -> Point {
        let area = self.params.area;
        Point::new(area.width * self.unit(), area.height * self.unit())
    }

    /// Standard normal deviate (Box–Muller; the second value is discarded for simplicity).
    fn standard_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: keeps ln finite
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Speed of an ordinary leg, drawn from f; never 0.
    fn speed(&mut self) -> f64 {
        loop {
            let v = match self.params.speed {
                SpeedDist::Uniform { min, max } => (min + (max - min) * self.unit()).min(max),
                SpeedDist::Normal { min, max } => {
                    let mean = 0.5 * min + 0.5 * max;
                    let sd = (max - min) / 4.0;
                    let v = mean + sd * self.standard_normal();
                    if !(min..=max).contains(&v) {
                        continue;
                    }
                    v
                }
            };
            if v > 0.0 {
                return v;
            }
        }
    }

    /// Speed of the leg in progress at a stationary instant: density ∝ f(v)/v.
    /// Validation guarantees min > 0 here.
    fn stationary_speed(&mut self) -> f64 {
        let (min, max) = self.params.speed.bounds();
        if min == max {
            return min;
        }
        let ratio = max / min;
        loop {
            // Density ∝ 1/v on [min, max]: exactly the target for a uniform f.
            let v = (min * ratio.powf(self.unit())).clamp(min, max);
            match self.params.speed {
                SpeedDist::Uniform { .. } => return v,
                SpeedDist::Normal { .. } => {
                    if self.unit() < normal_kernel(min, max)(v) {
                        return v;
                    }
                }
            }
        }
    }

    fn pause(&mut self) -> f64 {
        match self.params.pause {
            PauseDist::Constant(p) => p,
            PauseDist::Uniform { mean } => 2.0 * mean * self.unit(),
        }
    }

    /// What is left of the pause in progress at a stationary instant: the pause covering
    /// an instant is length-biased (density ∝ x·g(x)), and the instant falls uniformly
    /// inside it. Constant p: p itself, so the residual is uniform on [0, p]. Uniform on
    /// [0, 2m]: density ∝ x on [0, 2m], drawn as 2m·√u.
    fn residual_pause(&mut self) -> f64 {
        let biased = match self.params.pause {
            PauseDist::Constant(p) => p,
            PauseDist::Uniform { mean } => 2.0 * mean * self.unit().sqrt(),
        };
        self.unit() * biased
    }

    /// Draws the node's state at t = 0 from the stationary distribution and emits the
    /// (residual) leg it is in.
    fn stationary_start(&mut self, plan: &Plan) -> Result<(), InputError> {
        if self.unit() < plan.paused {
            self.pos = self.waypoint();
            let residual = self.residual_pause();
            self.pause_for(residual);
            return Ok(());
        }
        // The leg covering a given instant is length-biased: accept a uniform pair of
        // endpoints with probability proportional to its length.
        let (from, to) = loop {
            let from = self.waypoint();
            let to = self.waypoint();
            if self.unit() * plan.diagonal < from.distance(to) {
                break (from, to);
            }
        };
        let r = self.unit();
        self.pos = Point::new(from.x + r * (to.x - from.x), from.y + r * (to.y - from.y));
        let speed = self.stationary_speed();
        self.move_to(to, speed)?;
        if !self.done() {
            let pause = self.pause();
            self.pause_for(pause);
        }
        Ok(())
    }

    /// Emits a leg `[t, end)` (cut at the duration) and advances the clock.
    fn push(&mut self, end: f64, velocity: Point) {
        let end = end.min(self.params.duration);
        self.legs.push(Leg {
            start: self.t,
            end,
            origin: self.pos,
            velocity,
        });
        self.t = end;
    }

    fn pause_for(&mut self, length: f64) {
        let end = self.t + length;
        if end > self.t {
            self.push(end, Point::default());
        }
    }

    /// Travels in a straight line to `target` at `speed` (> 0).
    fn move_to(&mut self, target: Point, speed: f64) -> Result<(), InputError> {
        let (dx, dy) = (target.x - self.pos.x, target.y - self.pos.y);
        let distance = dx.hypot(dy);
        let end = self.t + distance / speed;
        if distance == 0.0 || end <= self.t {
            self.stalls += 1;
            if self.stalls > MAX_STALLS {
                return Err(InputError::parameter(
                    "area",
                    format!(
                        "the area is too small for the speeds: legs at t = {} s last less \
                         than the time resolution; use a larger --area, a lower --speed or \
                         a shorter --duration",
                        self.t
                    ),
                ));
            }
            self.pos = target;
            return Ok(());
        }
        self.stalls = 0;
        // Unit direction times speed (not dx·(speed/distance), which can overflow).
        let velocity = Point::new(dx / distance * speed, dy / distance * speed);
        self.push(end, velocity);
        self.pos = target;
        Ok(())
    }
}
