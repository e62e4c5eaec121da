//! The `rule` process (`docs/processes.md#rule`): `d` samples drawn by the run's sampling
//! law, and a decision formula ([`Formula::parse_decision`]) whose value is the 1-based
//! position of the sample that gets the ball.
//!
//! The variables ([`VARS`]): `x1` … `x8`, the loads of the samples in draw order (only
//! `x1` … `xd` may be read); `avg`, the average load W/n the decision sees; `t`, the balls
//! placed before this one (batched: before the batch); `n`; `d`; and `u`, a uniform number
//! in [0, 1), drawn from the run's random numbers (53 bits of one word) after the samples,
//! only when the formula reads it. Two-Choice with random ties is
//! `if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))`.
//!
//! The formula is compiled once, to closures ([`Formula::compiled`]: the values of the
//! interpreter [`Formula::eval`], bit for bit), and evaluated once per ball. A value that is
//! not an integer in 1..=d is refused at validation where a probe of the formula's range finds it
//! ([`check_probes`]); one that only a run finds stops the run with the values that gave it
//! (a panic: the rule cannot place that ball).

use rand::RngCore;

use crate::formula::{Compiled, Formula};
use crate::loads::LoadState;
use crate::process::distinct::SparseDraw;
use crate::process::{Ctx, Placement, Ranks, Rule};

/// The variables of a rule formula, in evaluation order.
pub const VARS: &[&str] =
    &["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "avg", "t", "n", "d", "u"];

/// The most samples a rule draws.
pub const MAX_D: u32 = crate::spec::RULE_MAX_D;

const AVG: usize = 8;
const T: usize = 9;
const N: usize = 10;
const D: usize = 11;
const U: usize = 12;

/// Reads a rule formula for `d` samples: the decision grammar in [`VARS`], and no `xk`
/// with `k > d`.
pub fn parse(src: &str, d: u32) -> Result<Formula, String> {
    let f = Formula::parse_decision(src, VARS)?;
    if let Some(k) = (d + 1..=MAX_D).find(|k| f.uses(VARS[*k as usize - 1])) {
        return Err(format!("formula \"{src}\" reads x{k}, but d = {d} samples are drawn"));
    }
    Ok(f)
}

/// Refuses a formula whose value is not an integer in 1..=d at a probe of its range: every
/// combination of sample loads in {0, 1, 2, 3} (in {0, 1} from d = 5), with `avg` 0 and the
/// loads' mean, `t` at the first and last ball of a run of `m`, and `u` in {0, 0.25, 0.5,
/// 0.75, 0.999}. The error names the probe.
pub fn check_probes(f: &Formula, d: u32, n: u64, m: u64) -> Result<(), crate::Error> {
    let levels: u64 = if d <= 4 { 4 } else { 2 };
    let mut values = [0.0; VARS.len()];
    values[N] = n as f64;
    values[D] = f64::from(d);
    let mut stack = Vec::new();
    for code in 0..levels.pow(d) {
        let mut c = code;
        for x in values.iter_mut().take(d as usize) {
            *x = (c % levels) as f64;
            c /= levels;
        }
        let mean = values[..d as usize].iter().sum::<f64>() / f64::from(d);
        for (avg, t, u) in probes(mean, m) {
            (values[AVG], values[T], values[U]) = (avg, t, u);
            let v = f.eval(&values, &mut stack);
            if position(v, d).is_none() {
                return Err(crate::Error::Refused(format!(
                    "rule formula \"{}\" gives {v} at {}: expected an integer in 1..={d} (the \
                     position of the chosen sample)",
                    f.source(),
                    describe(&values, d)
                )));
            }
        }
    }
    Ok(())
}

fn probes(mean: f64, m: u64) -> impl Iterator<Item = (f64, f64, f64)> {
    let ts = [0.0, m.saturating_sub(1) as f64];
    [0.0, mean].into_iter().flat_map(move |avg| {
        ts.into_iter()
            .flat_map(move |t| [0.0, 0.25, 0.5, 0.75, 0.999].into_iter().map(move |u| (avg, t, u)))
    })
}

fn describe(values: &[f64], d: u32) -> String {
    let xs: Vec<String> = (0..d as usize).map(|i| format!("{} = {}", VARS[i], values[i])).collect();
    format!("{}, avg = {}, t = {}, u = {}", xs.join(", "), values[AVG], values[T], values[U])
}

/// The 0-based sample index of a formula value, if it is an integer in 1..=d.
#[inline(always)]
fn position(v: f64, d: u32) -> Option<usize> {
    // `v as i64` truncates; it equals v exactly when v is an integer (no call to `trunc`,
    // which generic x86-64 has no instruction for; signed conversions are one instruction
    // each way). NaN fails `v >= 1.0`.
    let i = v as i64;
    (v >= 1.0 && v <= f64::from(d) && i as f64 == v).then(|| i as usize - 1)
}

/// The rule of one run.
pub struct RuleFormula<'a> {
    f: &'a Formula,
    /// `f` compiled (the same values, faster).
    compiled: Compiled,
    d: u32,
    reads_avg: bool,
    reads_u: bool,
    values: [f64; VARS.len()],
    /// `Some` without replacement: the draw of `d` distinct uniform bins.
    distinct: Option<SparseDraw>,
}

impl<'a> RuleFormula<'a> {
    /// The rule of `f` over `d` samples, drawn with or without `replacement`.
    pub fn new(f: &'a Formula, d: u32, replacement: bool) -> Self {
        let mut values = [0.0; VARS.len()];
        values[D] = f64::from(d);
        let (reads_avg, reads_u) = (f.uses("avg"), f.uses("u"));
        let distinct = (!replacement).then(|| SparseDraw::new(d));
        let compiled = f.compiled();
        Self { f, compiled, d, reads_avg, reads_u, values, distinct }
    }

    /// The 0-based position of the chosen sample when the samples' loads are in `x1` … `xd`
    /// of the values: sets `avg` (if read), `t`, `n`, and draws `u` (if read).
    #[inline(always)]
    fn decide<R: RngCore + ?Sized>(&mut self, avg: f64, n: f64, t: u64, rng: &mut R) -> usize {
        if self.reads_avg {
            self.values[AVG] = avg;
        }
        // Balls are below 2⁶³: the signed conversion (one instruction) gives the same value.
        self.values[T] = t as i64 as f64;
        self.values[N] = n;
        if self.reads_u {
            self.values[U] = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        }
        let v = self.compiled.eval(&self.values);
        match position(v, self.d) {
            Some(i) => i,
            None => panic!(
                "rule formula \"{}\" gives {v} at {}: expected an integer in 1..={}",
                self.f.source(),
                describe(&self.values, self.d),
                self.d
            ),
        }
    }

    /// The 0-based position chosen among samples that report the loads `xs` (the delay
    /// setting: loads of the past), with the current average load `avg` on `n` bins after `t`
    /// balls; draws `u` from `rng` if the formula reads it.
    pub fn choose_among<R: RngCore + ?Sized>(
        &mut self,
        xs: &[f64],
        avg: f64,
        n: f64,
        t: u64,
        rng: &mut R,
    ) -> usize {
        self.values[..xs.len()].copy_from_slice(xs);
        self.decide(avg, n, t, rng)
    }
}

impl Rule for RuleFormula<'_> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let d = self.d as usize;
        let mut bins = [0usize; MAX_D as usize];
        if let Some(draw) = &mut self.distinct {
            draw.start();
            for bin in bins.iter_mut().take(d) {
                *bin = draw.next(s.n() as u64, rng, ctx);
            }
        } else if d == 2 {
            // The bins of two calls of `Ctx::sample`, from one word where it can.
            (bins[0], bins[1]) = ctx.sample_two(rng);
        } else {
            for bin in bins.iter_mut().take(d) {
                *bin = ctx.sample(rng);
            }
        }
        for (x, &bin) in self.values.iter_mut().zip(&bins).take(d) {
            *x = s.load(bin).into();
        }
        let avg = if self.reads_avg { s.average() } else { 0.0 };
        let i = self.decide(avg, s.n() as f64, ctx.balls, rng);
        Placement::one(bins[i])
    }
}
