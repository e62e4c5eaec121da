//! The bin engine: one load per bin, sequential or batched, unit or weighted balls.
//!
//! [`simulate`] validates the spec, matches once on the weights and the process, and runs a
//! monomorphised loop ([`run_rule`]). The batched setting never copies the loads: decisions
//! read the loads as they were at the batch start because the batch's allocations are
//! buffered and applied together at its end, so a batch costs O(b) (plus O(n) for processes
//! that need frozen ranks). Weighted batches of d-Choice, (1+β) and One-Choice with at
//! least [`crate::weighted::SORTED_FROM`]`·n` balls go a batch at a time instead
//! ([`crate::weighted`]: same law, per-bin Gamma weight totals); [`simulate_ball_by_ball`]
//! keeps the ball-by-ball loop for them.

use rand::RngCore;

use crate::loads::{LoadState, UnitLoads, WeightedLoads};
pub use crate::observe::Observer;
use crate::observe::{record_samples, Counters, GapTracker, Schedule};
use crate::outcome::RunOutcome;
use crate::process::{Ctx, Ranks, Rule};
use crate::rng::sim_rng;
use crate::with_rule::WithRule;
use crate::{Error, RunSpec, Setting, Stop, Weights};

/// Runs `spec` with randomness from `rng`.
///
/// Errors only when the spec is invalid ([`RunSpec::validate`]).
pub fn simulate<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> Result<RunOutcome, Error> {
    simulate_observed(spec, rng, &mut ())
}

/// Runs `spec` like [`simulate`], calling `observer`'s hooks after every ball and at every
/// observation point.
///
/// The engine is `spec.engine`, with `auto` resolved by [`crate::level::resolve_engine`];
/// an explicit `levels` the level engine cannot simulate exactly is an
/// [`Error::Unsupported`]. The delay setting's loop calls every hook; `equalize`'s loops
/// call none, and refuse an observer of single balls ([`Observer::PER_BALL`]) with
/// [`Error::Unsupported`].
pub fn simulate_observed<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
) -> Result<RunOutcome, Error> {
    simulate_with(spec, rng, observer, true)
}

/// Runs `spec` like [`simulate_observed`], except that the bin engine places weighted
/// batches ball by ball even where it would use [`crate::weighted::simulate_sorted`], and
/// runs sequential balls through the generic loop even where a kernel
/// ([`crate::process::Rule::run_kernel`]) would take them, and the level engine runs
/// sequential d-Choice ball by ball even where it would use chunks
/// ([`crate::level::chunked`]), and `equalize` runs its reference loops
/// ([`crate::czumaj::simulate_equalize_reference`] and
/// [`crate::czumaj::simulate_equalize_levels_reference`]): the straightforward references
/// the fast paths are tested and benchmarked against. (The kernels and the equalize loops
/// give the same values; the sorted batches and the chunks the same law.)
pub fn simulate_ball_by_ball<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
) -> Result<RunOutcome, Error> {
    simulate_with(spec, rng, observer, false)
}

fn simulate_with<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
    fast: bool,
) -> Result<RunOutcome, Error> {
    spec.validate()?;
    if !spec.sampling.is_uniform() && !crate::registry::def_of(&spec.process).settings.biased {
        let name = crate::registry::def_of(&spec.process).name;
        return Err(Error::Unsupported(crate::sampling::unsupported_message(name, &spec.sampling)));
    }
    crate::registry::check_capacities_process(spec).map_err(|e| Error::Unsupported(e.message))?;
    if spec.churn.is_some() {
        use crate::churn::ChurnLoop;
        return match crate::level::resolve_engine(spec)? {
            crate::Engine::Levels => dispatch_to(
                spec,
                ChurnLoop::<_, _, crate::histogram::LevelLoads>::new(spec, rng, observer),
            ),
            _ => dispatch_to(spec, ChurnLoop::<_, _, UnitLoads>::new(spec, rng, observer)),
        };
    }
    if spec.dispatchers.is_some() {
        return dispatch_to(spec, crate::dispatchers::DispatchLoop::new(spec, rng, observer));
    }
    if let Setting::Delay { tau, mode } = spec.setting {
        return crate::delay::simulate_delay(spec, tau, mode, rng, observer);
    }
    if spec.process.reallocates() {
        if O::PER_BALL {
            return Err(Error::Unsupported(
                "equalize moves balls between the sampled bins, which an observer of single \
                 balls (a potential tracker) does not follow"
                    .into(),
            ));
        }
        let levels = crate::level::resolve_engine(spec)? == crate::Engine::Levels;
        return crate::kinds::reallocation(spec, crate::realloc::Loops { spec, rng, levels, fast });
    }
    if crate::level::resolve_engine(spec)? == crate::Engine::Levels {
        let chunking =
            if fast { crate::level::Chunking::Auto } else { crate::level::Chunking::Off };
        return crate::level::simulate_levels(spec, rng, observer, chunking);
    }
    let n = spec.n as usize;
    if !spec.capacities.is_unit() {
        // Normalised loads x_i / c_i for every rule (`docs/capacities.md`).
        let x = spec.start.unit_loads(n, rng).into_iter().map(f64::from).collect();
        let law = crate::loads::WeightSampler::new(spec.weights);
        let state = crate::capacity_loads::CapacityLoads::new(spec.capacities.values(n), x, law);
        let state = match spec.capacities.decide {
            crate::capacity::CapacityDecision::Normalised => state,
            crate::capacity::CapacityDecision::Raw => state.deciding_on_raw_loads(),
        };
        return Ok(dispatch(spec, state, rng, observer, fast));
    }
    let uses_ranks = crate::kinds::uses_ranks(&spec.process);
    let sequential = matches!(spec.setting, Setting::Sequential);
    match spec.weights {
        Weights::Unit => {
            let mut state = if spec.start.is_empty() {
                UnitLoads::new(n, uses_ranks && sequential)
            } else {
                UnitLoads::from_loads(spec.start.unit_loads(n, rng), uses_ranks && sequential)
            };
            if crate::kinds::keeps_min_set(&spec.process) {
                state = state.with_min_set();
            }
            Ok(dispatch(spec, state, rng, observer, fast))
        }
        Weights::Exp { .. } if fast && !O::PER_BALL && crate::weighted::prefers_sorted(spec) => {
            crate::weighted::simulate_sorted(spec, rng, observer)
        }
        w => {
            let state = WeightedLoads::of_law(n, w)
                .ok_or_else(|| Error::Unsupported(format!("weights {w:?}")))?;
            Ok(dispatch(spec, state, rng, observer, fast))
        }
    }
}

/// Runs `spec` with a [`crate::SimRng`] seeded from `seed` (see [`crate::sim_rng`]).
pub fn simulate_seeded(spec: &RunSpec, seed: u64) -> Result<RunOutcome, Error> {
    simulate(spec, &mut sim_rng(seed))
}

fn dispatch<S: LoadState, R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    state: S,
    rng: &mut R,
    observer: &mut O,
    kernels: bool,
) -> RunOutcome {
    dispatch_to(spec, Plain { spec, state, rng, observer, kernels })
}

/// The bin engine's loop ([`run_rule_impl`]) as a [`WithRule`].
struct Plain<'a, S, R: ?Sized, O> {
    spec: &'a RunSpec,
    state: S,
    rng: &'a mut R,
    observer: &'a mut O,
    kernels: bool,
}

impl<S: LoadState, R: RngCore + ?Sized, O: Observer> WithRule for Plain<'_, S, R, O> {
    type Out = RunOutcome;

    fn run<P: Rule>(self, rule: P) -> RunOutcome {
        run_rule_impl(self.spec, self.state, rule, self.rng, self.observer, self.kernels)
    }
}

/// Hands the spec's rule to `runner` (the bin engine's loop, or the churn and dispatcher
/// loops): the rule its kind supplies ([`crate::kinds`]).
fn dispatch_to<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
    crate::kinds::bins(spec, runner)
}

/// The generic hot loop for one rule and one load state, without instrumentation.
pub fn run_rule<S, P, R>(spec: &RunSpec, state: S, rule: P, rng: &mut R) -> RunOutcome
where
    S: LoadState,
    P: Rule,
    R: RngCore + ?Sized,
{
    run_rule_observed(spec, state, rule, rng, &mut ())
}

/// The generic hot loop for one rule and one load state, calling `observer`'s hooks. With
/// an observer that does not look at single balls ([`Observer::PER_BALL`] false), sequential
/// balls between observation points go through the rule's kernel if it has one
/// ([`Rule::run_kernel`]: same choices, same random numbers).
pub fn run_rule_observed<S, P, R, O>(
    spec: &RunSpec,
    state: S,
    rule: P,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome
where
    S: LoadState,
    P: Rule,
    R: RngCore + ?Sized,
    O: Observer,
{
    run_rule_impl(spec, state, rule, rng, observer, true)
}

/// [`run_rule_observed`] without the kernels: every ball through [`Rule::place`]. The
/// reference of the kernels' tests.
pub fn run_rule_straightforward<S, P, R, O>(
    spec: &RunSpec,
    state: S,
    rule: P,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome
where
    S: LoadState,
    P: Rule,
    R: RngCore + ?Sized,
    O: Observer,
{
    run_rule_impl(spec, state, rule, rng, observer, false)
}

/// The generic loop behind [`run_rule_observed`] and [`run_rule_straightforward`]: sets up
/// the run ([`RuleRun`]) and runs its setting's loop ([`RuleRun::sequential`],
/// [`RuleRun::batched`]).
fn run_rule_impl<S, P, R, O>(
    spec: &RunSpec,
    mut state: S,
    mut rule: P,
    rng: &mut R,
    observer: &mut O,
    kernels: bool,
) -> RunOutcome
where
    S: LoadState,
    P: Rule,
    R: RngCore + ?Sized,
    O: Observer,
{
    let n = state.n();
    // Biased sampling: samples through the alias table, and no kernels (they draw uniform
    // bins themselves).
    // Capacity-proportional sampling is an alias table over the capacities.
    let table = spec.sampling.table(n).or_else(|| {
        let c = &spec.capacities;
        c.table(&c.values(n))
    });
    let mut ctx = Ctx::new(n).with_alias(table.as_ref());
    let kernels = kernels && table.is_none();
    let mut run = RuleRun {
        spec,
        // Probes per step: always for the rules whose count varies by design, else on request.
        track: P::TRACK_SAMPLES || spec.record_probes,
        k_heavy: (rule.heavy_fraction() * n as f64).ceil() as u64,
        finish: spec.stop == Stop::Finish,
        per_step: Vec::new(),
        gaps: GapTracker::new(spec),
    };
    observer.on_start(&state);
    let (done, steps) = match spec.setting {
        Setting::Sequential => {
            run.sequential(&mut state, &mut rule, rng, &mut ctx, observer, kernels)
        }
        Setting::Delay { .. } => unreachable!("the delay setting runs in delay::simulate_delay"),
        Setting::Batched { b } => run.batched(b, &mut state, &mut rule, rng, &mut ctx, observer),
    };
    if spec.m == 0 {
        run.gaps.observe(&state, observer);
    }
    let samples_per_step = run.per_step;
    let counters =
        Counters { balls: done, samples: ctx.samples, steps, samples_per_step, moved: 0 };
    run.gaps.into_outcome(&state, counters)
}

/// One run of the generic loop ([`run_rule_impl`]): what its steps read and what they
/// record, whatever the setting. The loops return the balls placed and the steps taken (a
/// multi-ball step, or a whole Tight-Packing round, counts once).
struct RuleRun<'a> {
    spec: &'a RunSpec,
    /// Record the bin samples of every step in `per_step`.
    track: bool,
    /// Heavy bins of a rule that asks rank questions: ⌈heavy fraction · n⌉.
    k_heavy: u64,
    /// [`Stop::Finish`]: the multi-ball step that reaches m (or a batch end) is completed.
    finish: bool,
    /// Histogram of bin samples per step (when `track`).
    per_step: Vec<u64>,
    gaps: GapTracker,
}

impl RuleRun<'_> {
    /// The sequential setting: every step sees the current loads; the gap is observed at the
    /// points of [`Schedule`]. With `kernel`, whole stretches up to the next observation
    /// point go through the rule's kernel ([`Rule::run_kernel_steps`]) until it says it has
    /// none. Returns the balls placed and the steps taken.
    ///
    /// Called once per run; always inlined so that the hot loop compiles as one body with
    /// its caller, as before it was a function of its own.
    #[inline(always)]
    fn sequential<S, P, R, O>(
        &mut self,
        state: &mut S,
        rule: &mut P,
        rng: &mut R,
        ctx: &mut Ctx,
        observer: &mut O,
        kernel: bool,
    ) -> (u64, u64)
    where
        S: LoadState,
        P: Rule,
        R: RngCore + ?Sized,
        O: Observer,
    {
        let (m, finish, track) = (self.spec.m, self.finish, self.track);
        let ranks = if rule.uses_ranks() { Ranks::Live { k: self.k_heavy } } else { Ranks::Unused };
        let mut points = Schedule::new(self.spec);
        // Kernels take whole stretches between observation points; a rule without one
        // (or a state that is not plain unit loads) says so at the first call.
        let mut kernel = kernel && !O::PER_BALL && !track;
        let (mut done, mut steps) = (0u64, 0u64);
        while done < m || (finish && rule.in_round()) {
            if kernel && done < points.next() {
                // Whole steps up to the observation point (a multi-ball step may pass
                // it, as below), cut at m unless the stopping rule finishes them.
                let stretch = points.next() - done;
                let cap = if finish { u64::MAX } else { m - done };
                ctx.balls = done;
                if let Some(run) = rule.run_kernel_steps(state, stretch, cap, rng, ctx) {
                    done += run.balls;
                    steps += run.steps;
                    self.gaps.observe(&*state, observer);
                    points.advance(done);
                    continue;
                }
                kernel = false;
            }
            let before = ctx.samples;
            let continuing = rule.in_round();
            ctx.balls = done;
            let p = rule.place(&*state, &ranks, rng, ctx);
            steps += u64::from(!continuing);
            if track {
                record_samples(&mut self.per_step, ctx.samples - before);
            }
            // Multi-ball steps are truncated at the end of the run (exactly m balls)
            // unless the stopping rule finishes them.
            let k = if finish { u64::from(p.balls) } else { u64::from(p.balls).min(m - done) };
            for _ in 0..k {
                let inc = state.draw_inc(rng);
                state.add(p.bin, inc);
                observer.on_ball(&*state, p.bin, S::weight(inc));
            }
            done += k;
            if done >= points.next() && !(finish && rule.in_round()) {
                self.gaps.observe(&*state, observer);
                points.advance(done);
            }
        }
        (done, steps)
    }

    /// The batched setting: batches of b balls (the last one cut at m) whose steps read the
    /// loads of the batch start, frozen ranks included; a batch's balls are buffered and
    /// added at its end, and the gap is observed after every batch. Returns the balls placed
    /// and the steps taken.
    ///
    /// Called once per run; always inlined, as [`RuleRun::sequential`].
    #[inline(always)]
    fn batched<S, P, R, O>(
        &mut self,
        b: u64,
        state: &mut S,
        rule: &mut P,
        rng: &mut R,
        ctx: &mut Ctx,
        observer: &mut O,
    ) -> (u64, u64)
    where
        S: LoadState,
        P: Rule,
        R: RngCore + ?Sized,
        O: Observer,
    {
        let (m, finish, track) = (self.spec.m, self.finish, self.track);
        let mut pending: Vec<(u32, S::Inc)> = Vec::with_capacity(b.min(m) as usize);
        let (mut done, mut steps) = (0u64, 0u64);
        while done < m {
            let size = b.min(m - done);
            let ranks = if rule.uses_ranks() && self.k_heavy > 0 {
                let (threshold, cut) = state.rank_cut(self.k_heavy);
                Ranks::Frozen { threshold, cut }
            } else {
                Ranks::Unused
            };
            pending.clear();
            while (pending.len() as u64) < size || (finish && rule.in_round()) {
                let before = ctx.samples;
                let continuing = rule.in_round();
                // `done` counts the balls before this batch (applied at its end).
                ctx.balls = done;
                let p = rule.place(&*state, &ranks, rng, ctx);
                steps += u64::from(!continuing);
                if track {
                    record_samples(&mut self.per_step, ctx.samples - before);
                }
                // A multi-ball step is truncated at the batch end, unless the stopping
                // rule finishes it within this batch (on this batch's frozen loads).
                let k = if finish {
                    u64::from(p.balls)
                } else {
                    u64::from(p.balls).min(size - pending.len() as u64)
                };
                for _ in 0..k {
                    let inc = state.draw_inc(rng);
                    pending.push((p.bin as u32, inc));
                }
            }
            for &(i, inc) in &pending {
                state.add(i as usize, inc);
                observer.on_ball(&*state, i as usize, S::weight(inc));
            }
            done += pending.len() as u64;
            self.gaps.observe(&*state, observer);
        }
        (done, steps)
    }
}
