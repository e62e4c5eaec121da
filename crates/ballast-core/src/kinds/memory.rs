//! Memory (`memory`) and Caching (`caching`): d fresh samples plus a cache of bins (the k
//! least loaded seen, or the last receiver). With one cached bin (d = 1, k = 1) the level
//! engine tracks the cached bin's level beside the histogram (`level/filling.rs`),
//! sequentially only; a larger cache remembers particular bins, which the histogram does not
//! know.

use super::FRESH_D;
use crate::crossover::AUTO_SEQUENTIAL_MIN_N_FILLING;
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{sequential_only, Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::{CachePolicy, Memory, MemoryOne};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Memory`] and [`ProcessSpec::Caching`].
pub(super) struct Item;

/// The number of fresh samples and the cache's policy.
fn parts(p: &ProcessSpec) -> (u32, CachePolicy) {
    match *p {
        ProcessSpec::Memory { d, k } => (d, CachePolicy::LeastLoaded { k }),
        ProcessSpec::Caching { d } => (d, CachePolicy::LastReceiver),
        _ => unreachable!("listed for Memory and Caching"),
    }
}

/// Whether the cache is one bin: (1, 1)-Memory or Caching with d = 1.
fn one_bin(p: &ProcessSpec) -> bool {
    matches!(p, ProcessSpec::Memory { d: 1, k: 1 } | ProcessSpec::Caching { d: 1 })
}

impl Kind for Item {
    // The cached bin, kept as the least loaded, takes every ball of a frozen batch.
    const SAME_BIN_IN_BATCHES: bool = true;
    fn unit_weights_only(p: &ProcessSpec) -> bool {
        match p {
            ProcessSpec::Memory { .. } => MEMORY.unit_weights_only,
            _ => CACHING.unit_weights_only,
        }
    }
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Memory { d, k } => {
                super::declared(&MEMORY, "d", f64::from(d))?;
                super::declared(&MEMORY, "k", f64::from(k))
            }
            ProcessSpec::Caching { d } => super::declared(&CACHING, "d", f64::from(d)),
            _ => unreachable!("listed for Memory and Caching"),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        match spec.process {
            ProcessSpec::Memory { d: 1, k: 1 } => runner.run(MemoryOne::<true>::new()),
            ProcessSpec::Caching { d: 1 } => runner.run(MemoryOne::<false>::new()),
            ref p => {
                let (d, policy) = parts(p);
                runner.run(Memory::new(d, policy))
            }
        }
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        if !one_bin(&spec.process) {
            return Err(super::bin_identities(spec));
        }
        sequential_only(
            batched,
            format!(
                "the level engine simulates {} sequentially only (its cache changes with \
                 every ball)",
                spec.process.kind()
            ),
        )
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        match spec.process {
            ProcessSpec::Memory { .. } => v.memory_one::<true>(),
            _ => v.memory_one::<false>(),
        }
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        if one_bin(&spec.process) {
            AUTO_SEQUENTIAL_MIN_N_FILLING
        } else {
            crate::crossover::AUTO_SEQUENTIAL_MIN_N
        }
    }
}

/// The registry entry of `memory` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const MEMORY: ProcessDef = ProcessDef {
    name: "memory",
    doc: "d fresh samples plus k cached bins; ball to a least loaded; the cache keeps the k \
          least loaded",
    params: &[
        FRESH_D,
        ParamDef {
            name: "k",
            ty: ParamType::Int { lo: 1, hi: 1024 },
            default: ParamDefault::Num(1.0),
            doc: "cached bins",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |a| Ok(ProcessSpec::Memory { d: a.int("d"), k: a.int("k") }),
};

/// The registry entry of `caching` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const CACHING: ProcessDef = ProcessDef {
    name: "caching",
    doc: "d fresh samples plus the bin that received the previous ball",
    params: &[FRESH_D],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |a| Ok(ProcessSpec::Caching { d: a.int("d") }),
};
