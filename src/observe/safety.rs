//! Safety violations: counted, and the first one kept with what reproduces it.

use crate::NodeId;
use serde::Serialize;

/// One broken invariant. With the run's seed and parameters, `event_index` pins down
/// the exact moment: rerunning to that event reproduces the state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// Which invariant (`too_many_in_cs`, `token_count`, `illegal_component`).
    pub kind: &'static str,
    /// Simulated time of the event that broke the invariant, seconds.
    pub time_s: f64,
    /// 0-based index of that event in the run.
    pub event_index: u64,
    /// The nodes involved (e.g. those in the critical section, or a disagreeing pair).
    pub nodes: Vec<NodeId>,
    /// What was wrong, in words.
    pub detail: String,
}

/// Violations of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SafetyLog {
    /// Number of violations (incidents, each counted once at its onset).
    pub count: u64,
    /// The first violation, kept to reproduce it; `None` if there was none.
    pub first: Option<Violation>,
    /// How many violations to keep whole in [`Self::kept`] (0 in sweeps: describing
    /// every incident of a broken algorithm would cost more than the run).
    #[serde(skip)]
    pub keep: usize,
    /// Only violations from this time on (seconds) are kept: the replay viewer keeps
    /// those of its window.
    #[serde(skip)]
    pub keep_from_s: f64,
    /// The first [`Self::keep`] violations from [`Self::keep_from_s`] on, in order.
    #[serde(skip)]
    pub kept: Vec<Violation>,
}

impl SafetyLog {
    /// Counts a violation; builds its description only for the first one (and while
    /// fewer than [`Self::keep`] are kept).
    pub fn record(&mut self, describe: impl FnOnce() -> Violation) {
        self.count += 1;
        if self.first.is_none() || self.kept.len() < self.keep {
            let violation = describe();
            if self.kept.len() < self.keep && violation.time_s >= self.keep_from_s {
                self.kept.push(violation.clone());
            }
            self.first.get_or_insert(violation);
        }
    }
}

/// Node `m`'s views of its neighbours against their actual heights: an error naming
/// the first neighbour it has a stale view of, or else whether `m` is a sink (every
/// neighbour higher; vacuously so with none). Shared by the legality checks of the
/// families whose nodes keep heights.
pub fn views_and_sink<H: PartialOrd>(
    m: NodeId,
    own: &H,
    neighbours: &[NodeId],
    view: impl Fn(NodeId) -> Option<H>,
    actual: impl Fn(NodeId) -> H,
) -> Result<bool, (String, Vec<NodeId>)> {
    let mut sink = true;
    for &j in neighbours {
        let height = actual(j);
        if view(j).as_ref() != Some(&height) {
            return Err((
                format!("node {m} has a stale view of neighbour {j}'s height"),
                vec![m, j],
            ));
        }
        sink &= height > *own;
    }
    Ok(sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time_s: f64) -> Violation {
        Violation {
            kind: "token_count",
            time_s,
            event_index: 0,
            nodes: Vec::new(),
            detail: String::new(),
        }
    }

    #[test]
    fn keeps_the_first_violations_of_its_window_and_always_the_first() {
        let mut log = SafetyLog {
            keep: 2,
            keep_from_s: 10.0,
            ..SafetyLog::default()
        };
        for t in [1.0, 2.0, 3.0, 10.0, 11.0, 12.0] {
            log.record(|| at(t));
        }
        assert_eq!(log.count, 6);
        assert_eq!(log.first, Some(at(1.0)));
        let kept: Vec<f64> = log.kept.iter().map(|v| v.time_s).collect();
        assert_eq!(kept, [10.0, 11.0]);
        // A plain run describes only the first.
        let mut plain = SafetyLog::default();
        let mut described = 0;
        for t in [1.0, 2.0] {
            plain.record(|| {
                described += 1;
                at(t)
            });
        }
        assert_eq!((plain.count, described), (2, 1));
    }
}
