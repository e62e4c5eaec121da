//! The process kinds the command line accepts, their parameters, and the translation of
//! `--process KIND --param key=value ...` into a [`ProcessSpec`].
//!
//! The table here is the single source for `ballast list` and for the error messages of
//! `ballast simulate`, so the two can never disagree.

use std::collections::BTreeMap;

use ballast_core::ProcessSpec;
use serde_json::Value;

use crate::error::BadInput;

/// What values a parameter takes.
#[derive(Clone, Copy, Debug)]
pub enum ParamType {
    /// A positive integer in `lo..=hi`.
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
    /// `true` or `false`.
    Bool,
}

impl ParamType {
    /// Human description of the accepted values.
    pub fn describe(self) -> String {
        match self {
            Self::Int { lo, hi } => format!("integer in {lo}..={hi}"),
            Self::Unit => "number in [0, 1]".to_owned(),
            Self::Real => "finite number".to_owned(),
            Self::NonNeg => "finite number >= 0".to_owned(),
            Self::Bool => "true or false".to_owned(),
        }
    }
}

/// One parameter of a process kind.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    /// Name as used in `--param name=value` and in configs.
    pub name: &'static str,
    /// Accepted values.
    pub ty: ParamType,
    /// Default value (as it would be written on the command line), if the parameter has one.
    pub default: Option<&'static str>,
    /// The parameter may be left out even without a default (it then means "not set").
    pub optional: bool,
    /// One-line meaning.
    pub doc: &'static str,
}

/// One process kind of the command line.
#[derive(Clone, Copy, Debug)]
pub struct KindDef {
    /// Kind name for `--process`.
    pub name: &'static str,
    /// Parameters, in display order.
    pub params: &'static [ParamDef],
    /// One-line rule.
    pub doc: &'static str,
}

const D: ParamDef = ParamDef {
    name: "d",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: None,
    optional: false,
    doc: "number of samples",
};
const BETA: ParamDef = ParamDef {
    name: "beta",
    ty: ParamType::Unit,
    default: None,
    optional: false,
    doc: "probability of a second sample",
};
const DELTA: ParamDef = ParamDef {
    name: "delta",
    ty: ParamType::Unit,
    default: None,
    optional: false,
    doc: "fraction of bins (by rank, heaviest first) counted as heavy",
};
const ETA: ParamDef = ParamDef {
    name: "eta",
    ty: ParamType::Unit,
    default: None,
    optional: false,
    doc: "probability of a Quantile step (else One-Choice)",
};
const F: ParamDef = ParamDef {
    name: "f",
    ty: ParamType::Real,
    default: None,
    optional: false,
    doc: "absolute load threshold",
};
const STRICT: ParamDef = ParamDef {
    name: "strict",
    ty: ParamType::Bool,
    default: Some("true"),
    optional: false,
    doc: "accept only x < W/n (false: x <= W/n)",
};
const G: ParamDef = ParamDef {
    name: "g",
    ty: ParamType::NonNeg,
    default: None,
    optional: false,
    doc: "load difference up to which the comparison is unreliable",
};
const SIGMA: ParamDef = ParamDef {
    name: "sigma",
    ty: ParamType::NonNeg,
    default: None,
    optional: false,
    doc: "standard deviation of the Gaussian noise on each load",
};
const TRUNCATE: ParamDef = ParamDef {
    name: "truncate",
    ty: ParamType::Bool,
    default: Some("false"),
    optional: false,
    doc: "truncate each noisy estimate to an integer (the authors' code)",
};
const REL_F: ParamDef = ParamDef {
    name: "f",
    ty: ParamType::Real,
    default: None,
    optional: false,
    doc: "offset from the average load W/n",
};
const OFFSET: ParamDef = ParamDef {
    name: "offset",
    ty: ParamType::Int { lo: 0, hi: 1_000_000 },
    default: Some("1"),
    optional: false,
    doc: "fill level above the rounded-up average (0 = fill to the average)",
};
const TIGHT_BALLS: ParamDef = ParamDef {
    name: "balls",
    ty: ParamType::Int { lo: 1, hi: 1_000_000 },
    default: None,
    optional: true,
    doc: "fixed balls per underloaded sample (default: as many as Packing would)",
};
const MEM_D: ParamDef = ParamDef {
    name: "d",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: Some("1"),
    optional: false,
    doc: "fresh samples per ball",
};
const MEM_K: ParamDef = ParamDef {
    name: "k",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: Some("1"),
    optional: false,
    doc: "cached bins",
};

/// Every process kind the command line accepts.
pub const KINDS: &[KindDef] = &[
    KindDef { name: "one_choice", params: &[], doc: "one sample; the ball goes there" },
    KindDef { name: "two_choice", params: &[], doc: "d_choice with d = 2" },
    KindDef { name: "three_choice", params: &[], doc: "d_choice with d = 3" },
    KindDef { name: "d_choice", params: &[D], doc: "d samples; ball to a least loaded one" },
    KindDef {
        name: "one_plus_beta",
        params: &[BETA],
        doc: "with probability beta a Two-Choice step, else One-Choice",
    },
    KindDef {
        name: "quantile",
        params: &[DELTA],
        doc: "sample i1; if among the ceil(delta n) heaviest, ball to a fresh sample, else to i1",
    },
    KindDef {
        name: "mixed_quantile",
        params: &[DELTA, ETA],
        doc: "with probability eta a Quantile(delta) step, else One-Choice",
    },
    KindDef {
        name: "threshold",
        params: &[F],
        doc: "sample i1; accept if its load <= f, else ball to a fresh sample",
    },
    KindDef {
        name: "mean_thinning",
        params: &[STRICT],
        doc: "sample i1; accept if underloaded (x < W/n), else ball to a fresh sample",
    },
    KindDef {
        name: "g_bounded",
        params: &[G],
        doc: "two samples; loads differing by more than g: the lighter, else the heavier",
    },
    KindDef {
        name: "g_myopic",
        params: &[G],
        doc: "two samples; loads differing by at most g: a fair coin, else the lighter",
    },
    KindDef {
        name: "sigma_noisy_load",
        params: &[SIGMA, TRUNCATE],
        doc: "two samples compared through x + N(0, sigma^2); the lighter estimate wins",
    },
    KindDef {
        name: "relative_threshold",
        params: &[REL_F],
        doc: "sample i1; accept if x < W/n + f, else ball to a fresh sample",
    },
    KindDef {
        name: "twinning",
        params: &[],
        doc: "one sample; underloaded: 2 balls there, else 1 (unit weights)",
    },
    KindDef {
        name: "packing",
        params: &[OFFSET],
        doc: "one sample; underloaded: raise it to ceil(W/n) + offset, else 1 ball (unit weights)",
    },
    KindDef {
        name: "tight_packing",
        params: &[OFFSET, TIGHT_BALLS],
        doc: "reconstructed: one sample; underloaded: Packing's ball count, each to a least loaded bin",
    },
    KindDef {
        name: "memory",
        params: &[MEM_D, MEM_K],
        doc: "d fresh samples plus k cached bins; ball to a least loaded; cache keeps the k least loaded",
    },
    KindDef {
        name: "caching",
        params: &[MEM_D],
        doc: "d fresh samples plus the bin that received the previous ball",
    },
    KindDef {
        name: "always_go_left",
        params: &[D],
        doc: "Voecking: d contiguous groups, one sample each, least loaded, ties to the left",
    },
];

/// Comma-separated list of all kind names.
pub fn kind_names() -> String {
    KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// Human description of a kind's allowed parameters, for error messages.
fn allowed_params(kind: &KindDef) -> String {
    if kind.params.is_empty() {
        return "none".to_owned();
    }
    kind.params
        .iter()
        .map(|p| format!("{} ({})", p.name, p.ty.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parsed parameter value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ParamValue {
    Int(u32),
    Real(f64),
    Bool(bool),
}

impl ParamValue {
    fn to_json(self) -> Value {
        match self {
            Self::Int(v) => Value::from(v),
            Self::Real(v) => Value::from(v),
            Self::Bool(v) => Value::from(v),
        }
    }
}

/// Parses one parameter value. Range checks beyond the type are left to
/// [`ballast_core::RunSpec::validate`], except for integers, which must fit their range to be
/// represented at all.
fn parse_value(kind: &KindDef, def: &ParamDef, raw: &str) -> Result<ParamValue, BadInput> {
    let bad = || {
        BadInput::new(format!(
            "invalid value `{raw}` for parameter `{}` of process `{}` (--param {}=VALUE): expected {}",
            def.name,
            kind.name,
            def.name,
            def.ty.describe()
        ))
    };
    match def.ty {
        ParamType::Int { lo, hi } => {
            let v: u32 = raw.trim().parse().map_err(|_| bad())?;
            if (lo..=hi).contains(&v) {
                Ok(ParamValue::Int(v))
            } else {
                Err(bad())
            }
        }
        ParamType::Unit | ParamType::Real | ParamType::NonNeg => {
            let v: f64 = raw.trim().parse().map_err(|_| bad())?;
            if !v.is_finite() {
                return Err(bad());
            }
            Ok(ParamValue::Real(v))
        }
        ParamType::Bool => match raw.trim() {
            "true" => Ok(ParamValue::Bool(true)),
            "false" => Ok(ParamValue::Bool(false)),
            _ => Err(bad()),
        },
    }
}

/// A process resolved from the command line.
#[derive(Clone, Debug)]
pub struct ResolvedProcess {
    /// The kind name as given (`two_choice`, not `d_choice`).
    pub name: &'static str,
    /// The engine's description.
    pub spec: ProcessSpec,
    /// Every parameter with its value (defaults and implied ones included), for output.
    pub params: BTreeMap<String, Value>,
}

/// Resolves `--process` and its `--param key=value` pairs.
pub fn resolve(kind_name: &str, raw_params: &[String]) -> Result<ResolvedProcess, BadInput> {
    let kind = KINDS.iter().find(|k| k.name == kind_name).ok_or_else(|| {
        BadInput::new(format!(
            "unknown process `{kind_name}` for `--process`; valid kinds: {}",
            kind_names()
        ))
    })?;

    let mut given: BTreeMap<&'static str, ParamValue> = BTreeMap::new();
    for raw in raw_params {
        let (key, value) = raw.split_once('=').ok_or_else(|| {
            BadInput::new(format!(
                "malformed `--param {raw}`: expected key=value; allowed parameters of `{}`: {}",
                kind.name,
                allowed_params(kind)
            ))
        })?;
        let key = key.trim();
        let def = kind.params.iter().find(|p| p.name == key).ok_or_else(|| {
            BadInput::new(format!(
                "unknown parameter `{key}` for process `{}` (--param); allowed parameters: {}",
                kind.name,
                allowed_params(kind)
            ))
        })?;
        if given.contains_key(def.name) {
            return Err(BadInput::new(format!(
                "parameter `{key}` given twice for process `{}` (--param)",
                kind.name
            )));
        }
        given.insert(def.name, parse_value(kind, def, value)?);
    }
    for def in kind.params {
        if !given.contains_key(def.name) {
            match def.default {
                Some(d) => {
                    given.insert(def.name, parse_value(kind, def, d)?);
                }
                None if def.optional => {}
                None => {
                    return Err(BadInput::new(format!(
                        "process `{}` needs parameter `{}` (--param {}=VALUE, {}); allowed parameters: {}",
                        kind.name,
                        def.name,
                        def.name,
                        def.ty.describe(),
                        allowed_params(kind)
                    )))
                }
            }
        }
    }

    let int = |k: &str| match given.get(k) {
        Some(ParamValue::Int(v)) => *v,
        _ => unreachable!("parameter {k} resolved above"),
    };
    let real = |k: &str| match given.get(k) {
        Some(ParamValue::Real(v)) => *v,
        _ => unreachable!("parameter {k} resolved above"),
    };
    let opt_int = |k: &str| match given.get(k) {
        Some(ParamValue::Int(v)) => Some(*v),
        _ => None,
    };
    let boolean = |k: &str| match given.get(k) {
        Some(ParamValue::Bool(v)) => *v,
        _ => unreachable!("parameter {k} resolved above"),
    };

    let spec = match kind.name {
        "one_choice" => ProcessSpec::OneChoice,
        "two_choice" => ProcessSpec::DChoice { d: 2 },
        "three_choice" => ProcessSpec::DChoice { d: 3 },
        "d_choice" => ProcessSpec::DChoice { d: int("d") },
        "one_plus_beta" => ProcessSpec::OnePlusBeta { beta: real("beta") },
        "quantile" => ProcessSpec::Quantile { delta: real("delta") },
        "mixed_quantile" => ProcessSpec::MixedQuantile { delta: real("delta"), eta: real("eta") },
        "threshold" => ProcessSpec::Threshold { f: real("f") },
        "mean_thinning" => ProcessSpec::MeanThinning { strict: boolean("strict") },
        "g_bounded" => ProcessSpec::GBounded { g: real("g") },
        "g_myopic" => ProcessSpec::GMyopic { g: real("g") },
        "sigma_noisy_load" => {
            ProcessSpec::SigmaNoisyLoad { sigma: real("sigma"), truncate: boolean("truncate") }
        }
        "relative_threshold" => ProcessSpec::RelativeThreshold { f: real("f") },
        "twinning" => ProcessSpec::Twinning,
        "packing" => ProcessSpec::Packing { offset: int("offset") },
        "tight_packing" => {
            ProcessSpec::TightPacking { offset: int("offset"), balls: opt_int("balls") }
        }
        "memory" => ProcessSpec::Memory { d: int("d"), k: int("k") },
        "caching" => ProcessSpec::Caching { d: int("d") },
        "always_go_left" => ProcessSpec::AlwaysGoLeft { d: int("d") },
        other => unreachable!("kind {other} listed in KINDS but not mapped"),
    };

    let mut params: BTreeMap<String, Value> =
        given.into_iter().map(|(k, v)| (k.to_owned(), v.to_json())).collect();
    if let ProcessSpec::DChoice { d } = spec {
        params.insert("d".to_owned(), Value::from(d));
    }
    Ok(ResolvedProcess { name: kind.name, spec, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn aliases_map_to_d_choice() {
        let r = resolve("two_choice", &[]).unwrap();
        assert_eq!(r.spec, ProcessSpec::DChoice { d: 2 });
        assert_eq!(r.params["d"], Value::from(2));
        let r = resolve("d_choice", &p(&["d=5"])).unwrap();
        assert_eq!(r.spec, ProcessSpec::DChoice { d: 5 });
    }

    #[test]
    fn defaults_and_errors() {
        let r = resolve("mean_thinning", &[]).unwrap();
        assert_eq!(r.spec, ProcessSpec::MeanThinning { strict: true });
        let e = resolve("one_plus_beta", &[]).unwrap_err().to_string();
        assert!(e.contains("beta"), "{e}");
        let e = resolve("one_choice", &p(&["d=2"])).unwrap_err().to_string();
        assert!(e.contains("unknown parameter `d`") && e.contains("none"), "{e}");
        let e = resolve("nope", &[]).unwrap_err().to_string();
        assert!(e.contains("one_plus_beta"), "{e}");
        let e = resolve("d_choice", &p(&["d=0"])).unwrap_err().to_string();
        assert!(e.contains("1..=1024"), "{e}");
    }

    #[test]
    fn every_kind_resolves_with_its_params() {
        for k in KINDS {
            let params: Vec<String> = k
                .params
                .iter()
                .map(|d| {
                    let v = match d.ty {
                        ParamType::Int { lo, .. } => lo.to_string(),
                        ParamType::Unit | ParamType::Real | ParamType::NonNeg => "0.5".to_owned(),
                        ParamType::Bool => "false".to_owned(),
                    };
                    format!("{}={v}", d.name)
                })
                .collect();
            let r = resolve(k.name, &params).unwrap();
            r.spec.validate().unwrap();
        }
    }
}
