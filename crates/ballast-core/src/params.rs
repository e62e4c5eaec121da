//! Typed parameters, as every registry declares them: a parameter's type, range and
//! default ([`ParamDef`]), the values front ends hand in ([`ParamValue`]), the checked list
//! of one entry's parameters ([`ParamList`], [`Args`]) and the one refusal every front end
//! shows ([`ParamError`]). The registries ([`crate::registry`], and those of other crates)
//! are tables of these declarations.

use std::fmt;

use crate::error::did_you_mean;

/// What values a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamType {
    /// An integer in `lo..=hi`.
    Int {
        /// Smallest accepted value.
        lo: u32,
        /// Largest accepted value.
        hi: u32,
    },
    /// A real number in `[0, 1]`.
    Unit,
    /// Any finite real number.
    Real,
    /// A finite real number `>= 0`.
    NonNeg,
    /// A finite real number strictly greater than the bound (`Above(0.0)`: positive).
    Above(f64),
    /// A finite real number or −∞ (`-inf`).
    RealOrMinusInf,
    /// `true` or `false`.
    Bool,
    /// One of the listed names.
    Choice(&'static [&'static str]),
    /// A non-empty list of finite numbers (a config array, `a,b,c` on the command line);
    /// each entry's range is its process's to check.
    List,
    /// Any text (a file path).
    Text,
    /// A formula evaluated by the process at every decision, in the listed variables
    /// ([`crate::formula::Formula`]), or a number; read as text (`ParamValue::Text`, or
    /// `ParamValue::Num` for a plain number) and compiled by the process.
    Formula(&'static [&'static str]),
    /// A decision formula in the listed variables ([`crate::formula::Formula::parse_decision`]:
    /// the formula grammar plus comparisons, `&&`, `||`, `!` and `if`), read as text.
    Decision(&'static [&'static str]),
}

impl ParamType {
    /// Human description of the accepted values.
    pub fn describe(self) -> String {
        match self {
            Self::Int { lo, hi } => format!("an integer in {lo}..={hi}"),
            Self::Unit => "a number in [0, 1]".to_owned(),
            Self::Real => "a finite number".to_owned(),
            Self::NonNeg => "a finite number >= 0".to_owned(),
            Self::Above(lo) => format!("a finite number > {lo}"),
            Self::RealOrMinusInf => "a finite number or -inf".to_owned(),
            Self::Bool => "true or false".to_owned(),
            Self::Choice(names) => format!("one of {}", names.join(", ")),
            Self::List => "a non-empty list of finite numbers".to_owned(),
            Self::Text => "a text".to_owned(),
            Self::Formula(vars) => format!("a number or a formula in {}", vars.join(", ")),
            Self::Decision(vars) => {
                format!("a number or a formula (with comparisons and if) in {}", vars.join(", "))
            }
        }
    }

    /// Whether values of this type are numbers (configs may give them as formulas).
    pub fn is_numeric(self) -> bool {
        !matches!(
            self,
            Self::Bool
                | Self::Choice(_)
                | Self::List
                | Self::Text
                | Self::Formula(_)
                | Self::Decision(_)
        )
    }
}

/// The default of a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamDefault {
    /// The parameter must be given.
    Required,
    /// Left out, it means "not set" (e.g. no probe cap).
    Unset,
    /// This number.
    Num(f64),
    /// This truth value.
    Bool(bool),
    /// This name (of a [`ParamType::Choice`]).
    Text(&'static str),
}

impl ParamDefault {
    /// The default as a value, if it has one.
    fn value(self) -> Option<ParamValue> {
        match self {
            Self::Required | Self::Unset => None,
            Self::Num(v) => Some(ParamValue::Num(v)),
            Self::Bool(b) => Some(ParamValue::Bool(b)),
            Self::Text(t) => Some(ParamValue::Text(t.to_owned())),
        }
    }

    /// `default 1`, `optional`, or empty for a required parameter, for listings.
    pub fn describe(self) -> String {
        match self {
            Self::Required => String::new(),
            Self::Unset => "optional".to_owned(),
            Self::Num(v) => format!("default {v}"),
            Self::Bool(b) => format!("default {b}"),
            Self::Text(t) => format!("default {t}"),
        }
    }
}

/// One parameter of a process kind.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    /// Name in configs and in `--param name=value`; a dot names a field of a table
    /// (`tau.base` is `tau = { base = … }` in a config).
    pub name: &'static str,
    /// Accepted values.
    pub ty: ParamType,
    /// Default.
    pub default: ParamDefault,
    /// One-line meaning.
    pub doc: &'static str,
}

impl ParamDef {
    /// A parameter of a registry entry (usable in the `const` tables).
    pub const fn new(
        name: &'static str,
        ty: ParamType,
        default: ParamDefault,
        doc: &'static str,
    ) -> Self {
        Self { name, ty, default, doc }
    }
}

/// A parameter value as a front end read it (numbers already evaluated).
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A number (integers too).
    Num(f64),
    /// A truth value.
    Bool(bool),
    /// A name.
    Text(String),
    /// A list of numbers ([`ParamType::List`]).
    List(Vec<f64>),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Num(v) => write!(f, "{v}"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Text(t) => write!(f, "\"{t}\""),
            Self::List(v) => {
                let items: Vec<String> = v.iter().map(f64::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// A refused parameter list: the message every front end shows, and the parameter it is
/// about (for a config's line and column), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter the message is about (`None`: the process as a whole).
    pub param: Option<String>,
    /// The message.
    pub message: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParamError {}

impl ParamError {
    /// A refusal about parameter `param`.
    pub fn at(param: &str, message: String) -> Self {
        Self { param: Some(param.to_owned()), message }
    }

    /// A law's validation error `e` (weights, sampling, …) as the parameter it names: its
    /// field without the `prefix` (`weights.`), and the message prefixed by `what` (`weight
    /// law `gamma``).
    pub(crate) fn of_law(e: &crate::Error, prefix: &str, what: &str) -> Self {
        let param = match e {
            crate::Error::Invalid { field, .. } => field.strip_prefix(prefix).map(str::to_owned),
            _ => None,
        };
        Self { param, message: format!("{what}: {e}") }
    }
}

/// The parameters of one registry entry (a process here; a dynamic model of
/// `ballast-dynamic`), with the checks and messages every front end shares.
#[derive(Clone, Copy, Debug)]
pub struct ParamList {
    /// What the entry is, for messages: `process`, `model`.
    pub what: &'static str,
    /// The entry's name.
    pub name: &'static str,
    /// Its parameters, in display order.
    pub params: &'static [ParamDef],
}

impl ParamList {
    /// The parameter `name`, or the registry's "unknown parameter" message.
    pub fn param(&self, name: &str) -> Result<&'static ParamDef, ParamError> {
        self.params.iter().find(|p| p.name == name).ok_or_else(|| {
            ParamError::at(
                name,
                format!(
                    "unknown parameter `{name}` for {} `{}`{}; allowed parameters: {}",
                    self.what,
                    self.name,
                    did_you_mean(name, self.params.iter().map(|p| p.name)),
                    self.allowed_params()
                ),
            )
        })
    }

    /// `beta (a number in [0, 1])`, … or `none`.
    pub fn allowed_params(&self) -> String {
        if self.params.is_empty() {
            return "none".to_owned();
        }
        let list: Vec<String> =
            self.params.iter().map(|p| format!("{} ({})", p.name, p.ty.describe())).collect();
        list.join(", ")
    }

    /// Reads a value written as text (`--param key=value`; `true`/`false`, a name, or a
    /// number such as `0.5`, `1e3`, `-inf`) by the parameter's type, and checks it.
    pub fn parse_value(&self, def: &ParamDef, raw: &str) -> Result<ParamValue, ParamError> {
        let raw = raw.trim();
        let v = match def.ty {
            ParamType::Bool => match raw {
                "true" => ParamValue::Bool(true),
                "false" => ParamValue::Bool(false),
                _ => ParamValue::Text(raw.to_owned()),
            },
            ParamType::Choice(_)
            | ParamType::Text
            | ParamType::Formula(_)
            | ParamType::Decision(_) => ParamValue::Text(raw.to_owned()),
            ParamType::List => {
                match raw.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>() {
                    Ok(v) => ParamValue::List(v),
                    Err(_) => ParamValue::Text(raw.to_owned()),
                }
            }
            _ => match raw.parse::<f64>() {
                Ok(x) if !x.is_nan() => ParamValue::Num(x),
                _ => ParamValue::Text(raw.to_owned()),
            },
        };
        self.check(def, &v)?;
        Ok(v)
    }

    /// Checks one value against its parameter's type.
    pub fn check(&self, def: &ParamDef, v: &ParamValue) -> Result<(), ParamError> {
        let ok = match (def.ty, v) {
            (ParamType::Int { lo, hi }, ParamValue::Num(x)) => {
                x.fract() == 0.0 && (f64::from(lo)..=f64::from(hi)).contains(x)
            }
            (ParamType::Unit, ParamValue::Num(x)) => (0.0..=1.0).contains(x),
            (ParamType::Real, ParamValue::Num(x)) => x.is_finite(),
            (ParamType::NonNeg, ParamValue::Num(x)) => x.is_finite() && *x >= 0.0,
            (ParamType::Above(lo), ParamValue::Num(x)) => x.is_finite() && *x > lo,
            (ParamType::RealOrMinusInf, ParamValue::Num(x)) => {
                x.is_finite() || *x == f64::NEG_INFINITY
            }
            (ParamType::Bool, ParamValue::Bool(_)) => true,
            (ParamType::Choice(names), ParamValue::Text(t)) => names.contains(&t.as_str()),
            (ParamType::List, ParamValue::List(v)) => {
                !v.is_empty() && v.iter().all(|x| x.is_finite())
            }
            (ParamType::Text, ParamValue::Text(_)) => true,
            (ParamType::Formula(_), ParamValue::Num(x)) => x.is_finite(),
            // A constant position: the same sample every time.
            (ParamType::Decision(_), ParamValue::Num(x)) => x.is_finite(),
            (ParamType::Decision(vars), ParamValue::Text(t)) => {
                return crate::formula::Formula::parse_decision(t, vars).map(|_| ()).map_err(
                    |why| {
                        ParamError::at(
                            def.name,
                            format!(
                                "invalid value for parameter `{}` of {} `{}`: {why}",
                                def.name, self.what, self.name
                            ),
                        )
                    },
                )
            }
            (ParamType::Formula(vars), ParamValue::Text(t)) => {
                return crate::formula::Formula::parse(t, vars).map(|_| ()).map_err(|why| {
                    ParamError::at(
                        def.name,
                        format!(
                            "invalid value for parameter `{}` of {} `{}`: {why}",
                            def.name, self.what, self.name
                        ),
                    )
                })
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        let hint = match (def.ty, v) {
            (ParamType::Choice(names), ParamValue::Text(t)) => {
                did_you_mean(t, names.iter().copied())
            }
            _ => String::new(),
        };
        Err(ParamError::at(
            def.name,
            format!(
                "invalid value {v} for parameter `{}` of {} `{}`: expected {}{hint}",
                def.name,
                self.what,
                self.name,
                def.ty.describe()
            ),
        ))
    }

    /// Checks `given` (each name at most once, every name known, every value of its type)
    /// and completes it with the defaults, refusing missing parameters.
    pub fn args(&self, given: &[(&str, ParamValue)]) -> Result<Args, ParamError> {
        let mut values: Vec<(&'static str, Option<ParamValue>)> =
            self.params.iter().map(|p| (p.name, None)).collect();
        for (name, v) in given {
            let def = self.param(name)?;
            self.check(def, v)?;
            let slot = values.iter_mut().find(|(n, _)| n == name).expect("known parameter");
            if slot.1.is_some() {
                return Err(ParamError::at(
                    name,
                    format!("parameter `{name}` given twice for {} `{}`", self.what, self.name),
                ));
            }
            slot.1 = Some(v.clone());
        }
        for (def, (_, slot)) in self.params.iter().zip(values.iter_mut()) {
            if slot.is_none() {
                match def.default {
                    ParamDefault::Required => {
                        return Err(ParamError {
                            param: None,
                            message: format!(
                                "{} `{}` needs parameter `{}` ({}); allowed parameters: {}",
                                self.what,
                                self.name,
                                def.name,
                                def.ty.describe(),
                                self.allowed_params()
                            ),
                        })
                    }
                    d => *slot = d.value(),
                }
            }
        }
        Ok(Args { list: *self, values })
    }
}

/// The parameters of one build, checked and completed with defaults.
#[derive(Clone, Debug)]
pub struct Args {
    list: ParamList,
    values: Vec<(&'static str, Option<ParamValue>)>,
}

impl Args {
    /// The entry these parameters were checked for (its name: a process kind, a model).
    pub fn kind(&self) -> &'static str {
        self.list.name
    }

    /// Every parameter of the entry in declaration order, with its value (`None`: an
    /// optional parameter not given).
    pub fn values(&self) -> &[(&'static str, Option<ParamValue>)] {
        &self.values
    }

    fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.as_ref())
    }

    /// A numeric parameter of the entry (checked, so present unless it is optional).
    pub fn num(&self, name: &str) -> f64 {
        self.opt_num(name).unwrap_or_else(|| panic!("{}: no number `{name}`", self.list.name))
    }

    /// An optional numeric parameter.
    pub fn opt_num(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(ParamValue::Num(v)) => Some(*v),
            _ => None,
        }
    }

    /// An integer parameter (checked integral and in range).
    pub fn int(&self, name: &str) -> u32 {
        self.num(name) as u32
    }

    /// An optional integer parameter.
    pub fn opt_int(&self, name: &str) -> Option<u32> {
        self.opt_num(name).map(|v| v as u32)
    }

    /// A list parameter, if given or defaulted.
    pub fn list(&self, name: &str) -> Option<&[f64]> {
        match self.get(name) {
            Some(ParamValue::List(v)) => Some(v),
            _ => None,
        }
    }

    /// A formula parameter's source text (a number given as a number becomes its text).
    pub fn formula(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Some(ParamValue::Text(t)) => Some(t.clone()),
            Some(ParamValue::Num(x)) => Some(format!("{x:?}")),
            _ => None,
        }
    }

    /// A boolean parameter.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some(ParamValue::Bool(true)))
    }

    /// A name parameter, if given or defaulted.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(ParamValue::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether the user gave `name` (not a default).
    pub fn given(&self, name: &str) -> bool {
        self.get(name).is_some() && self.list.param(name).is_ok_and(|p| p.default.value().is_none())
    }

    /// A refusal about parameter `name`.
    pub fn refuse(&self, name: &str, why: impl fmt::Display) -> ParamError {
        ParamError::at(name, format!("{} `{}`: {why}", self.list.what, self.list.name))
    }
}
