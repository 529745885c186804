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
    /// The first [`Self::keep`] violations, in order (the replay viewer marks each).
    #[serde(skip)]
    pub kept: Vec<Violation>,
}

impl SafetyLog {
    /// A log that keeps the first `keep` violations whole.
    pub fn keeping(keep: usize) -> Self {
        Self {
            keep,
            ..Self::default()
        }
    }

    /// Counts a violation; builds its description only for the first one (and the
    /// first [`Self::keep`]).
    pub fn record(&mut self, describe: impl FnOnce() -> Violation) {
        self.count += 1;
        if self.first.is_none() || self.kept.len() < self.keep {
            let violation = describe();
            if self.kept.len() < self.keep {
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
