//! A formula compiled to a tree of closures ([`Compiled`]): the same values as
//! [`Formula::eval`], bit for bit, without its stack and its dispatch per operation.
//!
//! The interpreter of [`Formula::eval`] pays a push, a pop and an unpredictable jump on the
//! operation kind for every operation of the postfix code. Here every node of the
//! expression is a closure that calls its operands' closures directly, so a call site
//! always calls the same closure (a predictable indirect call), and only the data-dependent
//! branches of `if` and the comparisons remain. Comparisons of a variable or a constant with
//! a variable or a constant are one closure, and a condition is evaluated as a `bool`
//! without the detour through 1.0 and 0.0.
//!
//! Every operation computes what the interpreter computes, in the same order: `if(c, a, b)`
//! takes `a` exactly when `c` is not 0 (NaN included), `min` and `max` fold from ±∞ over the
//! arguments in order with [`f64::min`] and [`f64::max`], a comparison is 1 or 0 where it is
//! a value. `tests/formula_compiled.rs` checks the equality on generated formulas and values,
//! and that it catches a deliberately wrong compilation.

use super::{Cmp, Formula, Op};

/// A numeric node.
type Num = Box<dyn Fn(&[f64]) -> f64 + Send + Sync>;
/// The root, shared by clones.
type Root = std::sync::Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;
/// A condition node.
type Cond = Box<dyn Fn(&[f64]) -> bool + Send + Sync>;

/// A formula as a tree of closures: [`Compiled::eval`] equals [`Formula::eval`] bit for bit.
/// Cloning shares the tree (it is immutable).
#[derive(Clone)]
pub struct Compiled {
    root: Root,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

impl Compiled {
    /// The value at `values` (one per variable, in the formula's order).
    #[inline]
    pub fn eval(&self, values: &[f64]) -> f64 {
        (self.root)(values)
    }
}

/// Deliberately wrong compilations, for the power of the equality test.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileFlaw {
    /// `if(c, a, b)` takes `a` when `c > 0` (not when `c != 0`): wrong for negative and NaN
    /// conditions.
    IfPositive,
}

impl Formula {
    /// The formula compiled to closures ([`Compiled`]), for evaluation at every ball.
    pub fn compiled(&self) -> Compiled {
        compile(&self.code, None)
    }

    /// [`Formula::compiled`] with a deliberate flaw (tests only).
    #[doc(hidden)]
    pub fn compiled_flawed(&self, flaw: CompileFlaw) -> Compiled {
        compile(&self.code, Some(flaw))
    }
}

fn compile(code: &[Op], flaw: Option<CompileFlaw>) -> Compiled {
    let mut b = Builder { code, flaw };
    let root = b.range(0, code.len()).into_num();
    Compiled { root: root.into() }
}

/// A node while the tree is built: leaves stay visible so that comparisons can fuse them.
enum Node {
    Const(f64),
    Var(usize),
    Num(Num),
    /// A comparison or logical operation: a condition, 1.0 or 0.0 where a value is needed.
    Cond(Cond),
}

impl Node {
    fn into_num(self) -> Num {
        match self {
            Node::Const(c) => Box::new(move |_| c),
            Node::Var(i) => Box::new(move |v| v[i]),
            Node::Num(f) => f,
            Node::Cond(c) => Box::new(move |v| f64::from(u8::from(c(v)))),
        }
    }

    /// As a condition: true where the value is not 0 (as the interpreter's jump tests it).
    fn into_cond(self) -> Cond {
        match self {
            Node::Cond(c) => c,
            Node::Const(c) => Box::new(move |_| c != 0.0),
            Node::Var(i) => Box::new(move |v| v[i] != 0.0),
            Node::Num(f) => Box::new(move |v| f(v) != 0.0),
        }
    }
}

struct Builder<'a> {
    code: &'a [Op],
    flaw: Option<CompileFlaw>,
}

impl Builder<'_> {
    /// The single value the postfix code `code[from..to]` leaves.
    fn range(&mut self, from: usize, to: usize) -> Node {
        let mut stack: Vec<Node> = Vec::new();
        let mut pc = from;
        while pc < to {
            let op = self.code[pc];
            pc += 1;
            match op {
                Op::Const(x) => stack.push(Node::Const(x)),
                Op::Var(i) => stack.push(Node::Var(i as usize)),
                Op::JumpIfZero(else_at) => {
                    // `c JumpIfZero(→b) a Jump(→end) b`: the branch `a` ends with the jump.
                    let else_at = else_at as usize;
                    let Op::Jump(end) = self.code[else_at - 1] else {
                        unreachable!("a compiled `if` jumps over its else branch")
                    };
                    let cond = stack.pop().expect("operand");
                    let a = self.range(pc, else_at - 1);
                    let b = self.range(else_at, end as usize);
                    stack.push(self.branch(cond, a, b));
                    pc = end as usize;
                }
                Op::Jump(_) => unreachable!("jumps are consumed with their `if`"),
                Op::Min(k) | Op::Max(k) => {
                    let args: Vec<Num> = stack
                        .split_off(stack.len() - k as usize)
                        .into_iter()
                        .map(Node::into_num)
                        .collect();
                    stack.push(Node::Num(fold(args, matches!(op, Op::Min(_)))));
                }
                Op::Neg | Op::Fn1(_) | Op::Not => {
                    let a = stack.pop().expect("operand");
                    stack.push(unary(op, a));
                }
                _ => {
                    let b = stack.pop().expect("operand");
                    let a = stack.pop().expect("operand");
                    stack.push(binary(op, a, b));
                }
            }
        }
        let node = stack.pop().expect("a compiled formula leaves one value");
        debug_assert!(stack.is_empty());
        node
    }

    /// `if(c, a, b)`; a constant branch is returned in place (no call). (Computing both
    /// branches and selecting one without a jump was measured slower: the jump lets the
    /// processor run ahead of the loads the condition waits for.)
    fn branch(&self, c: Node, a: Node, b: Node) -> Node {
        if self.flaw == Some(CompileFlaw::IfPositive) {
            // The flaw: the condition's value compared with 0 by `>`.
            let (c, a, b) = (c.into_num(), a.into_num(), b.into_num());
            return Node::Num(Box::new(move |v| if c(v) > 0.0 { a(v) } else { b(v) }));
        }
        let c = c.into_cond();
        Node::Num(match (a, b) {
            (Node::Const(x), Node::Const(y)) => Box::new(move |v| if c(v) { x } else { y }),
            (Node::Const(x), b) => {
                let b = b.into_num();
                Box::new(move |v| if c(v) { x } else { b(v) })
            }
            (a, Node::Const(y)) => {
                let a = a.into_num();
                Box::new(move |v| if c(v) { a(v) } else { y })
            }
            (a, b) => {
                let (a, b) = (a.into_num(), b.into_num());
                Box::new(move |v| if c(v) { a(v) } else { b(v) })
            }
        })
    }
}

/// `min` (`is_min`) or `max` of the arguments, folded from ±∞ in order.
fn fold(args: Vec<Num>, is_min: bool) -> Num {
    if is_min {
        Box::new(move |v| args.iter().fold(f64::INFINITY, |m, a| m.min(a(v))))
    } else {
        Box::new(move |v| args.iter().fold(f64::NEG_INFINITY, |m, a| m.max(a(v))))
    }
}

fn unary(op: Op, a: Node) -> Node {
    match op {
        Op::Not => {
            let a = a.into_cond();
            Node::Cond(Box::new(move |v| !a(v)))
        }
        Op::Neg => {
            let a = a.into_num();
            Node::Num(Box::new(move |v| -a(v)))
        }
        Op::Fn1(f) => {
            let a = a.into_num();
            Node::Num(Box::new(move |v| f(a(v))))
        }
        _ => unreachable!("unary operations only"),
    }
}

fn binary(op: Op, a: Node, b: Node) -> Node {
    if let Op::Cmp(c) = op {
        return compare(c, a, b);
    }
    let (a, b) = (a.into_num(), b.into_num());
    Node::Num(match op {
        Op::Add => Box::new(move |v| a(v) + b(v)),
        Op::Sub => Box::new(move |v| a(v) - b(v)),
        Op::Mul => Box::new(move |v| a(v) * b(v)),
        Op::Div => Box::new(move |v| a(v) / b(v)),
        Op::Rem => Box::new(move |v| a(v) % b(v)),
        Op::Pow => Box::new(move |v| a(v).powf(b(v))),
        _ => unreachable!("binary operations only"),
    })
}

/// A comparison or logical operation; a variable or constant on either side is read in
/// place (one closure in all).
fn compare(c: Cmp, a: Node, b: Node) -> Node {
    if matches!(c, Cmp::And | Cmp::Or) {
        // Both operands are evaluated, as by the interpreter (they have no side effects,
        // so short-circuiting gives the same value).
        let (a, b) = (a.into_cond(), b.into_cond());
        return Node::Cond(match c {
            Cmp::And => Box::new(move |v| a(v) && b(v)),
            _ => Box::new(move |v| a(v) || b(v)),
        });
    }
    macro_rules! fused {
        ($x:expr, $y:expr) => {
            match c {
                Cmp::Lt => Box::new(move |v: &[f64]| $x(v) < $y(v)),
                Cmp::Le => Box::new(move |v: &[f64]| $x(v) <= $y(v)),
                Cmp::Gt => Box::new(move |v: &[f64]| $x(v) > $y(v)),
                Cmp::Ge => Box::new(move |v: &[f64]| $x(v) >= $y(v)),
                Cmp::Eq => Box::new(move |v: &[f64]| $x(v) == $y(v)),
                Cmp::Ne => Box::new(move |v: &[f64]| $x(v) != $y(v)),
                Cmp::And | Cmp::Or => unreachable!("handled above"),
            }
        };
    }
    Node::Cond(match (a, b) {
        (Node::Var(i), Node::Var(j)) => fused!(|v: &[f64]| v[i], |v: &[f64]| v[j]),
        (Node::Var(i), Node::Const(k)) => fused!(|v: &[f64]| v[i], |_: &[f64]| k),
        (Node::Const(k), Node::Var(j)) => fused!(|_: &[f64]| k, |v: &[f64]| v[j]),
        (a, b) => {
            let (a, b) = (a.into_num(), b.into_num());
            fused!(a, b)
        }
    })
}
