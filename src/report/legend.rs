//! What a figure's legend calls each series, and how each series is drawn.
//!
//! A series is known by its *key*, written the way results name things: the values of
//! the figure's series columns joined by `, `, an algorithm or variant by its registry
//! name (`me-raymond routing=discovery`) and any other column as `column=value`
//! (`speed_max=2.0`); a paired figure's series without series columns is `a − b`. A
//! column an algorithm lacks (RL has no `routing`) adds nothing to its key.
//!
//! The legend shows a *label* for each key:
//! - the figure spec's `labels` entry for the whole key, if there is one;
//! - otherwise each part in turn: its own `labels` entry, or its default, an algorithm's
//!   paper name from the registry ("RL"), a variant's with its parameter values in words
//!   ("Raymond (route discovery)"), a column value with its unit ("max. speed 2 m/s").
//!
//! `styles` entries pick a series' colour, marker and line the same way, an entry for
//! the whole key first, then one per part, so `"me-rl" = { color = "#000000" }` and
//! `"speed_max=2.0" = { line = "dashed" }` together draw RL at 2 m/s black and dashed.
//! Entries in a figure-spec file's top-level `[labels]` and `[styles]` tables apply to
//! every figure in it; a figure's own entries win.

use crate::plot::{Dash, Look, MarkerShape, Rgb};
use crate::registry::Algorithm;
use std::collections::{BTreeMap, BTreeSet};

/// Separates the parts of a series key.
pub const PART_SEPARATOR: &str = ", ";

/// Separates the two terms of a paired figure's series.
pub const DIFFERENCE: &str = " − ";

/// An author's choice of colour, marker and line for the series an entry names; what it
/// leaves out keeps its default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookChoice {
    /// Line, marker and interval colour.
    pub color: Option<Rgb>,
    /// Marker shape.
    pub marker: Option<MarkerShape>,
    /// Line pattern.
    pub dash: Option<Dash>,
}

impl LookChoice {
    /// `self`, with what it leaves out taken from `other`.
    fn or(self, other: LookChoice) -> LookChoice {
        LookChoice {
            color: self.color.or(other.color),
            marker: self.marker.or(other.marker),
            dash: self.dash.or(other.dash),
        }
    }
}

/// Parses a colour written `#RRGGBB`.
pub fn parse_color(text: &str) -> Option<Rgb> {
    let hex = text.strip_prefix('#')?;
    if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((byte(0)?, byte(2)?, byte(4)?))
}

/// A figure's label and style entries (module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Legend {
    /// Label by series key or key part.
    pub labels: BTreeMap<String, String>,
    /// Look by series key or key part.
    pub looks: BTreeMap<String, LookChoice>,
}

impl Legend {
    /// `figure`'s entries over `file`'s: a figure's own entry wins.
    pub fn over(file: &Legend, figure: &Legend) -> Legend {
        let mut merged = file.clone();
        merged.labels.extend(figure.labels.clone());
        merged.looks.extend(figure.looks.clone());
        merged
    }

    /// Whether no entry is given.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.looks.is_empty()
    }

    /// The legend label of the series with `key` (module docs).
    pub fn label(&self, key: &str) -> String {
        if let Some(label) = self.labels.get(key) {
            return label.clone();
        }
        key.split(PART_SEPARATOR)
            .map(|part| self.part_label(part))
            .collect::<Vec<_>>()
            .join(PART_SEPARATOR)
    }

    fn part_label(&self, part: &str) -> String {
        if let Some(label) = self.labels.get(part) {
            return label.clone();
        }
        if let Some((a, b)) = part.split_once(DIFFERENCE) {
            return format!("{}{DIFFERENCE}{}", self.label(a), self.label(b));
        }
        default_label(part)
    }

    /// The look of the series with `key`: the entries for the whole key, then for each
    /// part, over `default`.
    pub fn look(&self, key: &str, default: Look) -> Look {
        let mut choice = self.looks.get(key).copied().unwrap_or_default();
        for part in key.split(PART_SEPARATOR) {
            if let Some(c) = self.looks.get(part) {
                choice = choice.or(*c);
            }
        }
        Look {
            color: choice.color.unwrap_or(default.color),
            marker: choice.marker.unwrap_or(default.marker),
            dash: choice.dash.unwrap_or(default.dash),
        }
    }

    /// The distinct parts of `keys`, for an error naming what an entry could name.
    pub fn parts(keys: &BTreeSet<String>) -> Vec<String> {
        let mut parts: BTreeSet<&str> = BTreeSet::new();
        for key in keys {
            for part in key.split(PART_SEPARATOR) {
                parts.insert(part);
            }
        }
        parts.into_iter().map(str::to_string).collect()
    }

    /// The entries (label or style) that name none of `keys` or their parts.
    pub fn unmatched(&self, keys: &BTreeSet<String>) -> Vec<String> {
        let mut known: BTreeSet<&str> = BTreeSet::new();
        for key in keys {
            known.insert(key);
            for part in key.split(PART_SEPARATOR) {
                known.insert(part);
                if let Some((a, b)) = part.split_once(DIFFERENCE) {
                    known.extend([a, b]);
                }
            }
        }
        self.labels
            .keys()
            .chain(self.looks.keys())
            .filter(|k| !known.contains(k.as_str()))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// The series key part of `column` = `value` (module docs).
pub fn key_part(column: &str, value: &str, bare: bool) -> String {
    if bare {
        value.to_string()
    } else {
        format!("{column}={value}")
    }
}

/// The default label of one key part: an algorithm or variant in the registry's words,
/// a column value with its unit, anything else as it is.
fn default_label(part: &str) -> String {
    let mut words = part.split_whitespace();
    if let Some(algorithm) = words.next().and_then(Algorithm::parse) {
        let params: Vec<String> = words
            .map(|pv| match pv.split_once('=') {
                Some((p, v)) => algorithm.value_legend(p, v),
                None => pv.to_string(),
            })
            .collect();
        return match params.is_empty() {
            true => algorithm.legend().to_string(),
            false => format!("{} ({})", algorithm.legend(), params.join(", ")),
        };
    }
    match part.split_once('=') {
        Some((column, value)) if !column.contains(' ') => {
            // A parameter of some algorithm, in that algorithm's words.
            let words = Algorithm::all()
                .find(|a| a.params().iter().any(|p| p.name == column))
                .map(|a| a.value_legend(column, value));
            words.unwrap_or_else(|| column_value(column, value))
        }
        _ => part.to_string(),
    }
}

/// `column = value` as a legend says it: with the column's unit where it has one.
fn column_value(column: &str, value: &str) -> String {
    let v = value.strip_suffix(".0").unwrap_or(value);
    match column {
        "speed_max" => format!("max. speed {v} m/s"),
        "speed_min" => format!("min. speed {v} m/s"),
        "rate" => format!("λ = {v}/s"),
        "nodes" => format!("{v} nodes"),
        "pause" => format!("pause {v} s"),
        "range" => format!("range {v} m"),
        "duration" => format!("{v} s simulated"),
        "cs_time" => format!("{v} s in the CS"),
        _ => format!("{column} = {v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_like_a_paper() {
        let legend = Legend::default();
        assert_eq!(legend.label("me-rl"), "RL");
        assert_eq!(
            legend.label("me-raymond routing=discovery"),
            "Raymond (route discovery)"
        );
        assert_eq!(
            legend.label("me-krl forwarding=on k=2"),
            "k-RL (forwarding, k = 2)"
        );
        assert_eq!(legend.label("me-rl, speed_max=2.0"), "RL, max. speed 2 m/s");
        assert_eq!(legend.label("me-rl − me-raymond"), "RL − Raymond");
        assert_eq!(
            legend.label("me-raymond, routing=discovery"),
            "Raymond, route discovery"
        );
        assert_eq!(
            legend.label("Token messages per CS entry"),
            "Token messages per CS entry"
        );
    }

    #[test]
    fn an_entry_for_the_whole_key_wins_over_its_parts() {
        let mut legend = Legend::default();
        legend.labels.insert("me-rl".into(), "ours".into());
        legend.labels.insert("speed_max=2.0".into(), "slow".into());
        assert_eq!(legend.label("me-rl, speed_max=2.0"), "ours, slow");
        legend
            .labels
            .insert("me-rl, speed_max=2.0".into(), "ours at 2 m/s".into());
        assert_eq!(legend.label("me-rl, speed_max=2.0"), "ours at 2 m/s");
        assert_eq!(legend.label("me-rl − me-raymond"), "ours − Raymond");
    }

    #[test]
    fn looks_combine_the_whole_key_and_its_parts() {
        let mut legend = Legend::default();
        legend.looks.insert(
            "me-rl".into(),
            LookChoice {
                color: Some((0, 0, 0)),
                ..Default::default()
            },
        );
        legend.looks.insert(
            "speed_max=2.0".into(),
            LookChoice {
                dash: Some(Dash::Dashed),
                color: Some((1, 2, 3)),
                ..Default::default()
            },
        );
        let look = legend.look("me-rl, speed_max=2.0", Look::nth(0));
        assert_eq!(look.color, (0, 0, 0), "the first part's colour");
        assert_eq!(look.dash, Dash::Dashed);
        assert_eq!(look.marker, Look::nth(0).marker);
        let other = legend.look("me-raymond, speed_max=20.0", Look::nth(1));
        assert_eq!(other, Look::nth(1));
    }

    #[test]
    fn unmatched_entries_are_named() {
        let mut legend = Legend::default();
        legend.labels.insert("me-rl".into(), "RL".into());
        legend.labels.insert("me-r1".into(), "typo".into());
        legend
            .looks
            .insert("me-raymond".into(), LookChoice::default());
        let keys: BTreeSet<String> = ["me-rl − me-raymond".to_string()].into();
        assert_eq!(legend.unmatched(&keys), vec!["me-r1".to_string()]);
    }

    #[test]
    fn colours_are_six_hex_digits() {
        assert_eq!(parse_color("#0072B2"), Some((0, 0x72, 0xB2)));
        assert_eq!(parse_color("0072B2"), None);
        assert_eq!(parse_color("#0072B"), None);
        assert_eq!(parse_color("#00x2B2"), None);
    }
}
