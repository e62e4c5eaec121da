//! Benchmarks of the ballast engines (criterion, `cargo bench -p ballast-benches`).
//!
//! The library part only holds the benchmark cases, so that they are documented and
//! checked like any other code; `benches/engines.rs` times them (groups `bin_engine` and
//! `level_engine`), `benches/filling.rs` the filling and memory processes (group `filling`).
//! The [`floor`] module holds the cases and the floor loop of the `floor` binary
//! (`cargo xtask bench --floor`): ns per ball of each engine beside the cost of the random
//! numbers alone.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod floor;
pub mod rbb_levels;

use ballast_core::{supported_engines, Engine, ProcessSpec, RunSpec, TieBreak};

/// One timed case: a full run of `spec` (allocating its load array included).
#[derive(Clone, Debug)]
pub struct Case {
    /// Benchmark id within the group, e.g. `two_choice/n=1e4/seq`.
    pub id: String,
    /// What one iteration simulates.
    pub spec: RunSpec,
}

/// Formats a power of ten compactly (`10000` → `1e4`).
fn short(x: u64) -> String {
    let mut e = 0;
    let mut v = x;
    while v >= 10 && v % 10 == 0 {
        v /= 10;
        e += 1;
    }
    if e >= 3 {
        format!("{v}e{e}")
    } else {
        x.to_string()
    }
}

/// The cases of the engine groups, run on `engine`: One-Choice and Two-Choice at n = 10⁴
/// (m = 5·10⁶) and n = 10⁷ (m = 2·10⁷), sequential and batched with b = n; (1+β) with
/// β = 0.5 batched with b = n, and Three-Choice with position ties batched with b = n and
/// b = 50n, at n = 10⁴. Cases the engine cannot simulate exactly are left out. On the bin
/// engine each iteration takes roughly 10–500 ms.
pub fn engine_cases(engine: Engine) -> Vec<Case> {
    let mut cases = Vec::new();
    let sizes = [(10_000u64, 5_000_000u64), (10_000_000, 20_000_000)];
    for (name, process) in
        [("one_choice", ProcessSpec::OneChoice), ("two_choice", ProcessSpec::DChoice { d: 2 })]
    {
        for (n, m) in sizes {
            let seq = RunSpec::new(process.clone(), n, m).engine(engine);
            cases.push(Case { id: format!("{name}/n={}/seq", short(n)), spec: seq.clone() });
            cases.push(Case { id: format!("{name}/n={}/batch=n", short(n)), spec: seq.batched(n) });
        }
    }
    let (n, m) = sizes[0];
    cases.push(Case {
        id: format!("one_plus_beta_0.5/n={}/batch=n", short(n)),
        spec: RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, n, m).batched(n).engine(engine),
    });
    for (label, b) in [("n", n), ("50n", 50 * n)] {
        cases.push(Case {
            id: format!("three_choice_position/n={}/batch={label}", short(n)),
            spec: RunSpec::new(ProcessSpec::DChoice { d: 3 }, n, m)
                .batched(b)
                .tie_break(TieBreak::Position)
                .engine(engine),
        });
    }
    cases.retain(|c| supported_engines(&c.spec).contains(&engine));
    cases
}

/// Bins and balls of the [`filling_cases`]: n = 10⁴, m = 500 n.
pub const FILLING_SIZE: (u64, u64) = (10_000, 5_000_000);

/// The cases of the `filling` group: every Filling and memory process of Los, Sauerwald and
/// Sylvester's paper (and Vöcking's Always-Go-Left) with its default parameters, plus
/// Two-Choice for comparison, sequential on the bin engine at n = 10⁴, m = 5·10⁶ (the default
/// [`ballast_core::Stop::Truncate`]: exactly m balls, so ns/ball = time / m). Memory also
/// with d = 2 (the general candidate-list path; (1, 1)-Memory and Caching have a
/// specialised rule). Each iteration takes roughly 30–300 ms.
pub fn filling_cases() -> Vec<Case> {
    let (n, m) = FILLING_SIZE;
    let processes = [
        ("two_choice", ProcessSpec::DChoice { d: 2 }),
        ("packing", ProcessSpec::Packing { offset: 1 }),
        ("tight_packing", ProcessSpec::TightPacking { offset: 1, balls: None }),
        ("twinning", ProcessSpec::Twinning),
        ("mean_thinning", ProcessSpec::MeanThinning { strict: true }),
        ("relative_threshold_1", ProcessSpec::RelativeThreshold { f: 1.0 }),
        ("memory", ProcessSpec::Memory { d: 1, k: 1 }),
        ("memory_d2_k1", ProcessSpec::Memory { d: 2, k: 1 }),
        ("caching", ProcessSpec::Caching { d: 1 }),
        ("always_go_left_2", ProcessSpec::AlwaysGoLeft { d: 2 }),
    ];
    processes
        .into_iter()
        .map(|(name, p)| Case {
            id: format!("{name}/n={}/seq", short(n)),
            spec: RunSpec::new(p, n, m).engine(Engine::Bins),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_valid_and_unique() {
        let cases = engine_cases(Engine::Bins);
        assert_eq!(cases.len(), 11);
        // Every case runs on both engines (positional ties in batches included).
        assert_eq!(engine_cases(Engine::Levels).len(), 11);
        for c in &cases {
            c.spec.validate().unwrap();
            assert_eq!(c.spec.engine, Engine::Bins);
        }
        let mut ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), cases.len());
        assert_eq!(short(10_000_000), "1e7");
    }

    #[test]
    fn filling_cases_cover_the_new_processes() {
        let cases = filling_cases();
        let kinds: Vec<&str> = cases.iter().map(|c| c.spec.process.kind()).collect();
        for k in [
            "packing",
            "tight_packing",
            "twinning",
            "mean_thinning",
            "relative_threshold",
            "memory",
            "caching",
            "always_go_left",
            "d_choice",
        ] {
            assert!(kinds.contains(&k), "{k} missing");
        }
        for c in &cases {
            c.spec.validate().unwrap();
            assert_eq!((c.spec.n, c.spec.m), FILLING_SIZE);
        }
    }
}
