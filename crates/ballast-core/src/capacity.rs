//! Heterogeneous bins (`docs/capacities.md`): bin i has a capacity `c_i > 0`, and every
//! decision and every statistic of the run reads the normalised load `y_i = x_i / c_i`
//! (`x_i` the weight the bin holds).
//!
//! Definitions, for `W = Σ x_i` and `C = Σ c_i`:
//!
//! - the *average* is `W / C`, the normalised load every bin would have if the weight were
//!   spread in proportion to capacity;
//! - the gap is `max_i y_i − W / C`; the maximum and minimum load are `max_i y_i` and
//!   `min_i y_i`; `normalized(i)` is `y_i − W / C`; an empty bin is one with `x_i = 0`.
//!
//! The capacities are a setting of a series, like a sampling law: [`Capacities`] is the law
//! of the capacities ([`CapacityLaw`]), whether bins are sampled uniformly (the default)
//! or in proportion to capacity (a weighted random choice, the load-balancer case), and
//! what decisions compare ([`CapacityDecision`]: normalised loads, or raw loads for a
//! capacity-unaware balancer whose gap is still measured on normalised loads). The
//! random laws draw the capacities once from their own `seed` (a parameter), so every run of
//! a point sees the same bins; the runs differ only in the balls.
//!
//! A ball of weight w adds w / c_i to the normalised load of its bin, so the bin engine
//! runs every process on [`crate::capacity_loads::CapacityLoads`] (a load state whose loads are the `y_i`) with no
//! change to any rule. The level engine refuses capacities (bins of one load level are no
//! longer exchangeable). Without capacities ([`Capacities::is_unit`]) nothing here runs.

use std::fmt;
use std::sync::Arc;

use rand_distr::Distribution;

use crate::error::did_you_mean;
use crate::input::TextError;
use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue};
use crate::sampling::AliasTable;
use crate::Error;

/// How bins are sampled under capacities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CapacitySampling {
    /// Every bin equally likely (the classical sampling).
    #[default]
    Uniform,
    /// Bin i with probability `c_i / C` (an alias table over the capacities).
    Proportional,
}

impl CapacitySampling {
    /// The names in configs and on the command line.
    pub const NAMES: &'static [&'static str] = &["uniform", "proportional"];

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Proportional => "proportional",
        }
    }
}

/// What the decisions compare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CapacityDecision {
    /// The normalised loads `x_i / c_i` (the default).
    #[default]
    Normalised,
    /// The raw loads `x_i`: a capacity-unaware balancer, whose gap is still measured on
    /// normalised loads (the ablation of the normalisation).
    Raw,
}

impl CapacityDecision {
    /// The names in configs and on the command line.
    pub const NAMES: &'static [&'static str] = &["normalised", "raw"];

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Normalised => "normalised",
            Self::Raw => "raw",
        }
    }
}

/// The law of the capacities.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum CapacityLaw {
    /// Every capacity 1: no capacities (today's path).
    #[default]
    Unit,
    /// The first `round(fraction · n)` bins have capacity `factor`, the others 1.
    TwoClass {
        /// Fraction of the bins in the large class, in `[0, 1]`.
        fraction: f64,
        /// Capacity of a large bin, `> 0`.
        factor: f64,
    },
    /// Capacities i.i.d. uniform on `[low, high]`, drawn from `seed`.
    Uniform {
        /// Smallest capacity, `> 0`.
        low: f64,
        /// Largest capacity, `>= low`.
        high: f64,
        /// Seed of the draw.
        seed: u64,
    },
    /// Capacities i.i.d. `exp(σ Z − σ²/2)` (log-normal with mean 1), drawn from `seed`.
    LogNormal {
        /// σ, `>= 0`.
        sigma: f64,
        /// Seed of the draw.
        seed: u64,
    },
    /// One capacity per bin (read from a file by the front ends).
    Explicit(Arc<[f64]>),
}

/// The capacities of a run: their law and how bins are sampled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capacities {
    /// The law of the capacities.
    pub law: CapacityLaw,
    /// Uniform or capacity-proportional bin sampling.
    pub sampling: CapacitySampling,
    /// What the decisions compare (normalised loads unless asked otherwise).
    pub decide: CapacityDecision,
}

impl Capacities {
    /// No capacities (every bin capacity 1, the classical run).
    pub const UNIT: Self = Self {
        law: CapacityLaw::Unit,
        sampling: CapacitySampling::Uniform,
        decide: CapacityDecision::Normalised,
    };

    /// Whether the run has no capacities (the classical path, untouched).
    pub fn is_unit(&self) -> bool {
        self.law == CapacityLaw::Unit
    }

    /// The kind's name (`file` for explicit capacities).
    pub fn name(&self) -> &'static str {
        match self.law {
            CapacityLaw::Unit => "unit",
            CapacityLaw::TwoClass { .. } => "two_class",
            CapacityLaw::Uniform { .. } => "uniform",
            CapacityLaw::LogNormal { .. } => "lognormal",
            CapacityLaw::Explicit(_) => "file",
        }
    }

    /// The numeric parameters by name (not the file, not the sampling).
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match self.law {
            CapacityLaw::TwoClass { fraction, factor } => {
                vec![("fraction", fraction), ("factor", factor)]
            }
            CapacityLaw::Uniform { low, high, seed } => {
                vec![("low", low), ("high", high), ("seed", seed as f64)]
            }
            CapacityLaw::LogNormal { sigma, seed } => vec![("sigma", sigma), ("seed", seed as f64)],
            CapacityLaw::Unit | CapacityLaw::Explicit(_) => Vec::new(),
        }
    }

    /// A text that identifies the capacities, for checkpoint keys (explicit capacities by
    /// their number and a 64-bit FNV-1a hash of their bits).
    pub fn fingerprint(&self) -> String {
        match &self.law {
            CapacityLaw::Explicit(c) => {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in c.iter().flat_map(|x| x.to_bits().to_le_bytes()) {
                    h ^= u64::from(b);
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
                format!(
                    "file {} capacities fnv {h:016x} {:?} {:?}",
                    c.len(),
                    self.sampling,
                    self.decide
                )
            }
            other => format!("{other:?} {:?} {:?}", self.sampling, self.decide),
        }
    }

    /// Checks the law against `n` bins: finite positive capacities, one per bin, and a
    /// finite total.
    pub fn validate(&self, n: u64) -> Result<(), Error> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        match &self.law {
            CapacityLaw::Unit => Ok(()),
            CapacityLaw::TwoClass { fraction, factor } => {
                if !(0.0..=1.0).contains(fraction) {
                    return Err(Error::invalid(
                        "capacities.fraction",
                        fraction,
                        "a number in [0, 1]",
                    ));
                }
                if !positive(*factor) {
                    return Err(Error::invalid("capacities.factor", factor, "a finite number > 0"));
                }
                Ok(())
            }
            CapacityLaw::Uniform { low, high, .. } => {
                if !positive(*low) {
                    return Err(Error::invalid("capacities.low", low, "a finite number > 0"));
                }
                if !(high.is_finite() && high >= low) {
                    return Err(Error::invalid("capacities.high", high, "a finite number >= low"));
                }
                Ok(())
            }
            CapacityLaw::LogNormal { sigma, .. } => {
                if !(sigma.is_finite() && (0.0..=20.0).contains(sigma)) {
                    return Err(Error::invalid("capacities.sigma", sigma, "a number in [0, 20]"));
                }
                Ok(())
            }
            CapacityLaw::Explicit(c) => {
                if c.len() as u64 != n {
                    return Err(Error::invalid(
                        "capacities",
                        format!("{} capacities for n = {n} bins", c.len()),
                        "one capacity per bin",
                    ));
                }
                if let Some((i, x)) = c.iter().enumerate().find(|(_, x)| !positive(**x)) {
                    return Err(Error::invalid(
                        "capacities",
                        format!("capacity {x} of bin {}", i + 1),
                        "finite capacities > 0",
                    ));
                }
                if !c.iter().sum::<f64>().is_finite() {
                    return Err(Error::invalid("capacities", "an infinite total", "a finite sum"));
                }
                Ok(())
            }
        }
    }

    /// The capacity of every bin on `n` bins (all 1 for [`CapacityLaw::Unit`]). Assumes
    /// [`Capacities::validate`] passed. O(n); the random laws draw from their own seed.
    pub fn values(&self, n: usize) -> Vec<f64> {
        match &self.law {
            CapacityLaw::Unit => vec![1.0; n],
            CapacityLaw::TwoClass { fraction, factor } => {
                let k = crate::Sampling::heavy_bins(*fraction, n as u64) as usize;
                (0..n).map(|i| if i < k { *factor } else { 1.0 }).collect()
            }
            CapacityLaw::Uniform { low, high, seed } => {
                let mut rng = crate::rng::sim_rng(*seed);
                let d = rand_distr::Uniform::new_inclusive(*low, *high).expect("validated range");
                (0..n).map(|_| d.sample(&mut rng)).collect()
            }
            CapacityLaw::LogNormal { sigma, seed } => {
                let mut rng = crate::rng::sim_rng(*seed);
                let d = rand_distr::LogNormal::new(-sigma * sigma / 2.0, *sigma)
                    .expect("validated sigma");
                (0..n).map(|_| d.sample(&mut rng).max(f64::MIN_POSITIVE)).collect()
            }
            CapacityLaw::Explicit(c) => c.to_vec(),
        }
    }

    /// The alias table of capacity-proportional sampling on the capacities `c` (`None` for
    /// uniform sampling).
    pub fn table(&self, c: &[f64]) -> Option<AliasTable> {
        (self.sampling == CapacitySampling::Proportional)
            .then(|| AliasTable::new(c).expect("validated capacities"))
    }
}

impl fmt::Display for Capacities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p: Vec<String> = self.params().iter().map(|(k, v)| format!("{k}={v}")).collect();
        match &self.law {
            CapacityLaw::Explicit(c) => write!(f, "file ({} capacities)", c.len())?,
            _ => write!(f, "{}:{}", self.name(), p.join(","))?,
        }
        write!(f, " sampling={} decide={}", self.sampling.name(), self.decide.name())
    }
}

/// One capacity law: what every front end accepts as `capacities = { kind = "…", … }` in a
/// series and `--capacities KIND[:key=value,...]` on the command line.
#[derive(Debug)]
pub struct CapacityDef {
    /// Kind name.
    pub name: &'static str,
    /// One-line law.
    pub doc: &'static str,
    /// Parameters, in display order (`sampling` and `decide` last, shared by every law).
    pub params: &'static [ParamDef],
    /// The parameter naming a file of capacities, which the front end reads: `Some("path")`
    /// for `file`.
    pub file: Option<&'static str>,
    /// Builds the law from checked parameters and the capacities read from the file.
    pub make: fn(&Args, Option<Vec<f64>>) -> CapacityLaw,
}

const SAMPLING: ParamDef = ParamDef::new(
    "sampling",
    ParamType::Choice(CapacitySampling::NAMES),
    ParamDefault::Text("uniform"),
    "bin sampling: uniform, or proportional to capacity",
);
const DECIDE: ParamDef = ParamDef::new(
    "decide",
    ParamType::Choice(CapacityDecision::NAMES),
    ParamDefault::Text("normalised"),
    "what decisions compare: x_i/c_i, or the raw loads x_i (capacity-unaware ablation)",
);
const SEED: ParamDef = ParamDef::new(
    "seed",
    ParamType::Int { lo: 0, hi: u32::MAX },
    ParamDefault::Num(1.0),
    "seed of the capacities' draw (the same bins in every run)",
);

impl CapacityDef {
    /// Its parameters with the shared checks (the file parameter is not among them).
    pub fn list(&self) -> ParamList {
        ParamList { what: "capacity law", name: self.name, params: self.params }
    }

    /// The capacities of the given parameters and file values. Checks the parameters by
    /// the registry's types; the checks that need n come with the run.
    pub fn build(
        &self,
        given: &[(&str, ParamValue)],
        file: Option<Vec<f64>>,
    ) -> Result<Capacities, ParamError> {
        let args = self.list().args(given)?;
        if self.file.is_some() != file.is_some() {
            let message = match self.file {
                Some(f) => {
                    format!("capacity law `{}` needs `{f}` (a file of capacities)", self.name)
                }
                None => format!("capacity law `{}` reads no file", self.name),
            };
            return Err(ParamError { param: None, message });
        }
        let sampling = match args.text("sampling") {
            Some("proportional") => CapacitySampling::Proportional,
            _ => CapacitySampling::Uniform,
        };
        let decide = match args.text("decide") {
            Some("raw") => CapacityDecision::Raw,
            _ => CapacityDecision::Normalised,
        };
        let c = Capacities { law: (self.make)(&args, file), sampling, decide };
        if !matches!(c.law, CapacityLaw::Explicit(_)) {
            c.validate(2).map_err(|e| {
                ParamError::of_law(&e, "capacities.", &format!("capacity law `{}`", self.name))
            })?;
        }
        Ok(c)
    }
}

/// Every capacity law, in listing order.
pub const CAPACITIES: &[CapacityDef] = &[
    CapacityDef {
        name: "two_class",
        doc: "the first round(fraction*n) bins have capacity factor, the others 1",
        params: &[
            ParamDef::new(
                "fraction",
                ParamType::Unit,
                ParamDefault::Num(0.5),
                "fraction of the bins with capacity factor",
            ),
            ParamDef::new(
                "factor",
                ParamType::Above(0.0),
                ParamDefault::Required,
                "capacity of a large bin, > 0",
            ),
            SAMPLING,
            DECIDE,
        ],
        file: None,
        make: |a, _| CapacityLaw::TwoClass { fraction: a.num("fraction"), factor: a.num("factor") },
    },
    CapacityDef {
        name: "uniform",
        doc: "capacities i.i.d. uniform on [low, high], drawn once from seed",
        params: &[
            ParamDef::new("low", ParamType::Above(0.0), ParamDefault::Required, "smallest, > 0"),
            ParamDef::new("high", ParamType::Above(0.0), ParamDefault::Required, "largest"),
            SEED,
            SAMPLING,
            DECIDE,
        ],
        file: None,
        make: |a, _| CapacityLaw::Uniform {
            low: a.num("low"),
            high: a.num("high"),
            seed: u64::from(a.int("seed")),
        },
    },
    CapacityDef {
        name: "lognormal",
        doc: "capacities i.i.d. exp(sigma*Z - sigma^2/2) (mean 1), drawn once from seed",
        params: &[
            ParamDef::new("sigma", ParamType::NonNeg, ParamDefault::Required, "sigma, in [0, 20]"),
            SEED,
            SAMPLING,
            DECIDE,
        ],
        file: None,
        make: |a, _| CapacityLaw::LogNormal {
            sigma: a.num("sigma"),
            seed: u64::from(a.int("seed")),
        },
    },
    CapacityDef {
        name: "file",
        doc: "one capacity per bin from a file (one number > 0 per line, # comments)",
        params: &[SAMPLING, DECIDE],
        file: Some("path"),
        make: |_, c| CapacityLaw::Explicit(c.expect("checked by build").into()),
    },
];

/// The capacity law `name`, or the registry's "unknown capacity law" message.
pub fn find_capacities(name: &str) -> Result<&'static CapacityDef, ParamError> {
    let names = || CAPACITIES.iter().map(|s| s.name);
    CAPACITIES.iter().find(|s| s.name == name).ok_or_else(|| ParamError {
        param: None,
        message: format!(
            "unknown capacity law `{name}`{}; valid laws: {}",
            did_you_mean(name, names()),
            names().collect::<Vec<_>>().join(", ")
        ),
    })
}

/// Reads a capacity file's text: one number > 0 per line, blank lines and `#` comments
/// ignored. An error gives the line and column and what was expected, never the text.
pub fn parse_capacities(text: &str) -> Result<Vec<f64>, TextError> {
    crate::input::parse_positive_numbers(text, "capacity", "capacities")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laws_build_validate_and_draw_reproducibly() {
        let def = find_capacities("lognormal").expect("declared");
        let c = def
            .build(
                &[
                    ("sigma", ParamValue::Num(0.5)),
                    ("sampling", ParamValue::Text("proportional".into())),
                ],
                None,
            )
            .expect("valid");
        assert_eq!(c.sampling, CapacitySampling::Proportional);
        let (a, b) = (c.values(1000), c.values(1000));
        assert_eq!(a, b, "drawn from the law's own seed");
        let mean = a.iter().sum::<f64>() / 1000.0;
        assert!((mean - 1.0).abs() < 0.1, "mean-one law, got {mean}");
        let two = find_capacities("two_class").expect("declared");
        let c = two.build(&[("factor", ParamValue::Num(4.0))], None).expect("valid");
        assert_eq!(c.values(4), vec![4.0, 4.0, 1.0, 1.0]);
        assert!(two.build(&[("factor", ParamValue::Num(0.0))], None).is_err());
        assert!(two.build(&[("factr", ParamValue::Num(2.0))], None).is_err());
        let e = find_capacities("lognormale").expect_err("unknown");
        assert!(e.message.contains("lognormal"), "{}", e.message);
    }

    #[test]
    fn explicit_capacities_are_checked_against_n() {
        let c =
            Capacities { law: CapacityLaw::Explicit(vec![1.0, 2.0].into()), ..Capacities::UNIT };
        assert!(c.validate(2).is_ok());
        assert!(c.validate(3).unwrap_err().to_string().contains("one capacity per bin"));
        let bad =
            Capacities { law: CapacityLaw::Explicit(vec![1.0, -2.0].into()), ..Capacities::UNIT };
        assert!(bad.validate(2).unwrap_err().to_string().contains("bin 2"));
        assert_eq!(parse_capacities("1\n# c\n2.5\n").expect("valid"), vec![1.0, 2.5]);
        assert!(parse_capacities("1\n0\n").unwrap_err().to_string().contains("line 2"));
        assert!(parse_capacities("secret\n").unwrap_err().to_string().find("secret").is_none());
    }
}
