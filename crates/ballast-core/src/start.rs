//! Start states: the loads a run begins with before its process places its `m` balls
//! (`docs/settings.md#start-states`).
//!
//! [`Start`] is plain data, like the rest of [`crate::RunSpec`]. A run's `m` counts the
//! balls the *process* places; the start's `m₀` balls come on top, so the total at the end
//! is `W = m₀ + m` and the gap is measured against `W/n`. The default, [`Start::Empty`],
//! draws nothing and builds exactly the state the engines always built, so values of
//! existing runs do not change.
//!
//! Both engines honour a start: the bin engine begins from the load vector, the level engine
//! from its histogram (for the exchangeable processes the level engine runs, the histogram
//! of the start is all that matters: the rules read loads, and bins of equal load are
//! interchangeable). A [`Start::Random`] start is drawn from the run's generator before the
//! process starts: `m₀` times a bin index `below(rng, n)` (Lemire's method, one 64-bit
//! word per draw apart from rare rejections), the bin engine adding a ball to that bin, the
//! level engine to the bin at that position of its sorted view. Either way the start is the
//! One-Choice law of `m₀` balls.
//!
//! Start states need unit weights (a start's loads are ball counts), and the delay setting
//! and `equalize` (loops of their own) do not take them: [`crate::RunSpec::validate`] refuses those.
//!
//! The registry ([`STARTS`], reached as `ballast_core::registry::STARTS`) declares the
//! kinds for every front end; a `file` start is read by the front end (through
//! [`crate::input::read_text`], bounded) into [`Start::Loads`], with [`parse_loads`] giving
//! errors by line and column.

use rand::RngCore;

use crate::input::{column_of, token, TextError};
use crate::params::{Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue};

/// The loads a run starts from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Start {
    /// Every bin empty (the default; no random numbers drawn).
    #[default]
    Empty,
    /// Every bin starts with `k` balls.
    Uniform {
        /// Balls per bin.
        k: u64,
    },
    /// All `balls` balls in bin 0.
    OneBin {
        /// Balls in bin 0.
        balls: u64,
    },
    /// `balls` balls thrown by One-Choice, drawn from the run's generator before the
    /// process starts (see the module docs for the exact draws).
    Random {
        /// Balls thrown.
        balls: u64,
    },
    /// One load per bin, in bin order (what a `file` start is read into).
    Loads(Vec<u64>),
}

/// The largest load a start may give a bin (the bin engine's loads are 32-bit, and the
/// process adds its `m` balls on top: [`crate::RunSpec::validate`] also checks the sum).
pub const MAX_START_LOAD: u64 = u32::MAX as u64;

/// The most load levels (`max − min + 1`) of a start that the level engine takes: its state
/// holds one count per level, so a start spanning more levels goes to the bin engine
/// (`auto`) or is refused (`levels`).
pub const MAX_START_LEVELS: u64 = 1 << 20;

impl Start {
    /// The kind name (`empty`, `uniform`, `one_bin`, `random`, `file`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::Uniform { .. } => "uniform",
            Self::OneBin { .. } => "one_bin",
            Self::Random { .. } => "random",
            Self::Loads(_) => "file",
        }
    }

    /// Whether this is the empty start.
    pub fn is_empty(&self) -> bool {
        *self == Self::Empty
    }

    /// The number of balls `m₀` the start holds in `n` bins (saturating).
    pub fn balls(&self, n: u64) -> u64 {
        match self {
            Self::Empty => 0,
            Self::Uniform { k } => k.saturating_mul(n),
            Self::OneBin { balls } | Self::Random { balls } => *balls,
            Self::Loads(v) => v.iter().fold(0u64, |a, &x| a.saturating_add(x)),
        }
    }

    /// An upper bound on the largest load of the start (exact but for `random`, where it is
    /// the number of balls).
    pub fn max_load_bound(&self) -> u64 {
        match self {
            Self::Empty => 0,
            Self::Uniform { k } => *k,
            Self::OneBin { balls } | Self::Random { balls } => *balls,
            Self::Loads(v) => v.iter().copied().max().unwrap_or(0),
        }
    }

    /// An upper bound on the number of load levels (`max − min + 1`) of the start in `n`
    /// bins.
    pub fn levels_bound(&self, n: u64) -> u64 {
        match self {
            Self::Empty | Self::Uniform { .. } => 1,
            Self::OneBin { .. } if n == 1 => 1,
            Self::OneBin { balls } | Self::Random { balls } => balls.saturating_add(1),
            Self::Loads(v) => {
                let max = v.iter().copied().max().unwrap_or(0);
                let min = v.iter().copied().min().unwrap_or(0);
                max - min + 1
            }
        }
    }

    /// The start as 32-bit loads of `n` bins, for the bin engine (a checked start:
    /// [`crate::RunSpec::validate`]). Draws from `rng` for [`Start::Random`] only.
    pub fn unit_loads<R: RngCore + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<u32> {
        let mut loads = vec![0u32; n];
        match self {
            Self::Empty => {}
            Self::Uniform { k } => loads.fill(*k as u32),
            Self::OneBin { balls } => loads[0] = *balls as u32,
            Self::Random { balls } => {
                for _ in 0..*balls {
                    loads[crate::rng::below(rng, n as u64) as usize] += 1;
                }
            }
            Self::Loads(v) => {
                for (l, &x) in loads.iter_mut().zip(v) {
                    *l = x as u32;
                }
            }
        }
        loads
    }
}

/// Reads the loads of a `file` start: one non-negative integer per line (surrounding
/// spaces ignored; empty lines and lines starting with `#` skipped). An error gives the
/// 1-based line and column and what was expected, never the text found there
/// ([`crate::input`]).
pub fn parse_loads(text: &str) -> Result<Vec<u64>, TextError> {
    let mut loads = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = |m: String| TextError::at(i + 1, column_of(line, t), m);
        match t.parse::<u64>() {
            Ok(x) if x <= MAX_START_LOAD => loads.push(x),
            Ok(_) => {
                return Err(at(format!("a load above {MAX_START_LOAD} (loads are 32-bit)")));
            }
            Err(_) => {
                return Err(at(format!(
                    "{} that is not a load: expected one non-negative integer per line",
                    token(t)
                )));
            }
        }
    }
    if loads.is_empty() {
        return Err(TextError::whole("no loads (expected one non-negative integer per line)"));
    }
    Ok(loads)
}

/// What a start kind of the registry builds: a start, or (`file`) the path of the file the
/// front end reads into [`Start::Loads`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartSource {
    /// A start without a file.
    Given(Start),
    /// Read this file (one load per line, [`parse_loads`]); relative paths are the front
    /// end's business (a config's directory, the working directory of `ballast simulate`).
    File(String),
}

/// One kind of start state: what every front end accepts as `start = { kind = "…", … }`
/// in a config and `--start KIND[:key=value,...]` on the command line.
#[derive(Debug)]
pub struct StartDef {
    /// Kind name.
    pub name: &'static str,
    /// One-line meaning.
    pub doc: &'static str,
    /// Parameters, in display order.
    pub params: &'static [ParamDef],
    make: fn(&Args) -> StartSource,
}

impl StartDef {
    /// Its parameters with the shared checks.
    pub fn list(&self) -> ParamList {
        ParamList { what: "start", name: self.name, params: self.params }
    }

    /// The start of the given parameters (unknown names, wrong types and missing
    /// parameters refused with the registry's messages).
    pub fn build(&self, given: &[(&str, ParamValue)]) -> Result<StartSource, ParamError> {
        let args = self.list().args(given)?;
        if self.name == "file" && args.text("path").is_none_or(str::is_empty) {
            return Err(ParamError::at("path", "start `file` needs a non-empty `path`".into()));
        }
        Ok((self.make)(&args))
    }
}

const fn count_param(name: &'static str, doc: &'static str) -> ParamDef {
    ParamDef::new(name, ParamType::Int { lo: 0, hi: u32::MAX }, ParamDefault::Required, doc)
}

/// Every start kind, in listing order.
pub const STARTS: &[StartDef] = &[
    StartDef {
        name: "empty",
        doc: "every bin empty (the default)",
        params: &[],
        make: |_| StartSource::Given(Start::Empty),
    },
    StartDef {
        name: "uniform",
        doc: "every bin starts with k balls",
        params: &[count_param("k", "balls per bin")],
        make: |a| StartSource::Given(Start::Uniform { k: u64::from(a.int("k")) }),
    },
    StartDef {
        name: "one_bin",
        doc: "all balls in bin 0",
        params: &[count_param("balls", "balls in bin 0")],
        make: |a| StartSource::Given(Start::OneBin { balls: u64::from(a.int("balls")) }),
    },
    StartDef {
        name: "random",
        doc: "balls thrown by One-Choice from the run's generator before the process starts",
        params: &[count_param("balls", "balls thrown")],
        make: |a| StartSource::Given(Start::Random { balls: u64::from(a.int("balls")) }),
    },
    StartDef {
        name: "file",
        doc: "one load per line, bin 0 first (as many lines as bins)",
        params: &[ParamDef {
            name: "path",
            ty: ParamType::Text,
            default: ParamDefault::Required,
            doc: "the file (relative to the config's directory, or the working directory)",
        }],
        make: |a| StartSource::File(a.text("path").unwrap_or_default().to_string()),
    },
];

/// The start kind `name`, or the registry's "unknown start" message.
pub fn find_start(name: &str) -> Result<&'static StartDef, ParamError> {
    STARTS.iter().find(|s| s.name == name).ok_or_else(|| ParamError {
        param: None,
        message: format!(
            "unknown start `{name}`{}; valid starts: {}",
            crate::error::did_you_mean(name, STARTS.iter().map(|s| s.name)),
            STARTS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LoadState;

    #[test]
    fn both_representations_hold_the_start() {
        let mut rng = crate::sim_rng(3);
        for (start, n) in [
            (Start::Uniform { k: 5 }, 4u64),
            (Start::OneBin { balls: 7 }, 3),
            (Start::OneBin { balls: 7 }, 1),
            (Start::Loads(vec![2, 0, 9, 2]), 4),
            (Start::Empty, 5),
        ] {
            let mut loads: Vec<u64> =
                start.unit_loads(n as usize, &mut rng).iter().map(|&x| u64::from(x)).collect();
            let lv = crate::histogram::LevelLoads::of_start(&start, n, &mut rng);
            let mut from_levels: Vec<u64> = (0..n).map(|p| lv.load_at(p)).collect();
            loads.sort_unstable();
            from_levels.sort_unstable();
            assert_eq!(loads, from_levels, "{start:?}");
            assert_eq!(lv.balls(), start.balls(n), "{start:?}");
            assert!(start.levels_bound(n) >= lv.levels() as u64, "{start:?}");
        }
        let r = Start::Random { balls: 50 };
        let a = r.unit_loads(7, &mut crate::sim_rng(1));
        assert_eq!(a.iter().map(|&x| u64::from(x)).sum::<u64>(), 50);
        let lv = crate::histogram::LevelLoads::of_start(&r, 7, &mut crate::sim_rng(1));
        assert_eq!(lv.balls(), 50);
        assert_eq!(lv.total(), 50.0);
    }

    #[test]
    fn file_lines_are_read_with_their_line_numbers() {
        assert_eq!(parse_loads("3\n 0 \n# comment\n\n12\n"), Ok(vec![3, 0, 12]));
        let e = parse_loads("1\n  secret\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert!(!e.message.contains("secret"), "{e}");
        assert_eq!(parse_loads("1\n-2\n").unwrap_err().line, 2);
        let e = parse_loads("9999999999\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(!e.message.contains("9999999999"), "{e}");
        assert!(parse_loads("\n").is_err());
    }

    #[test]
    fn the_registry_builds_every_kind_and_refuses_unknown_ones() {
        let k = |v: f64| ParamValue::Num(v);
        let u = find_start("uniform").unwrap().build(&[("k", k(5.0))]).unwrap();
        assert_eq!(u, StartSource::Given(Start::Uniform { k: 5 }));
        let f = find_start("file").unwrap();
        assert_eq!(
            f.build(&[("path", ParamValue::Text("a.txt".into()))]).unwrap(),
            StartSource::File("a.txt".into())
        );
        assert!(f.build(&[]).is_err());
        let e = find_start("one_bin").unwrap().build(&[("ball", k(3.0))]).unwrap_err();
        assert!(e.message.contains("did you mean `balls`"), "{e}");
        let e = find_start("unifrom").unwrap_err();
        assert!(e.message.contains("did you mean `uniform`"), "{e}");
        let e = find_start("uniform").unwrap().build(&[("k", k(-1.0))]).unwrap_err();
        assert!(e.message.contains("an integer in 0..=4294967295"), "{e}");
    }
}
