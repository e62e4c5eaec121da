//! Ball weights ([`Weights`]), one law per file: each file declares its law once (name,
//! one-line doc, parameters with their ranges and defaults, through [`law!`]) and gives its
//! mean, its checks across parameters, its sampler and its tests ([`WeightLaw`]). The list
//! at the end of this file generates from those files the `Weights` enum, its dispatch
//! (`name`, `params`, `mean`, `validate`), the registry's listing [`WEIGHTS`] and the
//! sampler enum the weighted engines draw from: one `match` over the laws per ball, each arm
//! the law's own `draw`, monomorphised and inlined as a hand-written `match` would be.
//!
//! Adding a law: a file here (its [`law!`] declaration, its [`WeightLaw`] impl, its tests),
//! its `mod` line and its line in the list below.

use std::fmt::Debug;

use rand::RngCore;

use crate::error::did_you_mean;
use crate::params::{Args, ParamDef, ParamError, ParamList, ParamType, ParamValue};
use crate::Error;

pub(crate) mod constant;
pub(crate) mod exp;
pub(crate) mod gamma;
pub(crate) mod lognormal;
pub(crate) mod pareto;
pub(crate) mod two_point;
pub(crate) mod uniform;

/// One law of ball weights ([`Weights`]): what every front end accepts as `weights = { kind
/// = "…", … }` in a config and `--weights KIND[:k=v,…]` on the command line.
#[derive(Debug)]
pub struct WeightDef {
    /// Kind name.
    pub name: &'static str,
    /// One-line law.
    pub doc: &'static str,
    /// Parameters, in display order.
    pub params: &'static [ParamDef],
    /// Builds the law from checked parameters ([`WeightDef::build`] validates it).
    pub make: fn(&Args) -> Weights,
}

impl WeightDef {
    /// Its parameters with the shared checks.
    pub fn list(&self) -> ParamList {
        ParamList { what: "weight law", name: self.name, params: self.params }
    }

    /// The law of the given parameters, checked by the registry's types and by
    /// [`Weights::validate`] (e.g. `high > low`).
    pub fn build(&self, given: &[(&str, ParamValue)]) -> Result<Weights, ParamError> {
        let w = (self.make)(&self.list().args(given)?);
        w.validate().map_err(|e| {
            ParamError::of_law(&e, "weights.", &format!("weight law `{}`", self.name))
        })?;
        Ok(w)
    }
}

/// The weight law `name`, or the registry's "unknown weight law" message.
pub fn find_weights(name: &str) -> Result<&'static WeightDef, ParamError> {
    WEIGHTS.iter().find(|w| w.name == name).ok_or_else(|| ParamError {
        param: None,
        message: format!(
            "unknown weight law `{name}`{}; valid laws: {}",
            did_you_mean(name, WEIGHTS.iter().map(|w| w.name)),
            WEIGHTS.iter().map(|w| w.name).collect::<Vec<_>>().join(", ")
        ),
    })
}

/// Unit weights: no law to draw, the integer loads of the bin and level engines.
const UNIT: WeightDef = WeightDef {
    name: "unit",
    doc: "every ball weighs 1 (integer loads)",
    params: &[],
    make: |_| Weights::Unit,
};

/// What [`law!`] generates for a law from its declaration.
pub(crate) trait Declared: Copy + Into<Weights> {
    /// Its registry entry (name, doc, parameters with ranges and defaults).
    const DEF: WeightDef;
    /// Its parameters as `weights.<name>`, for error messages, in declaration order.
    const FIELDS: &'static [&'static str];
    /// Its parameters' values, in declaration order.
    fn values(&self) -> Vec<f64>;
}

/// What a law's file writes by hand beside its [`law!`] declaration.
pub(crate) trait WeightLaw: Declared {
    /// The law ready to draw from (distributions built once per run).
    type Sampler: Clone + Debug;
    /// The mean weight.
    fn mean(&self) -> f64;
    /// Checks across parameters (each parameter's range is checked from its declaration
    /// before this runs); none by default.
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
    /// The sampler; `None` only for parameters [`Weights::validate`] refuses.
    fn sampler(&self) -> Option<Self::Sampler>;
    /// One weight.
    fn draw<R: RngCore + ?Sized>(sampler: &Self::Sampler, rng: &mut R) -> f64;
}

/// What an [`Error::Invalid`] says a parameter of type `ty` accepts.
fn allowed(ty: ParamType) -> &'static str {
    match ty {
        ParamType::Unit => "a number in [0, 1]",
        ParamType::Real => "a finite number",
        ParamType::NonNeg => "a finite number >= 0",
        ParamType::Above(0.0) => "a positive finite number",
        ParamType::Above(1.0) => "a finite number > 1",
        _ => "a number in its declared range (`ballast list`)",
    }
}

/// The checks of [`Weights::validate`] for one law: every parameter in its declared range
/// (the first one outside it is named), then the law's own checks across parameters, then a
/// positive finite mean.
fn validate_law<L: WeightLaw>(law: L) -> Result<(), Error> {
    let def = L::DEF;
    for ((p, field), v) in def.params.iter().zip(L::FIELDS).zip(law.values()) {
        if def.list().check(p, &ParamValue::Num(v)).is_err() {
            return Err(Error::invalid(field, v, allowed(p.ty)));
        }
    }
    law.check()?;
    let mean = law.mean();
    if !(mean.is_finite() && mean > 0.0) {
        return Err(Error::invalid(
            "weights",
            mean,
            "a law whose mean is a positive finite number",
        ));
    }
    Ok(())
}

/// Declares one weight law: its struct (one `f64` field per parameter), its registry entry
/// and its [`Declared`] impl. Each parameter reads `name: type = default, "meaning";`.
macro_rules! law {
    (
        $(#[$doc:meta])*
        $law:ident = $name:literal, $line:literal {
            $( $(#[$pdoc:meta])* $p:ident : $ty:expr => $default:expr, $meaning:literal; )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $law {
            $( $(#[$pdoc])* pub $p: f64, )*
        }

        impl $crate::weights::Declared for $law {
            const DEF: $crate::weights::WeightDef = $crate::weights::WeightDef {
                name: $name,
                doc: $line,
                params: &[$(
                    $crate::params::ParamDef::new(
                        stringify!($p),
                        $ty,
                        $crate::params::ParamDefault::Num($default),
                        $meaning,
                    ),
                )*],
                make: |_a| $law { $( $p: _a.num(stringify!($p)), )* }.into(),
            };
            const FIELDS: &'static [&'static str] = &[$( concat!("weights.", stringify!($p)), )*];
            fn values(&self) -> Vec<f64> {
                vec![$( self.$p, )*]
            }
        }
    };
}
pub(crate) use law;

/// Generates [`Weights`], its dispatch, [`WEIGHTS`] and [`Sampler`] from the list of laws:
/// each entry `Variant { parameters } => module`, the variant named as the law's struct.
macro_rules! laws {
    ($( $law:ident { $($p:ident),* } => $m:ident, )*) => {
        /// Ball weights: every ball's weight is drawn independently of everything else, after
        /// its bin is chosen. Besides unit and exponential weights (the batched papers' two
        /// cases), the laws a study of the batched theorem's condition needs: bounded
        /// (constant, uniform, two-point), light-tailed (gamma), and with an unbounded moment
        /// generating function (log-normal, Pareto). Each law is one file of
        /// `crates/ballast-core/src/weights/`; [`WEIGHTS`] lists their names and parameters
        /// for every front end.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Weights {
            /// Every ball has weight 1 (integer loads).
            Unit,
            $(
                #[doc = concat!("The `", stringify!($m), "` law (`weights/", stringify!($m),
                    ".rs`; `ballast list`).")]
                $law {
                    $(
                        #[doc = concat!("Its parameter `", stringify!($p), "`.")]
                        $p: f64,
                    )*
                },
            )*
        }

        $(
            impl From<$m::$law> for Weights {
                fn from(w: $m::$law) -> Self {
                    let $m::$law { $($p),* } = w;
                    Self::$law { $($p),* }
                }
            }
        )*

        impl Weights {
            /// Short name for metadata and configs (`unit`, `exp`, `constant`, …).
            pub fn name(&self) -> &'static str {
                match self {
                    Self::Unit => UNIT.name,
                    $( Self::$law { .. } => <$m::$law as Declared>::DEF.name, )*
                }
            }

            /// The law's parameters as `(name, value)`, in the registry's order (empty for
            /// unit).
            pub fn params(&self) -> Vec<(&'static str, f64)> {
                let (defs, values) = match *self {
                    Self::Unit => return vec![],
                    $( Self::$law { $($p),* } => {
                        let law = $m::$law { $($p),* };
                        (<$m::$law as Declared>::DEF.params, law.values())
                    } )*
                };
                defs.iter().map(|p| p.name).zip(values).collect()
            }

            /// The mean weight.
            pub fn mean(&self) -> f64 {
                match *self {
                    Self::Unit => 1.0,
                    $( Self::$law { $($p),* } => $m::$law { $($p),* }.mean(), )*
                }
            }

            /// Checks the law's parameters (the registry's ranges, for library users too,
            /// and the law's checks across parameters): every parameter finite, and the mean
            /// positive and finite.
            pub fn validate(&self) -> Result<(), Error> {
                match *self {
                    Self::Unit => Ok(()),
                    $( Self::$law { $($p),* } => validate_law($m::$law { $($p),* }), )*
                }
            }
        }

        /// Every weight law, in listing order.
        pub const WEIGHTS: &[WeightDef] = &[UNIT, $( <$m::$law as Declared>::DEF, )*];

        /// A weight law ready to draw from: what `loads::WeightSampler` and the
        /// weighted loads hold.
        #[derive(Clone, Debug)]
        pub(crate) enum Sampler {
            $( $law(<$m::$law as WeightLaw>::Sampler), )*
        }

        impl Sampler {
            /// The sampler of `w`; `None` for unit weights or parameters that
            /// [`Weights::validate`] refuses.
            pub(crate) fn of(w: Weights) -> Option<Self> {
                match w {
                    Weights::Unit => None,
                    $( Weights::$law { $($p),* } => {
                        $m::$law { $($p),* }.sampler().map(Self::$law)
                    } )*
                }
            }

            /// One weight.
            #[inline]
            pub(crate) fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
                match self {
                    $( Self::$law(s) => <$m::$law as WeightLaw>::draw(s, rng), )*
                }
            }
        }
    };
}

laws! {
    Exp { mean } => exp,
    Constant { w } => constant,
    Uniform { low, high } => uniform,
    Gamma { shape, scale } => gamma,
    TwoPoint { low, high, p } => two_point,
    LogNormal { mu, sigma } => lognormal,
    Pareto { alpha, scale } => pareto,
}

/// What every law's tests share: Pearson's chi-square of a sampler against the law's
/// quantile function.
///
/// 40 000 draws are binned into 20 cells of equal probability under the law's CDF and
/// compared at `ALPHA` = 0.001 (19 degrees of freedom, critical value 43.8): 2 000 expected
/// per cell, so a law whose quantiles are off by a few percent is found. Every law's test
/// also draws from a deliberately wrong variant and must reject it (the test of the test).
#[cfg(test)]
pub(crate) mod testing {
    use ballast_testkit::{chi2_critical, chi2_gof};

    use crate::rng::sim_rng;
    use crate::weights::Sampler;
    use crate::weights::Weights;

    /// Draws per test.
    pub(crate) const DRAWS: usize = 40_000;
    const CELLS: usize = 20;

    /// The chi-square statistic of `DRAWS` draws of `sampled` (seed `seed`) against the
    /// law with quantile function `quantile`, in `CELLS` equiprobable cells.
    fn chi2_against(sampled: Weights, quantile: &dyn Fn(f64) -> f64, seed: u64) -> f64 {
        let cuts: Vec<f64> = (1..CELLS).map(|k| quantile(k as f64 / CELLS as f64)).collect();
        let sampler = Sampler::of(sampled).expect("a valid law");
        let mut rng = sim_rng(seed);
        let mut counts = vec![0u64; CELLS];
        for _ in 0..DRAWS {
            let w = sampler.draw(&mut rng);
            counts[cuts.partition_point(|&c| c <= w)] += 1;
        }
        chi2_gof(&counts, &[1.0 / CELLS as f64; CELLS]).0
    }

    /// `law` passes against its quantile function and `wrong` (same seed) fails.
    pub(crate) fn fits_and_rejects(
        law: Weights,
        quantile: &dyn Fn(f64) -> f64,
        wrong: Weights,
        seed: u64,
    ) {
        let crit = chi2_critical(CELLS - 1);
        let chi2 = chi2_against(law, quantile, seed);
        assert!(chi2 < crit, "{law:?}: chi2 = {chi2:.1} >= {crit:.1}");
        let bad = chi2_against(wrong, quantile, seed);
        println!("{law:?}: chi2 = {chi2:.1}; {wrong:?}: chi2 = {bad:.1}; critical {crit:.1}");
        let chi2 = bad;
        assert!(chi2 > crit, "{wrong:?} passed as {law:?}: chi2 = {chi2:.1} < {crit:.1}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` of `Weights` is part of the runner's checkpoint keys: the generated enum
    /// prints as the hand-written one did.
    #[test]
    fn debug_text_is_the_hand_written_enums() {
        let cases = [
            (Weights::Unit, "Unit"),
            (Weights::Exp { mean: 1.0 }, "Exp { mean: 1.0 }"),
            (Weights::Constant { w: 2.5 }, "Constant { w: 2.5 }"),
            (Weights::Uniform { low: 0.0, high: 2.0 }, "Uniform { low: 0.0, high: 2.0 }"),
            (Weights::Gamma { shape: 2.0, scale: 0.5 }, "Gamma { shape: 2.0, scale: 0.5 }"),
            (
                Weights::TwoPoint { low: 0.0, high: 2.0, p: 0.5 },
                "TwoPoint { low: 0.0, high: 2.0, p: 0.5 }",
            ),
            (Weights::LogNormal { mu: -0.5, sigma: 1.0 }, "LogNormal { mu: -0.5, sigma: 1.0 }"),
            (Weights::Pareto { alpha: 1.5, scale: 0.25 }, "Pareto { alpha: 1.5, scale: 0.25 }"),
        ];
        for (w, text) in cases {
            assert_eq!(format!("{w:?}"), text);
        }
        let names: Vec<&str> = WEIGHTS.iter().map(|w| w.name).collect();
        let listed =
            ["unit", "exp", "constant", "uniform", "gamma", "two_point", "lognormal", "pareto"];
        assert_eq!(names[..listed.len()], listed, "the listing order is the front ends'");
    }

    /// A law built directly (a library user's `Weights`, not through the registry) is
    /// checked against the same declared ranges, the offending parameter named.
    #[test]
    fn validate_checks_the_declared_ranges() {
        let refused = [
            (Weights::Gamma { shape: -1.0, scale: 1.0 }, "weights.shape"),
            (Weights::Pareto { alpha: 1.0, scale: 1.0 }, "weights.alpha"),
            (Weights::TwoPoint { low: 0.0, high: 1.0, p: 1.5 }, "weights.p"),
            (Weights::LogNormal { mu: f64::NAN, sigma: 1.0 }, "weights.mu"),
            (Weights::Uniform { low: 1.0, high: 1.0 }, "weights.high"),
            (Weights::Exp { mean: f64::INFINITY }, "weights.mean"),
            (Weights::TwoPoint { low: 0.0, high: 1.0, p: 0.0 }, "weights"),
        ];
        for (w, field) in refused {
            match w.validate() {
                Err(Error::Invalid { field: f, .. }) => assert_eq!(f, field, "{w:?}"),
                other => panic!("{w:?}: {other:?}"),
            }
        }
        assert_eq!(Weights::Gamma { shape: 0.5, scale: 2.0 }.validate(), Ok(()));
    }

    /// A weight law's declared ranges are the ranges its [`Weights::validate`] accepts:
    /// every probe value the declaration accepts (the other parameters at their defaults)
    /// builds, except where a check across parameters refuses it (uniform's and two_point's
    /// `low` and `high` against each other, and every law's positive finite mean).
    #[test]
    fn weight_laws_accept_what_their_declarations_accept() {
        let probes = [-1.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 100.0, f64::INFINITY, f64::NAN];
        let across =
            [("uniform", "low"), ("uniform", "high"), ("two_point", "low"), ("two_point", "high")];
        for law in WEIGHTS {
            for p in law.params {
                for v in probes {
                    let declared = law.list().check(p, &ParamValue::Num(v)).is_ok();
                    let built = law.build(&[(p.name, ParamValue::Num(v))]);
                    // The law-wide check of a positive finite mean names no parameter.
                    let law_wide = built.as_ref().is_err_and(|e| e.param.is_none());
                    if declared && !law_wide && !across.contains(&(law.name, p.name)) {
                        let name = (law.name, p.name);
                        assert!(built.is_ok(), "{name:?} = {v}: declared, refused: {built:?}");
                    }
                    if !declared {
                        assert!(
                            built.is_err(),
                            "{}.{} = {v}: not declared, built",
                            law.name,
                            p.name
                        );
                    }
                }
            }
        }
    }
}
