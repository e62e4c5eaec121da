//! Two-thinning (Threshold, Mean-Thinning, Relative-Threshold) as a cut on the first
//! sample's load, for the sequential ball loop of the level engine
//! (`docs/level-engine.md#two-thinning`).
//!
//! A thinning rule keeps the ball at its first sample when the sample's load `x` passes a
//! test of `x`, the total `W` and `n` ([`holds`]), and otherwise sends it to a second,
//! fresh sample. Each of the three tests is monotone in both arguments: at a given `W` it
//! holds for every load below a cut `T(W)` and for none from it, and `T(W)` never falls
//! as `W` grows (`x <= f` does not read `W`; `n·x < W` and `n·x <= W` relax as `W` grows;
//! Relative-Threshold's `(n·x − W)/n < f` is computed as an exact integer rounded once
//! to `f64` and divided by `n`, and both steps keep the order). So the ball loop keeps the
//! cut and the first total at which it rises ([`ThinCut`]): a ball costs one comparison,
//! and the cut is searched again only when the total reaches that point (about once per
//! `n` balls for the averages, never for a fixed threshold). The searches evaluate
//! [`holds`] itself, the same expression the generic rule evaluates on the level state, so
//! the cut gives exactly the rule's decisions (tested at every total of a range, and at
//! totals near 2⁶⁰).

use crate::loads::gap_unit;
use crate::process::Accept;

/// Whether the first sample, at load `x`, keeps the ball when `w` balls are in `n` bins: the
/// test of [`crate::process::Thinning`] as the level state evaluates it
/// ([`crate::LoadState::at_most`], `below_average`, `normalized`).
pub(crate) fn holds(accept: Accept, x: u64, w: u64, n: u64) -> bool {
    match accept {
        Accept::AtMost(f) => x as f64 <= f,
        Accept::BelowAverage { strict } => {
            let lhs = u128::from(n) * u128::from(x);
            if strict {
                lhs < u128::from(w)
            } else {
                lhs <= u128::from(w)
            }
        }
        Accept::BelowAveragePlus(f) => gap_unit(x, w, n) < f,
    }
}

/// The cut of a thinning test at the current total: loads below `keep_below` keep the ball
/// at every total below `w_next`.
#[derive(Clone, Debug)]
pub(crate) struct ThinCut {
    accept: Accept,
    n: u64,
    /// The smallest load the test rejects (`u64::MAX`: every load is kept).
    keep_below: u64,
    /// The smallest total at which `keep_below` passes the test (`u64::MAX`: never).
    w_next: u64,
}

impl ThinCut {
    /// The cut of `accept` on `n` bins at total `w`.
    pub(crate) fn new(accept: Accept, n: u64, w: u64) -> Self {
        let mut cut = Self { accept, n, keep_below: 0, w_next: 0 };
        cut.advance(w);
        cut
    }

    /// Whether a first sample at load `x` keeps the ball at total `w`. Totals must not
    /// decrease from one call to the next (the loop's total only grows).
    #[inline(always)]
    pub(crate) fn keeps(&mut self, x: u64, w: u64) -> bool {
        x < self.at(w).0
    }

    /// The cut at total `w`: the smallest load the test rejects, and the smallest total
    /// from which it may differ (the chunk step keeps the cut fixed within a chunk, so it
    /// ends chunks there). Totals must not decrease from one call to the next.
    #[inline(always)]
    pub(crate) fn at(&mut self, w: u64) -> (u64, u64) {
        if w >= self.w_next {
            self.advance(w);
        }
        (self.keep_below, self.w_next)
    }

    /// Moves the cut to total `w`.
    #[cold]
    #[inline(never)]
    fn advance(&mut self, w: u64) {
        self.keep_below = self.first_rejected(w);
        self.w_next = self.next_total(w);
    }

    /// The smallest load the test rejects at total `w`, searched upwards from the current
    /// cut (a cut never falls as the total grows).
    fn first_rejected(&self, w: u64) -> u64 {
        let (accept, n) = (self.accept, self.n);
        let kept = |x: u64| holds(accept, x, w, n);
        let from = self.keep_below;
        debug_assert!(from == 0 || kept(from - 1), "totals only grow");
        if !kept(from) {
            return from;
        }
        gallop(from, |x| !kept(x)).unwrap_or(u64::MAX)
    }

    /// The smallest total above `w` at which the load `keep_below` passes the test
    /// (`u64::MAX`: at no total).
    fn next_total(&self, w: u64) -> u64 {
        let (accept, n, x) = (self.accept, self.n, self.keep_below);
        if x == u64::MAX {
            return u64::MAX;
        }
        gallop(w, |t| holds(accept, x, t, n)).unwrap_or(u64::MAX)
    }
}

/// The smallest `t > from` with `found(t)`, for a predicate false at `from` (or not asked
/// there) that stays true once true: steps of 1, 2, 4, … up to the first `t` where it
/// holds, then bisection. `None` if it is false at `u64::MAX`.
fn gallop(from: u64, found: impl Fn(u64) -> bool) -> Option<u64> {
    let (mut no, mut step) = (from, 1u64);
    let mut yes = loop {
        let t = no.saturating_add(step);
        if found(t) {
            break t;
        }
        if t == u64::MAX {
            return None;
        }
        no = t;
        step = step.saturating_mul(2);
    };
    while yes - no > 1 {
        let mid = no + (yes - no) / 2;
        if found(mid) {
            yes = mid;
        } else {
            no = mid;
        }
    }
    Some(yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts() -> Vec<Accept> {
        vec![
            Accept::AtMost(3.0),
            Accept::AtMost(2.5),
            Accept::AtMost(-1.0),
            Accept::AtMost(f64::NAN),
            Accept::AtMost(1e30),
            Accept::BelowAverage { strict: true },
            Accept::BelowAverage { strict: false },
            Accept::BelowAveragePlus(0.0),
            Accept::BelowAveragePlus(1.5),
            Accept::BelowAveragePlus(-0.75),
            Accept::BelowAveragePlus(1.0 / 3.0),
            Accept::BelowAveragePlus(f64::NAN),
        ]
    }

    /// The cut gives the test's answer at every load and every total, as the total grows
    /// by one (as in the ball loop) from a few starts, at small totals and near 2⁶⁰, where
    /// `f64` rounding of Relative-Threshold's `n·x − W` matters.
    #[test]
    fn cut_matches_the_test_at_every_total() {
        for accept in accepts() {
            for n in [1u64, 2, 3, 7, 1000, 3 << 30] {
                for w0 in [0u64, 5, 1 << 60, (1 << 60) + 12_345] {
                    let mut cut = ThinCut::new(accept, n, w0);
                    let mid = w0 / n;
                    let loads: Vec<u64> =
                        (0..8).chain(mid.saturating_sub(4)..mid + 8).chain([1 << 61]).collect();
                    for w in w0..w0 + 3 * n.min(1000) + 20 {
                        for &x in &loads {
                            assert_eq!(
                                cut.keeps(x, w),
                                holds(accept, x, w, n),
                                "{accept:?}, n = {n}, x = {x}, w = {w}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Jumps in the total (a cut built at one total and asked at a much larger one).
    #[test]
    fn cut_follows_jumps_of_the_total() {
        for accept in accepts() {
            let n = 10u64;
            let mut cut = ThinCut::new(accept, n, 0);
            for w in [0u64, 1, 99, 100, 101, 10_000, 10_009, 1 << 40, (1 << 40) + 7] {
                for x in (0..20).chain((w / n).saturating_sub(3)..w / n + 3) {
                    assert_eq!(cut.keeps(x, w), holds(accept, x, w, n), "{accept:?} {x} {w}");
                }
            }
        }
    }

    #[test]
    fn gallop_finds_the_first_true_point() {
        for target in [1u64, 2, 3, 17, 1 << 33, u64::MAX] {
            assert_eq!(gallop(0, |t| t >= target), Some(target));
        }
        assert_eq!(gallop(5, |t| t >= 3), Some(6));
        assert_eq!(gallop(0, |_| false), None);
    }
}
