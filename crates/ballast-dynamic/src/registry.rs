//! The model registry: one [`ModelDef`] per round-based model, the declaration that the
//! runner's `kind = "dynamic"` configs and `ballast list` read. Parameters are the core
//! registry's typed [`ParamDef`]s, checked by [`ParamList`], so a model's messages (unknown
//! parameter with the nearest name, wrong type, missing value) read like a process's.
//!
//! A model has two kinds of inputs: the parameters of its table in a config
//! (`process = { kind = "leaky_bins", d = 2 }`, [`ModelDef::params`]) and the sizes of the
//! point it runs at (`n`, `m` or `lambda`, [`ModelDef::point`]), which the caller supplies.
//!
//! ```
//! use ballast_core::registry::ParamValue;
//! use ballast_dynamic::registry::find;
//! use ballast_dynamic::DynamicSpec;
//!
//! let def = find("rbb").unwrap();
//! let point = |name: &str| match name {
//!     "n" => Some(100.0),
//!     "m" => Some(500.0),
//!     _ => None,
//! };
//! let spec = def.build(&[("d", ParamValue::Num(2.0))], &point).unwrap();
//! assert!(matches!(spec, DynamicSpec::Rbb(_)));
//! let e = def.build(&[("dd", ParamValue::Num(2.0))], &point).unwrap_err();
//! assert!(e.to_string().contains("did you mean `d`"), "{e}");
//! ```

use ballast_core::registry::{
    did_you_mean, Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType,
};

use crate::{
    Arrivals, AzarConfig, Beta, DeletionConfig, DeletionLaw, DynamicSpec, Insertion, LeakyConfig,
    RbbConfig, RethrowView, Workload,
};

/// One round-based model.
#[derive(Debug)]
pub struct ModelDef {
    /// Kind name in configs (`process = { kind = "…" }`).
    pub name: &'static str,
    /// One-line rule.
    pub doc: &'static str,
    /// Parameters of its table, in display order.
    pub params: &'static [ParamDef],
    /// The point values it reads (name, meaning).
    pub point: &'static [(&'static str, &'static str)],
    /// Builds the model from checked parameters and the point values.
    pub build: fn(&Args, &Point<'_>) -> Result<DynamicSpec, ParamError>,
    /// The state before the first round without a `start`, and what a `start` (a kind of
    /// the core registry's `STARTS`) must satisfy.
    pub start: &'static str,
}

/// The point values a model reads, by name (`None`: not set at this point).
pub type Point<'a> = dyn Fn(&str) -> Option<f64> + 'a;

impl ModelDef {
    /// Its parameters with the shared checks.
    pub fn list(&self) -> ParamList {
        ParamList { what: "model", name: self.name, params: self.params }
    }

    /// Checks `given`, completes it with the defaults and builds the model at `point`
    /// (validated: sizes in range).
    pub fn build(
        &self,
        given: &[(&str, ballast_core::registry::ParamValue)],
        point: &Point<'_>,
    ) -> Result<DynamicSpec, ParamError> {
        self.build_from(given, point, None)
    }

    /// [`ModelDef::build`] from the start state `start` (`None`: the model's own start,
    /// [`ModelDef::start`]); a start the model cannot take is refused with the reason.
    pub fn build_from(
        &self,
        given: &[(&str, ballast_core::registry::ParamValue)],
        point: &Point<'_>,
        start: Option<ballast_core::Start>,
    ) -> Result<DynamicSpec, ParamError> {
        let args = self.list().args(given)?;
        let spec = (self.build)(&args, point)?.with_start(start);
        spec.validate().map_err(|e| ParamError {
            param: None,
            message: format!("model `{}`: {e}", self.name),
        })?;
        Ok(spec)
    }
}

/// The number of choices per ball.
const D: ParamDef = ParamDef {
    name: "d",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: ParamDefault::Num(1.0),
    doc: "bins sampled per (re-)thrown ball; the ball joins a least loaded one",
};

/// A point value that must be a count (`n`, `m`).
fn count(point: &Point<'_>, model: &str, name: &str) -> Result<u64, ParamError> {
    let v = point(name).ok_or_else(|| {
        ParamError::at(name, format!("model `{model}` needs the point parameter `{name}`"))
    })?;
    if v.fract() != 0.0 || !(0.0..=u64::MAX as f64).contains(&v) {
        return Err(ParamError::at(
            name,
            format!("model `{model}`: `{name}` = {v}: expected a non-negative integer"),
        ));
    }
    Ok(v as u64)
}

/// The bins of a point.
fn bins(point: &Point<'_>, model: &str) -> Result<usize, ParamError> {
    let n = count(point, model, "n")?;
    usize::try_from(n)
        .map_err(|_| ParamError::at("n", format!("model `{model}`: n = {n} is too large")))
}

fn build_rbb(a: &Args, point: &Point<'_>) -> Result<DynamicSpec, ParamError> {
    let (n, m, d) = (bins(point, "rbb")?, count(point, "rbb", "m")?, a.int("d"));
    Ok(DynamicSpec::Rbb(if d == 1 {
        RbbConfig::one_choice(n, m)
    } else {
        RbbConfig::d_choice(n, m, d, RethrowView::default())
    }))
}

fn build_leaky(a: &Args, point: &Point<'_>) -> Result<DynamicSpec, ParamError> {
    let n = bins(point, "leaky_bins")?;
    let lambda = point("lambda").ok_or_else(|| {
        ParamError::at("lambda", "model `leaky_bins` needs the point parameter `lambda`".into())
    })?;
    let arrivals = match a.text("arrivals") {
        Some("poisson") => Arrivals::Poisson,
        Some("fixed") => Arrivals::Fixed,
        _ => Arrivals::Binomial,
    };
    Ok(DynamicSpec::Leaky(LeakyConfig::new(n, lambda, a.int("d")).with_arrivals(arrivals)))
}

fn build_azar(a: &Args, point: &Point<'_>) -> Result<DynamicSpec, ParamError> {
    let (n, m) = (bins(point, "infinite_azar")?, count(point, "infinite_azar", "m")?);
    Ok(DynamicSpec::Azar(AzarConfig::new(n, m, a.int("d"))))
}

/// The deletion law of a deletion model.
const DELETION: ParamDef = ParamDef {
    name: "deletion",
    ty: ParamType::Choice(DeletionLaw::NAMES),
    default: ParamDefault::Text("uniform_bin"),
    doc: "which ball a deletion removes: one of a uniform non-empty bin, a uniform ball, or \
          the oldest ball",
};

/// Steps per observed round of a deletion model.
const STEPS: ParamDef = ParamDef {
    name: "steps_per_round",
    ty: ParamType::Int { lo: 0, hi: u32::MAX },
    default: ParamDefault::Num(0.0),
    doc: "steps per observed round (0: n)",
};

/// The engine of a deletion model.
const ENGINE: ParamDef = ParamDef {
    name: "engine",
    ty: ParamType::Choice(&["bins", "levels"]),
    default: ParamDefault::Text("bins"),
    doc: "bins: one load per bin (every law); levels: bin counts per load only (uniform_bin \
          and uniform_ball deletions without reinsertion)",
};

/// The deletion law, the steps per round and the engine of a deletion model's arguments.
fn deletion_common(a: &Args, n: usize, cfg: &mut DeletionConfig) {
    cfg.levels = a.text("engine") == Some("levels");
    let law = a.text("deletion").and_then(DeletionLaw::from_name);
    cfg.deletion = law.unwrap_or(DeletionLaw::UniformBin);
    let steps = a.int("steps_per_round");
    cfg.steps_per_round = if steps == 0 { n as u64 } else { u64::from(steps) };
}

fn build_random_deletions(a: &Args, point: &Point<'_>) -> Result<DynamicSpec, ParamError> {
    let n = bins(point, "random_deletions")?;
    let beta = match (a.opt_num("beta"), a.formula("beta")) {
        (Some(x), _) => Beta::constant(x),
        (None, Some(f)) => Beta::parse(&f),
        (None, None) => Err("`beta` is required".into()),
    }
    .map_err(|m| ParamError::at("beta", format!("model `random_deletions`: {m}")))?;
    let mut cfg = DeletionConfig::new(n, Workload::Random(beta));
    cfg.insertion = Insertion::Greedy(a.int("d"));
    deletion_common(a, n, &mut cfg);
    Ok(DynamicSpec::Deletions(cfg))
}

fn build_insert_delete(a: &Args, point: &Point<'_>) -> Result<DynamicSpec, ParamError> {
    let model = "insert_delete";
    let n = bins(point, model)?;
    let workload = match a.text("workload") {
        Some("schedule") => {
            let path = a.text("schedule").filter(|p| !p.is_empty()).ok_or_else(|| {
                ParamError::at(
                    "schedule",
                    format!("model `{model}`: workload \"schedule\" needs `schedule` (the file)"),
                )
            })?;
            let s = crate::workload::read_schedule(std::path::Path::new(path))
                .map_err(|m| ParamError::at("schedule", format!("model `{model}`: {m}")))?;
            Workload::Schedule(std::sync::Arc::new(s))
        }
        _ => Workload::Phases { m: count(point, model, "m")?, phase: u64::from(a.int("phase")) },
    };
    let mut cfg = DeletionConfig::new(n, workload);
    cfg.insertion = match a.text("rule") {
        Some("one_choice") => Insertion::Greedy(1),
        Some("one_plus_beta") => Insertion::OnePlusBeta(a.num("beta")),
        _ => Insertion::Greedy(a.int("d")),
    };
    cfg.reinsert = a.flag("reinsert");
    deletion_common(a, n, &mut cfg);
    Ok(DynamicSpec::Deletions(cfg))
}

/// Every model, in display order.
pub static MODELS: &[ModelDef] = &[
    ModelDef {
        name: "rbb",
        doc: "repeated balls-into-bins: each round every non-empty bin releases one ball, \
              which is re-thrown (d = 1: uniformly; d >= 2: to a least loaded of d samples)",
        params: &[D],
        point: &[("n", "bins"), ("m", "balls, constant over rounds")],
        build: build_rbb,
        start: "the uniform load vector (m mod n bins one ball more); a `start` must hold \
                exactly m balls",
    },
    ModelDef {
        name: "leaky_bins",
        doc: "each round about λn balls arrive, each joins a least loaded of d samples of the \
              loads at the round start, then every non-empty bin deletes one ball",
        params: &[
            D,
            ParamDef {
                name: "arrivals",
                ty: ParamType::Choice(&["binomial", "poisson", "fixed"]),
                default: ParamDefault::Text("binomial"),
                doc: "law of the arrivals per round: Binomial(n, λ), Poisson(λn) or ⌊λn⌋",
            },
        ],
        point: &[("n", "bins"), ("lambda", "arrival rate per bin, in [0, 1)")],
        build: build_leaky,
        start: "empty bins; any `start`",
    },
    ModelDef {
        name: "infinite_azar",
        doc: "each step deletes a uniformly chosen ball, then one new ball joins a least \
              loaded of d samples",
        params: &[ParamDef {
            name: "d",
            ty: ParamType::Int { lo: 1, hi: 1024 },
            default: ParamDefault::Required,
            doc: "bins sampled per new ball",
        }],
        point: &[("n", "bins"), ("m", "balls, constant over rounds")],
        build: build_azar,
        start: "the uniform load vector (m mod n bins one ball more); a `start` must hold \
                exactly m balls",
    },
    ModelDef {
        name: "random_deletions",
        doc: "each step inserts a ball with probability β(t) by Greedy[d], else deletes one \
              (default: from a uniform non-empty bin); Berenbrink, Friedetzky, Kling, Nagel, \
              arXiv 2510.14798",
        params: &[
            ParamDef {
                name: "beta",
                ty: ParamType::Formula(crate::workload::BETA_VARS),
                default: ParamDefault::Required,
                doc: "insertion probability: a number in [0, 1] or a formula in t (the step, \
                      from 0) and n, clamped to [0, 1]",
            },
            ParamDef {
                name: "d",
                ty: ParamType::Int { lo: 1, hi: 64 },
                default: ParamDefault::Num(2.0),
                doc: "bins sampled per inserted ball; it joins a least loaded one",
            },
            DELETION,
            STEPS,
            ENGINE,
        ],
        point: &[("n", "bins")],
        build: build_random_deletions,
        start: "empty bins; any `start` (its balls count as one-choice balls, older in lower \
                bins)",
    },
    ModelDef {
        name: "insert_delete",
        doc: "a workload of insertions and deletions: fill to m, then phases of deletions and \
              insertions, or a schedule file; Greedy[d], (1+β) or One-Choice; optional \
              reinsertion of deleted balls with their own choices",
        params: &[
            ParamDef {
                name: "workload",
                ty: ParamType::Choice(&["phases", "schedule"]),
                default: ParamDefault::Text("phases"),
                doc: "phases: m insertions, then `phase` deletions and `phase` insertions for \
                      ever; schedule: the steps of the file `schedule`",
            },
            ParamDef {
                name: "phase",
                ty: ParamType::Int { lo: 1, hi: u32::MAX },
                default: ParamDefault::Num(1.0),
                doc: "deletions (then insertions) per phase of the `phases` workload",
            },
            ParamDef {
                name: "schedule",
                ty: ParamType::Text,
                default: ParamDefault::Unset,
                doc: "the schedule file of workload \"schedule\" (relative to the config's \
                      directory): lines `+`, `-`, `+COUNT`, `-COUNT`; after a line `*` the \
                      rest repeats (without one, all of it)",
            },
            ParamDef {
                name: "rule",
                ty: ParamType::Choice(&["greedy", "one_choice", "one_plus_beta"]),
                default: ParamDefault::Text("greedy"),
                doc: "insertion rule: Greedy[d], One-Choice, or (1+β) (two samples with \
                      probability β)",
            },
            ParamDef {
                name: "d",
                ty: ParamType::Int { lo: 1, hi: 64 },
                default: ParamDefault::Num(2.0),
                doc: "samples of rule greedy",
            },
            ParamDef {
                name: "beta",
                ty: ParamType::Unit,
                default: ParamDefault::Num(0.5),
                doc: "probability of two samples under rule one_plus_beta",
            },
            DELETION,
            ParamDef {
                name: "reinsert",
                ty: ParamType::Bool,
                default: ParamDefault::Bool(false),
                doc: "an insertion brings back the earliest deleted ball not yet back, with \
                      its own choices (rules of at most two choices)",
            },
            STEPS,
            ENGINE,
        ],
        point: &[("n", "bins"), ("m", "balls inserted before the phases (workload phases)")],
        build: build_insert_delete,
        start: "empty bins; any `start` (its balls count as one-choice balls, older in lower \
                bins)",
    },
];

/// The model `name`, or a message with the known names and the nearest one.
pub fn find(name: &str) -> Result<&'static ModelDef, ParamError> {
    MODELS.iter().find(|m| m.name == name).ok_or_else(|| {
        ParamError::at(
            "kind",
            format!(
                "unknown model `{name}`{}; expected one of {}",
                did_you_mean(name, MODELS.iter().map(|m| m.name)),
                names().join(", ")
            ),
        )
    })
}

/// The model names, in display order.
pub fn names() -> Vec<&'static str> {
    MODELS.iter().map(|m| m.name).collect()
}

#[cfg(test)]
mod tests {
    use ballast_core::registry::ParamValue;

    use super::*;

    fn point(name: &str) -> Option<f64> {
        match name {
            "n" => Some(50.0),
            "m" => Some(200.0),
            "lambda" => Some(0.5),
            _ => None,
        }
    }

    #[test]
    fn every_model_builds_at_a_point_and_refuses_what_it_does_not_take() {
        for def in MODELS {
            let mut given = Vec::new();
            for p in def.params.iter().filter(|p| p.default == ParamDefault::Required) {
                given.push((p.name, ParamValue::Num(if p.name == "d" { 2.0 } else { 0.5 })));
            }
            let spec = def.build(&given, &point).unwrap_or_else(|e| panic!("{}: {e}", def.name));
            assert_eq!(spec.kind(), def.name, "{spec:?}");
            let e = def.build(&[("dd", ParamValue::Num(2.0))], &point).unwrap_err();
            assert!(e.to_string().contains("unknown parameter `dd` for model"), "{e}");
            assert!(e.to_string().contains("did you mean `d`"), "{e}");
            let e = def.build(&given, &|_| None).unwrap_err();
            assert!(e.to_string().contains("needs the point parameter"), "{e}");
        }
        assert!(find("rbbb").unwrap_err().to_string().contains("did you mean `rbb`"));
        let leaky = find("leaky_bins").unwrap();
        let e = leaky.build(&[("arrivals", ParamValue::Text("poison".into()))], &point);
        assert!(e.unwrap_err().to_string().contains("did you mean `poisson`"));
    }
}
