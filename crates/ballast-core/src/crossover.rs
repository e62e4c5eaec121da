//! The measured crossovers of `engine = "auto"`: from how many bins (sequential) or balls
//! per batch (batched) a process runs faster on the level engine than on the bin engine.
//! Each process kind names its own (`kinds/`, `Kind::auto_levels_min_n`); the measurements
//! are here, beside one another.

/// Sequential runs with at least this many bins go to the level engine under `auto`, for
/// the processes without a crossover of their own
/// ([`crate::choice::auto_sequential_min_n`]): the rules that run through the generic loop
/// on the level engine (k-Threshold, the filling rules) cost 30–47 ns per ball there against
/// 5–14 on the bin engine at n ≤ 10⁶, so they stay on bins up to here.
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

/// Sequential Two-Choice (`d = 2`) goes to the level engine under `auto` from this many bins
/// (the ball loop of `level/sequential.rs` below [`crate::level::chunked::CHUNK_MIN_N`], its
/// chunks from there). Measured (`floor --n 4096,8192,10000,16384,32768,50000,65536,100000,
/// 131072 --only two_choice --engine both --m-per-n 1000 --reps 3`, 2026-12-06, idle cores,
/// floor loop 2.8–3.1 ns), bins / levels in ns per ball: 4.37 / 6.78 at 2¹², 4.49 / 5.19 at
/// 2¹³, 4.52 / 4.40 at 10⁴, 4.94 / 4.51 at 2¹⁴, 5.65 / 3.93 at 2¹⁵, 4.79 / 3.51 at 5·10⁴,
/// 4.85 / 3.53 at 2¹⁶, 5.06 / 3.49 at 10⁵, 5.12 / 2.75 at 2¹⁷. A tie at 10⁴, a win from 2¹⁴.
/// Until 2026-12-06 the crossover sat at 2¹⁷ only so that the committed `filling22` items
/// (Two-Choice at n = 5·10⁴ and 10⁵) kept their values; they and the other items with
/// sequential Two-Choice between 2¹⁴ and 2¹⁷ bins were regenerated (CHANGELOG).
pub const AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE: u64 = 1 << 14;

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
/// under `auto` from this many bins (Greedy\[d\]: [`AUTO_SEQUENTIAL_MIN_N_GREEDY`]).
/// Measured (`floor --only threshold_first,probe_count --m-per-n 100`, m = 100n,
/// one run of 3 repetitions, 2026-12-03): threshold-first (d = 2, c = 2, relative) bins 10.1 /
/// 9.9 / 10.1 / 10.9 / 17.7 ns per ball at n = 2¹⁰ / 2¹³ / 2¹⁵ / 2¹⁷ / 2²⁰, levels 9.6 / 10.2 /
/// 9.3 / 9.0 / 10.5; probe-count (relative) bins 12.5 / 12.4 / 16.1 / 14.2 / 22.6, levels 12.3
/// / 12.1 / 13.2 / 11.1 / 16.3. A tie up to 2¹³, a win from 2¹⁵; at n = 10⁷ 87 / 17 and
/// 112 / 19 (`docs/level-engine.md#engine-selection`).
pub const AUTO_SEQUENTIAL_MIN_N_ADAPTIVE: u64 = 1 << 15;

/// Sequential Greedy\[d\] (`adaptive` with the greedy preset, or any τ that never accepts
/// before the cap) goes to the level engine under `auto` from this many bins: always. There
/// it runs as d-Choice's level loop; on the bin engine it runs the generic probe loop (a
/// reservoir draw on every tie, the probe counter), not the Two-Choice kernel, whose law it
/// shares but whose random numbers it does not. Measured (`floor --only "adaptive greedy"
/// --n 16,100,1000,10000,100000 --engine both --reps 3`, 2026-12-06, floor loop 3.5–5.2 ns),
/// bins / levels in ns per ball: Greedy\[2\] 39.1 / 13.9 at n = 16, 38.1 / 12.6 at 100,
/// 38.0 / 8.9 at 10³, 42.5 / 8.4 at 10⁴, 28.3 / 4.8 at 10⁵; Greedy\[3\] 54.2 / 18.9,
/// 57.3 / 16.5, 56.4 / 15.8, 59.8 / 11.6, 57.7 / 4.2. Until 2026-12-06 Greedy\[2\] took
/// Two-Choice's crossover (2¹⁷) and Greedy\[d ≥ 3\] d-Choice's (2¹⁰), measured for the
/// d-Choice kernels, which the bin engine does not run for adaptive probing.
pub const AUTO_SEQUENTIAL_MIN_N_GREEDY: u64 = 0;

/// Batched runs with at least this many balls per batch go to the level engine under `auto`.
pub const AUTO_BATCH_MIN_BALLS: u64 = 1 << 11;

/// As [`AUTO_BATCH_MIN_BALLS`], for One-Choice.
pub const AUTO_BATCH_MIN_BALLS_ONE_CHOICE: u64 = 1 << 15;

/// Batched runs with positional ties go to the level engine under `auto` when, besides
/// [`AUTO_BATCH_MIN_BALLS`], there are at most this many bins per ball of a batch
/// (`b >= n / 2`): a positional batch scans all n positions, so smaller batches are
/// cheaper on the bin engine.
pub const AUTO_POSITION_MAX_BINS_PER_BALL: u64 = 2;
