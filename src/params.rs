//! Run parameters written as text and their defaults, shared by `linkrev run` (flags) and
//! sweep specs (TOML values), so that a value, or its omission, means the same thing in
//! both: a run planned by a sweep can be reproduced with `linkrev run` and the same seed.
//!
//! Parsers return a bare message; callers add the location (a flag or a spec key path).

use crate::mobility::Area;
use crate::mobility::rwp::{PauseDist, RwpParams, SpeedDist, StartMode};
use crate::registry::Algorithm;
use crate::sim::delay::parse_duration;
use crate::sim::{CsTime, Duration, NetworkConfig, RunConfig, SimTime, WorkloadConfig};

/// Radio range, metres: ns-2 setdest's hard-coded 250 m.
pub const RANGE: f64 = 250.0;
/// CS requests per second per node.
pub const RATE: f64 = 0.1;
/// CS duration, as written (constant 100 ms).
pub const CS_TIME: &str = "0.1";
/// Per-hop delay, as written (see [`crate::sim::DelayModel`]'s default).
pub const DELAY: &str = "uniform:1ms:5ms";
/// Link-break detection delay, as written.
pub const DETECTION_DELAY: &str = "0ms";
/// Link-break semantics, as written.
pub const LINK_BREAK: &str = "drain";
/// Topology-change semantics, as written.
pub const CHANGES: &str = "overlap";

/// The random-waypoint defaults: setdest's classic scenario (50 nodes, 1500 m × 300 m,
/// 1–20 m/s, 30 s pauses, 900 s), with a stationary start so that t = 0 is in steady
/// state. `seed` is the generator seed (already derived for mobility).
pub fn default_rwp(seed: u64) -> RwpParams {
    RwpParams {
        nodes: 50,
        area: Area {
            width: 1500.0,
            height: 300.0,
        },
        speed: SpeedDist::Uniform {
            min: 1.0,
            max: 20.0,
        },
        pause: PauseDist::Constant(30.0),
        duration: 900.0,
        start: StartMode::Stationary,
        seed,
    }
}

/// Parses `WxH` (metres), e.g. `1500x300`; both must be positive and finite.
pub fn parse_area(text: &str) -> Result<Area, String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT in metres, got `{text}`"))?;
    let number = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{v}` is not a number (in `{text}`)"))
    };
    let area = Area {
        width: number(w)?,
        height: number(h)?,
    };
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(area.width) && positive(area.height)) {
        return Err(format!(
            "width and height must be positive and finite, got `{text}`"
        ));
    }
    Ok(area)
}

/// Parses `stationary` or `classic`.
pub fn parse_start(text: &str) -> Result<StartMode, String> {
    match text.trim() {
        "stationary" => Ok(StartMode::Stationary),
        "classic" => Ok(StartMode::Classic),
        other => Err(format!("expected stationary or classic, got `{other}`")),
    }
}

/// Parses a CS duration: seconds (constant) or `exp:MEAN` (exponential), e.g. `0.1`.
pub fn parse_cs_time(text: &str) -> Result<CsTime, String> {
    let err = || format!("expected seconds or exp:MEAN, got `{text}`");
    let (exponential, number) = match text.trim().strip_prefix("exp:") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let seconds: f64 = number.trim().parse().map_err(|_| err())?;
    if !seconds.is_finite() {
        return Err(err());
    }
    // A CS lasts: zero would make entry and exit one instant (the reference says > 0).
    if let Some(problem) = crate::input::span_problem(seconds, true) {
        return Err(format!("`{text}`: {problem}"));
    }
    let d = Duration::from_secs_f64(seconds);
    Ok(if exponential {
        CsTime::Exponential { mean: d }
    } else {
        CsTime::Constant(d)
    })
}

/// Parses a duration such as `10ms` (units ns, us, ms, s).
pub fn parse_detection_delay(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

/// The shape of the scaled networks' area; either way the area holds 50 nodes per
/// 1500 m × 300 m (450,000 m²).
///
/// The shape decides how many nodes live near an edge, where a node's radio disc is
/// cut off, and so how many neighbours a node has on average (`linkrev trace stats` on
/// the 300 s traces of seed 3): in a square 21.2 at 50 nodes and 28.6 at 1,600 (1.35×);
/// in a 5:1 strip, which is only 300 m wide at 50 nodes, 16.9 and 29.2 (1.73×). Work
/// done per neighbour grows with the degree, not with the node count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AreaShape {
    /// S × S, the shape of the original scaling measurement (`--rwp nodes=N,area=SxS`).
    #[default]
    Square,
    /// 5:1, the classic 1500 m × 300 m study's shape scaled up.
    Strip,
}

/// The networks of `linkrev bench scale` and `benches/scale.rs`: [`default_rwp`] with
/// `nodes` nodes at the density of 50 nodes in 1500 m × 300 m in an area of `shape`, for
/// `duration_s` seconds.
pub fn scale_rwp(nodes: usize, shape: AreaShape, duration_s: f64, seed: u64) -> RwpParams {
    let scale = (nodes as f64 / 50.0).sqrt();
    let (width, height) = match shape {
        AreaShape::Strip => (1500.0 * scale, 300.0 * scale),
        AreaShape::Square => {
            let side = (1500.0f64 * 300.0).sqrt() * scale;
            (side, side)
        }
    };
    RwpParams {
        nodes,
        area: Area {
            width: width.round(),
            height: height.round(),
        },
        duration: duration_s,
        ..default_rwp(seed)
    }
}

/// The run configuration of `linkrev bench protocols` and `benches/protocols.rs`: the
/// default network, and for families that need one a workload of `rate` requests per
/// second per node with 100 ms critical sections.
pub fn bench_config(algorithm: Algorithm, rate: f64, duration_s: f64, seed: u64) -> RunConfig {
    RunConfig {
        network: NetworkConfig::default(),
        workload: algorithm
            .family()
            .needs_workload()
            .then_some(WorkloadConfig {
                rate,
                cs_time: CsTime::Constant(Duration::from_secs_f64(0.1)),
            }),
        duration: SimTime::from_secs_f64(duration_s),
        seed,
        script: None,
        max_events: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse() {
        assert!(parse_cs_time(CS_TIME).is_ok());
        assert!(DELAY.parse::<crate::sim::DelayModel>().is_ok());
        assert!(parse_detection_delay(DETECTION_DELAY).is_ok());
        assert!(default_rwp(1).validate().is_ok());
    }

    #[test]
    fn cs_time_forms() {
        assert!(matches!(
            parse_cs_time("exp:0.5"),
            Ok(CsTime::Exponential { .. })
        ));
        assert!(matches!(parse_cs_time("0.5"), Ok(CsTime::Constant(_))));
        assert!(parse_cs_time("-1").is_err());
        assert!(parse_cs_time("soon").is_err());
    }
}
