//! Parameter points: the odometer over a spec's axes, and one point's typed values read
//! as the generator's and the network's parameters.

use super::schema::{Choice, PauseShape, Spec, SpecValue, SpeedShape};
use crate::mobility::rwp::{PauseDist, RwpParams, SpeedDist};
use crate::sim::NetworkConfig;

/// The value index of every parameter at parameter point `point` (an odometer over the
/// axes, the last axis changing fastest; fixed parameters at 0).
pub(crate) fn point_index(spec: &Spec, point: u64) -> Vec<usize> {
    let mut index = vec![0usize; spec.params.len()];
    let mut rest = point;
    for (i, p) in spec.params.iter().enumerate().rev() {
        if p.is_axis {
            let n = p.values.len() as u64;
            index[i] = (rest % n) as usize;
            rest /= n;
        }
    }
    index
}

/// One run's typed values, by parameter name (those that apply to its algorithm).
/// Each key has one [`Kind`](super::schema::Kind), so a value of another type here is a
/// bug in this module or the schema, not bad input.
#[derive(Default)]
pub(crate) struct Point<'s>(pub(crate) Vec<(&'static str, &'s SpecValue)>);

impl Point<'_> {
    /// The value of parameter `name`, if it applies.
    pub(crate) fn get(&self, name: &str) -> Option<&SpecValue> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// The number `name` (speeds, pause, duration, range, rate).
    pub(crate) fn number(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(SpecValue::Number(x)) => *x,
            other => unreachable!("{name} is a number, got {other:?}"),
        }
    }

    /// The word `name` means.
    pub(crate) fn choice(&self, name: &str) -> Choice {
        match self.get(name) {
            Some(SpecValue::Choice(_, c)) => *c,
            other => unreachable!("{name} is a word, got {other:?}"),
        }
    }

    /// The generator parameters of a random-waypoint point (`seed` as given).
    pub(crate) fn rwp(&self, seed: u64) -> RwpParams {
        let (min, max) = (self.number("speed_min"), self.number("speed_max"));
        let pause = self.number("pause");
        RwpParams {
            nodes: match self.get("nodes") {
                Some(SpecValue::Count(n)) => *n as usize,
                other => unreachable!("nodes is a count, got {other:?}"),
            },
            area: match self.get("area") {
                Some(SpecValue::Area(a)) => *a,
                other => unreachable!("area is an area, got {other:?}"),
            },
            speed: match self.choice("speed_dist") {
                Choice::Speed(SpeedShape::Normal) => SpeedDist::Normal { min, max },
                _ => SpeedDist::Uniform { min, max },
            },
            pause: match self.choice("pause_dist") {
                Choice::Pause(PauseShape::Uniform) => PauseDist::Uniform { mean: pause },
                _ => PauseDist::Constant(pause),
            },
            duration: self.number("duration"),
            start: match self.choice("start") {
                Choice::Start(start) => start,
                other => unreachable!("start is a start mode, got {other:?}"),
            },
            seed,
        }
    }

    /// The network model of a point.
    pub(crate) fn network(&self) -> NetworkConfig {
        NetworkConfig {
            delay: match self.get("delay") {
                Some(SpecValue::Delay(d)) => *d,
                other => unreachable!("delay is a delay model, got {other:?}"),
            },
            link_break: match self.choice("link_break") {
                Choice::LinkBreak(b) => b,
                other => unreachable!("link_break, got {other:?}"),
            },
            detection_delay: match self.get("detection_delay") {
                Some(SpecValue::Duration(d)) => *d,
                other => unreachable!("detection_delay is a duration, got {other:?}"),
            },
            changes: match self.choice("changes") {
                Choice::Changes(c) => c,
                other => unreachable!("changes, got {other:?}"),
            },
        }
    }
}
