//! The floor table (`cargo xtask bench --floor`, binary `floor`): ns per ball of the bin and
//! level engines beside a *floor*, the cost of the random numbers a two-sample process needs
//! and nothing else, measured in the same run so that the ratio "engine ÷ floor" is
//! comparable across machines and loads.
//!
//! The floor loop ([`floor_loop`]) draws, per ball, two bounded bin indices in `0..n` with
//! [`ballast_core::rng::below`] from a [`ballast_core::SimRng`] (two generator steps: `below`
//! takes one 32-bit draw per index) and adds them to a sum that is passed through
//! [`std::hint::black_box`], so nothing is optimised away; it keeps no load state.
//! [`floor_loop_one_word`] is the same with both indices from one 64-bit word (Lemire's
//! multiply-shift on each 32-bit half, with rejection, as [`ballast_core::process::Ctx`]
//! samples): the cheapest exact way to get two indices from this generator, shown as an
//! extra row.
//!
//! Some laws need more random numbers than two indices: Three-Choice a third index,
//! (1+β) a Bernoulli(β) coin, σ-Noisy-Load a normal variate per sample. No loop can draw them
//! at the two-index floor, so each case also has an *own floor* ([`OwnFloor`],
//! [`own_floor_loop`]): the same kind of loop drawing the random numbers that case's law
//! needs and nothing else. The table shows both ratios.

use std::hint::black_box;

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use ballast_core::registry::{Args, ParamValue, ProcessDef, Settings};
use ballast_core::rng::{below, below_from_word, bernoulli};
use ballast_core::{sim_rng, Engine, ProcessSpec, RunSpec, SimRng, Tau};
use ballast_dynamic::{
    simulate_process, AzarConfig, DynamicSpec, Horizon, InfiniteAzar, LeakyBins, LeakyConfig, Rbb,
    RbbConfig, RethrowView, RoundProcess,
};
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

/// Two-Choice with random ties as a process item ([`ballast_core::item`]): the row
/// `item two_choice` shows what the item route (a trait-object call per ball) costs beside
/// the built-in rule.
#[derive(Debug)]
struct TwoChoiceItem;

struct TwoChoiceRule;

impl CustomRule for TwoChoiceRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let (a, b) = (at.sample(), at.sample());
        let (x, y) = (at.load(a), at.load(b));
        if x < y || (x == y && at.rng().next_u64() >> 63 == 0) {
            a
        } else {
            b
        }
    }
}

impl ProcessItem for TwoChoiceItem {
    fn name(&self) -> &'static str {
        "two_choice_item"
    }
    fn rule(&self, _: &Args) -> Box<dyn CustomRule> {
        Box::new(TwoChoiceRule)
    }
    fn levels(&self) -> Result<(), String> {
        Ok(())
    }
}

static TWO_CHOICE_ITEM: TwoChoiceItem = TwoChoiceItem;

static TWO_CHOICE_DEF: ProcessDef = ProcessDef {
    name: "two_choice_item",
    doc: "Two-Choice with random ties, as a process item",
    params: &[],
    ties: &[],
    settings: Settings { batched: true, delay: false, biased: true },
    unit_weights_only: false,
    build: |a| Ok(ProcessSpec::Custom(CustomSpec::new(&TWO_CHOICE_ITEM, a.clone()))),
    example: "",
};

/// The `rule` process with the formula of Two-Choice with random ties.
fn two_choice_formula() -> ProcessSpec {
    let choose = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";
    ballast_core::registry::find("rule")
        .and_then(|r| r.build(&[("choose", ParamValue::Text(choose.to_owned()))]))
        .expect("the Two-Choice formula builds")
}

/// The setting of a floor case, relative to `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorSetting {
    /// One ball at a time.
    Sequential,
    /// Batches of `k·n` balls.
    BatchedTimesN(u64),
    /// One ball at a time, in whole runs of exactly `m = k·n` balls (processes whose cost
    /// per ball depends on `m / n`, such as `equalize`): a timed run is a number of such
    /// runs, and `m` is ignored.
    SequentialRunsTimesN(u64),
}

/// One engine case of the floor table: a process and a setting, run at every `n`.
#[derive(Clone, Debug)]
pub struct FloorCase {
    /// Row label, e.g. `two_choice` or `two_choice b=10n`.
    pub label: String,
    /// The process.
    pub process: ProcessSpec,
    /// Sequential or batched.
    pub setting: FloorSetting,
}

impl FloorCase {
    /// The run of this case with `n` bins and `m` balls on `engine`.
    pub fn spec(&self, engine: Engine, n: u64, m: u64) -> RunSpec {
        let spec = RunSpec::new(self.process.clone(), n, m).engine(engine);
        match self.setting {
            FloorSetting::Sequential => spec,
            FloorSetting::BatchedTimesN(k) => spec.batched(k * n),
            FloorSetting::SequentialRunsTimesN(k) => {
                RunSpec::new(self.process.clone(), n, k * n).engine(engine)
            }
        }
    }

    /// Balls of one whole run at `n` for [`FloorSetting::SequentialRunsTimesN`] cases
    /// (`None` for the others, whose `m` is calibrated).
    pub fn whole_run_balls(&self, n: u64) -> Option<u64> {
        match self.setting {
            FloorSetting::SequentialRunsTimesN(k) => Some(k * n),
            _ => None,
        }
    }

    /// Balls per batch at `n` (1 for sequential cases): `m` is a multiple of it.
    pub fn granule(&self, n: u64) -> u64 {
        match self.setting {
            FloorSetting::Sequential | FloorSetting::SequentialRunsTimesN(_) => 1,
            FloorSetting::BatchedTimesN(k) => k * n,
        }
    }
}

/// The engine cases of the floor table, each run on [`Engine::Bins`] and [`Engine::Levels`]:
/// sequential One-Choice, Two-Choice, Three-Choice, (1+β) with β = 0.5, Quantile with
/// δ = 0.5, g-Bounded and g-Myopic with g = 4, σ-Noisy-Load with σ = 4 (truncated, as in
/// `configs/noise22`), and batched Two-Choice with b = n and b = 10n; then the processes of
/// `configs/filling22` and the threshold family, on the bin engine only (the level engine does
/// not run all of them): Threshold with f = 1, strict Mean-Thinning, Relative-Threshold with
/// f = 1, Packing (offset 1), Twinning, Tight-Packing (offset 1) and (1, 1)-Memory; then the
/// adaptive probing presets of `configs/czumaj97/adaptive.toml` (Greedy\[2\], Greedy\[3\],
/// threshold-first d = 2, c = 2 and probe-count, the last two relative to the average) on
/// both engines; last `equalize` with d = 2 and 3 (Czumaj–Stemann reallocation, on both
/// engines) in whole runs of m = n and m = 100n balls, the shapes of
/// `configs/czumaj97/reallocation.toml`. Random ties throughout.
pub fn floor_cases() -> Vec<FloorCase> {
    let relative = |mut t: Tau| {
        t.per_average = 1.0;
        t
    };
    let seq = |label: &str, process| FloorCase {
        label: label.to_string(),
        process,
        setting: FloorSetting::Sequential,
    };
    let runs = |label: &str, d, k| FloorCase {
        label: label.to_string(),
        process: ProcessSpec::Equalize { d },
        setting: FloorSetting::SequentialRunsTimesN(k),
    };
    vec![
        seq("one_choice", ProcessSpec::OneChoice),
        seq("two_choice", ProcessSpec::DChoice { d: 2 }),
        seq("rule two_choice", two_choice_formula()),
        seq("item two_choice", TWO_CHOICE_DEF.build(&[]).expect("the two_choice item builds")),
        seq("three_choice", ProcessSpec::DChoice { d: 3 }),
        seq("one_plus_beta 0.5", ProcessSpec::OnePlusBeta { beta: 0.5 }),
        seq("quantile 0.5", ProcessSpec::Quantile { delta: 0.5 }),
        seq("g_bounded 4", ProcessSpec::GBounded { g: 4.0 }),
        seq("g_myopic 4", ProcessSpec::GMyopic { g: 4.0 }),
        seq("sigma_noisy_load 4", ProcessSpec::SigmaNoisyLoad { sigma: 4.0, truncate: true }),
        FloorCase {
            label: "two_choice b=n".to_string(),
            process: ProcessSpec::DChoice { d: 2 },
            setting: FloorSetting::BatchedTimesN(1),
        },
        FloorCase {
            label: "two_choice b=10n".to_string(),
            process: ProcessSpec::DChoice { d: 2 },
            setting: FloorSetting::BatchedTimesN(10),
        },
        seq("threshold 1", ProcessSpec::Threshold { f: 1.0 }),
        seq("mean_thinning strict", ProcessSpec::MeanThinning { strict: true }),
        seq("relative_threshold 1", ProcessSpec::RelativeThreshold { f: 1.0 }),
        seq("packing 1", ProcessSpec::Packing { offset: 1 }),
        seq("twinning", ProcessSpec::Twinning),
        seq("tight_packing 1", ProcessSpec::TightPacking { offset: 1, balls: None }),
        seq("memory 1 1", ProcessSpec::Memory { d: 1, k: 1 }),
        seq("adaptive greedy 2", ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(2) }),
        seq("adaptive greedy 3", ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(3) }),
        seq(
            "adaptive threshold_first 2 2",
            ProcessSpec::Adaptive { tau: relative(Tau::constant_until(2.0, 2)), cap: Some(2) },
        ),
        seq(
            "adaptive probe_count",
            ProcessSpec::Adaptive { tau: relative(Tau::PROBE_COUNT), cap: None },
        ),
        runs("equalize 2 m=n", 2, 1),
        runs("equalize 3 m=n", 3, 1),
        runs("equalize 2 m=100n", 2, 100),
        runs("equalize 3 m=100n", 3, 100),
    ]
}

/// Whether `engine` runs `case` (the engines skip the cases they cannot simulate exactly).
pub fn runs_on(case: &FloorCase, engine: Engine) -> bool {
    ballast_core::supported_engines(&case.spec(engine, 1000, 10_000)).contains(&engine)
}

/// Whole-run cases ([`FloorSetting::SequentialRunsTimesN`]) are skipped at sizes where one
/// run would place more balls than this (`equalize` with m = 100n at n = 10⁸, under `--big`).
pub const MAX_WHOLE_RUN_BALLS: u64 = 2_000_000_000;

/// The default sizes of the floor table, n = 10³ … 10⁶.
pub const FLOOR_SIZES: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// The opt-in large sizes (`--big`), n = 10⁷ and 10⁸: 40 and 400 MB of loads on the bin
/// engine, and per-run O(n) work (allocation, the final minimum) that is no longer small
/// beside the balls.
pub const FLOOR_BIG_SIZES: [u64; 2] = [10_000_000, 100_000_000];

/// The floor: `balls` times two indices in `0..n` by [`below`] (two generator steps),
/// summed through [`black_box`]. Returns the sum (so a caller can black-box it too).
pub fn floor_loop(n: u64, balls: u64, seed: u64) -> u64 {
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..balls {
        let a = below(&mut rng, n);
        let b = below(&mut rng, n);
        sum = black_box(sum.wrapping_add(a).wrapping_add(b));
    }
    sum
}

/// The floor with both indices from one 64-bit word: Lemire's multiply-shift on each 32-bit
/// half (`n <= 2^32 − 1`), a rejected half replaced by a fresh word's same half. Exact, one
/// generator step per ball in the common case.
pub fn floor_loop_one_word(n: u64, balls: u64, seed: u64) -> u64 {
    let n32 = n as u32;
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..balls {
        let w = rng.next_u64();
        let a = loop_half(&mut rng, w as u32, n32, false);
        let b = loop_half(&mut rng, (w >> 32) as u32, n32, true);
        sum = black_box(sum.wrapping_add(u64::from(a)).wrapping_add(u64::from(b)));
    }
    sum
}

/// Lemire on `word`, redrawing the chosen half of fresh words until one is accepted.
#[inline(always)]
fn loop_half(rng: &mut impl RngCore, mut word: u32, n: u32, high: bool) -> u32 {
    loop {
        if let Some(i) = below_from_word(word, n) {
            return i;
        }
        let w = rng.next_u64();
        word = if high { (w >> 32) as u32 } else { w as u32 };
    }
}

/// The floor of the round-based table ([`dynamic_cases`]): `throws` bounded indices in
/// `0..n` by [`below`], one generator step each, summed through [`black_box`]. A re-thrown
/// ball of One-Choice RBB needs one index, so this is the random-number cost of a throw
/// drawn one word at a time; [`ballast_core::process::Ctx::sample_each`] takes two indices
/// from a word, so a process can go below it.
pub fn floor_loop_one(n: u64, throws: u64, seed: u64) -> u64 {
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..throws {
        sum = black_box(sum.wrapping_add(below(&mut rng, n)));
    }
    sum
}

/// The random numbers a case's law needs per ball, drawn by [`own_floor_loop`] the way the
/// floor draws its indices ([`below`], one generator step each), with no load state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OwnFloor {
    /// `k` bin indices: One-Choice 1, d-Choice and Greedy\[d\] d, and 2 for the processes
    /// that compare at most two samples (Quantile, g-Bounded, g-Myopic: their coins are
    /// single bits of a buffer, 1/64 of a draw, left out).
    Indices(u32),
    /// A Bernoulli(β) coin with 53-bit resolution ([`bernoulli`], one step) and two indices:
    /// (1+β). The second index is drawn on tails too (the law needs 1 + β on average), so
    /// the loop has no branch on the coin.
    CoinAndTwo(f64),
    /// Two indices and two standard normal variates (`rand_distr`'s ziggurat
    /// `StandardNormal`, as σ-Noisy-Load draws its noise).
    TwoAndTwoNormals,
}

impl OwnFloor {
    /// The floor of `process`, `None` where the law's random numbers vary with the state
    /// (thresholds, adaptive probing with a threshold, the filling processes, Memory,
    /// equalize): those rows show only the two-index ratio.
    pub fn of(process: &ProcessSpec) -> Option<Self> {
        Some(match *process {
            ProcessSpec::OneChoice => Self::Indices(1),
            ProcessSpec::DChoice { d } => Self::Indices(d),
            ProcessSpec::Quantile { .. }
            | ProcessSpec::GBounded { .. }
            | ProcessSpec::GMyopic { .. } => Self::Indices(2),
            ProcessSpec::OnePlusBeta { beta } => Self::CoinAndTwo(beta),
            ProcessSpec::SigmaNoisyLoad { .. } => Self::TwoAndTwoNormals,
            ProcessSpec::Adaptive { ref tau, cap: Some(d) } if *tau == Tau::NEVER => {
                Self::Indices(d)
            }
            _ => return None,
        })
    }

    /// Row label of the floor, e.g. `floor (3 × below)`.
    pub fn label(&self) -> String {
        match self {
            Self::Indices(k) => format!("floor ({k} × below)"),
            Self::CoinAndTwo(beta) => format!("floor (coin {beta} + 2 × below)"),
            Self::TwoAndTwoNormals => "floor (2 × below + 2 normals)".to_string(),
        }
    }
}

/// The own floor `f` of a case: `balls` times its random numbers (see [`OwnFloor`]),
/// summed through [`black_box`]. Returns the sum.
pub fn own_floor_loop(f: OwnFloor, n: u64, balls: u64, seed: u64) -> u64 {
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    match f {
        // The loops the table uses are written out, like `floor_loop`: a loop over a
        // run-time count costs more than the draws it repeats.
        OwnFloor::Indices(1) => return floor_loop_one(n, balls, seed),
        OwnFloor::Indices(2) => return floor_loop(n, balls, seed),
        OwnFloor::Indices(3) => return floor_loop_three(n, balls, seed),
        OwnFloor::Indices(k) => {
            for _ in 0..balls {
                for _ in 0..k {
                    sum = sum.wrapping_add(below(&mut rng, n));
                }
                sum = black_box(sum);
            }
        }
        OwnFloor::CoinAndTwo(beta) => {
            for _ in 0..balls {
                let coin = u64::from(bernoulli(&mut rng, beta));
                let a = below(&mut rng, n);
                let b = below(&mut rng, n);
                sum = black_box(sum.wrapping_add(a).wrapping_add(coin * b));
            }
        }
        OwnFloor::TwoAndTwoNormals => {
            for _ in 0..balls {
                let a = below(&mut rng, n);
                let b = below(&mut rng, n);
                let z1: f64 = StandardNormal.sample(&mut rng);
                let z2: f64 = StandardNormal.sample(&mut rng);
                let noise = u64::from(z1 < z2);
                sum = black_box(sum.wrapping_add(a).wrapping_add(b).wrapping_add(noise));
            }
        }
    }
    sum
}

/// [`floor_loop`] with three indices a ball (Three-Choice's own floor), written the same way.
fn floor_loop_three(n: u64, balls: u64, seed: u64) -> u64 {
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..balls {
        let a = below(&mut rng, n);
        let b = below(&mut rng, n);
        let c = below(&mut rng, n);
        sum = black_box(sum.wrapping_add(a).wrapping_add(b).wrapping_add(c));
    }
    sum
}

/// A round-based model of the dynamic floor table, its sizes relative to `n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DynamicModel {
    /// Repeated balls-into-bins with `m = k·n` balls, Greedy\[d\] re-throws (d = 1: the
    /// One-Choice model of `configs/rbb23`).
    Rbb {
        /// Samples per re-thrown ball.
        d: u32,
        /// Balls per bin.
        k: u64,
    },
    /// Leaky bins with Binomial(n, λ) arrivals per round and Greedy\[d\].
    Leaky {
        /// Samples per arriving ball.
        d: u32,
        /// Arrival rate per bin.
        lambda: f64,
    },
    /// The infinite Azar process with `m = k·n` balls, `n` delete-insert steps per round.
    Azar {
        /// Samples per inserted ball.
        d: u32,
        /// Balls per bin.
        k: u64,
    },
}

/// One row kind of the dynamic floor table: a model, run at every `n`.
#[derive(Clone, Debug)]
pub struct DynamicCase {
    /// Row label, e.g. `rbb d=1 m/n=16`.
    pub label: String,
    /// The model.
    pub model: DynamicModel,
}

/// Throws simulated at most by a row's warm-up (see [`DynamicCase::warm_up_rounds`]).
pub const WARM_UP_THROWS: f64 = 2e8;

impl DynamicCase {
    /// The model at `n` bins.
    pub fn spec(&self, n: usize) -> DynamicSpec {
        let nn = n as u64;
        match self.model {
            DynamicModel::Rbb { d, k } => {
                DynamicSpec::Rbb(RbbConfig::d_choice(n, k * nn, d, RethrowView::AfterReleases))
            }
            DynamicModel::Leaky { d, lambda } => DynamicSpec::Leaky(LeakyConfig::new(n, lambda, d)),
            DynamicModel::Azar { d, k } => DynamicSpec::Azar(AzarConfig::new(n, k * nn, d)),
        }
    }

    /// Rounds simulated (untimed, once per row) before the timed runs, so that they time
    /// the stationary regime the items spend their rounds in: RBB `4k² + 200` (no bin
    /// empties for about k² rounds from the uniform start), leaky bins `10/(1 − λ)²` (the
    /// queues' relaxation time), Azar `10k + 200` (every ball moved about ten times); at
    /// most [`WARM_UP_THROWS`] throws. The cap shortens the warm-up at n = 10⁵ for RBB with
    /// k = 52 and leaky bins with λ = 0.99: both are then still close to their stationary
    /// fraction of non-empty bins, which is what the cost per throw depends on.
    pub fn warm_up_rounds(&self, n: usize) -> u64 {
        let (rounds, per_round) = match self.model {
            DynamicModel::Rbb { k, .. } => (4 * k * k + 200, n as f64),
            DynamicModel::Leaky { lambda, .. } => {
                ((10.0 / (1.0 - lambda).powi(2)).ceil() as u64, lambda * n as f64)
            }
            DynamicModel::Azar { k, .. } => (10 * k + 200, n as f64),
        };
        rounds.min((WARM_UP_THROWS / per_round).ceil() as u64).max(1)
    }
}

/// The rows of the dynamic floor table (`floor --dynamic`): RBB with d = 1 and d = 2 at
/// m/n = 1, 4, 16 and 52, the infinite Azar process with d = 1 and d = 2 at m/n = 1, 16 and
/// 52, leaky bins with d = 1 and d = 2 at λ = 0.5, 0.9 and 0.99 (the range of
/// `configs/selfstab16`).
pub fn dynamic_cases() -> Vec<DynamicCase> {
    let mut v = Vec::new();
    for d in [1, 2] {
        for k in [1, 4, 16, 52] {
            v.push(DynamicCase {
                label: format!("rbb d={d} m/n={k}"),
                model: DynamicModel::Rbb { d, k },
            });
        }
    }
    for d in [1, 2] {
        for lambda in [0.5, 0.9, 0.99] {
            v.push(DynamicCase {
                label: format!("leaky d={d} λ={lambda}"),
                model: DynamicModel::Leaky { d, lambda },
            });
        }
    }
    for d in [1, 2] {
        for k in [1, 16, 52] {
            v.push(DynamicCase {
                label: format!("azar d={d} m/n={k}"),
                model: DynamicModel::Azar { d, k },
            });
        }
    }
    v
}

/// The default sizes of the dynamic floor table, n = 10² … 10⁵ (`configs/rbb23` runs
/// 10²–10⁴, `configs/selfstab16` 10³–10⁵).
pub const DYNAMIC_SIZES: [u64; 4] = [100, 1_000, 10_000, 100_000];

/// A built round-based process of any model, to warm up once and clone for each timed run.
#[derive(Clone, Debug)]
pub enum DynProcess {
    /// RBB.
    Rbb(Rbb),
    /// Leaky bins.
    Leaky(LeakyBins),
    /// The infinite Azar process.
    Azar(InfiniteAzar),
}

impl DynProcess {
    /// The process of `spec` in its start state.
    pub fn new(spec: &DynamicSpec) -> Result<Self, ballast_dynamic::Error> {
        Ok(match spec {
            DynamicSpec::Rbb(c) => Self::Rbb(Rbb::new(c)?),
            DynamicSpec::Leaky(c) => Self::Leaky(LeakyBins::new(c)?),
            DynamicSpec::Azar(c) => Self::Azar(InfiniteAzar::new(c)?),
            _ => unreachable!("a model the table does not list"),
        })
    }

    /// The straightforward reference loop of `spec` ([`Rbb::reference`],
    /// [`LeakyBins::reference`]); `None` for Azar, which has one loop.
    pub fn reference(spec: &DynamicSpec) -> Option<Self> {
        match spec {
            DynamicSpec::Rbb(c) => Some(Self::Rbb(Rbb::reference(c).ok()?)),
            DynamicSpec::Leaky(c) => Some(Self::Leaky(LeakyBins::reference(c).ok()?)),
            _ => None,
        }
    }

    /// How the loads are kept: `dense` (a plain load vector), `list` (the non-empty list) or
    /// `levels` (the level histogram and ball vector of Azar).
    pub fn state_name(&self) -> &'static str {
        match self {
            Self::Rbb(p) if p.is_dense() => "dense",
            Self::Leaky(p) if p.is_dense() => "dense",
            Self::Rbb(_) | Self::Leaky(_) => "list",
            Self::Azar(_) => "levels",
        }
    }

    /// The current loads.
    pub fn loads(&self) -> &[u32] {
        match self {
            Self::Rbb(p) => p.loads(),
            Self::Leaky(p) => p.loads(),
            Self::Azar(p) => p.loads(),
        }
    }

    /// Simulates `rounds` rounds, untimed (the warm-up).
    pub fn warm_up(&mut self, rounds: u64, seed: u64) {
        let mut rng = sim_rng(seed);
        match self {
            Self::Rbb(p) => warm(p, rounds, &mut rng),
            Self::Leaky(p) => warm(p, rounds, &mut rng),
            Self::Azar(p) => warm(p, rounds, &mut rng),
        }
    }

    /// Runs `rounds` rounds (at least the 20 batches of the default horizon) on a clone,
    /// through [`ballast_dynamic::simulate_process`] (the runner's loop, statistics
    /// included), and returns the balls moved (re-throws, arrivals or insertions).
    pub fn run_clone(&self, rounds: u64, seed: u64) -> u64 {
        let horizon = Horizon::new(0, rounds.max(20));
        let mut rng = sim_rng(seed);
        let summary = match self.clone() {
            Self::Rbb(mut p) => simulate_process(&mut p, &horizon, &mut rng),
            Self::Leaky(mut p) => simulate_process(&mut p, &horizon, &mut rng),
            Self::Azar(mut p) => simulate_process(&mut p, &horizon, &mut rng),
        };
        let summary = summary.expect("valid horizon");
        black_box(summary.max_load.mean);
        summary.moved
    }
}

fn warm<P: RoundProcess>(p: &mut P, rounds: u64, rng: &mut SimRng) {
    for _ in 0..rounds {
        black_box(p.round(rng));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_run_on_both_engines_at_every_size() {
        let cases = floor_cases();
        assert_eq!(cases.len(), 27);
        for (k, c) in cases.iter().enumerate() {
            // The first twelve (the table before the filling rows), the four adaptive ones
            // and the last four (equalize, in whole runs) run on both engines.
            assert!((12..19).contains(&k) || runs_on(c, Engine::Levels), "{}", c.label);
            assert_eq!(c.whole_run_balls(1000).is_some(), k >= 23, "{}", c.label);
            for &n in FLOOR_SIZES.iter().chain(&FLOOR_BIG_SIZES) {
                for engine in [Engine::Bins, Engine::Levels] {
                    if engine == Engine::Levels && !runs_on(c, engine) {
                        continue;
                    }
                    // The bench skips whole runs this long (and bins refuse m >= 2^32).
                    if c.whole_run_balls(n).is_some_and(|b| b > MAX_WHOLE_RUN_BALLS) {
                        continue;
                    }
                    let spec = c.spec(engine, n, 10 * n);
                    spec.validate().unwrap();
                    assert!(
                        ballast_core::supported_engines(&spec).contains(&engine),
                        "{} n={n} {engine:?}",
                        c.label
                    );
                    assert_eq!(spec.m % c.granule(n), 0);
                }
            }
        }
    }

    #[test]
    fn floor_indices_are_in_range_and_cover() {
        // Sum of 2·20000 uniform indices in 0..7: mean 3 each, so the sum is near 120000;
        // a loop that returned 0 or ignored n would be far off (sd of the sum ≈ 400).
        let s = floor_loop(7, 20_000, 1);
        assert!((s as f64 - 120_000.0).abs() < 4_000.0, "{s}");
        let t = floor_loop_one_word(7, 20_000, 1);
        assert!((t as f64 - 120_000.0).abs() < 4_000.0, "{t}");
        // One index per throw: mean 3, sd of the sum ≈ 283.
        let u = floor_loop_one(7, 20_000, 1);
        assert!((u as f64 - 60_000.0).abs() < 3_000.0, "{u}");
        // Three indices per ball: mean 9 a ball, sd of the sum ≈ 490; one and four (the
        // run-time loop): 3 and 12 a ball.
        let v = own_floor_loop(OwnFloor::Indices(3), 7, 20_000, 1);
        assert!((v as f64 - 180_000.0).abs() < 5_000.0, "{v}");
        let v1 = own_floor_loop(OwnFloor::Indices(1), 7, 20_000, 1);
        assert!((v1 as f64 - 60_000.0).abs() < 3_000.0, "{v1}");
        let v4 = own_floor_loop(OwnFloor::Indices(4), 7, 20_000, 1);
        assert!((v4 as f64 - 240_000.0).abs() < 6_000.0, "{v4}");
        // Coin 0.5 and two indices: 3 + 0.5·3 = 4.5 a ball (sd of the sum ≈ 380).
        let w = own_floor_loop(OwnFloor::CoinAndTwo(0.5), 7, 20_000, 1);
        assert!((w as f64 - 90_000.0).abs() < 4_000.0, "{w}");
        // Two indices and a fair comparison of two normals: 6.5 a ball (sd ≈ 400).
        let x = own_floor_loop(OwnFloor::TwoAndTwoNormals, 7, 20_000, 1);
        assert!((x as f64 - 130_000.0).abs() < 4_000.0, "{x}");
    }

    #[test]
    fn dynamic_cases_build_and_run_at_every_size() {
        let cases = dynamic_cases();
        assert_eq!(cases.len(), 20);
        for c in &cases {
            for &n in &DYNAMIC_SIZES[..2] {
                let spec = c.spec(n as usize);
                spec.validate().unwrap();
                let mut p = DynProcess::new(&spec).unwrap();
                p.warm_up(3, 1);
                assert!(p.run_clone(20, 2) > 0, "{} n={n}", c.label);
            }
            // Expected throws of the warm-up at n = 10⁵: within the cap (plus one round).
            let per_round = match c.model {
                DynamicModel::Leaky { lambda, .. } => lambda * 1e5,
                _ => 1e5,
            };
            let throws = c.warm_up_rounds(100_000) as f64 * per_round;
            assert!(throws <= WARM_UP_THROWS + per_round, "{}: {throws}", c.label);
        }
    }
}
