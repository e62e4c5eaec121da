//! Parameter formulas: numbers or expressions such as `min(1, 0.7*sqrt(n/b*ln(n)))`,
//! evaluated with the [`evalexpr`] crate.
//!
//! All arithmetic is real-valued: integer literals are turned into floats before evaluation,
//! so `1/2` is `0.5` (plain `evalexpr` would divide integers). Functions: `ln`, `log2`,
//! `log10`, `exp`, `sqrt`, `abs`, `pow(x, y)`, `min(a, b, …)`, `max(a, b, …)`, `floor`,
//! `ceil`, `round`; `^` is exponentiation; `pi` and `e` are predefined. Variables are the grid
//! variables of the experiment and, once computed, `n`, `b`, `batches` and `m`.
//!
//! The language is the per-ball formulas' ([`ballast_core::formula`]): every formula is
//! checked by [`ballast_core::formula::check_syntax`] before `evalexpr` evaluates it, so the
//! parser's other features (the chaining operator `;`, which would make `k; 100` mean 100,
//! assignments, strings, booleans, comparisons, tuples, its other built-in functions) are
//! refused with the reason.

use std::collections::BTreeMap;
use std::fmt;

use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, DefaultNumericTypes, Function,
    HashMapContext, Node, Operator, Value,
};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A number or an expression string, as written in a config.
#[derive(Clone, Debug, PartialEq)]
pub struct Formula {
    src: String,
}

impl Formula {
    /// A formula from its source text.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into() }
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// Evaluates the formula with the given variables (name, value).
    ///
    /// ```
    /// use ballast_runner::formula::Formula;
    /// let f = Formula::new("min(1, 0.7*sqrt(n/b*ln(n)))");
    /// let beta = f.eval(&[("n", 10_000.0), ("b", 200_000.0)]).unwrap();
    /// assert!((beta - 0.4750298297).abs() < 1e-9);
    /// assert_eq!(Formula::new("floor(1000/k)").eval(&[("k", 3.0)]).unwrap(), 333.0);
    /// assert_eq!(Formula::new("1/2").eval(&[]).unwrap(), 0.5);
    /// ```
    pub fn eval(&self, vars: &[(&str, f64)]) -> Result<f64, String> {
        eval(&self.src, vars)
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.src)
    }
}

impl<'de> Deserialize<'de> for Formula {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Formula;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a formula string such as \"min(1, sqrt(n/b*ln(n)))\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Formula, E> {
                Ok(Formula::new(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Formula, E> {
                Ok(Formula::new(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Formula, E> {
                Ok(Formula::new(format!("{v:?}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Formula, E> {
                if v.trim().is_empty() {
                    return Err(E::invalid_value(de::Unexpected::Str(v), &self));
                }
                Ok(Formula::new(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

fn float_fn(f: fn(f64) -> f64) -> Function<DefaultNumericTypes> {
    Function::new(move |arg: &Value<DefaultNumericTypes>| Ok(Value::Float(f(arg.as_number()?))))
}

fn floatify(node: &mut Node<DefaultNumericTypes>) {
    if let Operator::Const { value } = node.operator_mut() {
        if let Value::Int(i) = *value {
            *value = Value::Float(i as f64);
        }
    }
    for child in node.children_mut() {
        floatify(child);
    }
}

/// The longest formula accepted, bytes: the parser and the evaluator recurse over the
/// expression tree, so a formula's size is bounded before it is parsed (the core's limit
/// for per-ball formulas, one rule for both).
pub const MAX_FORMULA_LEN: usize = ballast_core::formula::MAX_LEN;

/// The deepest nesting of parentheses accepted (as [`MAX_FORMULA_LEN`]).
pub const MAX_FORMULA_DEPTH: usize = ballast_core::formula::MAX_DEPTH;

/// Refuses formulas longer than [`MAX_FORMULA_LEN`] bytes or nested deeper than
/// [`MAX_FORMULA_DEPTH`] parentheses (they would overflow the stack of the recursive parser).
fn check_size(expr: &str) -> Result<(), String> {
    let shown = |e: &str| {
        let mut end = e.len().min(40);
        while !e.is_char_boundary(end) {
            end -= 1;
        }
        if end < e.len() {
            format!("{}…", &e[..end])
        } else {
            e.to_string()
        }
    };
    if expr.len() > MAX_FORMULA_LEN {
        return Err(format!(
            "formula \"{}\" is {} bytes long; at most {MAX_FORMULA_LEN} are accepted",
            shown(expr),
            expr.len()
        ));
    }
    let deepest = ballast_core::formula::paren_depth(expr);
    if deepest > MAX_FORMULA_DEPTH {
        return Err(format!(
            "formula \"{}\" nests {deepest} parentheses deep; at most {MAX_FORMULA_DEPTH} are \
             accepted",
            shown(expr)
        ));
    }
    Ok(())
}

/// Evaluates `expr` with real arithmetic and the given variables. Formulas longer than
/// [`MAX_FORMULA_LEN`] bytes or nested deeper than [`MAX_FORMULA_DEPTH`], and anything
/// outside the formula language ([`ballast_core::formula::check_syntax`]), are refused.
pub fn eval(expr: &str, vars: &[(&str, f64)]) -> Result<f64, String> {
    check_size(expr)?;
    ballast_core::formula::check_syntax(expr)?;
    let mut tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(expr)
        .map_err(|e| format!("cannot parse formula \"{expr}\": {e}"))?;
    floatify(&mut tree);
    let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
    let setup = |ctx: &mut HashMapContext<DefaultNumericTypes>| -> Result<(), evalexpr::EvalexprError<DefaultNumericTypes>> {
        ctx.set_function("ln".into(), float_fn(f64::ln))?;
        ctx.set_function("log2".into(), float_fn(f64::log2))?;
        ctx.set_function("log10".into(), float_fn(f64::log10))?;
        ctx.set_function("exp".into(), float_fn(f64::exp))?;
        ctx.set_function("sqrt".into(), float_fn(f64::sqrt))?;
        ctx.set_function("abs".into(), float_fn(f64::abs))?;
        ctx.set_function(
            "pow".into(),
            Function::new(|arg: &Value<DefaultNumericTypes>| {
                let t = arg.as_fixed_len_tuple(2)?;
                Ok(Value::Float(t[0].as_number()?.powf(t[1].as_number()?)))
            }),
        )?;
        ctx.set_value("pi".into(), Value::Float(std::f64::consts::PI))?;
        ctx.set_value("e".into(), Value::Float(std::f64::consts::E))?;
        for (name, v) in vars {
            ctx.set_value((*name).to_string(), Value::Float(*v))?;
        }
        Ok(())
    };
    setup(&mut ctx).map_err(|e| format!("formula \"{expr}\": {e}"))?;
    if let Some(unknown) = tree
        .iter_read_variable_identifiers()
        .find(|id| !vars.iter().any(|(n, _)| n == id) && *id != "pi" && *id != "e")
    {
        let known: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "formula \"{expr}\" uses unknown variable `{unknown}`; known here: {}{}",
            if known.is_empty() { "none".to_string() } else { known.join(", ") },
            ballast_core::registry::did_you_mean(unknown, known.iter().copied())
        ));
    }
    let v = tree
        .eval_number_with_context(&ctx)
        .map_err(|e| format!("cannot evaluate formula \"{expr}\": {e}"))?;
    if v.is_nan() {
        return Err(format!("formula \"{expr}\" evaluates to NaN"));
    }
    Ok(v)
}

/// Where a formula must give an integer (counts such as `n`, `m`, `b`), its value must be
/// below this bound, 2^53: from 2^53 on consecutive doubles are 2 or more apart, so `2^60 + 1`
/// is rounded to another integer, and `2^53 + 1` to 2^53 itself (so 2^53 is refused too: it
/// may be a rounded value).
pub const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Refuses an integer value of [`MAX_EXACT_INT`] or more, which a formula may not have computed
/// exactly (the one check of every integer-valued parameter given by a formula; what is not
/// finite is left to the callers' own checks).
///
/// ```
/// use ballast_runner::formula::{eval, exact_integer};
/// assert!(exact_integer(eval("2^53 - 1", &[]).unwrap()).is_ok());
/// let e = exact_integer(eval("2^60 + 1", &[]).unwrap()).unwrap_err();
/// assert!(e.contains("1152921504606846976 is not below 2^53 = 9007199254740992"), "{e}");
/// assert!(exact_integer(eval("2^53 + 1", &[]).unwrap()).is_err());
/// ```
pub fn exact_integer(v: f64) -> Result<(), String> {
    if !v.is_finite() || v.abs() < MAX_EXACT_INT {
        return Ok(());
    }
    // Every double of this size is an integer: write it out exactly.
    let shown = if v.abs() < 1e38 { format!("{}", v as i128) } else { format!("{v:e}") };
    Err(format!(
        "{shown} is not below 2^53 = {MAX_EXACT_INT}: from there on doubles are 2 or more \
         apart, so a formula's value may be a rounded one, not the integer written (2^53 + 1 \
         gives 2^53); expected an integer below 2^53"
    ))
}

/// Evaluates named formulas in dependency order (each may use the grid variables and the
/// parameters already evaluated).
pub(crate) fn eval_named(
    formulas: &BTreeMap<&str, &Formula>,
    params: &mut BTreeMap<String, f64>,
) -> Result<(), String> {
    let mut todo: Vec<(&str, &Formula)> = formulas.iter().map(|(k, f)| (*k, *f)).collect();
    while !todo.is_empty() {
        let before = todo.len();
        let mut last_err = String::new();
        todo.retain(|(k, f)| {
            let vars: Vec<(&str, f64)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            match f.eval(&vars) {
                Ok(v) if v.is_finite() => {
                    params.insert((*k).to_string(), v);
                    false
                }
                Ok(v) => {
                    last_err = format!("`{k}` = {v}: not a finite number");
                    true
                }
                Err(e) => {
                    last_err = format!("`{k}`: {e}");
                    true
                }
            }
        });
        if todo.len() == before {
            return Err(last_err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn formulas_of_the_papers() {
        let beta = |n: f64, b: f64| eval("min(1, 0.7*sqrt(n/b*ln(n)))", &[("n", n), ("b", b)]);
        assert_relative_eq!(beta(1e4, 2e5).unwrap(), 0.4750298297, epsilon = 1e-9);
        assert_relative_eq!(beta(1e5, 8e6).unwrap(), 0.2655497476, epsilon = 1e-9);
        assert_eq!(beta(1e3, 1e3).unwrap(), 1.0);
        let eta = eval("min(1, sqrt((n/b)*ln(n)))", &[("n", 1e4), ("b", 5e5)]).unwrap();
        assert_relative_eq!(eta, 0.4291932053, epsilon = 1e-9);
        assert_eq!(eval("floor(1000/k)", &[("k", 7.0)]).unwrap(), 142.0);
        assert_eq!(eval("k*n", &[("k", 7.0), ("n", 1000.0)]).unwrap(), 7000.0);
        assert_eq!(eval("1/2", &[]).unwrap(), 0.5);
        assert_eq!(eval("2^10", &[]).unwrap(), 1024.0);
        assert_eq!(eval("max(1, 2, 3)", &[]).unwrap(), 3.0);
        assert_relative_eq!(eval("1/ln(n)", &[("n", 1000.0)]).unwrap(), 1.0 / 1000f64.ln());
    }

    #[test]
    fn formula_errors_are_clear() {
        let e = eval("k*q", &[("k", 1.0)]).unwrap_err();
        assert!(e.contains("unknown variable `q`") && e.contains("known here: k"), "{e}");
        let e = eval("min(1,", &[]).unwrap_err();
        assert!(e.contains("cannot parse"), "{e}");
    }

    #[test]
    fn huge_and_deep_formulas_are_refused() {
        let long = vec!["k"; 40_000].join("+");
        let e = eval(&long, &[("k", 1.0)]).unwrap_err();
        assert!(e.contains("at most 4096"), "{e}");
        let deep = format!("{}1{}", "(".repeat(35_000), ")".repeat(35_000));
        assert!(eval(&deep, &[]).unwrap_err().contains("bytes long"));
        let deep = format!("{}1{}", "(".repeat(65), ")".repeat(65));
        assert!(eval(&deep, &[]).unwrap_err().contains("nests 65 parentheses"));
        let ok = format!("{}1{}", "(".repeat(64), ")".repeat(64));
        assert_eq!(eval(&ok, &[]).unwrap(), 1.0);
        // A long sum within the size limit evaluates.
        let sum = vec!["k"; 2000].join("+");
        assert_eq!(eval(&sum, &[("k", 1.0)]).unwrap(), 2000.0);
    }
}
