//! Per-ball formulas (`docs/processes.md#formula_threshold`): an expression such as
//! `avg + sqrt(ln(n))` or `1 + t/n`, parsed once and then evaluated at every ball on a few
//! variables the process defines (for `formula_threshold`: `t`, `n`, `avg`).
//!
//! The text is read by the [`evalexpr`] parser, the one the runner's parameter formulas use
//! (`ballast_runner::formula`: same syntax, precedence and functions, real arithmetic), and
//! its operator tree is compiled into a short postfix program over `f64`. Evaluating that
//! program performs exactly the floating-point operations `evalexpr` performs on the same
//! tree (`+ − × ÷ %`, `^` and `pow` as `powf`, `min`/`max` folded from ±∞ with `f64::min`
//! and `f64::max`, the same `std` functions), in the same order, so its value is the same
//! double, bit for bit (`tests/formula_threshold.rs` compares them on random inputs), at a
//! small fraction of the cost: no allocation, no map look-ups, no dynamic values.
//!
//! Accepted: numbers, the process's variables, `pi`, `e`, parentheses, unary `-`, `+ - * / %
//! ^`, and the functions `ln`, `log2`, `log10`, `exp`, `sqrt`, `abs`, `floor`, `ceil`,
//! `round`, `pow(x, y)`, `min(a, b, …)`, `max(a, b, …)`. Anything else (comparisons, strings,
//! booleans, tuples outside a function's arguments, assignments `=` `+=` …, the chaining
//! operator `;`, other functions, unknown names) is refused when the formula is read, with
//! the reason. [`check_syntax`] applies the same grammar to the runner's parameter formulas
//! (`ballast_runner::formula`), whose variables are the point's: one grammar for every
//! formula of the project.

use std::fmt;

use evalexpr::{DefaultNumericTypes, Node, Operator, Value};

mod compiled;
mod partial;
pub use compiled::{CompileFlaw, Compiled};
pub use partial::Residual;

/// The longest formula accepted, bytes (the parser recurses over the text).
pub const MAX_LEN: usize = 4096;
/// The deepest nesting of parentheses accepted.
pub const MAX_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug)]
enum Op {
    Const(f64),
    Var(u8),
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Neg,
    Fn1(fn(f64) -> f64),
    Min(u16),
    Max(u16),
    // The decision grammar only ([`Formula::parse_decision`]): comparisons and logic give 1
    // or 0; `if(c, a, b)` is `c JumpIfZero(→b) a Jump(→end) b`, so only one branch runs.
    Cmp(Cmp),
    Not,
    JumpIfZero(u32),
    Jump(u32),
}

/// A comparison or logical operator of the decision grammar.
#[derive(Clone, Copy, Debug)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl Cmp {
    #[inline(always)]
    fn apply(self, a: f64, b: f64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::And => a != 0.0 && b != 0.0,
            Cmp::Or => a != 0.0 || b != 0.0,
        }
    }
}

/// A formula in named variables, compiled for evaluation at every ball.
#[derive(Clone)]
pub struct Formula {
    src: String,
    code: Vec<Op>,
    depth: usize,
    vars: &'static [&'static str],
    uses: u32,
}

impl fmt::Debug for Formula {
    // The source text is the formula's identity (checkpoint keys, messages).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.src)
    }
}

impl PartialEq for Formula {
    fn eq(&self, other: &Self) -> bool {
        self.src == other.src && self.vars == other.vars
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.src)
    }
}

impl Formula {
    /// Reads `src` as a formula in the variables `vars` (in the order [`Formula::eval`]
    /// takes their values). Refuses what the module docs do not accept, naming it.
    ///
    /// ```
    /// use ballast_core::formula::Formula;
    /// let f = Formula::parse("avg + 1/2 + t/n", &["t", "n", "avg"]).unwrap();
    /// assert_eq!(f.eval(&[30.0, 10.0, 3.0], &mut Vec::new()), 6.5);
    /// let e = Formula::parse("avg + q", &["t", "n", "avg"]).unwrap_err();
    /// assert!(e.contains("unknown variable `q`"), "{e}");
    /// ```
    pub fn parse(src: &str, vars: &'static [&'static str]) -> Result<Self, String> {
        Self::parse_with(src, vars, false)
    }

    /// Reads a *decision* formula: the grammar of [`Formula::parse`] plus comparisons (`<`,
    /// `<=`, `>`, `>=`, `==`, `!=`, valued 1 or 0), `&&`, `||`, `!` (any value other than 0
    /// is true) and `if(c, a, b)` (`a` where `c` is true, else `b`; both are computed). For
    /// rules whose formula picks among samples (the `rule` process).
    ///
    /// ```
    /// use ballast_core::formula::Formula;
    /// let f = Formula::parse_decision("if(x1 < x2, 1, 2)", &["x1", "x2"]).unwrap();
    /// assert_eq!(f.eval(&[3.0, 5.0], &mut Vec::new()), 1.0);
    /// assert_eq!(f.eval(&[5.0, 5.0], &mut Vec::new()), 2.0);
    /// ```
    pub fn parse_decision(src: &str, vars: &'static [&'static str]) -> Result<Self, String> {
        Self::parse_with(src, vars, true)
    }

    fn parse_with(src: &str, vars: &'static [&'static str], decide: bool) -> Result<Self, String> {
        let (code, uses) = compile(src, Some(vars), decide)?;
        let depth = stack_depth(&code);
        Ok(Self { src: src.to_owned(), code, depth, vars, uses })
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// Whether the formula reads the variable `name`.
    pub fn uses(&self, name: &str) -> bool {
        self.vars.iter().position(|v| *v == name).is_some_and(|i| self.uses & (1 << i) != 0)
    }

    /// The value at `values` (one per variable, in the order given to [`Formula::parse`]).
    /// `stack` is scratch space, reused between calls (no allocation after the first).
    #[inline]
    pub fn eval(&self, values: &[f64], stack: &mut Vec<f64>) -> f64 {
        stack.clear();
        stack.reserve(self.depth);
        let mut pc = 0;
        while let Some(op) = self.code.get(pc) {
            pc += 1;
            match *op {
                Op::Const(x) => stack.push(x),
                Op::Var(i) => stack.push(values[i as usize]),
                Op::Neg => {
                    let a = stack.pop().expect("operand");
                    stack.push(-a);
                }
                Op::Fn1(f) => {
                    let a = stack.pop().expect("operand");
                    stack.push(f(a));
                }
                Op::Not => {
                    let a = stack.pop().expect("operand");
                    stack.push(not_value(a));
                }
                Op::JumpIfZero(to) => {
                    if stack.pop().expect("operand") == 0.0 {
                        pc = to as usize;
                    }
                }
                Op::Jump(to) => pc = to as usize,
                Op::Cmp(c) => {
                    let b = stack.pop().expect("operand");
                    let a = stack.pop().expect("operand");
                    stack.push(f64::from(u8::from(c.apply(a, b))));
                }
                Op::Min(k) | Op::Max(k) => {
                    let args = stack.len() - k as usize;
                    let v = if matches!(op, Op::Min(_)) {
                        fold_min(&stack[args..])
                    } else {
                        fold_max(&stack[args..])
                    };
                    stack.truncate(args);
                    stack.push(v);
                }
                bin => {
                    let b = stack.pop().expect("operand");
                    let a = stack.pop().expect("operand");
                    stack.push(apply_binary(bin, a, b));
                }
            }
        }
        stack.pop().expect("a compiled formula leaves one value")
    }
}

/// `!a`: 1 where `a` is 0, else 0 (NaN is true).
#[inline(always)]
fn not_value(a: f64) -> f64 {
    f64::from(u8::from(a == 0.0))
}

/// `min` of the arguments, folded from +∞ in order with [`f64::min`].
#[inline(always)]
fn fold_min(args: &[f64]) -> f64 {
    args.iter().fold(f64::INFINITY, |m, &x| m.min(x))
}

/// `max` of the arguments, folded from −∞ in order with [`f64::max`].
#[inline(always)]
fn fold_max(args: &[f64]) -> f64 {
    args.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x))
}

/// An arithmetic operation (`+ − × ÷ %`, `^` as `powf`) on its two operands.
#[inline(always)]
fn apply_binary(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Div => a / b,
        Op::Rem => a % b,
        Op::Pow => a.powf(b),
        _ => unreachable!("unary and n-ary ops handled above"),
    }
}

impl Formula {
    /// The same formula with the variable `name` fixed to `value` and every part that no
    /// longer depends on a variable computed once (`sqrt(ln(n))` for a fixed `n`). Each
    /// folded part is computed by [`Formula::eval`] on the same operands, so the bound
    /// formula's values are those of the original, bit for bit.
    pub fn bind(&self, name: &str, value: f64) -> Formula {
        if self.code.iter().any(|op| matches!(op, Op::JumpIfZero(_) | Op::Jump(_))) {
            // A decision formula's branches are not folded (they are not postfix segments).
            return self.clone();
        }
        let bound = self.vars.iter().position(|v| *v == name);
        // Each stack entry: its code and, when it depends on no free variable, its value.
        let mut segs: Vec<(Vec<Op>, Option<f64>)> = Vec::new();
        let mut scratch = Vec::new();
        let fold = |ops: Vec<Op>, stack: &mut Vec<f64>| -> (Vec<Op>, Option<f64>) {
            let probe = Formula {
                src: String::new(),
                depth: stack_depth(&ops),
                code: ops,
                vars: &[],
                uses: 0,
            };
            let v = probe.eval(&[], stack);
            (vec![Op::Const(v)], Some(v))
        };
        for op in &self.code {
            let arity = match op {
                Op::Const(x) => {
                    segs.push((vec![Op::Const(*x)], Some(*x)));
                    continue;
                }
                Op::Var(i) if Some(*i as usize) == bound => {
                    segs.push((vec![Op::Const(value)], Some(value)));
                    continue;
                }
                Op::Var(_) => {
                    segs.push((vec![*op], None));
                    continue;
                }
                Op::Neg | Op::Fn1(_) | Op::Not => 1,
                Op::Min(k) | Op::Max(k) => *k as usize,
                Op::JumpIfZero(_) | Op::Jump(_) => unreachable!("no jumps here (checked above)"),
                _ => 2,
            };
            let args = segs.split_off(segs.len() - arity);
            let known = args.iter().all(|(_, v)| v.is_some());
            let mut code: Vec<Op> = args.into_iter().flat_map(|(c, _)| c).collect();
            code.push(*op);
            segs.push(if known { fold(code, &mut scratch) } else { (code, None) });
        }
        let (code, _) = segs.pop().expect("one value");
        let uses = match bound {
            Some(i) => self.uses & !(1 << i),
            None => self.uses,
        };
        Formula { src: self.src.clone(), depth: stack_depth(&code), code, vars: self.vars, uses }
    }

    /// Number of operations of the compiled program (after [`Formula::bind`]: what is left).
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Whether the program is empty (never, for a parsed formula).
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

/// Reads `src` with the grammar of the module docs, its identifiers the variables `vars`
/// (`None`: any identifier, the caller checks the names), and compiles it.
fn compile(
    src: &str,
    vars: Option<&'static [&'static str]>,
    decide: bool,
) -> Result<(Vec<Op>, u32), String> {
    check_size(src)?;
    let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(src)
        .map_err(|e| format!("cannot parse formula \"{src}\": {e}"))?;
    let mut c = Compiler { vars, code: Vec::new(), uses: 0, src, decide };
    c.node(&tree)?;
    if c.code.is_empty() {
        return Err(format!("formula \"{src}\" is empty"));
    }
    Ok((c.code, c.uses))
}

/// Checks that `src` is a formula of the language of the module docs (size, syntax,
/// operators, functions and their arities), whatever its variable names: the check every
/// formula goes through, here and in the runner's parameter formulas, which then evaluate
/// the text with `evalexpr` on their own variables. Refuses, among others, `k; 100` (the
/// parser's chaining operator would make it mean 100), `k = 1`, `k += 1`, strings, booleans,
/// comparisons and tuples outside a function's arguments.
///
/// ```
/// use ballast_core::formula::check_syntax;
/// assert!(check_syntax("min(1, 0.7*sqrt(n/b*ln(n)))").is_ok());
/// let e = check_syntax("k; 100").unwrap_err();
/// assert!(e.contains("operator `;` is not accepted"), "{e}");
/// ```
pub fn check_syntax(src: &str) -> Result<(), String> {
    compile(src, None, false).map(|_| ())
}

/// The largest stack a program needs.
fn stack_depth(code: &[Op]) -> usize {
    let (mut d, mut most) = (0usize, 0usize);
    for op in code {
        match op {
            Op::Const(_) | Op::Var(_) => d += 1,
            // Both branches of an `if` counted in a row: an upper bound.
            Op::Neg | Op::Fn1(_) | Op::Not | Op::Jump(_) => {}
            Op::JumpIfZero(_) => d -= 1,
            Op::Min(k) | Op::Max(k) => d = d + 1 - *k as usize,
            _ => d -= 1,
        }
        most = most.max(d);
    }
    most
}

/// The deepest nesting of parentheses in `src` (unbalanced closing ones are ignored): what
/// [`MAX_DEPTH`] bounds, here and in the runner's parameter formulas.
pub fn paren_depth(src: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in src.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Refuses formulas longer than [`MAX_LEN`] bytes or nested deeper than [`MAX_DEPTH`].
fn check_size(src: &str) -> Result<(), String> {
    if src.len() > MAX_LEN {
        return Err(format!("formula is {} bytes long; at most {MAX_LEN} are accepted", src.len()));
    }
    let deepest = paren_depth(src);
    if deepest > MAX_DEPTH {
        return Err(format!(
            "formula nests {deepest} parentheses deep; at most {MAX_DEPTH} are accepted"
        ));
    }
    Ok(())
}

/// The comparisons and logic of the decision grammar, with their arity.
fn decision_op(op: &Operator<DefaultNumericTypes>) -> Option<(Op, usize)> {
    let cmp = |c: Cmp| Some((Op::Cmp(c), 2));
    match op {
        Operator::Lt => cmp(Cmp::Lt),
        Operator::Leq => cmp(Cmp::Le),
        Operator::Gt => cmp(Cmp::Gt),
        Operator::Geq => cmp(Cmp::Ge),
        Operator::Eq => cmp(Cmp::Eq),
        Operator::Neq => cmp(Cmp::Ne),
        Operator::And => cmp(Cmp::And),
        Operator::Or => cmp(Cmp::Or),
        Operator::Not => Some((Op::Not, 1)),
        _ => None,
    }
}

struct Compiler<'a> {
    /// The variables, or `None` for any identifier ([`check_syntax`]).
    vars: Option<&'static [&'static str]>,
    code: Vec<Op>,
    uses: u32,
    src: &'a str,
    /// The decision grammar ([`Formula::parse_decision`]).
    decide: bool,
}

impl Compiler<'_> {
    fn refuse(&self, what: impl fmt::Display) -> String {
        format!("formula \"{}\": {what}", self.src)
    }

    /// A parenthesised group or the root: its single child.
    fn inner(node: &Node<DefaultNumericTypes>) -> &Node<DefaultNumericTypes> {
        let mut n = node;
        while matches!(n.operator(), Operator::RootNode) && n.children().len() == 1 {
            n = &n.children()[0];
        }
        n
    }

    fn node(&mut self, node: &Node<DefaultNumericTypes>) -> Result<(), String> {
        let node = Self::inner(node);
        let kids = node.children();
        let binary = |op: Op| (op, 2usize);
        let (op, arity) = match node.operator() {
            Operator::RootNode => {
                return Err(self.refuse("expected one expression"));
            }
            Operator::Const { value } => {
                let x = match value {
                    Value::Float(x) => *x,
                    Value::Int(i) => *i as f64,
                    other => return Err(self.refuse(format!("{other} is not a number"))),
                };
                self.code.push(Op::Const(x));
                return Ok(());
            }
            Operator::VariableIdentifierRead { identifier } => {
                let id = identifier.as_str();
                let Some(vars) = self.vars else {
                    // Any name: only the shape is checked, the code is not evaluated.
                    self.code.push(Op::Const(0.0));
                    return Ok(());
                };
                if let Some(i) = vars.iter().position(|v| *v == id) {
                    self.uses |= 1 << i;
                    self.code.push(Op::Var(i as u8));
                } else if id == "pi" {
                    self.code.push(Op::Const(std::f64::consts::PI));
                } else if id == "e" {
                    self.code.push(Op::Const(std::f64::consts::E));
                } else {
                    return Err(self.refuse(format!(
                        "unknown variable `{id}`; known: {}, pi, e{}",
                        vars.join(", "),
                        crate::error::did_you_mean(id, vars.iter().copied())
                    )));
                }
                return Ok(());
            }
            Operator::FunctionIdentifier { identifier } => {
                return self.function(identifier, kids);
            }
            Operator::Add => binary(Op::Add),
            Operator::Sub => binary(Op::Sub),
            Operator::Mul => binary(Op::Mul),
            Operator::Div => binary(Op::Div),
            Operator::Mod => binary(Op::Rem),
            Operator::Exp => binary(Op::Pow),
            Operator::Neg => (Op::Neg, 1),
            op if self.decide && decision_op(op).is_some() => decision_op(op).expect("checked"),
            other => {
                return Err(self.refuse(format!(
                    "operator `{}` is not accepted (numbers, variables, parentheses, + - * / % \
                     ^ and the functions ln, log2, log10, exp, sqrt, abs, floor, ceil, round, \
                     pow, min, max)",
                    other.to_string().trim()
                )))
            }
        };
        if kids.len() != arity {
            return Err(self.refuse("an operator without its operands"));
        }
        for k in kids {
            self.node(k)?;
        }
        self.code.push(op);
        Ok(())
    }

    fn function(&mut self, name: &str, kids: &[Node<DefaultNumericTypes>]) -> Result<(), String> {
        let args: Vec<&Node<DefaultNumericTypes>> = match kids {
            [one] => {
                let one = Self::inner(one);
                if matches!(one.operator(), Operator::Tuple) {
                    one.children().iter().collect()
                } else {
                    vec![one]
                }
            }
            _ => return Err(self.refuse(format!("`{name}` needs arguments"))),
        };
        let one: Option<fn(f64) -> f64> = match name {
            "ln" => Some(f64::ln),
            "log2" => Some(f64::log2),
            "log10" => Some(f64::log10),
            "exp" => Some(f64::exp),
            "sqrt" => Some(f64::sqrt),
            "abs" => Some(f64::abs),
            "floor" => Some(f64::floor),
            "ceil" => Some(f64::ceil),
            "round" => Some(f64::round),
            _ => None,
        };
        let (op, want) = match (name, one) {
            (_, Some(f)) => (Op::Fn1(f), Some(1)),
            ("pow", _) => (Op::Pow, Some(2)),
            ("min", _) if args.len() >= 2 => (Op::Min(args.len() as u16), None),
            ("max", _) if args.len() >= 2 => (Op::Max(args.len() as u16), None),
            ("min" | "max", _) => {
                return Err(self.refuse(format!("`{name}` takes two or more arguments")))
            }
            ("if", _) if self.decide => return self.branch(&args),
            _ => {
                return Err(self.refuse(format!(
                    "unknown function `{name}`; known: ln, log2, log10, exp, sqrt, abs, floor, \
                     ceil, round, pow, min, max"
                )))
            }
        };
        if let Some(w) = want {
            if args.len() != w {
                return Err(self.refuse(format!(
                    "`{name}` takes {w} argument{}, got {}",
                    if w == 1 { "" } else { "s" },
                    args.len()
                )));
            }
        }
        if args.len() > 1024 {
            return Err(self.refuse(format!("`{name}` has more than 1024 arguments")));
        }
        for a in args {
            self.node(a)?;
        }
        self.code.push(op);
        Ok(())
    }
}

impl Compiler<'_> {
    /// `if(c, a, b)`: `c`, a jump over `a` when it is 0, `a`, a jump over `b`, `b`.
    fn branch(&mut self, args: &[&Node<DefaultNumericTypes>]) -> Result<(), String> {
        let [c, a, b] = args else {
            return Err(self.refuse(format!("`if` takes 3 arguments, got {}", args.len())));
        };
        self.node(c)?;
        let skip_a = self.code.len();
        self.code.push(Op::JumpIfZero(0));
        self.node(a)?;
        let skip_b = self.code.len();
        self.code.push(Op::Jump(0));
        self.code[skip_a] = Op::JumpIfZero(self.code.len() as u32);
        self.node(b)?;
        self.code[skip_b] = Op::Jump(self.code.len() as u32);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &[&str] = &["t", "n", "avg"];

    #[test]
    fn precedence_functions_and_refusals() {
        let f = |s: &str| Formula::parse(s, V).unwrap().eval(&[6.0, 3.0, 2.0], &mut Vec::new());
        assert_eq!(f("1/2"), 0.5);
        assert_eq!(f("-2^2"), -4.0);
        assert_eq!(f("t/n + avg*2"), 6.0);
        assert_eq!(f("min(t, n, avg) + max(1, 2)"), 4.0);
        assert_eq!(f("pow(2, 10) % 7"), 1024.0 % 7.0);
        assert_eq!(f("floor(sqrt(t)) + ceil(ln(n)) + round(2.5)"), 2.0 + 2.0 + 3.0);
        assert_eq!(f("((avg))"), 2.0);
        assert_eq!(f("3"), 3.0);
        for bad in ["t > 1", "x + 1", "min(1)", "pow(1)", "foo(1)", "\"a\"", "", "a = 1"] {
            assert!(Formula::parse(bad, V).is_err(), "{bad}");
        }
        let g = Formula::parse("avg + 1", V).unwrap();
        assert!(g.uses("avg") && !g.uses("t") && !g.uses("n"));
        // Binding n folds what depends on n only, to the same values.
        let h = Formula::parse("avg + sqrt(ln(n)) * max(n, 2, t) - 1/3", V).unwrap();
        let b = h.bind("n", 1000.0);
        assert_eq!(b.len(), 10, "avg, c, n, 2, t, max, *, +, c, -: sqrt(ln(n)) and 1/3 folded");
        let mut st = Vec::new();
        for (t, avg) in [(0.0, 0.0), (5.0, 7.25), (1e6, 1e3 / 7.0)] {
            let (x, y) = (h.eval(&[t, 1000.0, avg], &mut st), b.eval(&[t, 1e9, avg], &mut st));
            assert_eq!(x.to_bits(), y.to_bits());
        }
        assert_eq!(Formula::parse("sqrt(n) + 1", V).unwrap().bind("n", 4.0).len(), 1);
    }
}
