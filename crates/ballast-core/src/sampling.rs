//! Heterogeneous bin sampling (`docs/sampling.md`): the law from which a process draws each
//! of its bin samples.
//!
//! [`Sampling::Uniform`] (the default) is the sampling of every process so far: one bin
//! uniformly among the n. The other laws give bin i a weight w_i and draw it with
//! probability w_i / Σ w. They are drawn in O(1) by an alias table ([`AliasTable`], Walker's
//! method with Vose's construction): a uniform bin i (the same Lemire draw as uniform
//! sampling, from [`crate::process::Ctx`]) is kept with probability `prob[i]` and otherwise
//! replaced by its alias `alias[i]`. Uniform sampling builds no table and draws exactly as
//! before, so no existing value changes.
//!
//! The laws are plain data: the core never opens a weight file itself. The front ends read
//! it through [`crate::input::read_text`] (bounded; errors never quote it) (the runner's `sampling = { kind = "file", path = … }`, `ballast simulate
//! --sampling file:path=…`) and handed over as [`Sampling::Explicit`].
//!
//! The registry declares the laws once ([`SAMPLINGS`], [`find_sampling`]), the same way as
//! the weight laws; which processes support a non-uniform law is declared per process
//! ([`crate::registry::Settings::biased`]), and the level engine refuses them (bins are not
//! exchangeable).

use std::fmt;
use std::sync::Arc;

use rand::RngCore;

use crate::error::did_you_mean;
use crate::input::TextError;
use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue};
use crate::Error;

/// The law of one bin sample.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Sampling {
    /// Every bin equally likely (the classical processes).
    #[default]
    Uniform,
    /// The first `round(fraction · n)` bins (the heavy class) are each `factor` times as
    /// likely as each of the others.
    TwoClass {
        /// Fraction α of the bins in the heavy class, in `[0, 1]`.
        fraction: f64,
        /// How many times as likely a heavy bin is as a light one, `> 0`.
        factor: f64,
    },
    /// Zipf: bin i (1-based) has weight `i^(−s)`.
    Zipf {
        /// Exponent, `>= 0` (0 is uniform).
        s: f64,
    },
    /// One weight per bin, finite and positive (read from a file by the front ends). Shared,
    /// so that copying a run spec does not copy n numbers.
    Explicit(Arc<[f64]>),
}

impl Sampling {
    /// The kind's name in configs and on the command line (`file` for explicit weights).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::TwoClass { .. } => "two_class",
            Self::Zipf { .. } => "zipf",
            Self::Explicit(_) => "file",
        }
    }

    /// Whether this is uniform sampling (no table, the classical draws).
    pub fn is_uniform(&self) -> bool {
        matches!(self, Self::Uniform)
    }

    /// The law's numeric parameters by name (empty for uniform and explicit weights).
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Self::TwoClass { fraction, factor } => vec![("fraction", fraction), ("factor", factor)],
            Self::Zipf { s } => vec![("s", s)],
            Self::Uniform | Self::Explicit(_) => Vec::new(),
        }
    }

    /// Number of heavy bins of [`Sampling::TwoClass`] on `n` bins: `round(fraction · n)`
    /// (halves away from zero), so that `fraction = 0.7` on 10 bins is 7 bins and not the 8
    /// that `⌈0.7 · 10⌉ = ⌈7.000000000000001⌉` would give.
    pub fn heavy_bins(fraction: f64, n: u64) -> u64 {
        ((fraction * n as f64).round() as u64).min(n)
    }

    /// A text that identifies the law, for checkpoint keys: the parameters, or for explicit
    /// weights their number and a 64-bit FNV-1a hash of their bits.
    pub fn fingerprint(&self) -> String {
        match self {
            Self::Explicit(w) => {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for x in w.iter() {
                    for b in x.to_bits().to_le_bytes() {
                        h ^= u64::from(b);
                        h = h.wrapping_mul(0x0000_0100_0000_01b3);
                    }
                }
                format!("file {} weights fnv {h:016x}", w.len())
            }
            other => format!("{other:?}"),
        }
    }

    /// Checks the law's parameters against `n` bins: finite, positive factors and weights,
    /// one weight per bin.
    pub fn validate(&self, n: u64) -> Result<(), Error> {
        match self {
            Self::Uniform => Ok(()),
            Self::TwoClass { fraction, factor } => {
                if !(0.0..=1.0).contains(fraction) {
                    return Err(Error::invalid(
                        "sampling.fraction",
                        fraction,
                        "a number in [0, 1]",
                    ));
                }
                if !(factor.is_finite() && *factor > 0.0) {
                    return Err(Error::invalid("sampling.factor", factor, "a finite number > 0"));
                }
                Ok(())
            }
            Self::Zipf { s } => {
                if !(s.is_finite() && *s >= 0.0) {
                    return Err(Error::invalid("sampling.s", s, "a finite number >= 0"));
                }
                // Bin n's weight n^(−s) must not underflow to 0 (every bin can be drawn).
                if !(n as f64).powf(-s).is_normal() {
                    return Err(Error::invalid(
                        "sampling.s",
                        s,
                        "an exponent for which n^(-s) is a normal double (bin n must keep a \
                         positive weight)",
                    ));
                }
                Ok(())
            }
            Self::Explicit(w) => {
                if w.len() as u64 != n {
                    return Err(Error::invalid(
                        "sampling",
                        format!("{} weights for n = {n} bins", w.len()),
                        "one weight per bin",
                    ));
                }
                if let Some((i, x)) =
                    w.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x > 0.0))
                {
                    return Err(Error::invalid(
                        "sampling",
                        format!("weight {x} of bin {}", i + 1),
                        "finite weights > 0",
                    ));
                }
                let total: f64 = w.iter().sum();
                if !total.is_finite() {
                    return Err(Error::invalid(
                        "sampling",
                        format!("a total weight of {total}"),
                        "weights whose sum is finite",
                    ));
                }
                Ok(())
            }
        }
    }

    /// Warnings for a legal law that is uniform in effect (two-class with factor 1 or with
    /// every bin in one class, Zipf with s = 0, equal explicit weights): the run is the
    /// uniform one through a slower path.
    pub fn warnings(&self, n: u64) -> Vec<String> {
        let uniform_anyway = match self {
            Self::Uniform => None,
            Self::TwoClass { fraction, factor } => {
                let k = Self::heavy_bins(*fraction, n);
                if *factor == 1.0 {
                    Some("two_class sampling with factor = 1".to_string())
                } else if k == 0 || k == n {
                    Some(format!(
                        "two_class sampling with fraction = {fraction} puts {k} of n = {n} bins \
                         in the heavy class (round(fraction·n))"
                    ))
                } else {
                    None
                }
            }
            Self::Zipf { s } => (*s == 0.0).then(|| "zipf sampling with s = 0".to_string()),
            Self::Explicit(w) => w
                .iter()
                .all(|x| *x == w[0])
                .then(|| "sampling weights that are all equal".to_string()),
        };
        uniform_anyway
            .map(|what| {
                format!(
                    "{what} is uniform sampling in effect (legal, but degenerate: the uniform \
                     law drawn through an alias table, so a seed gives other values than \
                     without `sampling`)"
                )
            })
            .into_iter()
            .collect()
    }

    /// The weight of every bin on `n` bins (`None` for uniform sampling). Assumes
    /// [`Sampling::validate`] passed.
    pub fn weights(&self, n: usize) -> Option<Vec<f64>> {
        match self {
            Self::Uniform => None,
            Self::TwoClass { fraction, factor } => {
                let k = Self::heavy_bins(*fraction, n as u64) as usize;
                Some((0..n).map(|i| if i < k { *factor } else { 1.0 }).collect())
            }
            Self::Zipf { s } => Some((1..=n).map(|i| (i as f64).powf(-s)).collect()),
            Self::Explicit(w) => Some(w.to_vec()),
        }
    }

    /// The probability of each bin on `n` bins (weights over their sum).
    pub fn probabilities(&self, n: usize) -> Vec<f64> {
        match self.weights(n) {
            None => vec![1.0 / n as f64; n],
            Some(w) => {
                let total: f64 = w.iter().sum();
                w.iter().map(|x| x / total).collect()
            }
        }
    }

    /// The alias table of the law on `n` bins, `None` for uniform sampling (which draws
    /// without one). Assumes [`Sampling::validate`] passed.
    pub fn table(&self, n: usize) -> Option<AliasTable> {
        self.weights(n).map(|w| AliasTable::new(&w).expect("validated sampling weights"))
    }
}

impl fmt::Display for Sampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uniform => f.write_str("uniform"),
            Self::TwoClass { fraction, factor } => {
                write!(f, "two_class:fraction={fraction},factor={factor}")
            }
            Self::Zipf { s } => write!(f, "zipf:s={s}"),
            Self::Explicit(w) => write!(f, "file ({} weights)", w.len()),
        }
    }
}

/// Walker's alias table (Vose's construction): a law on `0..n` drawn with one uniform bin and
/// one uniform real. Bin i is kept with probability `prob[i]`, else replaced by `alias[i]`,
/// so `P(i) = (prob[i] + Σ_{j : alias[j] = i} (1 − prob[j])) / n`, which the construction
/// makes `w_i / Σ w` up to rounding ([`AliasTable::implied`] computes it back).
#[derive(Clone, Debug, PartialEq)]
pub struct AliasTable {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// The table of the weights `w` (finite, positive, at most 2^32 − 1 of them).
    pub fn new(w: &[f64]) -> Result<Self, Error> {
        let n = w.len();
        if n == 0 || n as u64 > u64::from(u32::MAX) {
            return Err(Error::invalid("sampling", n, "between 1 and 4294967295 weights"));
        }
        if w.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            return Err(Error::invalid("sampling", "a weight", "finite weights > 0"));
        }
        let total: f64 = w.iter().sum();
        if !total.is_finite() {
            return Err(Error::invalid("sampling", total, "weights whose sum is finite"));
        }
        // Scaled so that the average is 1: a bin below 1 is "small" and takes the rest of
        // its column from a "large" one.
        let mut scaled: Vec<f64> = w.iter().map(|x| x * n as f64 / total).collect();
        let mut prob = vec![1.0; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..n as u32).partition(|&i| scaled[i as usize] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            large.pop();
            prob[s as usize] = scaled[s as usize];
            alias[s as usize] = l;
            scaled[l as usize] = (scaled[l as usize] + scaled[s as usize]) - 1.0;
            if scaled[l as usize] < 1.0 {
                small.push(l);
            } else {
                large.push(l);
            }
        }
        // What is left is 1 up to rounding: kept with probability 1.
        for i in small.into_iter().chain(large) {
            prob[i as usize] = 1.0;
            alias[i as usize] = i;
        }
        Ok(Self { prob, alias })
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.prob.len()
    }

    /// Whether the table is empty (never, for a built table).
    pub fn is_empty(&self) -> bool {
        self.prob.is_empty()
    }

    /// The bin drawn when the uniform bin was `i`: `i` with probability `prob[i]` (a
    /// uniform real of 53 bits from one 64-bit word), else `alias[i]`. One word per call,
    /// whatever the outcome.
    #[inline(always)]
    pub fn resolve<R: RngCore + ?Sized>(&self, i: usize, rng: &mut R) -> usize {
        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if u < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }

    /// One draw: a uniform bin by Lemire's method, then [`AliasTable::resolve`].
    pub fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        let i = crate::rng::below(rng, self.len() as u64) as usize;
        self.resolve(i, rng)
    }

    /// The law the table draws, computed back from its columns.
    pub fn implied(&self) -> Vec<f64> {
        let n = self.len() as f64;
        let mut p: Vec<f64> = self.prob.iter().map(|x| x / n).collect();
        for (j, &a) in self.alias.iter().enumerate() {
            p[a as usize] += (1.0 - self.prob[j]) / n;
        }
        p
    }
}

/// One sampling law: what every front end accepts as `sampling = { kind = "…", … }` in a
/// series and `--sampling KIND[:key=value,...]` on the command line.
#[derive(Debug)]
pub struct SamplingDef {
    /// Kind name.
    pub name: &'static str,
    /// One-line law.
    pub doc: &'static str,
    /// Numeric parameters, in display order.
    pub params: &'static [ParamDef],
    /// The parameter naming a file of weights (one number per line, `#` comments), which the
    /// front end reads and hands to [`SamplingDef::build`]: `Some("path")` for `file`.
    pub file: Option<&'static str>,
    /// Builds the law from checked parameters and the weights read from the file.
    pub make: fn(&Args, Option<Vec<f64>>) -> Sampling,
}

impl SamplingDef {
    /// Its numeric parameters with the shared checks (the file parameter is not among them:
    /// the front end takes it out first).
    pub fn list(&self) -> ParamList {
        ParamList { what: "sampling law", name: self.name, params: self.params }
    }

    /// `fraction (a number in [0, 1]), …`, with the file parameter, or `none`.
    pub fn allowed_params(&self) -> String {
        match self.file {
            Some(f) => format!("{f} (a file of one weight per line)"),
            None => self.list().allowed_params(),
        }
    }

    /// The law of the given parameters and file weights. Checks the parameters by the
    /// registry's types; `weights` must be given exactly when the law reads a file. The
    /// checks that need n ([`Sampling::validate`]) come with the run.
    pub fn build(
        &self,
        given: &[(&str, ParamValue)],
        weights: Option<Vec<f64>>,
    ) -> Result<Sampling, ParamError> {
        let args = self.list().args(given)?;
        match (self.file, &weights) {
            (Some(f), None) => {
                return Err(ParamError {
                    param: None,
                    message: format!(
                        "sampling law `{}` needs `{f}` (a file of weights)",
                        self.name
                    ),
                })
            }
            (None, Some(_)) => {
                return Err(ParamError {
                    param: None,
                    message: format!("sampling law `{}` reads no file of weights", self.name),
                })
            }
            _ => {}
        }
        let s = (self.make)(&args, weights);
        if !matches!(s, Sampling::Explicit(_)) {
            // Parameters only (n = 2: the n-dependent checks come with the run).
            s.validate(2).map_err(|e| {
                ParamError::of_law(&e, "sampling.", &format!("sampling law `{}`", self.name))
            })?;
        }
        Ok(s)
    }
}

/// Every sampling law, in listing order.
pub const SAMPLINGS: &[SamplingDef] = &[
    SamplingDef {
        name: "uniform",
        doc: "every bin equally likely (the default)",
        params: &[],
        file: None,
        make: |_, _| Sampling::Uniform,
    },
    SamplingDef {
        name: "two_class",
        doc: "the first round(fraction*n) bins are each factor times as likely as the others",
        params: &[
            ParamDef::new(
                "fraction",
                ParamType::Unit,
                ParamDefault::Required,
                "fraction of the bins in the heavy class",
            ),
            ParamDef::new(
                "factor",
                ParamType::NonNeg,
                ParamDefault::Required,
                "how many times as likely a heavy bin is, > 0",
            ),
        ],
        file: None,
        make: |a, _| Sampling::TwoClass { fraction: a.num("fraction"), factor: a.num("factor") },
    },
    SamplingDef {
        name: "zipf",
        doc: "bin i (1-based) has weight i^(-s)",
        params: &[ParamDef::new("s", ParamType::NonNeg, ParamDefault::Num(1.0), "exponent, >= 0")],
        file: None,
        make: |a, _| Sampling::Zipf { s: a.num("s") },
    },
    SamplingDef {
        name: "file",
        doc: "one weight per bin from a file (one number per line, # comments)",
        params: &[],
        file: Some("path"),
        make: |_, w| Sampling::Explicit(w.expect("checked by build").into()),
    },
];

/// The sampling law `name`, or the registry's "unknown sampling law" message.
pub fn find_sampling(name: &str) -> Result<&'static SamplingDef, ParamError> {
    SAMPLINGS.iter().find(|s| s.name == name).ok_or_else(|| ParamError {
        param: None,
        message: format!(
            "unknown sampling law `{name}`{}; valid laws: {}",
            did_you_mean(name, SAMPLINGS.iter().map(|s| s.name)),
            SAMPLINGS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ),
    })
}

/// Reads a weight file's text: one number per line, blank lines and `#` comments (to the end
/// of a line) ignored. An error gives the 1-based line and column and what was expected,
/// never the text found there ([`crate::input`]). The front ends read the file (through
/// [`crate::input::read_text`]) and call this on its text.
pub fn parse_weights(text: &str) -> Result<Vec<f64>, TextError> {
    crate::input::parse_positive_numbers(text, "weight", "weights")
}

/// Why process `name` refuses a non-uniform law.
pub(crate) fn unsupported_message(name: &str, s: &Sampling) -> String {
    let why = match name {
        "always_go_left" => "it draws one uniform bin from each of its d groups",
        "equalize" => "its reallocation runs on its own loop, which draws uniform bins only",
        _ => "its rule does not draw its bins from the sampling law",
    };
    format!(
        "process `{name}` supports uniform sampling only ({why}); got sampling \"{}\". Biased \
         sampling runs on the bin engine for the processes that `ballast list` marks",
        s.name()
    )
}
