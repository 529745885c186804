//! Algorithm parameters: what a protocol can be configured with, declared once with
//! types, defaults and ranges, and checked in one place for the command line
//! (`--param holder=3`) and for specs (`[params.me-rl] holder = [0, 3]`).
//!
//! A protocol is its configuration plus its per-node state, as stateright's actors are:
//! `k` tokens or a routing mode is a value handed to
//! [`Protocol::initial_states`](super::Protocol::initial_states), not a new type. A
//! protocol without parameters uses `()`.

use std::fmt;

/// The value of one parameter of a run (a spec key, an algorithm parameter), as stored
/// in run keys and table columns.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// A word or a canonical text (a delay model, a path).
    Text(String),
}

impl fmt::Display for ParamValue {
    /// Canonical text used in run keys: integers plainly, floats in Rust's shortest
    /// round-trip form, text as is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v:?}"),
            ParamValue::Text(v) => write!(f, "{v}"),
        }
    }
}

impl From<i64> for ParamValue {
    fn from(v: i64) -> Self {
        ParamValue::Int(v)
    }
}

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Float(v)
    }
}

impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Text(v.to_string())
    }
}

/// The type and allowed values of an algorithm parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A finite real number in `min..=max`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A node id: a non-negative integer, checked against the run's node count once it
    /// is known ([`AlgoParams::check_node_ids`]).
    Node,
}

/// The default of an algorithm parameter, typed like its [`ParamKind`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamDefault {
    /// For [`ParamKind::Int`].
    Int(i64),
    /// For [`ParamKind::Float`].
    Float(f64),
    /// For [`ParamKind::Choice`].
    Word(&'static str),
}

/// One parameter an algorithm takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamDef {
    /// The name on the command line, in specs, run keys and table columns (`k`). It must
    /// not be the name of a spec key (`rate`, `nodes`, …): a test in `sweep::specs`
    /// checks every registered parameter.
    pub name: &'static str,
    /// One line for `linkrev algorithms` and axis labels (with the unit, if any).
    pub description: &'static str,
    /// Type and range.
    pub kind: ParamKind,
    /// The value when none is given.
    pub default: ParamDefault,
}

impl ParamDef {
    /// The default as a value.
    pub fn default_value(&self) -> ParamValue {
        match self.default {
            ParamDefault::Int(i) => ParamValue::Int(i),
            ParamDefault::Float(x) => ParamValue::Float(x),
            ParamDefault::Word(w) => ParamValue::Text(w.to_string()),
        }
    }

    /// The type and range in words (`an integer in 1..=64`), for errors and listings.
    pub fn kind_text(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("an integer in {min}..={max}"),
            ParamKind::Float { min, max } => format!("a number in [{min:?}, {max:?}]"),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
            ParamKind::Node => "a node id below the run's node count".to_string(),
        }
    }

    /// Checks a value written as text (`--param k=2`), returning it typed.
    pub fn parse_text(&self, text: &str) -> Result<ParamValue, String> {
        let text = text.trim();
        match self.kind {
            ParamKind::Int { .. } | ParamKind::Node => match text.parse::<i64>() {
                Ok(i) => self.check(ParamValue::Int(i)),
                Err(_) => Err(format!("`{text}` is not {}", self.kind_text())),
            },
            ParamKind::Float { .. } => match text.parse::<f64>() {
                Ok(x) => self.check(ParamValue::Float(x)),
                Err(_) => Err(format!("`{text}` is not {}", self.kind_text())),
            },
            ParamKind::Choice(_) => self.check(ParamValue::Text(text.to_string())),
        }
    }

    /// Checks a typed value against the kind and range; integers are accepted for real
    /// parameters (and become reals, so `1` and `1.0` give the same key).
    pub fn check(&self, value: ParamValue) -> Result<ParamValue, String> {
        let out_of_range = |v: &dyn fmt::Display| {
            Err(format!(
                "{v} is out of range: `{}` must be {}",
                self.name,
                self.kind_text()
            ))
        };
        match (self.kind, value) {
            (ParamKind::Int { min, max }, ParamValue::Int(i)) => {
                if (min..=max).contains(&i) {
                    Ok(ParamValue::Int(i))
                } else {
                    out_of_range(&i)
                }
            }
            (ParamKind::Node, ParamValue::Int(i)) => {
                if (0..=i64::from(u32::MAX)).contains(&i) {
                    Ok(ParamValue::Int(i))
                } else {
                    out_of_range(&i)
                }
            }
            (ParamKind::Float { .. }, ParamValue::Int(i)) => {
                self.check(ParamValue::Float(i as f64))
            }
            (ParamKind::Float { min, max }, ParamValue::Float(x)) => {
                if x.is_finite() && x >= min && x <= max {
                    Ok(ParamValue::Float(x))
                } else {
                    out_of_range(&x)
                }
            }
            (ParamKind::Choice(words), ParamValue::Text(s)) => {
                if words.contains(&s.as_str()) {
                    Ok(ParamValue::Text(s))
                } else {
                    Err(format!(
                        "unknown value `{s}`: `{}` must be {}",
                        self.name,
                        self.kind_text()
                    ))
                }
            }
            (_, other) => Err(format!(
                "wrong type: `{}` must be {}, got {other}",
                self.name,
                self.kind_text()
            )),
        }
    }
}

/// An algorithm's parameter values, checked against its [`ParamDef`]s and complete
/// (defaults filled in), in declaration order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AlgoParams {
    values: Vec<(&'static str, ParamValue)>,
}

impl AlgoParams {
    /// Every parameter at its default.
    pub fn defaults(defs: &[ParamDef]) -> Self {
        Self {
            values: defs.iter().map(|d| (d.name, d.default_value())).collect(),
        }
    }

    /// The defaults, overridden by `given` (name, value) pairs. Each value is checked;
    /// an unknown name is an error naming the known ones.
    pub fn resolve<'a>(
        defs: &[ParamDef],
        given: impl IntoIterator<Item = (&'a str, ParamValue)>,
    ) -> Result<Self, String> {
        let mut params = Self::defaults(defs);
        for (name, value) in given {
            let def = find(defs, name)?;
            let slot = params.values.iter_mut().find(|(n, _)| *n == name);
            slot.expect("every declared parameter has a slot").1 = def.check(value)?;
        }
        Ok(params)
    }

    /// The defaults, overridden by `KEY=VALUE` texts (`--param holder=3`): each value
    /// parsed by its parameter's kind; a key given twice is an error.
    pub fn from_texts(defs: &[ParamDef], texts: &[String]) -> Result<Self, String> {
        let mut given: Vec<(&str, ParamValue)> = Vec::new();
        for text in texts {
            let (key, value) = text
                .split_once('=')
                .ok_or_else(|| format!("expected KEY=VALUE, got `{text}`"))?;
            let def = find(defs, key.trim())?;
            if given.iter().any(|(k, _)| *k == def.name) {
                return Err(format!("`{}` given twice", def.name));
            }
            given.push((def.name, def.parse_text(value)?));
        }
        Self::resolve(defs, given)
    }

    /// The parameters in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &ParamValue)> {
        self.values.iter().map(|(n, v)| (*n, v))
    }

    /// The value of `name`.
    ///
    /// # Panics
    /// If the algorithm does not declare `name`: a protocol reading a parameter it did
    /// not declare is a programming error, caught by the registry's tests.
    pub fn get(&self, name: &str) -> &ParamValue {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("parameter `{name}` is not declared"))
    }

    /// The integer parameter `name` (see [`Self::get`]).
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            ParamValue::Int(i) => *i,
            other => panic!("parameter `{name}` is not an integer: {other}"),
        }
    }

    /// The node-id parameter `name` (see [`Self::get`]); checked against the node count
    /// by [`Self::check_node_ids`] before a run.
    pub fn node(&self, name: &str) -> crate::NodeId {
        crate::NodeId::try_from(self.int(name)).expect("a checked node id")
    }

    /// Checks every [`ParamKind::Node`] parameter of `defs` against a run of `nodes`
    /// nodes.
    pub fn check_node_ids(&self, defs: &[ParamDef], nodes: usize) -> Result<(), String> {
        for def in defs.iter().filter(|d| d.kind == ParamKind::Node) {
            let id = self.int(def.name);
            if id < 0 || id as u64 >= nodes as u64 {
                let ids = match nodes {
                    0 => "no ids".to_string(),
                    n => format!("ids 0 to {}", n - 1),
                };
                return Err(format!(
                    "`{}` = {id} is not a node of this run, which has {nodes} nodes ({ids})",
                    def.name
                ));
            }
        }
        Ok(())
    }

    /// The real parameter `name` (see [`Self::get`]).
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            ParamValue::Float(x) => *x,
            other => panic!("parameter `{name}` is not a number: {other}"),
        }
    }

    /// The word parameter `name` (see [`Self::get`]).
    pub fn word(&self, name: &str) -> &str {
        match self.get(name) {
            ParamValue::Text(s) => s,
            other => panic!("parameter `{name}` is not a word: {other}"),
        }
    }
}

/// The declaration of parameter `name`, or an error naming the known ones.
fn find<'d>(defs: &'d [ParamDef], name: &str) -> Result<&'d ParamDef, String> {
    defs.iter().find(|d| d.name == name).ok_or_else(|| {
        if defs.is_empty() {
            format!("unknown parameter `{name}`: this algorithm takes none")
        } else {
            let known: Vec<&str> = defs.iter().map(|d| d.name).collect();
            format!("unknown parameter `{name}` (known: {})", known.join(", "))
        }
    })
}

/// A protocol's configuration: the values that are the same on every node of a run.
pub trait ProtocolConfig: Clone + std::fmt::Debug + Default + Send + Sync + 'static {
    /// The parameters this configuration is built from (none by default).
    const PARAMS: &'static [ParamDef] = &[];

    /// Builds the configuration from checked, complete values.
    fn from_params(params: &AlgoParams) -> Self;

    /// What the routing layer charges for [`Ctx::send_routed`](super::Ctx::send_routed)
    /// (only the Raymond baseline sends routed messages; an ideal oracle by default).
    fn routing(&self) -> Routing {
        Routing::Oracle
    }
}

/// How routed messages find their way, and what that costs (the simulator's network
/// model, [`crate::sim::network`], implements both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Routing {
    /// Every hop takes a shortest path of the current graph, known for free.
    #[default]
    Oracle,
    /// Routes are discovered on demand and cached; a discovery is charged in messages
    /// and delay (an AODV-like cost model, not AODV itself).
    Discovery,
}

/// No parameters.
impl ProtocolConfig for () {
    fn from_params(_: &AlgoParams) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: ParamDef = ParamDef {
        name: "k",
        description: "tokens",
        kind: ParamKind::Int { min: 1, max: 8 },
        default: ParamDefault::Int(1),
    };
    const MODE: ParamDef = ParamDef {
        name: "mode",
        description: "routing",
        kind: ParamKind::Choice(&["oracle", "flood"]),
        default: ParamDefault::Word("oracle"),
    };
    const P: ParamDef = ParamDef {
        name: "p",
        description: "probability",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: ParamDefault::Float(0.5),
    };

    #[test]
    fn values_are_checked_against_kind_and_range() {
        assert_eq!(K.parse_text("3"), Ok(ParamValue::Int(3)));
        assert!(K.parse_text("0").unwrap_err().contains("out of range"));
        assert!(
            K.parse_text("two")
                .unwrap_err()
                .contains("an integer in 1..=8")
        );
        assert_eq!(P.check(ParamValue::Int(1)), Ok(ParamValue::Float(1.0)));
        assert!(P.parse_text("1.5").unwrap_err().contains("out of range"));
        assert!(P.parse_text("NaN").unwrap_err().contains("out of range"));
        assert!(
            MODE.parse_text("gossip")
                .unwrap_err()
                .contains("oracle, flood")
        );
        assert!(
            MODE.check(ParamValue::Int(2))
                .unwrap_err()
                .contains("wrong type")
        );
    }

    #[test]
    fn node_ids_are_checked_against_the_node_count() {
        const HOLDER: ParamDef = ParamDef {
            name: "holder",
            description: "start",
            kind: ParamKind::Node,
            default: ParamDefault::Int(0),
        };
        assert!(
            HOLDER
                .parse_text("-1")
                .unwrap_err()
                .contains("out of range")
        );
        let p =
            AlgoParams::resolve(&[HOLDER], [("holder", HOLDER.parse_text("4").unwrap())]).unwrap();
        assert_eq!(p.node("holder"), 4);
        assert!(p.check_node_ids(&[HOLDER], 5).is_ok());
        let err = p.check_node_ids(&[HOLDER], 4).unwrap_err();
        assert!(err.contains("has 4 nodes (ids 0 to 3)"), "{err}");
    }

    #[test]
    fn resolving_fills_defaults_and_refuses_unknown_names() {
        let defs = [K, MODE];
        let p = AlgoParams::resolve(&defs, [("mode", ParamValue::Text("flood".into()))]).unwrap();
        assert_eq!(p.int("k"), 1);
        assert_eq!(p.word("mode"), "flood");
        let err = AlgoParams::resolve(&defs, [("kk", ParamValue::Int(2))]).unwrap_err();
        assert!(err.contains("known: k, mode"), "{err}");
        let err = AlgoParams::resolve(&[], [("k", ParamValue::Int(2))]).unwrap_err();
        assert!(err.contains("takes none"), "{err}");
    }
}
