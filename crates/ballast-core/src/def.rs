//! What a process kind declares ([`ProcessDef`]): its name, one-line rule, typed parameters,
//! tie rules, settings and constructor. The registry ([`crate::registry`]) lists the
//! built-in declarations and the registered ones; a process item ([`crate::items`]) declares
//! its own beside its rule. Plain data and the checks every front end shares: the
//! parameters' ranges are checked from the declaration ([`ProcessDef::build`]).

use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue};
use crate::spec::{ProcessSpec, TieBreak};

/// The settings a process can run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The batched setting (decisions on loads frozen at the batch start).
    pub batched: bool,
    /// The τ-delay setting ([`crate::delay`]).
    pub delay: bool,
    /// Non-uniform bin sampling ([`crate::sampling`], on the bin engine).
    pub biased: bool,
}

/// One process kind.
#[derive(Debug)]
pub struct ProcessDef {
    /// Kind name in configs (`kind = "…"`) and for `--process`.
    pub name: &'static str,
    /// One-line rule.
    pub doc: &'static str,
    /// Parameters, in display order.
    pub params: &'static [ParamDef],
    /// The tie-breaking rules it accepts; empty: it never compares loads, so a tie rule
    /// would be ignored and is refused.
    pub ties: &'static [TieBreak],
    /// The settings besides the sequential one.
    pub settings: Settings,
    /// Whether it is defined for unit weights only.
    pub unit_weights_only: bool,
    /// Builds the engine's description from checked parameters.
    pub build: fn(&Args) -> Result<ProcessSpec, ParamError>,
    /// Parameters of a typical instance (`key=value`, space-separated) beyond the required
    /// ones, which [`ProcessDef::example`] fills in itself; empty for most kinds.
    pub example: &'static str,
}

impl ProcessDef {
    /// Its parameters with the shared checks.
    pub fn list(&self) -> ParamList {
        ParamList { what: "process", name: self.name, params: self.params }
    }

    /// The parameter `name`, or the registry's "unknown parameter" message.
    pub fn param(&self, name: &str) -> Result<&'static ParamDef, ParamError> {
        self.list().param(name)
    }

    /// `beta (a number in [0, 1])`, … or `none`.
    pub fn allowed_params(&self) -> String {
        self.list().allowed_params()
    }

    /// Reads a value written as text by the parameter's type ([`ParamList::parse_value`]).
    pub fn parse_value(&self, def: &ParamDef, raw: &str) -> Result<ParamValue, ParamError> {
        self.list().parse_value(def, raw)
    }

    /// Checks one value against its parameter's type.
    pub fn check(&self, def: &ParamDef, v: &ParamValue) -> Result<(), ParamError> {
        self.list().check(def, v)
    }

    /// Checks `given` (each name at most once, every name known, every value of its type),
    /// completes it with the defaults, refuses missing parameters and builds the spec.
    pub fn build(&self, given: &[(&str, ParamValue)]) -> Result<ProcessSpec, ParamError> {
        let args = self.list().args(given)?;
        let mut spec = (self.build)(&args)?;
        // An item's spec carries what its declaration says of weights.
        if let ProcessSpec::Custom(c) = &mut spec {
            c.set_unit_weights_only(self.unit_weights_only);
        }
        spec.validate().map_err(|e| ParamError {
            param: None,
            message: format!("process `{}`: {e}", self.name),
        })?;
        Ok(spec)
    }

    /// A spec built from defaults and the smallest legal value of each required parameter:
    /// what listings ask "which engines run it?" of.
    pub fn example(&self) -> ProcessSpec {
        self.try_example().unwrap_or_else(|e| panic!("example of {}: {e}", self.name))
    }

    /// [`ProcessDef::example`], or why the entry's example does not build.
    pub fn try_example(&self) -> Result<ProcessSpec, ParamError> {
        let mut given: Vec<(&str, ParamValue)> = Vec::new();
        for kv in self.example.split_whitespace() {
            let bad = || ParamError {
                param: None,
                message: format!("example `{kv}` is not key=value of a parameter"),
            };
            let (k, v) = kv.split_once('=').ok_or_else(bad)?;
            let def = self.param(k)?;
            given.push((def.name, self.parse_value(def, v)?));
        }
        let extra = self.params.iter().filter(|p| p.default == ParamDefault::Required).map(|p| {
            let v = match p.ty {
                ParamType::Int { lo, hi } => ParamValue::Num(f64::from(lo.max(2).min(hi))),
                ParamType::Bool => ParamValue::Bool(false),
                ParamType::Choice(names) => ParamValue::Text(names[0].to_owned()),
                ParamType::List => ParamValue::List(vec![0.5]),
                ParamType::Formula(_) => ParamValue::Text("0.5".to_owned()),
                ParamType::Decision(_) => ParamValue::Text("1".to_owned()),
                _ => ParamValue::Num(0.5),
            };
            (p.name, v)
        });
        given.extend(extra);
        self.build(&given)
    }

    /// Whether the process accepts the tie rule `t` (the default, random, always).
    pub fn accepts_tie(&self, t: TieBreak) -> bool {
        t == TieBreak::Random || self.ties.contains(&t)
    }

    /// The registry's message for a tie rule the process does not take.
    pub fn tie_error(&self, t: TieBreak) -> String {
        self.tie_error_in(t, |k, v| crate::error::config_words(&[(k, v)]))
    }

    /// [`ProcessDef::tie_error`] with the setting named by `words(key, value)`: in the words
    /// of the surface that shows it (`--tie-break first` on the command line).
    pub fn tie_error_in(&self, t: TieBreak, words: impl Fn(&str, &str) -> String) -> String {
        if self.ties.is_empty() {
            format!(
                "process `{}` takes no tie-breaking rule (it never picks among equally loaded \
                 samples by one), so `{}` would be ignored; remove it",
                self.name,
                words("tie_break", t.name())
            )
        } else {
            let names: Vec<&str> = self.ties.iter().map(|t| t.name()).collect();
            format!(
                "process `{}` does not support `{}`; allowed tie rules: {}",
                self.name,
                words("tie_break", t.name()),
                names.join(", ")
            )
        }
    }
}

/// The tie rules of a process that never compares loads (none).
pub(crate) const NO_TIES: &[TieBreak] = &[];
/// Every tie rule besides the default (random).
pub(crate) const ALL_TIES: &[TieBreak] =
    &[TieBreak::First, TieBreak::LowestIndex, TieBreak::Position];
/// The sequential setting only.
pub(crate) const SEQUENTIAL_ONLY: Settings =
    Settings { batched: false, delay: false, biased: false };
/// Batched too, and biased sampling.
pub(crate) const BATCHED: Settings = Settings { batched: true, delay: false, biased: true };
/// Batched, delayed and biased sampling.
pub(crate) const BATCHED_AND_DELAY: Settings =
    Settings { batched: true, delay: true, biased: true };
/// Batched, with uniform sampling only.
pub(crate) const BATCHED_UNIFORM_ONLY: Settings = Settings { biased: false, ..BATCHED };
