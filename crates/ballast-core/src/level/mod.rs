//! The level engine: exact simulation of exchangeable unit-weight processes from the number of
//! bins at each load level (`docs/level-engine.md`, `docs/occupancy.md`,
//! `ARCHITECTURE.md#two-engines-one-meaning`).
//!
//! State: [`LevelLoads`], O(number of levels) memory whatever `n` (batched `position` ties
//! add O(n) scratch, see below).
//!
//! - **Sequential**: a uniform bin sample is a uniform *position* in the lightest-first
//!   order, so the rules of [`crate::process`] run unchanged on the sorted view of
//!   [`LevelLoads`]; d-Choice and (1+β) use the shortcut "the lightest of d uniform positions
//!   is the smallest one" (one level lookup per ball), Quantile asks "is the position among
//!   the ⌈δn⌉ last" instead of counting heavier bins. The chosen bin moves up one level:
//!   O(1) after an O(levels) scan (O(log levels) binary search when there are many levels).
//!   Unobserved d-Choice runs take the loop of `level/sequential.rs`: one 64-bit word per
//!   ball (two positions) from a child generator filled in blocks, a bucket table from
//!   position to level, a fixed level array; about 4 ns per ball whatever n. From
//!   [`chunked::chunk_min_n`] bins on (2¹⁷ for Two-Choice, 2¹³ for d ≥ 3) they go in exact
//!   chunks of about 1.5·√n balls instead ([`chunked`], `docs/chunked.md`), at a cost per
//!   ball that falls like 1/√n; (1+β), Quantile and mixed Quantile too, from 2¹⁵ bins on.
//!   Sequential One-Choice reads no state, so a stretch of balls between observation points
//!   has the law of one batch: without per-ball observers it is one batched step.
//!   Adaptive probing (`adaptive.rs`): Greedy\[d\] as d-Choice, other thresholds in a
//!   kernel of their own, with the bin engine's probe histogram. g-Bounded, g-Myopic and
//!   σ-Noisy-Load (`pair.rs`): two positions, two level lookups and a decision on the two
//!   levels per ball, in the same block loop (about 6 ns per ball, 11–14 with the noise's
//!   coin word).
//!   [`crate::simulate_ball_by_ball`] keeps the ball loops.
//!   Every tie rule is accepted here: sequentially, all rules that choose among the sampled
//!   bins of least load give the same law of the load histogram
//!   (`docs/level-engine.md#sequential-step`; tested), so the sequential level engine
//!   simulates `first`, `lowest_index` and `position` exactly as far as histogram
//!   statistics go.
//! - **Batched**: per batch, the number of balls per class (level, or the heavy/light parts
//!   of the level straddling a Quantile rank cut) is multinomial, and the receipts of the
//!   bins of a class are occupancy counts ([`occupancy`]). This needs the bins of a level
//!   to be equally likely within a batch, which `random` and `first` ties give.
//! - **Batched, `position` ties** (d-Choice and (1+β), the authors' rule,
//!   `docs/processes.md#position`): a ball goes to the *smallest* of its d uniform
//!   positions in the lightest-first order frozen at the batch start (for (1+β): with
//!   probability β the smaller of two, else one position), whatever the loads; the bin
//!   engine's "least load, ties to the highest index" is the same rule with bins ordered by
//!   load and then by decreasing index. Bins of a level are *not* equally likely here, but
//!   the rule reads only positions, so which bin of a level sits at which of its positions
//!   does not change the law of the histogram, and the bins of a level are exchangeable
//!   again for the next batch: the histogram after the batch is exactly
//!   {level(p) + c_p : p < n}, with c_p the balls at position p. The
//!   counts c_p are generated per position (sorted positions, a counter per position, or a
//!   conditional binomial per position by `b/n`: `level/position.rs`), so a batch costs
//!   O(min(b log b, n + b)) or O(n) binomials, and the counter method needs **O(n) scratch
//!   memory** (4 bytes per bin), the one exception to "memory independent of n". Exact in
//!   distribution (tests: `tests/level_position.rs`, and exact one-batch enumerations in
//!   `level/position.rs`). `lowest_index` ties in batches are refused.
//!
//! Refused (use the bin engine): weighted balls; batched `lowest_index` ties for
//! comparing processes; batched multi-ball processes (twinning, packing, tight_packing);
//! processes that remember or group particular bins (memory, caching, always_go_left);
//! batches of more than [`LEVEL_MAX_BATCH_PER_BIN`] balls per bin (the dense histogram
//! could span that many levels). Observers receive a [`LevelLoads`] view whose bins are the
//! sorted positions: symmetric statistics (potentials, gap, histogram) are exact, bin
//! identity is not available. `on_ball` is called per ball in both settings (in a batch,
//! ball by ball grouped by bin, at its end) unless the observer sets
//! [`Observer::PER_BALL`] to `false`, which keeps batches O(levels).
//!
//! `engine = "auto"` ([`resolve_engine`]) picks the level engine when it is exact and one of:
//! the setting is batched with at least [`AUTO_BATCH_MIN_BALLS`] balls per batch
//! ([`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`] for One-Choice, whose bin engine is the cheapest and
//! whose level histogram the widest; with `position` ties also `b >= n /`
//! [`AUTO_POSITION_MAX_BINS_PER_BALL`]); the run is sequential with `n >=`
//! [`auto_sequential_min_n`], a crossover per process measured against the bin engine
//! (below it the bin engine's load array is cache-resident and as fast or faster); or `m` exceeds the bin engine's 32-bit loads. Otherwise the bin engine.
//! The thresholds come from measurements on 2 cores (see the `level_engine` bench): a level
//! batch costs O(levels) binomial draws and occupancy calls (~1–20 µs), the bin engine
//! 5–25 ns per ball, so small batches stay on the bin engine.
//!
//! Positional ties, CPU time per ball (`perf stat -e task-clock`, best of 3, machine shared
//! with other jobs, load average 4–5 on 2 cores; `ballast simulate --process three_choice
//! --tie-break position --n 10000 --m 10000000 --batch B --engine E`, same with
//! `two_choice`; the bin engine after its branch-free tie selects):
//!
//! | n = 10⁴, b = | n/10 | n/4 | n/2 | n | 10n | 50n |
//! |---|---|---|---|---|---|---|
//! | Three-Choice, bins | 12.3 | 15.0 | 19.1 | 16.3 | 19.7 | 16.6 |
//! | Three-Choice, levels | 16.3 | 11.7 | 11.0 | 8.4 | 8.1 | 2.8 |
//! | Two-Choice, bins | 13.2 | 16.4 | 12.8 | 13.3 | 18.0 | 14.2 |
//! | Two-Choice, levels | 21.2 | 11.6 | 7.0 | 5.8 | 5.4 | 2.8 |
//!
//! (ns/ball, all from one session; the bin engine's numbers move by ±30 % between sessions
//! under this load. At n = 1000, Three-Choice: b = n/2 18.9 vs 11.6, b = 3n 18.8 vs 6.8,
//! b = 50n 14.9 vs 2.8; Two-Choice b = 25n 14.7 vs 4.0.) Below about n/4 the level
//! engine's pass over the n positions per batch costs more than the bin engine's balls,
//! hence the `b >= n/2` condition.

mod adaptive;
mod batch;
#[doc(hidden)]
pub mod chunked;
mod filling;
mod frozen;
#[cfg(test)]
mod law_test;
#[doc(hidden)]
pub mod occupancy;
mod pair;
mod position;
pub(crate) mod sequential;

mod thinning;

pub use crate::choice::{
    auto_sequential_min_n, level_settings, level_support, resolve_engine, supported_engines,
    LevelSettings,
};
#[doc(hidden)]
pub use crate::choice::{LEVEL_MAX_BALLS, LEVEL_MAX_BATCH_PER_BIN};
#[doc(hidden)]
pub use crate::crossover::{
    AUTO_BATCH_MIN_BALLS, AUTO_BATCH_MIN_BALLS_ONE_CHOICE, AUTO_POSITION_MAX_BINS_PER_BALL,
    AUTO_SEQUENTIAL_MIN_N, AUTO_SEQUENTIAL_MIN_N_ADAPTIVE, AUTO_SEQUENTIAL_MIN_N_FILLING,
    AUTO_SEQUENTIAL_MIN_N_GREEDY, AUTO_SEQUENTIAL_MIN_N_G_BOUNDED, AUTO_SEQUENTIAL_MIN_N_G_MYOPIC,
    AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE, AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE,
    AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA, AUTO_SEQUENTIAL_MIN_N_PACKING,
    AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY, AUTO_SEQUENTIAL_MIN_N_THINNING,
    AUTO_SEQUENTIAL_MIN_N_THRESHOLD, AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
};
pub use crate::histogram::LevelLoads;
pub use adaptive::{simulate_adaptive_levels_flawed, AdaptiveFlaw};

use rand::RngCore;

use crate::kind::{BatchLaw, LevelBatch, LevelSteps};
use crate::loads::LoadState;
use crate::observe::{GapTracker, Schedule};
use crate::outcome::RunOutcome;
use crate::process::{Accept, Ctx, Filling, Noisy, OneChoice, Ranks, Rule, TightCount};
use crate::with_rule::WithRule;
use crate::{Error, Observer, ProcessSpec, RunSpec, Setting, TieBreak};

/// Version of the level engine's values for a given seed: bumped by every value-breaking
/// change (recorded in CHANGELOG.md) and part of the runner's checkpoint keys. 2: binomials
/// from [`crate::binomial`] instead of `rand_distr`. 3: sequential d-Choice, (1+β) and the
/// Quantile rules from [`chunked::chunk_min_n_law`] bins on in chunks ([`chunked`]). 4:
/// sequential One-Choice without per-ball observers as one batched step per stretch between
/// observation points. 5: sequential (1+β), Quantile and mixed Quantile draw from the child
/// generator of d-Choice, in whole words per ball (`level/sequential.rs`, `law_balls`).
/// 6: sequential g-Bounded, g-Myopic and σ-Noisy-Load as decisions on two levels
/// (`level/pair.rs`), from the same child generator. 7: sequential Threshold, Mean-Thinning
/// and Relative-Threshold as a cut on the first sample's load (`level/thinning.rs`), one
/// word per ball from the same child generator, and in chunks from
/// [`chunked::CHUNK_MIN_N_THIN`] bins. Since 5 a bump changes only some runs, and
/// only their keys carry the new number ([`values_version`]).
/// 8: sequential g-Bounded, g-Myopic and σ-Noisy-Load in chunks from
/// [`chunked::chunk_min_n_pair`] bins on (only runs with at least that many bins change).
/// 9: sequential Tight-Packing in the block loop of `level/filling.rs`, one
/// word per ball; (1, 1)-Memory and Caching with d = 1 newly on the level engine.
/// 10: sequential Packing and Twinning step by step (`level/filling.rs`, one word per step).
/// 11: `formula_threshold` and `d_thinning` draw their thinning samples in pairs
/// ([`crate::process::THINNING_PAIRS_VERSION`]; on bins the whole thinning family).
pub const VALUES_VERSION: u32 = 11;

/// The version of the values `spec` gives on the level engine: the number of the last bump
/// that changed its runs (11, 10, …, 5, or 4 for every run that none changed), so that stored
/// checkpoints of the runs a bump left alone stay valid.
pub fn values_version(spec: &RunSpec) -> u32 {
    // `formula_threshold` and `d_thinning` run through the generic rule, which draws the
    // thinning samples in pairs since version 11; the three kinds with their own sequential
    // loop and batch law on levels did not change.
    let own_loop = matches!(
        spec.process,
        ProcessSpec::Threshold { .. }
            | ProcessSpec::MeanThinning { .. }
            | ProcessSpec::RelativeThreshold { .. }
    );
    if crate::process::thinning_in_pairs(spec) && !own_loop {
        return crate::process::THINNING_PAIRS_VERSION;
    }
    if spec.setting != Setting::Sequential {
        return 4;
    }
    let pair = match spec.process {
        ProcessSpec::GBounded { g } => Some(Noisy::GBounded { g }),
        ProcessSpec::GMyopic { g } => Some(Noisy::GMyopic { g }),
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
            Some(Noisy::SigmaNoisyLoad { sigma, truncate })
        }
        _ => None,
    };
    if filling::changed_in_10(spec) {
        return 10;
    }
    if filling::changed_in_9(spec) {
        return 9;
    }
    if pair.is_some_and(|rule| spec.n >= chunked::chunk_min_n_pair(&rule)) {
        return 8;
    }
    match spec.process {
        ProcessSpec::Threshold { .. }
        | ProcessSpec::MeanThinning { .. }
        | ProcessSpec::RelativeThreshold { .. } => 7,
        ProcessSpec::GBounded { .. }
        | ProcessSpec::GMyopic { .. }
        | ProcessSpec::SigmaNoisyLoad { .. } => 6,
        ProcessSpec::OnePlusBeta { .. }
        | ProcessSpec::Quantile { .. }
        | ProcessSpec::MixedQuantile { .. } => 5,
        _ => 4,
    }
}

/// How sequential d-Choice, (1+β), Quantile, mixed Quantile and two-thinning on the level
/// engine use the chunk step ([`chunked`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunking {
    /// Chunks of about [`chunked::chunk_size`] balls when `n >=`
    /// [`chunked::chunk_min_n_law`] and a stretch between observation points holds at least
    /// one such chunk (what [`crate::simulate`] does).
    Auto,
    /// Ball by ball (what [`crate::simulate_ball_by_ball`] does): the reference.
    Off,
    /// Chunks of at most `s` balls whatever `n` and the stretch, optionally with a
    /// deliberate flaw (tests).
    Fixed {
        /// Largest chunk.
        s: u64,
        /// A deliberate error, for the power of tests.
        flaw: Option<chunked::ChunkFlaw>,
    },
}

/// Runs `spec` on the level engine with the given use of chunks (sequential d-Choice with
/// `d >= 2`, (1+β), Quantile and mixed Quantile without per-ball observers; other runs
/// ignore it). For tests and benches.
#[doc(hidden)]
pub fn simulate_levels_chunked<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> Result<RunOutcome, Error> {
    spec.validate()?;
    simulate_levels(spec, rng, observer, chunking)
}

/// Runs a validated `spec` on the level engine (after [`level_support`]).
pub(crate) fn simulate_levels<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> Result<RunOutcome, Error> {
    level_support(spec)?;
    if spec.process.reallocates() {
        // A loop of its own, as on the bin engine (no observers, empty start).
        let loops = crate::realloc::Loops { spec, rng, levels: true, fast: true };
        return crate::kinds::reallocation(spec, loops);
    }
    let state = LevelLoads::of_start(&spec.start, spec.n, rng);
    observer.on_start(&state);
    Ok(match spec.setting {
        Setting::Sequential => sequential(spec, state, rng, observer, chunking),
        Setting::Batched { b } => {
            crate::kinds::level_batch(spec, BatchRoute { spec, b, state, rng, observer })
        }
        Setting::Delay { .. } => unreachable!("refused by level_support"),
    })
}

/// Sequential: the route the process's kind names ([`crate::kind::Kind::level_steps`]), the
/// generic loop over the sorted view or one of its shortcuts.
fn sequential<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    state: LevelLoads,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    crate::kinds::level_steps(spec, SeqRoute { spec, state, rng, observer, chunking })
}

/// The sequential routes of the level engine for one run ([`LevelSteps`]).
struct SeqRoute<'a, R: ?Sized, O> {
    spec: &'a RunSpec,
    state: LevelLoads,
    rng: &'a mut R,
    observer: &'a mut O,
    chunking: Chunking,
}

impl<R: RngCore + ?Sized, O: Observer> WithRule for SeqRoute<'_, R, O> {
    type Out = RunOutcome;

    fn run<P: Rule>(self, rule: P) -> RunOutcome {
        run_seq(self.spec, self.state, rule, self.rng, self.observer)
    }
}

impl<R: RngCore + ?Sized, O: Observer> LevelSteps for SeqRoute<'_, R, O> {
    fn one_choice(self) -> RunOutcome {
        run_seq_one_choice(self.spec, self.state, self.rng, self.observer, self.chunking)
    }
    fn d_choice(self, d: u32) -> RunOutcome {
        self.law(chunked::ChunkLaw::DChoice { d })
    }
    fn one_plus_beta(self, beta: f64) -> RunOutcome {
        self.law(chunked::ChunkLaw::OnePlusBeta { beta })
    }
    fn quantile(self, delta: f64, eta: f64) -> RunOutcome {
        let heavy = heavy_count(delta, self.spec.n);
        self.law(chunked::ChunkLaw::Quantile { heavy, eta })
    }
    fn thinning(self, accept: Accept) -> RunOutcome {
        run_seq_thin(self.spec, self.state, accept, self.rng, self.observer, self.chunking)
    }
    fn pair(self, rule: Noisy) -> RunOutcome {
        run_seq_pair(self.spec, self.state, rule, self.rng, self.observer, self.chunking)
    }
    fn filling(self, rule: Filling) -> RunOutcome {
        let (s, r, o) = (self.state, self.rng, self.observer);
        filling::run_seq_steps(self.spec, s, rule, r, o, self.chunking)
    }
    fn tight(self, count: TightCount) -> RunOutcome {
        let (s, r, o) = (self.state, self.rng, self.observer);
        filling::run_seq_tight(self.spec, s, count, r, o, self.chunking)
    }
    fn memory_one<const LEAST: bool>(self) -> RunOutcome {
        let (s, r, o) = (self.state, self.rng, self.observer);
        filling::run_seq_memory::<LEAST, _, _>(self.spec, s, r, o, self.chunking)
    }
    fn adaptive(self, tau: crate::spec::Tau, cap: Option<u32>) -> RunOutcome {
        let (s, r, o) = (self.state, self.rng, self.observer);
        adaptive::run_seq_adaptive(self.spec, s, tau, cap, r, o, self.chunking)
    }
}

impl<R: RngCore + ?Sized, O: Observer> SeqRoute<'_, R, O> {
    /// The sequential law `law` ([`run_seq_law`]), in chunks where they pay.
    fn law(self, law: chunked::ChunkLaw) -> RunOutcome {
        run_seq_law(self.spec, self.state, law, self.rng, self.observer, self.chunking)
    }
}

/// The batched routes of the level engine for one run ([`LevelBatch`]): a batch law, or
/// every decision on the frozen view.
struct BatchRoute<'a, R: ?Sized, O> {
    spec: &'a RunSpec,
    b: u64,
    state: LevelLoads,
    rng: &'a mut R,
    observer: &'a mut O,
}

impl<R: RngCore + ?Sized, O: Observer> WithRule for BatchRoute<'_, R, O> {
    type Out = RunOutcome;

    fn run<P: Rule>(self, rule: P) -> RunOutcome {
        frozen::batched(self.spec, self.b, self.state, rule, self.rng, self.observer)
    }
}

impl<R: RngCore + ?Sized, O: Observer> LevelBatch for BatchRoute<'_, R, O> {
    fn law(self, law: BatchLaw) -> RunOutcome {
        batched(self.spec, law, self.b, self.state, self.rng, self.observer)
    }
}

/// The sequential loop: the same observation points, truncation of multi-ball steps and
/// counters as the bin engine's [`crate::engine::run_rule_observed`], on a [`LevelLoads`].
/// A multi-ball step raises one bin several levels (the sorted view relabels bins after
/// every ball, so the bin is followed by its load, not its position).
fn run_seq<P: Rule, R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    mut rule: P,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome {
    let n = st.n();
    let m = spec.m;
    let mut ctx = Ctx::new(n);
    let mut gaps = GapTracker::new(spec);
    let ranks = if rule.uses_ranks() {
        Ranks::Live { k: (rule.heavy_fraction() * n as f64).ceil() as u64 }
    } else {
        Ranks::Unused
    };
    let mut points = Schedule::new(spec);
    let mut done = 0u64;
    // Probes per step, for the rules whose count varies by design (adaptive probing), as the
    // bin engine records them (`engine::run_rule_observed`).
    let (mut steps, mut per_step) = (0u64, Vec::new());
    // The stopping rule for multi-ball steps, as in the bin engine ([`crate::Stop`]).
    let finish = spec.stop == crate::Stop::Finish;
    while done < m || (finish && rule.in_round()) {
        ctx.balls = done;
        let before = ctx.samples;
        let continuing = rule.in_round();
        let p = rule.place(&st, &ranks, rng, &mut ctx);
        if P::TRACK_SAMPLES {
            steps += u64::from(!continuing);
            crate::observe::record_samples(&mut per_step, ctx.samples - before);
        }
        let k = if finish { u64::from(p.balls) } else { u64::from(p.balls).min(m - done) };
        let x = st.load_at(p.bin as u64);
        for r in 0..k {
            let pos = st.bump_load(x + r);
            observer.on_ball(&st, pos as usize, 1.0);
        }
        done += k;
        if done >= points.next() && !(finish && rule.in_round()) {
            gaps.observe(&st, observer);
            points.advance(done);
        }
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    let mut out = gaps.outcome(&st, done, ctx.samples);
    if P::TRACK_SAMPLES {
        (out.steps, out.samples_per_step) = (steps, per_step);
    }
    out
}

/// Sequential One-Choice. Its decisions read no state, so `k` sequential balls have the law
/// of one batch of `k` balls (`docs/level-engine.md#sequential-one-choice`): without per-ball
/// observers every stretch between observation points is one batched step (O(levels)
/// binomials and occupancy draws instead of one step per ball), split only to respect
/// [`LEVEL_MAX_BATCH_PER_BIN`]. With per-ball observers, or `Chunking::Off` (the reference
/// loop of [`crate::simulate_ball_by_ball`]), ball by ball.
fn run_seq_one_choice<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    if O::PER_BALL || chunking == Chunking::Off {
        return run_seq(spec, st, OneChoice, rng, observer);
    }
    let n = st.bins();
    let largest = n.saturating_mul(LEVEL_MAX_BATCH_PER_BIN);
    let mut stepper = Stepper::new(spec, BatchLaw::OneChoice);
    let mut gaps = GapTracker::new(spec);
    let m = spec.m;
    let mut points = Schedule::new(spec);
    let (mut done, mut samples) = (0u64, 0u64);
    while done < m {
        while done < points.next() {
            let size = (points.next() - done).min(largest);
            samples += stepper.step(&mut st, size, rng, observer);
            done += size;
        }
        gaps.observe(&st, observer);
        points.advance(done);
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, done, samples)
}

/// Sequential runs of a destination law that reads no loads (d-Choice, (1+β), Quantile,
/// mixed Quantile; [`chunked::ChunkLaw`]), the hot path: the destination is a position of
/// the sorted view (the lightest of d uniform positions is the smallest; a Quantile sample
/// is heavy when its position is among the last ⌈δn⌉), so one level lookup per ball; two
/// positions per 64-bit draw (Lemire on each half, exact: a rejected half is replaced by a
/// fresh bounded draw). Same observation points and counters as [`run_seq`]. Without
/// per-ball observers, the stretches between observation points go through the chunk step
/// ([`chunked`]) when `chunking` asks for it (`Auto`: `n >=` [`chunked::chunk_min_n_law`]
/// and a stretch of at least one chunk), else through the ball loop of
/// `level/sequential.rs`; chunks end exactly at observation points, so the observer sees
/// the state where it asked for it.
fn run_seq_law<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    st: LevelLoads,
    mut law: chunked::ChunkLaw,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let n = st.bins();
    let min_n = if law.supported(n) { chunked::chunk_min_n_law(&law) } else { u64::MAX };
    let mut route = ChunkRoute::new::<O>(spec, chunking, n, min_n, chunked::chunk_size(n));
    // Every word comes from a child generator seeded from the run's generator, in all the
    // loops (the ball loops give the same result, see `sequential`).
    run_stretches(
        spec,
        st,
        &mut law,
        route.blocks,
        &mut sequential::ChildRng::from_parent(rng),
        observer,
        |law, st, balls, index, rng| match route.chunks_for(balls, index) {
            Some((c, s)) => c.run(st, law, balls, s, rng),
            None => sequential::law_balls(st, law, balls, index, rng),
        },
        |law, st, rng| {
            let (p, k) = sequential::law_position(law, st.bins(), rng);
            (st.level_of(p), k)
        },
    )
}

/// Sequential g-Bounded, g-Myopic and σ-Noisy-Load, whose rules compare the loads of two
/// uniform samples ([`pair::PairLaw`]): two positions and two level lookups per ball. Without
/// per-ball observers the stretches between observation points go through the chunk step
/// (`chunked::Chunker::run_pair`) when `chunking` asks for it (`Auto`: `n >=`
/// [`chunked::chunk_min_n_pair`] and a stretch of at least one chunk), else through the ball
/// loop of `level/sequential.rs` (which reads the pair of loads, not only their difference,
/// while the lowest load is below [`pair::NoiseTable::exact_from`]: truncated σ-Noisy-Load
/// near load 0); with per-ball observers, or with observation points closer than 256 balls,
/// ball by ball through its one-draw-at-a-time form, which takes the same words. Same
/// observation points and counters as [`run_seq`]; two samples per ball.
fn run_seq_pair<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    st: LevelLoads,
    rule: Noisy,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let n = st.bins();
    let (min_n, size) = (chunked::chunk_min_n_pair(&rule), chunked::chunk_size_pair(n));
    let mut route = ChunkRoute::new::<O>(spec, chunking, n, min_n, size);
    let mut law = pair::PairLaw::new(rule);
    run_stretches(
        spec,
        st,
        &mut law,
        route.blocks,
        &mut sequential::ChildRng::from_parent(rng),
        observer,
        |law, st, balls, index, rng| match route.chunks_for(balls, index) {
            Some((c, s)) => c.run_pair(st, law, balls, s, rng),
            None => {
                sequential::pair_balls(st, law, balls, index, rng);
                2 * balls
            }
        },
        |law, st, rng| (sequential::pair_level(law, st, rng), 2),
    )
}

/// Sequential two-thinning (Threshold, Mean-Thinning, Relative-Threshold), whose first
/// sample keeps the ball when its load is below a cut that moves with the total
/// ([`thinning::ThinCut`]): one positions word and two level lookups per ball. Without
/// per-ball observers the stretches between observation points go through the chunk step
/// (`chunked::Chunker::run_thin`) when `chunking` asks for it (`Auto`: `n >=`
/// [`chunked::CHUNK_MIN_N_THIN`] and a stretch of at least one chunk), else through the
/// ball loop of `level/sequential.rs`; with per-ball observers, or with observation points
/// closer than 256 balls, ball by ball through its one-draw-at-a-time form, which takes the
/// same words as the ball loop. Same observation points and counters as [`run_seq`].
fn run_seq_thin<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    st: LevelLoads,
    accept: Accept,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let n = st.bins();
    let mut cut = thinning::ThinCut::new(accept, n, st.total);
    let size = chunked::chunk_size(n);
    let mut route = ChunkRoute::new::<O>(spec, chunking, n, chunked::CHUNK_MIN_N_THIN, size);
    run_stretches(
        spec,
        st,
        &mut cut,
        route.blocks,
        &mut sequential::ChildRng::from_parent(rng),
        observer,
        |cut, st, balls, index, rng| match route.chunks_for(balls, index) {
            Some((c, s)) => c.run_thin(st, cut, balls, s, rng),
            None => sequential::thin_balls(st, cut, balls, index, rng),
        },
        sequential::thin_level,
    )
}

/// How a sequential run uses the chunk step: whether the balls between observation points
/// go in stretches (`blocks`), and which stretches go in chunks of what size.
struct ChunkRoute {
    /// Stretches (block loops or chunks) rather than ball by ball: without per-ball
    /// observers, when the observation points are at least 256 balls apart (a block loop's
    /// set-up costs a few hundred instructions) or a chunk size is forced.
    blocks: bool,
    /// The chunk step, its largest chunk and the shortest stretch it takes; `None` for no
    /// chunks (per-ball observers, `Chunking::Off`, `n` below `min_n` under
    /// `Chunking::Auto`, or `min_n = u64::MAX`: a law the chunks cannot hold).
    chunks: Option<(chunked::Chunker, u64, u64)>,
}

impl ChunkRoute {
    /// The route of a run of `spec` on `n` bins whose law chunks from `min_n` bins on, in
    /// chunks of `size` balls under `Chunking::Auto`.
    fn new<O: Observer>(spec: &RunSpec, chunking: Chunking, n: u64, min_n: u64, size: u64) -> Self {
        let plan = match chunking {
            _ if O::PER_BALL || min_n == u64::MAX => None,
            Chunking::Off => None,
            Chunking::Auto => (n >= min_n).then_some((size, size, None)),
            Chunking::Fixed { s, flaw } => Some((s.max(1), 1, flaw)),
        };
        let forced = matches!(chunking, Chunking::Fixed { .. }) && plan.is_some();
        let blocks = !O::PER_BALL && (Schedule::new(spec).every() >= 256 || forced);
        let chunks =
            plan.map(|(s, min_stretch, flaw)| (chunked::Chunker::with_flaw(flaw), s, min_stretch));
        Self { blocks, chunks }
    }

    /// The chunk step and its chunk size for a stretch of `balls` balls, if it goes in
    /// chunks (then the ball loops' rank index no longer describes the state).
    fn chunks_for(
        &mut self,
        balls: u64,
        index: &mut sequential::RankIndex,
    ) -> Option<(&mut chunked::Chunker, u64)> {
        match &mut self.chunks {
            Some((c, s, min_stretch)) if balls >= *min_stretch => {
                index.invalidate();
                Some((c, *s))
            }
            _ => None,
        }
    }
}

/// The observation loop of the sequential rules that run either in stretches between
/// observation points (`in_blocks`: `stretch(law, state, balls, index, rng)`, returning the
/// samples drawn) or ball by ball (`ball(law, state, rng)`, returning the level that gets the
/// ball and its samples), both from the run's child generator.
#[allow(clippy::too_many_arguments)]
fn run_stretches<L, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    law: &mut L,
    in_blocks: bool,
    rng: &mut sequential::ChildRng,
    observer: &mut O,
    mut stretch: impl FnMut(
        &mut L,
        &mut LevelLoads,
        u64,
        &mut sequential::RankIndex,
        &mut sequential::ChildRng,
    ) -> u64,
    mut ball: impl FnMut(&mut L, &LevelLoads, &mut sequential::ChildRng) -> (usize, u64),
) -> RunOutcome {
    let m = spec.m;
    let mut gaps = GapTracker::new(spec);
    let mut points = Schedule::new(spec);
    let (mut done, mut samples) = (0u64, 0u64);
    let mut index = sequential::RankIndex::new(st.bins());
    while done < m {
        if in_blocks {
            samples += stretch(law, &mut st, points.next() - done, &mut index, rng);
            done = points.next();
        } else {
            let (j, k) = ball(law, &st, rng);
            samples += k;
            let pos = st.bump(j);
            observer.on_ball(&st, pos as usize, 1.0);
            index.invalidate();
            done += 1;
        }
        if points.reached(done) {
            gaps.observe(&st, observer);
        }
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, m, samples)
}

/// ⌈δn⌉ as the bin engine computes it.
fn heavy_count(delta: f64, n: u64) -> u64 {
    ((delta * n as f64).ceil() as u64).min(n)
}

/// The batched level step as a stand-alone object: a histogram and a process, advanced one
/// batch at a time. [`crate::simulate`] uses the same step; this type is for experiments and
/// tests that start from a given histogram.
///
/// ```
/// use ballast_core::level::{LevelEngine, LevelLoads};
/// use ballast_core::{sim_rng, ProcessSpec, RunSpec};
///
/// let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1, 0).batched(1);
/// // 10⁸ bins: 4·10⁷ at load 0, 6·10⁷ at load 1; one batch of 10⁸ balls.
/// let start = LevelLoads::from_counts(0, &[40_000_000, 60_000_000]);
/// let mut engine = LevelEngine::with_state(&spec, start).unwrap();
/// engine.batch(100_000_000, &mut sim_rng(1));
/// assert_eq!(engine.state().balls(), 160_000_000);
/// assert_eq!(engine.samples(), 200_000_000);
/// ```
#[derive(Debug)]
pub struct LevelEngine {
    stepper: Stepper,
    state: LevelLoads,
    samples: u64,
}

impl LevelEngine {
    /// Starts from the histogram `state`; only `spec`'s process, weights and tie rule matter
    /// (they must be supported in the batched setting, [`level_support`]).
    pub fn with_state(spec: &RunSpec, state: LevelLoads) -> Result<Self, Error> {
        let mut probe = spec.clone();
        probe.setting = Setting::Batched { b: 1 };
        probe.m = 0;
        probe.process.validate()?;
        level_support(&probe)?;
        let law = crate::kinds::batch_law(&spec.process).ok_or_else(|| {
            Error::use_bins(format!(
                "{} has no batch law on the level histogram (its batches run decision by \
                 decision)",
                spec.process.kind()
            ))
        })?;
        Ok(Self { stepper: Stepper::new(spec, law), state, samples: 0 })
    }

    /// Allocates one batch of `b` balls, all deciding on the current histogram.
    pub fn batch<R: RngCore + ?Sized>(&mut self, b: u64, rng: &mut R) {
        self.samples += self.stepper.step(&mut self.state, b, rng, &mut ());
    }

    /// The current histogram.
    pub fn state(&self) -> &LevelLoads {
        &self.state
    }

    /// The histogram, to change between batches (a round of releases, say: see
    /// [`LevelLoads::release_one_per_bin`]).
    pub fn state_mut(&mut self) -> &mut LevelLoads {
        &mut self.state
    }

    /// Bin samples drawn so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Work counters of the occupancy sampler (all zero for positional ties, which do not
    /// use it).
    pub fn occupancy_stats(&self) -> occupancy::OccupancyStats {
        match &self.stepper {
            Stepper::Classes { batcher, .. } => batcher.occ.stats,
            Stepper::Positions(_) => occupancy::OccupancyStats::default(),
        }
    }
}

/// The batch step of a process: per class (multinomial plus occupancy, [`batch`]) or per
/// position (positional ties, [`position`]).
#[derive(Debug)]
enum Stepper {
    Classes { law: batch::Law, batcher: Box<batch::Batcher> },
    Positions(position::PositionBatcher),
}

impl Stepper {
    /// The step for the batch law `law` of `spec`'s process under its tie rule.
    fn new(spec: &RunSpec, law: BatchLaw) -> Self {
        let positional = spec.process.compares() && spec.tie_break == TieBreak::Position;
        match law {
            BatchLaw::DChoice { d } if positional => {
                Stepper::Positions(position::PositionBatcher::new(position::PositionLaw::DChoice {
                    d,
                }))
            }
            BatchLaw::OnePlusBeta { beta } if positional => Stepper::Positions(
                position::PositionBatcher::new(position::PositionLaw::OnePlusBeta { beta }),
            ),
            _ => Stepper::Classes { law: batch::Law::new(law), batcher: Box::default() },
        }
    }

    /// One batch of `b` balls; returns the bin samples drawn.
    fn step<R: RngCore + ?Sized, O: Observer>(
        &mut self,
        st: &mut LevelLoads,
        b: u64,
        rng: &mut R,
        observer: &mut O,
    ) -> u64 {
        match self {
            Stepper::Classes { law, batcher } => batcher.step(law, st, b, rng, observer),
            Stepper::Positions(p) => p.step(st, b, rng, observer),
        }
    }
}

/// Batched: one step per batch ([`Stepper`]).
fn batched<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    law: BatchLaw,
    b: u64,
    mut st: LevelLoads,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome {
    let mut stepper = Stepper::new(spec, law);
    let mut gaps = GapTracker::new(spec);
    let (m, mut done, mut samples) = (spec.m, 0u64, 0u64);
    while done < m {
        let size = b.min(m - done);
        samples += stepper.step(&mut st, size, rng, observer);
        done += size;
        gaps.observe(&st, observer);
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, m, samples)
}
