//! Which potentials to track, as plain data, and the `name[:key=value,...]` syntax used by the
//! command line (`--potential exponential:alpha=0.1`) and experiment configs
//! (`potentials = ["quadratic", "hyperbolic:alpha=0.05"]`).

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// The valid potential names, for listings and error messages.
pub const POTENTIAL_NAMES: &str = "exponential, hyperbolic, quadratic, absolute";

/// A potential as listings show it (`ballast list`, Python's `ballast.registry()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PotentialKind {
    /// Its name, as [`PotentialSpec::name`] gives it.
    pub name: &'static str,
    /// Its parameters in the `name[:key=value,...]` syntax (empty when it takes none).
    pub params: &'static str,
    /// A spec that parses, e.g. `exponential:alpha=0.1`.
    pub example: &'static str,
    /// What it sums over the normalised loads `y_i = x_i − W/n`.
    pub doc: &'static str,
}

/// Every potential, in the order of [`POTENTIAL_NAMES`] (a test keeps the two equal and
/// every [`PotentialSpec`] variant in it).
pub const POTENTIALS: [PotentialKind; 4] = [
    PotentialKind {
        name: "exponential",
        params: "alpha (0 < alpha <= 100)",
        example: "exponential:alpha=0.1",
        doc: "overload potential: sum of exp(alpha * y_i)",
    },
    PotentialKind {
        name: "hyperbolic",
        params: "alpha (0 < alpha <= 100)",
        example: "hyperbolic:alpha=0.05",
        doc: "hyperbolic cosine potential: sum of exp(alpha * y_i) + exp(-alpha * y_i)",
    },
    PotentialKind {
        name: "quadratic",
        params: "",
        example: "quadratic",
        doc: "quadratic potential: sum of y_i^2",
    },
    PotentialKind {
        name: "absolute",
        params: "",
        example: "absolute",
        doc: "absolute value potential: sum of |y_i|",
    },
];

/// What `alpha` may be, in words.
pub const ALPHA_ALLOWED: &str = "a number with 0 < alpha <= 100";

/// Largest allowed `alpha`. Beyond it the potentials are dominated by a single bin and the
/// incremental sums would have to be resynchronised every few balls.
pub const ALPHA_MAX: f64 = 100.0;

/// One potential over the normalised loads `y_i = x_i − W/n` (`docs/metrics.md#potentials`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PotentialSpec {
    /// Exponential potential `Φ_α = Σ_i e^{α y_i}` (overload potential).
    Exponential {
        /// Smoothing parameter, `0 < α <= 100`.
        alpha: f64,
    },
    /// Hyperbolic cosine potential `Γ_α = Σ_i (e^{α y_i} + e^{−α y_i})`.
    Hyperbolic {
        /// Smoothing parameter, `0 < α <= 100`.
        alpha: f64,
    },
    /// Quadratic potential `Υ = Σ_i y_i²`.
    Quadratic,
    /// Absolute value potential `Δ = Σ_i |y_i|`.
    Absolute,
}

impl PotentialSpec {
    /// The potential's name (`exponential`, `hyperbolic`, `quadratic`, `absolute`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Exponential { .. } => "exponential",
            Self::Hyperbolic { .. } => "hyperbolic",
            Self::Quadratic => "quadratic",
            Self::Absolute => "absolute",
        }
    }

    /// `α` of the exponential potentials, `None` for the others.
    pub fn alpha(&self) -> Option<f64> {
        match *self {
            Self::Exponential { alpha } | Self::Hyperbolic { alpha } => Some(alpha),
            Self::Quadratic | Self::Absolute => None,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        match self.alpha() {
            Some(alpha) if !(alpha > 0.0 && alpha <= ALPHA_MAX) => Err(Error::InvalidParameter {
                potential: self.name(),
                param: "alpha",
                value: alpha.to_string(),
                allowed: ALPHA_ALLOWED,
            }),
            _ => Ok(()),
        }
    }

    /// Parses `exponential:alpha=0.1`, `hyperbolic:alpha=0.05`, `quadratic` or `absolute`
    /// (surrounding whitespace is ignored).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let text = text.trim();
        let (name, params) = match text.split_once(':') {
            Some((name, params)) => (name.trim(), Some(params)),
            None => (text, None),
        };
        let spec = match name {
            "exponential" => Self::Exponential { alpha: parse_alpha("exponential", params)? },
            "hyperbolic" => Self::Hyperbolic { alpha: parse_alpha("hyperbolic", params)? },
            "quadratic" => no_params(Self::Quadratic, params)?,
            "absolute" => no_params(Self::Absolute, params)?,
            _ => {
                return Err(Error::UnknownPotential {
                    name: name.to_string(),
                    valid: POTENTIAL_NAMES,
                })
            }
        };
        spec.validate()?;
        Ok(spec)
    }

    /// Parses a list of specs (repeated `--potential` flags, a config's `potentials = [...]`),
    /// stopping at the first error.
    pub fn parse_all<I>(items: I) -> Result<Vec<Self>, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        items.into_iter().map(|s| Self::parse(s.as_ref())).collect()
    }
}

fn no_params(spec: PotentialSpec, params: Option<&str>) -> Result<PotentialSpec, Error> {
    match params.map(str::trim) {
        None | Some("") => Ok(spec),
        Some(p) => Err(Error::UnknownParameter {
            potential: spec.name(),
            param: p.to_string(),
            expected: "it takes no parameters",
        }),
    }
}

fn parse_alpha(potential: &'static str, params: Option<&str>) -> Result<f64, Error> {
    let example = match potential {
        "exponential" => "exponential:alpha=0.1",
        _ => "hyperbolic:alpha=0.05",
    };
    let missing =
        || Error::MissingParameter { potential, param: "alpha", allowed: ALPHA_ALLOWED, example };
    let mut alpha = None;
    for pair in params.unwrap_or("").split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Error::UnknownParameter {
                potential,
                param: pair.to_string(),
                expected: "it takes `alpha=<number>`",
            });
        };
        let (key, value) = (key.trim(), value.trim());
        if key != "alpha" {
            return Err(Error::UnknownParameter {
                potential,
                param: key.to_string(),
                expected: "it takes `alpha=<number>`",
            });
        }
        let invalid = || Error::InvalidParameter {
            potential,
            param: "alpha",
            value: value.to_string(),
            allowed: ALPHA_ALLOWED,
        };
        if alpha.is_some() {
            return Err(Error::UnknownParameter {
                potential,
                param: "alpha (given twice)".to_string(),
                expected: "it takes `alpha=<number>` once",
            });
        }
        let a: f64 = value.parse().map_err(|_| invalid())?;
        if !(a > 0.0 && a <= ALPHA_MAX) {
            return Err(invalid());
        }
        alpha = Some(a);
    }
    alpha.ok_or_else(missing)
}

impl FromStr for PotentialSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

/// The canonical spec text (`exponential:alpha=0.1`), which [`PotentialSpec::parse`] reads
/// back to the same value. Used as the potential's column name in CSV outputs.
impl fmt::Display for PotentialSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.alpha() {
            Some(alpha) => write!(f, "{}:alpha={alpha}", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_four_potentials_and_round_trips() {
        let cases = [
            ("exponential:alpha=0.1", PotentialSpec::Exponential { alpha: 0.1 }),
            (" hyperbolic : alpha = 0.05 ", PotentialSpec::Hyperbolic { alpha: 0.05 }),
            ("quadratic", PotentialSpec::Quadratic),
            ("absolute:", PotentialSpec::Absolute),
        ];
        for (text, want) in cases {
            let got: PotentialSpec = text.parse().unwrap();
            assert_eq!(got, want, "{text}");
            assert_eq!(PotentialSpec::parse(&got.to_string()).unwrap(), got);
        }
        assert_eq!(PotentialSpec::Exponential { alpha: 0.1 }.to_string(), "exponential:alpha=0.1");
        assert_eq!(PotentialSpec::parse_all(["quadratic", "absolute"]).unwrap().len(), 2);
    }

    /// The listing entry of a potential; exhaustive, so a new variant does not compile
    /// until it is listed.
    fn listed(p: PotentialSpec) -> &'static PotentialKind {
        let at = match p {
            PotentialSpec::Exponential { .. } => 0,
            PotentialSpec::Hyperbolic { .. } => 1,
            PotentialSpec::Quadratic => 2,
            PotentialSpec::Absolute => 3,
        };
        &POTENTIALS[at]
    }

    #[test]
    fn the_listing_table_is_every_potential() {
        let names: Vec<&str> = POTENTIALS.iter().map(|k| k.name).collect();
        assert_eq!(names.join(", "), POTENTIAL_NAMES);
        for k in POTENTIALS {
            let spec = PotentialSpec::parse(k.example).unwrap();
            assert_eq!(spec.name(), k.name);
            assert_eq!(listed(spec), &k);
            assert_eq!(k.params.is_empty(), spec.alpha().is_none(), "{}", k.name);
        }
    }

    #[test]
    fn errors_say_what_is_allowed() {
        let msg = |s: &str| PotentialSpec::parse(s).unwrap_err().to_string();
        assert_eq!(
            msg("cubic"),
            "unknown potential `cubic`: expected one of exponential, hyperbolic, quadratic, absolute"
        );
        assert!(
            msg("exponential").contains("needs parameter `alpha` (a number with 0 < alpha <= 100)")
        );
        assert!(msg("hyperbolic:alpha=0").contains("expected a number with 0 < alpha <= 100"));
        assert!(msg("hyperbolic:alpha=-1").contains("invalid value `-1`"));
        assert!(msg("exponential:alpha=nan").contains("invalid value `nan`"));
        assert!(msg("exponential:alpha=inf").contains("invalid value `inf`"));
        assert!(msg("exponential:alpha=abc").contains("invalid value `abc`"));
        assert!(msg("exponential:alpha=101").contains("0 < alpha <= 100"));
        assert!(msg("exponential:beta=1").contains("does not take parameter `beta`"));
        assert!(msg("exponential:alpha").contains("does not take parameter `alpha`"));
        assert!(msg("exponential:alpha=1,alpha=2").contains("given twice"));
        assert!(msg("quadratic:alpha=1").contains("takes no parameters"));
        let err = PotentialSpec::Hyperbolic { alpha: f64::NAN }.validate().unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { param: "alpha", .. }));
    }
}
