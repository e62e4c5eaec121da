//! Partial evaluation of a decision formula with every variable known but one
//! ([`Formula::residual`]): what the value is as a function of the free variable, when that
//! function is a constant or a single step `if(free < c, lo, hi)`.
//!
//! Exactness. Every known part is computed by the interpreter's own operations
//! ([`super::apply_binary`], [`super::Cmp::apply`], the `min`/`max` folds, `!`), on the same
//! operands, in the same order, so a constant is the double [`Formula::eval`] gives. A value
//! that depends on the free variable `u` is kept only as a *step*: `lo` where `u < c`, `hi`
//! elsewhere. Its sources are the comparisons of `u` with a known `k` (for every `u` that is
//! not NaN, as doubles):
//!
//! - `u < k` is the step at `k` with 1, 0, and `u >= k` the one with 0, 1 (`!(u < k)`);
//! - `u <= k` is `u < next_up(k)` (no double lies strictly between `k` and `next_up(k)`),
//!   and `u > k` its negation; `k = +∞` makes both constant;
//! - a NaN `k` makes all four 0; `k < u` is `u > k` and so on.
//!
//! Any operation on steps with the same `c` and on constants is a step with the same `c`:
//! below `c` every operand is its `lo`, above it its `hi`, so the operation applied to the
//! `lo`s and to the `hi`s gives the value on each side. `if(s, a, b)` with a step condition
//! takes, on each side of `c`, the branch the interpreter takes there (the side's condition
//! compared with 0), and that branch's value on that side. Anything else that reads `u` (an
//! arithmetic use of `u`, `==`, steps at two different points, a branch that is not a step)
//! is [`Residual::Unknown`]: the caller then evaluates the formula.

use super::{apply_binary, fold_max, fold_min, not_value, Cmp, Formula, Op};

/// What a formula's value is as a function of one free variable `u` (any double but NaN),
/// the others fixed ([`Formula::residual`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Residual {
    /// The value, whatever `u`.
    Const(f64),
    /// `lo` where `u < c`, `hi` elsewhere.
    Step {
        /// The point of the step.
        c: f64,
        /// The value where `u < c`.
        lo: f64,
        /// The value where `u >= c` (or `c` is NaN).
        hi: f64,
    },
    /// Some other function of `u`, or one partial evaluation does not resolve.
    Unknown,
}

/// A value while the code is evaluated.
#[derive(Clone, Copy, Debug)]
enum Abs {
    K(f64),
    /// The free variable itself.
    Free,
    Step {
        c: f64,
        lo: f64,
        hi: f64,
    },
    Unknown,
}

/// A step, or a constant when both sides are the same double.
fn step(c: f64, lo: f64, hi: f64) -> Abs {
    if lo.to_bits() == hi.to_bits() {
        Abs::K(lo)
    } else {
        Abs::Step { c, lo, hi }
    }
}

/// `op` applied to operands that are constants or steps at one point (`f` on their
/// values), or `Unknown`.
fn lift(args: &[Abs], f: impl Fn(&[f64]) -> f64) -> Abs {
    let mut at: Option<f64> = None;
    for a in args {
        match *a {
            Abs::K(_) => {}
            Abs::Step { c, .. } if at.is_none_or(|p| p.to_bits() == c.to_bits()) => at = Some(c),
            _ => return Abs::Unknown,
        }
    }
    let side = |below: bool| -> Vec<f64> {
        args.iter()
            .map(|a| match *a {
                Abs::K(v) => v,
                Abs::Step { lo, hi, .. } => {
                    if below {
                        lo
                    } else {
                        hi
                    }
                }
                _ => unreachable!("checked above"),
            })
            .collect()
    };
    match at {
        None => Abs::K(f(&side(true))),
        Some(c) => step(c, f(&side(true)), f(&side(false))),
    }
}

/// `u cmp k` (the free variable on the left) as a step.
fn compare_free(cmp: Cmp, k: f64) -> Abs {
    if k.is_nan() {
        return Abs::K(0.0);
    }
    match cmp {
        Cmp::Lt => step(k, 1.0, 0.0),
        Cmp::Ge => step(k, 0.0, 1.0),
        Cmp::Le if k == f64::INFINITY => Abs::K(1.0),
        Cmp::Gt if k == f64::INFINITY => Abs::K(0.0),
        Cmp::Le => step(k.next_up(), 1.0, 0.0),
        Cmp::Gt => step(k.next_up(), 0.0, 1.0),
        _ => Abs::Unknown,
    }
}

/// A comparison or logical operation of `a` and `b`.
fn compare(cmp: Cmp, a: Abs, b: Abs) -> Abs {
    let mirrored = match cmp {
        Cmp::Lt => Cmp::Gt,
        Cmp::Le => Cmp::Ge,
        Cmp::Gt => Cmp::Lt,
        Cmp::Ge => Cmp::Le,
        other => other,
    };
    match (a, b) {
        (Abs::Free, Abs::K(k)) => compare_free(cmp, k),
        (Abs::K(k), Abs::Free) => compare_free(mirrored, k),
        _ => lift(&[a, b], |v| f64::from(u8::from(cmp.apply(v[0], v[1])))),
    }
}

/// The value of `x` on one side of the step at `c` (`below`), if it is a constant or a step
/// at `c`.
fn side(x: Abs, c: f64, below: bool) -> Option<f64> {
    match x {
        Abs::K(v) => Some(v),
        Abs::Step { c: d, lo, hi } if d.to_bits() == c.to_bits() => {
            Some(if below { lo } else { hi })
        }
        _ => None,
    }
}

struct Partial<'a> {
    code: &'a [Op],
    values: &'a [f64],
    free: usize,
}

impl Partial<'_> {
    /// The value the code `code[from..to]` leaves, with its own stack.
    fn range(&self, from: usize, to: usize) -> Abs {
        let mut stack: Vec<Abs> = Vec::with_capacity(8);
        let mut pc = from;
        while pc < to {
            let op = self.code[pc];
            pc += 1;
            let v = match op {
                Op::Const(x) => Abs::K(x),
                Op::Var(i) if i as usize == self.free => Abs::Free,
                Op::Var(i) => Abs::K(self.values[i as usize]),
                Op::JumpIfZero(else_at) => {
                    // `c JumpIfZero(→b) a Jump(→end) b`.
                    let else_at = else_at as usize;
                    let Op::Jump(end) = self.code[else_at - 1] else {
                        unreachable!("a compiled `if` jumps over its else branch")
                    };
                    let cond = stack.pop().expect("operand");
                    let v = self.branch(cond, (pc, else_at - 1), (else_at, end as usize));
                    pc = end as usize;
                    v
                }
                Op::Jump(_) => unreachable!("jumps are consumed with their `if`"),
                Op::Min(k) | Op::Max(k) => {
                    let args = stack.split_off(stack.len() - k as usize);
                    if matches!(op, Op::Min(_)) {
                        lift(&args, fold_min)
                    } else {
                        lift(&args, fold_max)
                    }
                }
                Op::Neg => lift(&[stack.pop().expect("operand")], |v| -v[0]),
                Op::Fn1(f) => lift(&[stack.pop().expect("operand")], |v| f(v[0])),
                Op::Not => lift(&[stack.pop().expect("operand")], |v| not_value(v[0])),
                Op::Cmp(cmp) => {
                    let b = stack.pop().expect("operand");
                    let a = stack.pop().expect("operand");
                    compare(cmp, a, b)
                }
                bin => {
                    let b = stack.pop().expect("operand");
                    let a = stack.pop().expect("operand");
                    lift(&[a, b], |v| apply_binary(bin, v[0], v[1]))
                }
            };
            stack.push(v);
        }
        stack.pop().expect("a compiled formula leaves one value")
    }

    /// `if(cond, then, else)`, the branches as code ranges: the interpreter takes `then`
    /// exactly when the condition is not 0.
    fn branch(&self, cond: Abs, then: (usize, usize), other: (usize, usize)) -> Abs {
        let pick = |c: f64| if c != 0.0 { then } else { other };
        match cond {
            Abs::K(c) => {
                let (from, to) = pick(c);
                self.range(from, to)
            }
            Abs::Step { c, lo, hi } => {
                let (below, above) = (pick(lo), pick(hi));
                let x = self.range(below.0, below.1);
                let y = if above == below { x } else { self.range(above.0, above.1) };
                match (side(x, c, true), side(y, c, false)) {
                    (Some(lo), Some(hi)) => step(c, lo, hi),
                    _ => Abs::Unknown,
                }
            }
            Abs::Free | Abs::Unknown => Abs::Unknown,
        }
    }
}

impl Formula {
    /// The value at `values` as a function of the variable at index `free` (its entry in
    /// `values` is not read), for every value of it but NaN: a constant, a step, or
    /// [`Residual::Unknown`]. Constants and the steps' values are the doubles
    /// [`Formula::eval`] gives (see the module docs of `formula/partial.rs`).
    pub fn residual(&self, values: &[f64], free: usize) -> Residual {
        let p = Partial { code: &self.code, values, free };
        match p.range(0, self.code.len()) {
            Abs::K(v) => Residual::Const(v),
            Abs::Step { c, lo, hi } => Residual::Step { c, lo, hi },
            Abs::Free | Abs::Unknown => Residual::Unknown,
        }
    }
}
