//! The sequential kernels of the bin engine (`ballast_core::kernel`, through
//! `Rule::run_kernel`) against the straightforward loop (`Rule::place` and adding each
//! ball; the engine's `simulate_ball_by_ball` and `run_rule_straightforward`).
//!
//! The kernels promise more than the same law: the same random numbers and the same choices,
//! so a seed gives the same values with or without them. Checked here at three levels:
//!
//! 1. Each kernel called directly, in stretches of varying length, against `place` on a
//!    second copy: the same loads, sample count, and generator and coin-buffer state
//!    afterwards (the next words, the next sample, the next coin), for every kernel rule,
//!    n from 1 to 10⁴ and several seeds; and again with a generator whose 32-bit halves
//!    are often zero, so that the rare paths of possible Lemire rejections run.
//! 2. Whole runs through the engine (observation points, trajectories, m < n) against
//!    `simulate_ball_by_ball`: equal outcomes, equal loads at every observation point, and
//!    the same generator state after the run.
//! 3. The law at n = 3, m = 6: the full final load vector (28 possible vectors) of 20 000
//!    runs through the kernel path against 20 000 runs of the straightforward loop with
//!    other seeds, a two-sample chi-square test at `common::ALPHA` = 0.001.
//!
//! Power: deliberately wrong variants are rejected by the same checks. At levels 1 and 2 a
//! kernel that sends ties to the first sample (no coin) and one that draws its second
//! sample with `below` instead of the shared 32-bit halves are told apart from the
//! straightforward loop; at level 3 Two-Choice with ties to the lowest index, and
//! Two-Choice whose second sample never hits the last bin (a biased index), are rejected.

mod common;

use ballast_core::engine::{run_rule_observed, run_rule_straightforward};
use ballast_core::loads::{LoadState, UnitLoads};
use ballast_core::process::{
    Accept, Ctx, DChoice, Filling, KernelRun, MemoryOne, Noisy, OneChoice, OnePlusBeta, Placement,
    Ranks, Rule, Thinning, TightCount, TightPacking, TwoChoice,
};
use ballast_core::rng::below;
use ballast_core::{
    derive_seed, sim_rng, simulate_ball_by_ball, simulate_observed, Engine, Observer, ProcessSpec,
    RunSpec, Stop, TieBreak,
};
use common::{chi2_critical, chi2_two_sample};
use rand::RngCore;

/// The rules that have a kernel, with the parameters the kernels distinguish.
fn kernel_rules() -> Vec<(&'static str, ProcessSpec)> {
    vec![
        ("one_choice", ProcessSpec::OneChoice),
        ("two_choice", ProcessSpec::DChoice { d: 2 }),
        ("three_choice", ProcessSpec::DChoice { d: 3 }),
        ("one_plus_beta 0.5", ProcessSpec::OnePlusBeta { beta: 0.5 }),
        ("one_plus_beta 0.05", ProcessSpec::OnePlusBeta { beta: 0.05 }),
        ("g_bounded 0", ProcessSpec::GBounded { g: 0.0 }),
        ("g_bounded 3", ProcessSpec::GBounded { g: 3.0 }),
        ("g_bounded 1.5", ProcessSpec::GBounded { g: 1.5 }),
        ("g_bounded 1e12", ProcessSpec::GBounded { g: 1e12 }),
        ("g_myopic 0", ProcessSpec::GMyopic { g: 0.0 }),
        ("g_myopic 2.5", ProcessSpec::GMyopic { g: 2.5 }),
        ("g_myopic 1e12", ProcessSpec::GMyopic { g: 1e12 }),
        ("sigma 1.5", ProcessSpec::SigmaNoisyLoad { sigma: 1.5, truncate: false }),
        ("sigma 4 truncated", ProcessSpec::SigmaNoisyLoad { sigma: 4.0, truncate: true }),
        ("threshold 1", ProcessSpec::Threshold { f: 1.0 }),
        ("threshold 2.5", ProcessSpec::Threshold { f: 2.5 }),
        ("threshold 0", ProcessSpec::Threshold { f: 0.0 }),
        ("mean_thinning strict", ProcessSpec::MeanThinning { strict: true }),
        ("mean_thinning", ProcessSpec::MeanThinning { strict: false }),
        ("relative_threshold 1", ProcessSpec::RelativeThreshold { f: 1.0 }),
        ("relative_threshold 0.3", ProcessSpec::RelativeThreshold { f: 0.3 }),
        ("relative_threshold -0.5", ProcessSpec::RelativeThreshold { f: -0.5 }),
        ("relative_threshold 0.5", ProcessSpec::RelativeThreshold { f: 0.5 }),
        ("relative_threshold 1e30", ProcessSpec::RelativeThreshold { f: 1e30 }),
        ("memory 1 1", ProcessSpec::Memory { d: 1, k: 1 }),
        ("caching 1", ProcessSpec::Caching { d: 1 }),
    ]
}

/// The multi-ball rules with a kernel (whole steps, cut at m): checked like the others, and
/// also with stretches that end inside a step.
fn filling_rules() -> Vec<(&'static str, ProcessSpec)> {
    vec![
        ("packing 1", ProcessSpec::Packing { offset: 1 }),
        ("packing 0", ProcessSpec::Packing { offset: 0 }),
        ("packing 4", ProcessSpec::Packing { offset: 4 }),
        ("twinning", ProcessSpec::Twinning),
        ("tight_packing 1", ProcessSpec::TightPacking { offset: 1, balls: None }),
        ("tight_packing 0", ProcessSpec::TightPacking { offset: 0, balls: None }),
        ("tight_packing balls=3", ProcessSpec::TightPacking { offset: 1, balls: Some(3) }),
    ]
}

/// Any rule of [`kernel_rules`] as one type.
#[derive(Clone, Copy)]
enum AnyRule {
    One(OneChoice),
    Two(TwoChoice),
    D(DChoice),
    Beta(OnePlusBeta),
    Noisy(Noisy),
    Thin(Thinning),
    Memory(MemoryOne<true>),
    Caching(MemoryOne<false>),
    Fill(Filling),
    Tight(TightPacking),
}

fn rule_of(p: &ProcessSpec) -> AnyRule {
    let tie = TieBreak::Random;
    match *p {
        ProcessSpec::OneChoice => AnyRule::One(OneChoice),
        ProcessSpec::DChoice { d: 2 } => AnyRule::Two(TwoChoice { tie }),
        ProcessSpec::DChoice { d } => AnyRule::D(DChoice { d, tie }),
        ProcessSpec::OnePlusBeta { beta } => AnyRule::Beta(OnePlusBeta { beta, tie }),
        ProcessSpec::GBounded { g } => AnyRule::Noisy(Noisy::GBounded { g }),
        ProcessSpec::GMyopic { g } => AnyRule::Noisy(Noisy::GMyopic { g }),
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
            AnyRule::Noisy(Noisy::SigmaNoisyLoad { sigma, truncate })
        }
        ProcessSpec::Threshold { f } => AnyRule::Thin(Thinning { accept: Accept::AtMost(f) }),
        ProcessSpec::MeanThinning { strict } => {
            AnyRule::Thin(Thinning { accept: Accept::BelowAverage { strict } })
        }
        ProcessSpec::RelativeThreshold { f } => {
            AnyRule::Thin(Thinning { accept: Accept::BelowAveragePlus(f) })
        }
        ProcessSpec::Memory { d: 1, k: 1 } => AnyRule::Memory(MemoryOne::new()),
        ProcessSpec::Caching { d: 1 } => AnyRule::Caching(MemoryOne::new()),
        ProcessSpec::Packing { offset } => AnyRule::Fill(Filling::Packing { offset }),
        ProcessSpec::Twinning => AnyRule::Fill(Filling::Twinning),
        ProcessSpec::TightPacking { offset, balls } => AnyRule::Tight(TightPacking::new(
            balls.map_or(TightCount::AsPacking { offset }, TightCount::Fixed),
        )),
        _ => unreachable!("no kernel"),
    }
}

impl Rule for AnyRule {
    fn in_round(&self) -> bool {
        match self {
            AnyRule::Tight(x) => x.in_round(),
            _ => false,
        }
    }
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        match self {
            AnyRule::One(x) => x.place(s, r, rng, ctx),
            AnyRule::Two(x) => x.place(s, r, rng, ctx),
            AnyRule::D(x) => x.place(s, r, rng, ctx),
            AnyRule::Beta(x) => x.place(s, r, rng, ctx),
            AnyRule::Noisy(x) => x.place(s, r, rng, ctx),
            AnyRule::Thin(x) => x.place(s, r, rng, ctx),
            AnyRule::Memory(x) => x.place(s, r, rng, ctx),
            AnyRule::Caching(x) => x.place(s, r, rng, ctx),
            AnyRule::Fill(x) => x.place(s, r, rng, ctx),
            AnyRule::Tight(x) => x.place(s, r, rng, ctx),
        }
    }
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match self {
            AnyRule::One(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Two(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::D(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Beta(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Noisy(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Thin(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Memory(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Caching(x) => x.run_kernel(s, balls, rng, ctx),
            AnyRule::Fill(_) | AnyRule::Tight(_) => false,
        }
    }
    fn run_kernel_steps<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        cap: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Option<KernelRun> {
        match self {
            AnyRule::Fill(x) => x.run_kernel_steps(s, balls, cap, rng, ctx),
            AnyRule::Tight(x) => x.run_kernel_steps(s, balls, cap, rng, ctx),
            _ => self.run_kernel(s, balls, rng, ctx).then_some(KernelRun { balls, steps: balls }),
        }
    }
}

/// Stretch lengths for the direct comparison: single balls, odd and even lengths (the
/// pending half of Three-Choice and of (1+β) carries over between calls), long stretches.
const STRETCHES: [u64; 8] = [1, 1, 2, 3, 17, 1000, 4096, 10_001];

/// Level 1: `kernel` (a rule's `run_kernel`) and the `place` loop of `reference` on fresh
/// unit loads with n bins, from the same seed, stretch by stretch. Returns whether
/// everything observable matched: loads after each stretch, samples, the next two words of
/// the generator, and the next sample and coin from the context.
fn kernel_matches_place<K: Rule, P: Rule>(kernel: K, reference: P, n: usize, seed: u64) -> bool {
    kernel_matches_place_from(kernel, reference, n, || sim_rng(seed))
}

/// [`kernel_matches_place`] with two copies of the generator `rng()`.
fn kernel_matches_place_from<K: Rule, P: Rule, G: RngCore>(
    mut kernel: K,
    mut reference: P,
    n: usize,
    rng: impl Fn() -> G,
) -> bool {
    let (mut ka, mut pa) = (UnitLoads::new(n, false), UnitLoads::new(n, false));
    let (mut kr, mut pr) = (rng(), rng());
    let (mut kc, mut pc) = (Ctx::new(n), Ctx::new(n));
    for &k in &STRETCHES {
        assert!(kernel.run_kernel(&mut ka, k, &mut kr, &mut kc), "no kernel ran");
        for _ in 0..k {
            let p = reference.place(&pa, &Ranks::Unused, &mut pr, &mut pc);
            assert_eq!(p.balls, 1);
            pa.add(p.bin, ());
        }
        if ka.loads() != pa.loads() || ka.gap() != pa.gap() || ka.total() != pa.total() {
            return false;
        }
    }
    kc.samples == pc.samples
        && kc.sample(&mut kr) == pc.sample(&mut pr)
        && kc.coin(&mut kr) == pc.coin(&mut pr)
        && kr.next_u64() == pr.next_u64()
        && kr.next_u32() == pr.next_u32()
}

#[test]
fn kernels_make_the_choices_of_place_and_leave_the_same_state() {
    for (name, p) in kernel_rules() {
        for n in [1usize, 2, 3, 7, 64, 1000, 10_000] {
            for seed in 0..3u64 {
                let rule = rule_of(&p);
                assert!(kernel_matches_place(rule, rule, n, seed), "{name} n={n} seed={seed}");
            }
        }
    }
}

/// A generator whose 32-bit halves are zero far more often than by chance (each with
/// probability 1/8, decided by a second word of the simulation generator): a zero half is
/// a Lemire product whose low word is below n, so the kernels' rare paths (a sample that
/// may be rejected, a rejection when 2³² mod n > 0) run thousands of times a test instead
/// of with probability n/2³² a sample.
struct ZeroHalves(ballast_core::SimRng);

impl RngCore for ZeroHalves {
    fn next_u64(&mut self) -> u64 {
        let select = self.0.next_u64();
        let mut w = self.0.next_u64();
        if select & 7 == 0 {
            w &= !0xFFFF_FFFF;
        }
        if select & (7 << 3) == 0 {
            w &= 0xFFFF_FFFF;
        }
        w
    }
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        rand::rand_core::impls::fill_bytes_via_next(self, dst);
    }
}

/// Power, checked by hand (a mutation is not kept as code): with `Ctx::draw_two` accepting
/// every fresh word without the rejection check, this test fails and
/// `kernels_make_the_choices_of_place_and_leave_the_same_state` still passes.
#[test]
fn kernels_match_place_through_rejections() {
    for (name, p) in kernel_rules() {
        // 2³² mod n: 1 for n = 3, 0 for 64 (no rejection, but the slow path), 296 for 1000.
        for n in [3usize, 64, 1000] {
            for seed in 0..2u64 {
                let rule = rule_of(&p);
                let rng = || ZeroHalves(sim_rng(seed));
                assert!(kernel_matches_place_from(rule, rule, n, rng), "{name} n={n} seed={seed}");
            }
        }
    }
}

/// Two-Choice with a deliberately wrong kernel, to show the checks have power: the
/// decisions of `place` are right (random ties), the kernel is wrong in the way `bug` says.
#[derive(Clone, Copy)]
enum Bug {
    /// Ties go to the first sample (no coin is drawn).
    TiesToFirst,
    /// The second sample comes from `below` (a fresh 32-bit draw) instead of the next
    /// 32-bit half: the same law, another stream.
    SecondFromBelow,
}

#[derive(Clone, Copy)]
struct WrongTwoChoice(Bug);

impl Rule for WrongTwoChoice {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        TwoChoice { tie: TieBreak::Random }.place(s, r, rng, ctx)
    }
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(u) = s.plain_unit() else { return false };
        let n = u.n() as u64;
        for _ in 0..balls {
            let a = ctx.sample(rng);
            let b = match self.0 {
                Bug::TiesToFirst => ctx.sample(rng),
                Bug::SecondFromBelow => {
                    ctx.samples += 1;
                    below(rng, n) as usize
                }
            };
            let (la, lb) = (u.load(a), u.load(b));
            let take_b = match self.0 {
                Bug::TiesToFirst => lb < la,
                Bug::SecondFromBelow => lb < la || (lb == la && ctx.coin(rng)),
            };
            u.add(if take_b { b } else { a }, ());
        }
        true
    }
}

#[test]
fn wrong_kernels_are_told_apart_from_place() {
    for bug in [Bug::TiesToFirst, Bug::SecondFromBelow] {
        let right = TwoChoice { tie: TieBreak::Random };
        assert!(!kernel_matches_place(WrongTwoChoice(bug), right, 64, 1), "direct check");
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 64, 20_000).engine(Engine::Bins);
        let (mut fast, mut slow) = (Snapshots::default(), Snapshots::default());
        let state = || UnitLoads::new(64, false);
        run_rule_observed(&spec, state(), WrongTwoChoice(bug), &mut sim_rng(1), &mut fast);
        run_rule_straightforward(&spec, state(), WrongTwoChoice(bug), &mut sim_rng(1), &mut slow);
        assert_ne!(fast.0, slow.0, "engine check");
    }
}

/// The loads at every observation point; not a per-ball observer, so the kernels run.
#[derive(Default)]
struct Snapshots(Vec<Vec<u32>>);

impl Observer for Snapshots {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.0.push((0..s.n()).map(|i| Into::<f64>::into(s.load(i)) as u32).collect());
    }
}

/// Level 2: the whole run through the engine and through `simulate_ball_by_ball`.
fn engine_matches_reference(spec: &RunSpec, seed: u64) -> bool {
    let (mut r1, mut r2) = (sim_rng(seed), sim_rng(seed));
    let (mut o1, mut o2) = (Snapshots::default(), Snapshots::default());
    let a = simulate_observed(spec, &mut r1, &mut o1).expect("valid");
    let b = simulate_ball_by_ball(spec, &mut r2, &mut o2).expect("valid");
    a == b && o1.0 == o2.0 && r1.next_u64() == r2.next_u64()
}

#[test]
fn engine_runs_equal_the_straightforward_loop() {
    // (n, m, observe every, record the trajectory)
    let settings = [
        (1u64, 50u64, None, false),
        (2, 1000, None, false),
        (5, 2000, Some(7), true),
        (64, 30_000, None, false),
        (64, 30_000, Some(1000), true),
        (1000, 300, None, false),
        (10_007, 200_000, Some(65_536), true),
    ];
    for (name, p) in kernel_rules() {
        for &(n, m, every, record) in &settings {
            for seed in 0..3u64 {
                let mut spec = RunSpec::new(p.clone(), n, m).engine(Engine::Bins);
                spec.observe_every = every;
                spec.record_trajectory = record;
                assert!(
                    engine_matches_reference(&spec, seed),
                    "{name} n={n} m={m} every={every:?} seed={seed}"
                );
            }
        }
    }
}

/// The final load vector of a run on n = 3 bins as one category: `x0 + 7·x1` (m = 6, so
/// each load is at most 6 and x2 = 6 − x0 − x1).
#[derive(Default)]
struct Final(usize);

impl Observer for Final {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let x = |i| Into::<f64>::into(s.load(i)) as usize;
        self.0 = x(0) + 7 * x(1);
    }
}

const LAW_RUNS: u64 = 20_000;
const LAW_N: u64 = 3;
const LAW_M: u64 = 6;

/// Histogram of the final load vectors of `LAW_RUNS` runs of `run(seed)`.
fn vector_histogram(seed: u64, mut run: impl FnMut(u64) -> usize) -> Vec<u64> {
    let mut h = vec![0u64; 49];
    for r in 0..LAW_RUNS {
        h[run(derive_seed(seed, &[r]))] += 1;
    }
    h
}

/// Through the engine (kernels on).
fn kernel_path(p: &ProcessSpec, seed: u64) -> Vec<u64> {
    let spec = RunSpec::new(p.clone(), LAW_N, LAW_M).engine(Engine::Bins);
    vector_histogram(seed, |s| {
        let mut f = Final::default();
        simulate_observed(&spec, &mut sim_rng(s), &mut f).expect("valid");
        f.0
    })
}

/// Through the straightforward loop, with `rule`.
fn straightforward<P: Rule + Copy>(rule: P, seed: u64) -> Vec<u64> {
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, LAW_N, LAW_M).engine(Engine::Bins);
    vector_histogram(seed, |s| {
        let mut f = Final::default();
        run_rule_straightforward(
            &spec,
            UnitLoads::new(LAW_N as usize, false),
            rule,
            &mut sim_rng(s),
            &mut f,
        );
        f.0
    })
}

fn chi2(a: &[u64], b: &[u64]) -> (f64, usize, f64) {
    let (stat, df) = chi2_two_sample(a, b);
    (stat, df, chi2_critical(df))
}

/// Level 3 for every kernel rule: seeds 1 (kernel path) and 2 (straightforward loop).
#[test]
fn kernel_law_equals_the_straightforward_law_at_n_3() {
    for (name, p) in kernel_rules() {
        let (stat, df, crit) = chi2(&kernel_path(&p, 1), &straightforward(rule_of(&p), 2));
        assert!(stat < crit, "{name}: chi2 = {stat:.1} on {df} df, critical {crit:.1}");
    }
}

/// Two-Choice whose second sample is moved from the last bin to the first: a biased index.
#[derive(Clone, Copy)]
struct BiasedSecond;

impl Rule for BiasedSecond {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let a = ctx.sample(rng);
        let b = ctx.sample(rng);
        let b = if b == s.n() - 1 { 0 } else { b };
        let (la, lb) = (s.load(a), s.load(b));
        Placement::one(if lb < la || (lb == la && ctx.coin(rng)) { b } else { a })
    }
}

/// Power of level 3: the kernel path of Two-Choice against two wrong laws, seeds 1 and 3:
/// ties to the lowest index (bin 0 wins all its ties, so its load is stochastically larger)
/// and the biased second sample. Both must be rejected at `common::ALPHA`.
#[test]
fn the_law_check_rejects_wrong_variants() {
    let kernel = kernel_path(&ProcessSpec::DChoice { d: 2 }, 1);
    let lowest = straightforward(TwoChoice { tie: TieBreak::LowestIndex }, 3);
    let (stat, df, crit) = chi2(&kernel, &lowest);
    assert!(stat > crit, "lowest-index ties: chi2 = {stat:.1} on {df} df, critical {crit:.1}");
    let biased = straightforward(BiasedSecond, 3);
    let (stat, df, crit) = chi2(&kernel, &biased);
    assert!(stat > crit, "biased index: chi2 = {stat:.1} on {df} df, critical {crit:.1}");
}

/// (balls, cap) stretches for the multi-ball kernels: the engine passes the balls to the
/// next observation point and the balls left to m (`u64::MAX` when the stopping rule
/// finishes steps). Caps equal to the stretch cut the last step like the end of a run.
const STEP_STRETCHES: [(u64, u64); 9] = [
    (1, 1),
    (1, u64::MAX),
    (2, 2),
    (3, 100),
    (17, 17),
    (1000, u64::MAX),
    (4096, 4097),
    (10_001, 10_001),
    (5, 5),
];

/// Level 1 for multi-ball rules: `run_kernel_steps` against the engine's loop of `place`
/// (whole steps until `balls` are placed, each cut at `cap`; with `cap = u64::MAX`, the
/// engine's `finish`, a Tight-Packing round is completed), stretch by stretch: the same
/// balls and steps, loads, samples, and generator and coin-buffer state afterwards. Loads
/// with the minimum set for Tight-Packing (`min_set`), as the engine keeps them.
fn steps_match_place<K: Rule, P: Rule>(
    mut kernel: K,
    mut reference: P,
    n: usize,
    seed: u64,
    min_set: bool,
) -> bool {
    let fresh = || {
        let u = UnitLoads::new(n, false);
        if min_set {
            u.with_min_set()
        } else {
            u
        }
    };
    let (mut ka, mut pa) = (fresh(), fresh());
    let (mut kr, mut pr) = (sim_rng(seed), sim_rng(seed));
    let (mut kc, mut pc) = (Ctx::new(n), Ctx::new(n));
    for &(balls, cap) in &STEP_STRETCHES {
        let got = kernel.run_kernel_steps(&mut ka, balls, cap, &mut kr, &mut kc).expect("kernel");
        let mut want = KernelRun { balls: 0, steps: 0 };
        let finish = cap == u64::MAX;
        while want.balls < cap && (want.balls < balls || (finish && reference.in_round())) {
            let continuing = reference.in_round();
            let p = reference.place(&pa, &Ranks::Unused, &mut pr, &mut pc);
            let k = u64::from(p.balls).min(cap - want.balls);
            for _ in 0..k {
                pa.add(p.bin, ());
            }
            want.balls += k;
            want.steps += u64::from(!continuing);
        }
        if kernel.in_round() != reference.in_round() {
            return false;
        }
        if got != want || ka.loads() != pa.loads() || ka.gap() != pa.gap() {
            return false;
        }
        if ka.total() != pa.total() {
            return false;
        }
    }
    kc.samples == pc.samples
        && kc.sample(&mut kr) == pc.sample(&mut pr)
        && kc.coin(&mut kr) == pc.coin(&mut pr)
        && kr.next_u64() == pr.next_u64()
}

#[test]
fn multi_ball_kernels_make_the_steps_of_place() {
    for (name, p) in filling_rules() {
        for n in [1usize, 2, 3, 7, 64, 1000, 10_000] {
            for seed in 0..3u64 {
                let rule = rule_of(&p);
                let min_set = matches!(p, ProcessSpec::TightPacking { .. });
                assert!(
                    steps_match_place(rule, rule, n, seed, min_set),
                    "{name} n={n} seed={seed}"
                );
            }
        }
    }
}

/// Level 2 for multi-ball rules: observation points inside steps, m not a multiple of
/// anything, both stopping rules (with `finish` a run places more than m balls).
#[test]
fn multi_ball_engine_runs_equal_the_straightforward_loop() {
    let settings = [
        (1u64, 50u64, None, false),
        (2, 1001, None, false),
        (5, 2003, Some(7), true),
        (64, 30_001, None, false),
        (64, 30_000, Some(999), true),
        (1000, 301, None, false),
        (10_007, 200_003, Some(65_537), true),
    ];
    for (name, p) in filling_rules() {
        for stop in [Stop::Truncate, Stop::Finish] {
            for &(n, m, every, record) in &settings {
                for seed in 0..3u64 {
                    let mut spec = RunSpec::new(p.clone(), n, m).engine(Engine::Bins);
                    spec.observe_every = every;
                    spec.record_trajectory = record;
                    spec.stop = stop;
                    assert!(
                        engine_matches_reference(&spec, seed),
                        "{name} {stop:?} n={n} m={m} every={every:?} seed={seed}"
                    );
                }
            }
        }
    }
}

/// Level 3 for multi-ball rules (truncated at m = 6, so the final vector is one of the 28).
#[test]
fn multi_ball_kernel_law_equals_the_straightforward_law_at_n_3() {
    for (name, p) in filling_rules() {
        let (stat, df, crit) = chi2(&kernel_path(&p, 1), &straightforward(rule_of(&p), 2));
        assert!(stat < crit, "{name}: chi2 = {stat:.1} on {df} df, critical {crit:.1}");
    }
}

/// Threshold(f) whose kernel accepts the first sample when `x < f` instead of `x <= f`; its
/// `place` is the right rule.
#[derive(Clone, Copy)]
struct StrictThreshold(f64);

impl Rule for StrictThreshold {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Thinning { accept: Accept::AtMost(self.0) }.place(s, r, rng, ctx)
    }
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(u) = s.plain_unit() else { return false };
        for _ in 0..balls {
            let a = ctx.sample(rng);
            let i = if f64::from(u.load(a)) < self.0 { a } else { ctx.sample(rng) };
            u.add(i, ());
        }
        true
    }
}

/// Packing whose kernel does not cut the last step at m (it ignores `cap`).
#[derive(Clone, Copy)]
struct UncutPacking;

impl Rule for UncutPacking {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Filling::Packing { offset: 1 }.place(s, r, rng, ctx)
    }
    fn run_kernel_steps<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        _cap: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Option<KernelRun> {
        Filling::Packing { offset: 1 }.run_kernel_steps(s, balls, u64::MAX, rng, ctx)
    }
}

/// Power for the new kernels: a threshold compared with `<` is told apart by the direct and
/// the engine checks, and its law (that of Threshold(0) on integer loads) is rejected by the
/// chi-square test at n = 3 (seeds 1 and 3); Packing that overshoots m is told apart by the
/// direct and the engine checks.
#[test]
fn wrong_threshold_and_packing_kernels_are_rejected() {
    let right = Thinning { accept: Accept::AtMost(1.0) };
    assert!(!kernel_matches_place(StrictThreshold(1.0), right, 64, 1), "direct check");
    let spec = RunSpec::new(ProcessSpec::Threshold { f: 1.0 }, 64, 20_000).engine(Engine::Bins);
    let (mut fast, mut slow) = (Snapshots::default(), Snapshots::default());
    let state = || UnitLoads::new(64, false);
    run_rule_observed(&spec, state(), StrictThreshold(1.0), &mut sim_rng(1), &mut fast);
    run_rule_straightforward(&spec, state(), StrictThreshold(1.0), &mut sim_rng(1), &mut slow);
    assert_ne!(fast.0, slow.0, "engine check");
    let kernel = kernel_path(&ProcessSpec::Threshold { f: 1.0 }, 1);
    let wrong = straightforward(Thinning { accept: Accept::AtMost(0.0) }, 3);
    let (stat, df, crit) = chi2(&kernel, &wrong);
    assert!(stat > crit, "x < 1 for x <= 1: chi2 = {stat:.1} on {df} df, critical {crit:.1}");

    let packing = Filling::Packing { offset: 1 };
    assert!(!steps_match_place(UncutPacking, packing, 64, 1, false), "direct check");
    let spec = RunSpec::new(ProcessSpec::Packing { offset: 1 }, 64, 20_001).engine(Engine::Bins);
    let a = run_rule_observed(&spec, state(), UncutPacking, &mut sim_rng(1), &mut ());
    let b = run_rule_straightforward(&spec, state(), UncutPacking, &mut sim_rng(1), &mut ());
    assert_ne!(a, b, "engine check");
    assert_eq!(b.balls, 20_001);
}
