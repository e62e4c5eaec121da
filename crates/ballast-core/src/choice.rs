//! The engine choice: which engine can run a spec exactly ([`level_support`],
//! [`supported_engines`]), which one `auto` picks ([`resolve_engine`], from measured
//! crossovers), and the validation of a whole [`RunSpec`], which depends on that choice (the
//! bin engine keeps 32-bit loads). Pure functions of the spec: nothing here runs an engine,
//! so every engine and front end can ask.

use crate::spec::{distinct_d, is_distinct_pair, Tau};
use crate::start::Start;
use crate::{Engine, Error, ProcessSpec, RunSpec, Setting, TieBreak, Weights};

/// Sequential runs with at least this many bins go to the level engine under `auto`, for
/// the processes without a crossover of their own ([`auto_sequential_min_n`]): the rules that
/// run through the generic loop on the level engine (k-Threshold, the filling rules) cost
/// 30–47 ns per ball there against 5–14 on the bin engine at n ≤ 10⁶, so they stay on bins
/// up to here.
pub const AUTO_SEQUENTIAL_MIN_N: u64 = 1 << 20;

/// Sequential One-Choice goes to the level engine under `auto` from this many bins (when the
/// stretches between observation points hold at least [`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`]
/// balls; each stretch is one batched step there, `run_seq_one_choice`), chosen from speed
/// alone. The level engine's cost is per stretch, so the shortest stretch `auto` admits
/// decides: measured (`simulate` of m = 100·max(n, 2¹⁷) balls, best of 3, 2026-12-05, machine
/// shared), bins / levels in ns per ball with stretches of 2¹⁵ balls: 4.2 / 7.0 at n = 2¹⁰,
/// 3.7–5.3 / 19–22 at 2¹⁴, 4.4 / 10.0 at 2¹⁵, 3.8 / 6.1 at 2¹⁶, 4.8–5.8 / 3.5–4.5 at 2¹⁷,
/// 17.8 / 3.0 at 2²⁰; with stretches of 2¹⁷ balls 4.3 / 10.0 at 2¹⁴, 3.8 / 5.6 at 2¹⁵,
/// 3.8 / 3.3 at 2¹⁶, 5.1 / 1.9 at 2¹⁷; with one stretch per run (`floor --n
/// 1024,16384,131072,1048576 --only one_choice --engine both --reps 3`) 3.3 / 0.01,
/// 3.3 / <0.01, 4.9 / <0.01, 18.2 / <0.01. So from 2¹⁷ the level engine wins for every
/// admitted stretch. (Until 2026-12-05 the crossover was [`AUTO_SEQUENTIAL_MIN_N`], 2²⁰.)
/// A run with a per-ball observer (tracked potentials) goes ball by ball on the level
/// engine, which `auto` cannot see: at 2¹⁷ with a quadratic tracker 54 ns per ball against
/// 33 on bins, at 2²⁰ 57 against 77.
pub const AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE: u64 = 1 << 17;

/// Sequential Mean-Thinning and Relative-Threshold go to the level engine under `auto` from
/// this many bins (the cut loop, `level/thinning.rs`, and from [`crate::level::chunked::CHUNK_MIN_N_THIN`]
/// its chunks). Measured (m = 1000n, `floor --n 1024,10000,32768,131072,1048576 --only
/// threshold,mean_thinning,relative_threshold --engine both --reps 3 --m-per-n 1000`, then
/// `--n 131072,262144,1048576` with chunks, 2026-12-04, `results/bench/floor_thinning_v7.md`),
/// bins / levels in ns per ball: Mean-Thinning 8.0 / 11.5 at 10⁴, 8.2 / 10.8 at 2¹⁵,
/// 9.2 / 7.3 at 2¹⁷, 10.0 / 5.7 at 2¹⁸, 11.4 / 2.8 at 2²⁰; Relative-Threshold (f = 1) 8.2 /
/// 8.2, 8.3 / 9.0, 9.8 / 8.3, 10.3 / 7.0, 12.0 / 3.8; at n = 10⁷ (m = 10n) about 30 / 0.6.
/// Below 2¹⁷ the level engine ties or loses.
pub const AUTO_SEQUENTIAL_MIN_N_THINNING: u64 = 1 << 17;

/// Sequential Threshold goes to the level engine under `auto` from this many bins. Its
/// histogram is One-Choice's once most bins are past the threshold, so the level engine's
/// cost grows with m/n: measured as for [`AUTO_SEQUENTIAL_MIN_N_THINNING`] (f = 1), bins /
/// levels 3.4 / 25.7 at 2¹⁷ and 6.6 / 12.3 at 2²⁰ with m = 1000n (some 300 levels: the
/// block loop's fixed array does not hold them, and a chunk pays a binomial per level), but
/// 5.5 / 1.4 at 2²⁰ with m = 10n and 34 / 0.5 at 10⁷ with m = 10n. From 2²⁰ the level
/// engine wins unless m/n is in the hundreds; below, the bin engine is at its floor.
pub const AUTO_SEQUENTIAL_MIN_N_THRESHOLD: u64 = 1 << 20;

/// Sequential Two-Choice (`d = 2`) goes to the level engine under `auto` from this many bins.
/// Measured (`floor --n 8192,32768,131072,262144 --only choice`, one run, 2026-12-03): bins
/// 3.43 / 3.74 / 4.00 / 4.04 ns per ball, levels 4.02 / 2.92 / 2.00 / 1.43. The level engine
/// already wins from 2¹⁵; the crossover sits at 2¹⁷, where the chunk step starts
/// ([`crate::level::chunked::CHUNK_MIN_N`]), so that the committed `filling22` items (Two-Choice at
/// n = 5·10⁴ and 10⁵ on `auto`) keep their values (CHANGELOG).
pub const AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE: u64 = 1 << 17;

/// Sequential d-Choice with `d >= 3` goes to the level engine under `auto` from this many
/// bins. Measured as above, Three-Choice: bins 11.1 / 10.9 / 11.8 / 13.0 ns per ball at
/// n = 2¹⁰ / 2¹³ / 2¹⁵ / 2¹⁷, levels 5.9 / 4.6 / 2.5 / 1.35 (at n = 10³ in
/// `results/bench/floor_after.md`: 15.2 against 8.1).
pub const AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE: u64 = 1 << 10;

/// Sequential (1+β) goes to the level engine under `auto` from this many bins: always, since
/// its ball loop takes whole words per ball (value version 5). Measured (β = 0.5,
/// `floor --only one_plus_beta --engine both --reps 3`, 2026-12-04), bins / levels in ns
/// per ball: 11.9 / 10.9 at n = 16, 11.3 / 8.8 at 100, 11.8 / 8.1 at 300, 14.5 / 11.9 at
/// 2¹⁰, 15.3 / 12.7 at 2¹³, 12.1 / 7.4 at 2¹⁵ and 2¹⁶, 17.9 / 9.5 at 2¹⁷ (chunks). Until
/// version 5 the level engine ran the generic rule here (14.1 ns at 2¹⁰ against 9.4 on
/// bins), and the crossover was 2¹⁷.
pub const AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA: u64 = 0;

/// Sequential Tight-Packing, (1, 1)-Memory and Caching with d = 1 go to the level engine under `auto` from this many bins (the block loop of
/// `level/filling.rs`). Measured (`floor --only tight_packing,memory --n
/// 1000,10000,50000,100000 --m-per-n 1000 --reps 3`, 2026-12-05, machine shared, floor
/// 3.55–4.1 ns), bins / levels in ns per ball: Tight-Packing 8.1 / 5.9 at 10³, 8.8 / 6.4 at
/// 10⁴, 11.7 / 5.9 at 5·10⁴, 11.2 / 5.6 at 10⁵; (1, 1)-Memory 6.7 / 6.6, 6.8 / 6.4,
/// 8.7 / 6.4, 8.4 / 5.8. The level engine wins at every measured n; below 10³ not measured.
pub const AUTO_SEQUENTIAL_MIN_N_FILLING: u64 = 1000;

/// Sequential Packing and Twinning go to the level engine under `auto` from this many bins
/// (the step loop of `level/filling.rs`, one word per step). Measured (`ballast simulate
/// --process P --n N --m M --runs R --threads 1 --engine E`, user time, machine shared,
/// load 4–6, 2026-12-05), bins / levels in ns per ball, Packing (offset 1): 1.5 / 6.6 at
/// 10³, 1.5 / 7.0 at 10⁴, 1.8 / 6.5 at 10⁵ (m = 1000n), 3.5 / 6.6 at 10⁶, 4.0 / 6.4 at 2²¹,
/// 12.0 / 6.2 at 2²², 20.4 / 6.0 at 10⁷ (m = 10⁸); Twinning 1.9 / 7.6, 2.0 / 8.1,
/// 2.3 / 11.6, 4.5 / 12.0, 6.7 / 8.4, 14.9 / 7.1, 24.4 / 6.9. The bin engine places a
/// step's balls with one load write and stays ahead while its loads fit the caches.
pub const AUTO_SEQUENTIAL_MIN_N_PACKING: u64 = 1 << 22;

/// Sequential g-Bounded goes to the level engine under `auto` from this many bins (the pair
/// loop, `level/pair.rs`). Measured (g = 4, m = 1000n, `floor --n 1024,4096,10000,16384,
/// 32768,50000,100000,131072 --only g_bounded,g_myopic,sigma --engine both --reps 3
/// --m-per-n 1000`, 2026-12-04), bins / levels in ns per ball: 5.3 / 6.5 at 10⁴, 6.1 / 6.8
/// at 2¹⁴, 5.7 / 6.0 at 5·10⁴, 6.1 / 5.9 at 10⁵, 6.9 / 5.5 at 2¹⁷: a tie at 10⁵, a win
/// from 2¹⁷. Results: `results/bench/floor_noisy_v6.md`.
pub const AUTO_SEQUENTIAL_MIN_N_G_BOUNDED: u64 = 1 << 17;

/// Sequential g-Myopic goes to the level engine under `auto` from this many bins. Measured
/// as for [`AUTO_SEQUENTIAL_MIN_N_G_BOUNDED`] (g = 4): 5.8 / 6.5 at 10⁴, 6.6 / 6.3 at 2¹⁴,
/// 8.1 / 7.0 at 2¹⁵, 6.7 / 5.9 at 5·10⁴, 7.3 / 6.6 at 10⁵, 7.6 / 5.4 at 2¹⁷; and over g
/// (`ballast simulate --process g_myopic --param g=G --n N --m 1000N --runs 2 --engine E`,
/// user time): at 2¹⁴ g = 20 runs 5.9 / 6.7 (the wider histogram costs the level loop
/// more lookups), at 5·10⁴ 5.8–6.0 / 5.4–5.9 for g = 4, 10, 20, at 10⁵ 6.2–6.7 / 5.2–6.3.
/// So the level engine wins for every g from about 5·10⁴; 2¹⁵ is the power of two below.
pub const AUTO_SEQUENTIAL_MIN_N_G_MYOPIC: u64 = 1 << 15;

/// Sequential σ-Noisy-Load goes to the level engine under `auto` from this many bins.
/// Measured as for [`AUTO_SEQUENTIAL_MIN_N_G_BOUNDED`] (σ = 4, truncated): 16.1 / 15.0 at
/// 2¹⁰, 17.2 / 17.8 at 2¹², 17.9 / 15.9 at 10⁴, 16.5 / 12.0 at 10⁵; and over σ (truncated,
/// `ballast simulate --process sigma_noisy_load --param sigma=S --param truncate=true
/// --n N --m 1000N --runs 5 --engine E`, user time): at 2¹² σ = 1, 4, 20 run 15.1 / 15.1,
/// 14.6 / 15.1, 14.6 / 16.6; at 2¹³ 14.9 / 12.7, 14.9 / 12.9, 15.1 / 14.6; at 10⁴ (3 runs)
/// σ = 1, 4, 10, 20: 15.3 / 11.3, 14.3 / 13.0, 15.0 / 12.3, 14.3 / 13.3. A large σ costs
/// the level engine a fixed amount per run (the pairs' probabilities below `exact_from`,
/// about 10σ), which small n does not amortise.
pub const AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY: u64 = 1 << 13;

/// Sequential adaptive probing (`adaptive`) other than Greedy\[d\] goes to the level engine
/// under `auto` from this many bins (Greedy\[d\] runs as d-Choice there and takes d-Choice's
/// crossover). Measured (`floor --only threshold_first,probe_count --m-per-n 100`, m = 100n,
/// one run of 3 repetitions, 2026-12-03): threshold-first (d = 2, c = 2, relative) bins 10.1 /
/// 9.9 / 10.1 / 10.9 / 17.7 ns per ball at n = 2¹⁰ / 2¹³ / 2¹⁵ / 2¹⁷ / 2²⁰, levels 9.6 / 10.2 /
/// 9.3 / 9.0 / 10.5; probe-count (relative) bins 12.5 / 12.4 / 16.1 / 14.2 / 22.6, levels 12.3
/// / 12.1 / 13.2 / 11.1 / 16.3. A tie up to 2¹³, a win from 2¹⁵; at n = 10⁷ 87 / 17 and
/// 112 / 19 (`docs/level-engine.md#engine-selection`).
pub const AUTO_SEQUENTIAL_MIN_N_ADAPTIVE: u64 = 1 << 15;

/// The smallest `n` from which `auto` runs a sequential `process` on the level engine (when
/// the level engine can run it exactly). Quantile and mixed Quantile: always (the bin engine
/// keeps live ranks, 29–40 ns per ball at n = 2¹⁰ … 2¹⁷ against 6.5–21 on levels).
/// One-Choice, whose sequential stretches are one batched step each on the level engine (see
/// `run_seq_one_choice`): from [`AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE`], when the stretches between
/// observation points hold at least [`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`] balls. Adaptive probing:
/// Greedy\[d\] as d-Choice, other thresholds from [`AUTO_SEQUENTIAL_MIN_N_ADAPTIVE`].
pub fn auto_sequential_min_n(spec: &RunSpec) -> u64 {
    match spec.process {
        ProcessSpec::OneChoice | ProcessSpec::DChoice { d: 1 } => {
            let stretch = spec.observe_every.unwrap_or(spec.m);
            if stretch >= AUTO_BATCH_MIN_BALLS_ONE_CHOICE {
                AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE
            } else {
                u64::MAX
            }
        }
        ProcessSpec::DChoice { d: 2 } => AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
        ProcessSpec::DChoice { .. } => AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
        ProcessSpec::OnePlusBeta { .. } => AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA,
        ProcessSpec::Quantile { .. } | ProcessSpec::MixedQuantile { .. } => 0,
        ProcessSpec::GBounded { .. } => AUTO_SEQUENTIAL_MIN_N_G_BOUNDED,
        ProcessSpec::GMyopic { .. } => AUTO_SEQUENTIAL_MIN_N_G_MYOPIC,
        ProcessSpec::SigmaNoisyLoad { .. } => AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
        ProcessSpec::Threshold { .. } => AUTO_SEQUENTIAL_MIN_N_THRESHOLD,
        ProcessSpec::Packing { .. } | ProcessSpec::Twinning => AUTO_SEQUENTIAL_MIN_N_PACKING,
        ProcessSpec::TightPacking { .. }
        | ProcessSpec::Memory { d: 1, k: 1 }
        | ProcessSpec::Caching { d: 1 } => AUTO_SEQUENTIAL_MIN_N_FILLING,
        ProcessSpec::MeanThinning { .. } | ProcessSpec::RelativeThreshold { .. } => {
            AUTO_SEQUENTIAL_MIN_N_THINNING
        }
        // Greedy[d] runs as d-Choice on levels (`level/adaptive.rs`).
        ProcessSpec::Adaptive { ref tau, cap } => match crate::spec::greedy_d(tau, cap) {
            Some(2) => AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
            Some(_) => AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
            None => AUTO_SEQUENTIAL_MIN_N_ADAPTIVE,
        },
        ProcessSpec::Custom(ref c) => c.item().auto_levels_min_n().unwrap_or(AUTO_SEQUENTIAL_MIN_N),
        _ => AUTO_SEQUENTIAL_MIN_N,
    }
}

/// Batched runs with at least this many balls per batch go to the level engine under `auto`.
pub const AUTO_BATCH_MIN_BALLS: u64 = 1 << 11;

/// As [`AUTO_BATCH_MIN_BALLS`], for One-Choice.
pub const AUTO_BATCH_MIN_BALLS_ONE_CHOICE: u64 = 1 << 15;

/// Batched runs with positional ties go to the level engine under `auto` when, besides
/// [`AUTO_BATCH_MIN_BALLS`], there are at most this many bins per ball of a batch
/// (`b >= n / 2`): a positional batch scans all n positions, so smaller batches are
/// cheaper on the bin engine.
pub const AUTO_POSITION_MAX_BINS_PER_BALL: u64 = 2;

/// Largest batch size per bin (`b / n`) of the level engine.
pub const LEVEL_MAX_BATCH_PER_BIN: u64 = 1 << 16;

/// Largest `m` of the level engine: loads stay exactly representable as `f64` in the
/// [`crate::LoadState`] view.
pub const LEVEL_MAX_BALLS: u64 = 1 << 53;

/// Whether the level engine can simulate `spec` exactly; the error says why not and names
/// the alternative.
pub fn level_support(spec: &RunSpec) -> Result<(), Error> {
    run_support(spec)?;
    process_support(spec, matches!(spec.setting, Setting::Batched { .. }))
}

/// The checks of [`level_support`] that do not depend on the process: sampling, weights,
/// batch span and tie rule, m, the start state, the delay setting.
fn run_support(spec: &RunSpec) -> Result<(), Error> {
    if spec.record_probes && !matches!(spec.process, ProcessSpec::Adaptive { .. }) {
        return Err(Error::use_bins(
            "the level engine does not record probes per step (record_probes)".to_string(),
        ));
    }
    if !spec.sampling.is_uniform() {
        return Err(Error::use_bins(format!(
            "the level engine needs uniform bin sampling (got sampling = \"{}\": bins of one \
             level are no longer exchangeable)",
            spec.sampling.name()
        )));
    }
    if !spec.capacities.is_unit() {
        return Err(Error::use_bins(format!(
            "the level engine needs bins of equal capacity (got capacities = \"{}\": bins of \
             one load level are no longer exchangeable)",
            spec.capacities.name()
        )));
    }
    if !matches!(spec.weights, Weights::Unit) {
        return Err(Error::use_bins(format!(
            "the level engine needs unit weights (got weights = \"{}\")",
            spec.weights.name()
        )));
    }
    if let Setting::Batched { b } = spec.setting {
        // The histogram is dense between the smallest and largest load, and a batch can
        // spread loads by about b/n levels (Two-Choice on 2 bins alternates which one gets
        // most of a batch): keep that span bounded.
        if b / spec.n > LEVEL_MAX_BATCH_PER_BIN {
            return Err(Error::use_bins(format!(
                "the level engine keeps one count per load level, and batches of b = {b} on \
                 n = {} bins (more than {LEVEL_MAX_BATCH_PER_BIN} balls per bin) could spread \
                 the loads over as many levels",
                spec.n
            )));
        }
        if spec.process.compares() && spec.tie_break == TieBreak::LowestIndex {
            return Err(Error::UnsupportedUse {
                why: format!(
                    "the level engine cannot break ties by \"{}\" within a batch (the same \
                     bins win every tie, so bins of a level are not exchangeable)",
                    spec.tie_break.name()
                ),
                fix: &[("engine", "bins"), ("tie_break", "random")],
            });
        }
    }
    if spec.m > LEVEL_MAX_BALLS {
        return Err(Error::invalid("m", spec.m, "at most 2^53 for the level engine"));
    }
    if spec.start.levels_bound(spec.n) > crate::start::MAX_START_LEVELS {
        return Err(Error::use_bins(format!(
            "the level engine keeps one count per load level, and start `{}` may span {} \
             levels (at most {} are taken)",
            spec.start.name(),
            spec.start.levels_bound(spec.n),
            crate::start::MAX_START_LEVELS
        )));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(Error::use_bins("the delay setting needs each bin's arrival history"));
    }
    if spec.dispatchers.is_some() {
        return Err(Error::use_bins("the dispatchers' views are per bin"));
    }
    if spec.churn.is_some() && !crate::spec::churn_on_levels(&spec.process) {
        return Err(Error::use_bins(
            "churn on the level engine takes one_choice, d_choice, one_plus_beta, threshold, \
             relative_threshold and mean_thinning",
        ));
    }
    Ok(())
}

/// The checks of [`level_support`] for the process (`batched`: in the batched setting).
fn process_support(spec: &RunSpec, batched: bool) -> Result<(), Error> {
    // Exact sequentially; batched, refused with `why` (no batch law).
    let sequential_only = |why: String| if batched { Err(Error::use_bins(why)) } else { Ok(()) };
    match spec.process {
        // Decisions depend only on the loads (and ranks) of uniform samples.
        ProcessSpec::OneChoice
        | ProcessSpec::DChoice { .. }
        | ProcessSpec::OnePlusBeta { .. }
        | ProcessSpec::Quantile { .. }
        | ProcessSpec::MixedQuantile { .. }
        | ProcessSpec::Threshold { .. }
        | ProcessSpec::MeanThinning { .. }
        | ProcessSpec::RelativeThreshold { .. }
        | ProcessSpec::GBounded { .. }
        | ProcessSpec::GMyopic { .. }
        | ProcessSpec::SigmaNoisyLoad { .. } => Ok(()),
        // The heaviest of d samples: the generic sequential rule on the sorted view is exact;
        // the batch step has no law for it yet.
        ProcessSpec::UnfairDChoice { .. } => sequential_only(
            "the level engine simulates unfair_d_choice sequentially only (no batch \
             law yet)"
                .to_string(),
        ),
        // Ranks are positions of the sorted view; the batch step has no law for a vector
        // (nor for k-Threshold's questions, which depend on the loads only).
        // formula_threshold: its sequential rule reads loads, t and W only; the batch step
        // has no law for a threshold that is not a constant.
        ProcessSpec::RankVector { .. }
        | ProcessSpec::KThreshold { .. }
        | ProcessSpec::FormulaThreshold { .. } => sequential_only(format!(
            "the level engine simulates {} sequentially only (no batch law for it \
             yet)",
            spec.process.kind()
        )),
        // Distinct samples: the generic rule on the sorted view (distinct positions are
        // distinct bins); the batch step has no law for them.
        ProcessSpec::WithoutReplacement(_) => sequential_only(format!(
            "the level engine simulates {} with replacement = false sequentially only \
             (no batch law for distinct samples)",
            spec.process.kind()
        )),
        // Multi-ball steps: exact sequentially; inside a batch the number of steps is random
        // (a step may be cut at the batch end), which the batch step does not model.
        ProcessSpec::Twinning | ProcessSpec::Packing { .. } | ProcessSpec::TightPacking { .. } => {
            sequential_only(format!(
                "the level engine simulates {} sequentially only (multi-ball steps inside \
             a batch are not modelled)",
                spec.process.kind()
            ))
        }
        // One cached bin: its load is tracked beside the histogram (`level/filling.rs`);
        // sequential only (a batch would place balls on a cache it does not update).
        ProcessSpec::Memory { d: 1, k: 1 } | ProcessSpec::Caching { d: 1 } => {
            sequential_only(format!(
                "the level engine simulates {} sequentially only (its cache changes with \
                 every ball)",
                spec.process.kind()
            ))
        }
        // Bin identity: a cache of bins, or bins split into groups by index.
        ProcessSpec::Memory { .. }
        | ProcessSpec::Caching { .. }
        | ProcessSpec::AlwaysGoLeft { .. } => Err(Error::use_bins(format!(
            "{} remembers or groups particular bins, which the level engine's histogram does \
             not know",
            spec.process.kind()
        ))),
        // A rule formula reads loads of uniform samples, W/n, t, n, d and u; an item says
        // whether its rule reads only loads. Both run on the sorted view, batches decision by
        // decision on the frozen view (`level/frozen.rs`).
        ProcessSpec::Rule { .. } => Ok(()),
        ProcessSpec::Custom(ref c) => {
            c.item().levels().map_err(Error::use_bins)?;
            c.item().level_batches().or_else(sequential_only)
        }
        // Reallocation reads and sets the loads of the distinct sampled bins only: distinct
        // positions of the sorted view, moved between levels (`czumaj::simulate_equalize_levels`).
        ProcessSpec::Equalize { .. } | ProcessSpec::EqualizeMoves { .. } => Ok(()),
        // Adaptive probing: decisions read the loads of uniform bins and W/n only; sequential
        // only (`level/adaptive.rs`), with the probe histogram of the bin engine's loop.
        ProcessSpec::Adaptive { .. } => sequential_only(
            "the level engine simulates adaptive probing sequentially only (no batch \
             law for a probe count that varies)"
                .to_string(),
        ),
    }
}

/// Which settings the level engine supports for `process` (unit weights, random ties), for
/// listings such as `ballast list`. The bin engine supports every process and setting.
/// Other weights or tie rules may narrow it: see [`supported_engines`].
pub fn level_settings(process: &ProcessSpec) -> LevelSettings {
    let seq = RunSpec::new(process.clone(), 1, 0);
    let bat = seq.clone().batched(1);
    match (level_support(&seq).is_ok(), level_support(&bat).is_ok()) {
        (true, true) => LevelSettings::SequentialAndBatched,
        (true, false) => LevelSettings::SequentialOnly,
        _ => LevelSettings::None,
    }
}

/// Answer of [`level_settings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelSettings {
    /// Sequential and batched.
    SequentialAndBatched,
    /// Sequential only (multi-ball steps).
    SequentialOnly,
    /// Not at all (bin identity).
    None,
}

impl LevelSettings {
    /// Short text for listings: `"bins, levels"`, `"bins, levels (sequential)"` or `"bins"`.
    pub fn engines_text(self) -> &'static str {
        match self {
            Self::SequentialAndBatched => "bins, levels",
            Self::SequentialOnly => "bins, levels (sequential only)",
            Self::None => "bins",
        }
    }
}

/// The concrete engines ([`Engine::Bins`], [`Engine::Levels`]) that can run `spec` exactly.
pub fn supported_engines(spec: &RunSpec) -> Vec<Engine> {
    let mut v = Vec::with_capacity(2);
    let unit = matches!(spec.weights, Weights::Unit);
    if !(unit && spec.m > u64::from(u32::MAX)) {
        v.push(Engine::Bins);
    }
    if level_support(spec).is_ok() {
        v.push(Engine::Levels);
    }
    v
}

/// The engine that runs `spec`: [`Engine::Bins`] or [`Engine::Levels`]. `auto` picks the
/// level engine when it is exact and either batched with at least [`AUTO_BATCH_MIN_BALLS`]
/// balls per batch ([`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`] for One-Choice; with `position`
/// ties also `b >= n /` [`AUTO_POSITION_MAX_BINS_PER_BALL`]), sequential with
/// `n >=` [`auto_sequential_min_n`] (per process, from measurements), or `m` beyond the bin engine's 32-bit loads; an
/// explicit `levels` that cannot be exact is an [`Error::Unsupported`]. Measurements behind
/// the positional rule: the table in the [module docs](crate::level) (at n = 10⁴, Three-Choice with
/// position ties: 16.3 → 8.4 ns/ball at b = n, 16.6 → 2.8 at b = 50n; 12.3 → 16.3 at b = n/10,
/// which stays on the bin engine).
pub fn resolve_engine(spec: &RunSpec) -> Result<Engine, Error> {
    match spec.engine {
        Engine::Bins => Ok(Engine::Bins),
        Engine::Levels => level_support(spec).map(|()| Engine::Levels),
        Engine::Auto => {
            if level_support(spec).is_err() {
                return Ok(Engine::Bins);
            }
            if spec.churn.is_some() {
                // Churn takes the level engine only when asked (its loop is the generic one).
                return Ok(Engine::Bins);
            }
            let big_m = matches!(spec.weights, Weights::Unit) && spec.m > u64::from(u32::MAX);
            let prefer = match spec.setting {
                Setting::Batched { b } => {
                    let one_choice = matches!(
                        spec.process,
                        ProcessSpec::OneChoice | ProcessSpec::DChoice { d: 1 }
                    );
                    let positional =
                        spec.process.compares() && spec.tie_break == TieBreak::Position;
                    if one_choice {
                        b >= AUTO_BATCH_MIN_BALLS_ONE_CHOICE
                    } else if positional {
                        b >= AUTO_BATCH_MIN_BALLS
                            && b.saturating_mul(AUTO_POSITION_MAX_BINS_PER_BALL) >= spec.n
                    } else {
                        b >= AUTO_BATCH_MIN_BALLS
                    }
                }
                // The bin engine pays O(n) per ball for a rank vector.
                Setting::Sequential if matches!(spec.process, ProcessSpec::RankVector { .. }) => {
                    true
                }
                Setting::Sequential => spec.n >= auto_sequential_min_n(spec),
                Setting::Delay { .. } => unreachable!("refused by level_support"),
            };
            Ok(if prefer || big_m { Engine::Levels } else { Engine::Bins })
        }
    }
}

// Validation is a method of the data, but it lives here: two of its checks (32-bit loads of
// the bin engine, for `m` and for a start state) depend on the engine `auto` picks.
impl RunSpec {
    /// Checks every parameter; the engines assume a validated spec.
    pub fn validate(&self) -> Result<(), Error> {
        crate::spec::check_dynamic_bins(self)?;
        if self.n == 0 || self.n > u64::from(u32::MAX) {
            return Err(Error::invalid("n", self.n, "an integer in 1..=4294967295"));
        }
        if matches!(self.weights, Weights::Unit)
            && self.m > u64::from(u32::MAX)
            && resolve_engine(self)? != Engine::Levels
        {
            return Err(Error::invalid(
                "m",
                self.m,
                "at most 4294967295 for unit weights on the bin engine (loads are 32-bit; the \
                 level engine allows up to 2^53)",
            ));
        }
        if let Setting::Batched { b } = self.setting {
            if b == 0 {
                return Err(Error::invalid("b", b, "an integer >= 1"));
            }
        }
        if let Setting::Delay { tau, .. } = self.setting {
            if !(1..=1 << 32).contains(&tau) {
                return Err(Error::invalid("tau", tau, "an integer in 1..=4294967296"));
            }
            if !matches!(self.weights, Weights::Unit) {
                return Err(Error::invalid(
                    "weights",
                    self.weights.name(),
                    "unit in the delay setting",
                ));
            }
        }
        self.weights.validate()?;
        if self.process.unit_weights_only() && !matches!(self.weights, Weights::Unit) {
            return Err(Error::invalid(
                "weights",
                self.weights.name(),
                "unit for this process (it places whole balls to fill bins or caches by load)",
            ));
        }
        if let ProcessSpec::AlwaysGoLeft { d } = self.process {
            if u64::from(d) > self.n {
                return Err(Error::invalid(
                    "d",
                    d,
                    "at most n for always_go_left (one group per sample)",
                ));
            }
        }
        if let Some(d) = distinct_d(&self.process) {
            if u64::from(d) > self.n {
                return Err(Error::invalid(
                    "d",
                    d,
                    "at most n when sampling without replacement (d distinct bins)",
                ));
            }
        }
        if is_distinct_pair(&self.process) && self.n < 2 {
            return Err(Error::invalid(
                "n",
                self.n,
                "at least 2 when two samples are distinct bins (replacement = false)",
            ));
        }
        if let ProcessSpec::RankVector { cum } = &self.process {
            if cum.len() as u64 != self.n {
                return Err(Error::invalid(
                    "p",
                    format!("of {} entries for n = {} bins", cum.len(), self.n),
                    "one entry per bin (a list of length n)",
                ));
            }
        }
        if self.observe_every == Some(0) {
            return Err(Error::invalid("observe_every", 0, "an integer >= 1"));
        }
        self.sampling.validate(self.n)?;
        check_capacities(self)?;
        let on_levels = resolve_engine(self).is_ok_and(|e| e == Engine::Levels);
        check_start(&self.start, self, on_levels)?;
        if let ProcessSpec::FormulaThreshold { f } = &self.process {
            crate::formula_threshold::check_probes(f, self.n, self.m, self.weights.mean())?;
        }
        if let ProcessSpec::Rule { d, choose, .. } = &self.process {
            crate::rule_formula::check_probes(choose, *d, self.n, self.m)?;
        }
        if let ProcessSpec::Custom(c) = &self.process {
            c.item().check_run(c.args(), self.n, self.m).map_err(Error::Refused)?;
        }
        self.process.validate()?;
        if let ProcessSpec::Adaptive { tau: Tau { formula: Some(f), .. }, cap: Some(cap) } =
            &self.process
        {
            crate::spec::check_tau_probes(f, self.n, self.m, self.weights.mean(), *cap)?;
        }
        Ok(())
    }
}

/// Checks the start state `start` against the rest of a run: the loads of a `file` start must be one
/// per bin; every load must fit 32 bits, and on the bin engine also plus the `m` balls
/// of the process; the weights must be unit, and the run must not be a delay run or
/// `equalize`.
/// `on_levels`: whether the run goes to the level engine (whose loads are not 32-bit).
fn check_start(start: &Start, spec: &RunSpec, on_levels: bool) -> Result<(), Error> {
    if start.is_empty() {
        return Ok(());
    }
    if let Start::Loads(v) = start {
        if v.len() as u64 != spec.n {
            return Err(Error::invalid(
                "start",
                format!("{} loads", v.len()),
                "one load per bin (as many loads as n)",
            ));
        }
    }
    let max = start.max_load_bound();
    if max > crate::start::MAX_START_LOAD
        || (!on_levels && max.saturating_add(spec.m) > crate::start::MAX_START_LOAD)
    {
        return Err(Error::invalid(
            "start",
            format!("a largest start load of {max} plus m = {} balls", spec.m),
            "a largest start load plus m of at most 4294967295 on the bin engine (32-bit \
             loads)",
        ));
    }
    if !matches!(spec.weights, Weights::Unit) {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start with weighted balls (a start holds whole unit balls)",
        ));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start in the delay setting (its loop keeps no start state)",
        ));
    }
    if spec.process.reallocates() {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start for equalize (its loop keeps no start state)",
        ));
    }
    Ok(())
}

/// The checks of a run's capacities (`docs/capacities.md`) that do not depend on the
/// process's declaration: the law against n, and the settings that have no normalised form
/// (the delay setting and `equalize` run loops of their own on integer loads; proportional
/// sampling is itself a sampling law, so it does not combine with another).
fn check_capacities(spec: &RunSpec) -> Result<(), Error> {
    let c = &spec.capacities;
    if c.is_unit() {
        return Ok(());
    }
    c.validate(spec.n)?;
    let refuse =
        |why: &str| Err(Error::Unsupported(format!("capacities = \"{}\" {why}", c.name())));
    if matches!(spec.setting, Setting::Delay { .. }) {
        return refuse("do not run in the delay setting (its loop keeps integer past loads)");
    }
    if spec.process.reallocates() {
        return refuse("do not apply to `equalize` (its reallocation loop moves whole balls)");
    }
    if spec.churn.is_some() || spec.dispatchers.is_some() {
        return refuse(
            "do not combine with `churn` or `dispatchers` (their loops keep unit loads); drop \
             one of them",
        );
    }
    if matches!(spec.process, ProcessSpec::Packing { .. } | ProcessSpec::TightPacking { .. }) {
        return refuse(
            "do not apply to `packing` and `tight_packing` (they fill a bin with whole balls up \
             to the rounded-up average, a count of balls)",
        );
    }
    if c.sampling == crate::capacity::CapacitySampling::Proportional && !spec.sampling.is_uniform()
    {
        return refuse(
            "with sampling = \"proportional\" already set the law of the bin samples; drop \
             the series' `sampling` or use the capacities' uniform sampling",
        );
    }
    Ok(())
}
