//! Two-Thinning with a threshold that is a formula of time and load
//! (`docs/processes.md#formula_threshold`): sample `i1`; the ball stays there if its load is
//! at most `f(t, n, avg)`, else it goes to a fresh uniform sample.
//!
//! The variables ([`VARS`]):
//! - `t`: balls the process placed before this one (0 for the first ball; a start state's
//!   balls are not counted). In the batched setting, the balls before the batch.
//! - `n`: the number of bins.
//! - `avg`: the average load `W/n` of the loads the decision sees (the current loads; in the
//!   batched setting those of the batch start), start state and ball weights included.
//!
//! So in the batched setting `t` and `avg` are frozen at the batch start, like the loads the
//! decisions read. The acceptance test is `threshold`'s (`LoadState::at_most`), so a constant
//! formula `f = c` draws exactly what `threshold {f = c}` draws, and `f = avg` exactly what
//! `mean_thinning {strict = false}` draws (for loads whose `W/n` is a correctly rounded
//! double that no other load level rounds onto: every run of practical size). A formula that
//! evaluates to NaN accepts no first sample.
//!
//! The formula is parsed once ([`Formula`]); at the first decision `n` is bound (what
//! depends on `n` only is computed then) and the result compiled to closures
//! ([`Formula::compiled`], the interpreter's values bit for bit); it is evaluated once per
//! decision whose `t` or
//! `W` differs from the previous one (once per ball sequentially, once per batch); a formula
//! in neither `t` nor `avg` is evaluated once per run.

use rand::RngCore;

use crate::formula::{Compiled, Formula};
use crate::loads::LoadState;
use crate::process::{Ctx, Placement, Ranks, Rule};

/// The variables of the threshold formula, in evaluation order.
pub const VARS: &[&str] = &["t", "n", "avg"];

/// Reads the threshold formula of `formula_threshold`.
pub fn parse(src: &str) -> Result<Formula, String> {
    Formula::parse(src, VARS)
}

/// Refuses a formula whose value is NaN or infinite at a probe of its domain for a run of
/// `m` balls into `n` bins of mean weight `mean`: `t` at the first ball, the second, the
/// middle one and the last (`0`, `1`, `⌊(m − 1)/2⌋`, `m − 1`), each with `avg = 0` and with
/// the average the balls before it bring on average, `t·mean/n`. The values are the rule's
/// own ([`Formula::eval`]). The error names the value and the probe.
///
/// ```
/// use ballast_core::formula_threshold::{check_probes, parse};
/// assert!(check_probes(&parse("avg + sqrt(ln(n))").unwrap(), 100, 1000, 1.0).is_ok());
/// let e = check_probes(&parse("1/0").unwrap(), 100, 1000, 1.0).unwrap_err();
/// assert!(e.to_string().contains("inf at t = 0, n = 100, avg = 0"), "{e}");
/// ```
pub fn check_probes(f: &Formula, n: u64, m: u64, mean: f64) -> Result<(), crate::Error> {
    let last = m.saturating_sub(1);
    let mut ts = vec![0, 1.min(last), last / 2, last];
    ts.dedup();
    let nf = n as f64;
    let mut stack = Vec::new();
    for t in ts {
        let tf = t as f64;
        for avg in [0.0, tf * mean / nf] {
            let v = f.eval(&[tf, nf, avg], &mut stack);
            if !v.is_finite() {
                return Err(crate::Error::invalid(
                    "f",
                    format!("\"{}\" ({v} at t = {t}, n = {n}, avg = {avg})", f.source()),
                    "a formula with a finite value at every ball (probed at t = 0, 1, (m - 1)/2 \
                     and m - 1, with avg = 0 and avg = t·mean/n)",
                ));
            }
        }
    }
    Ok(())
}

/// The rule: accept the first sample when its load is at most the formula's value.
#[derive(Clone, Debug)]
pub struct FormulaThreshold<'a> {
    f: &'a Formula,
    /// `f` with `n` fixed and what depends on `n` only computed (at the first decision),
    /// compiled ([`Formula::compiled`]: the interpreter's values, bit for bit).
    bound: Option<Compiled>,
    /// `(t, W)` of the last evaluation and its value.
    last: Option<(u64, u64, f64)>,
    /// The value of a formula in neither `t` nor `avg` (once `n` is bound).
    constant: Option<f64>,
}

impl<'a> FormulaThreshold<'a> {
    /// The rule of formula `f` (parsed with [`VARS`]).
    pub fn new(f: &'a Formula) -> Self {
        Self { f, bound: None, last: None, constant: None }
    }

    /// The threshold for the decision at `t` balls on state `s`.
    #[inline]
    pub fn threshold<S: LoadState>(&mut self, s: &S, t: u64) -> f64 {
        if let Some(c) = self.constant {
            return c;
        }
        if self.bound.is_none() {
            let n = s.n() as f64;
            let f = self.f.bind("n", n);
            if !f.uses("t") && !f.uses("avg") {
                let c = f.eval(&[0.0, n, 0.0], &mut Vec::new());
                self.constant = Some(c);
                return c;
            }
            self.bound = Some(f.compiled());
        }
        let w = s.total();
        match self.last {
            Some((lt, lw, v)) if lt == t && lw == w.to_bits() => v,
            _ => {
                let n = s.n() as f64;
                let f = self.bound.as_ref().expect("bound above");
                let v = f.eval(&[t as f64, n, s.average()]);
                self.last = Some((t, w.to_bits(), v));
                v
            }
        }
    }
}

impl Rule for FormulaThreshold<'_> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        // Both samples at once, as two-thinning draws them (`Thinning::place`); the second is
        // counted only when it gets the ball.
        let (i1, i2) = ctx.sample_two(rng);
        let f = self.threshold(s, ctx.balls);
        let ok = s.at_most(i1, f);
        ctx.samples -= u64::from(ok);
        Placement::one(if ok { i1 } else { i2 })
    }
}
