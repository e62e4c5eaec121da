//! A Python function as the rule of a process (`ballast.simulate(fn, n, m, d=2, …)`): each
//! function is registered once, unlisted, as a process kind of its own (`python_rule_<k>`, a
//! [`ballast_core::item::ProcessItem`]), so it runs through the same code path as every
//! other kind (`ballast simulate`'s runs, seeds, engines and checks).
//!
//! Per ball the rule draws `d` samples by the run's sampling law, then calls the function
//! with the GIL held: `fn(loads, avg, t, n)` (the Python side adapts a function that takes
//! fewer arguments), where `loads` is the tuple of the samples' loads in draw order. Its
//! value is the 0-based position of the chosen sample. The first exception it raises (or a
//! value that is not a position) is kept, the runs are asked to stop, and the caller takes
//! it with [`take_rule_error`] and raises it: no result is returned for a run that met it.

use std::sync::Mutex;

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use ballast_core::registry::{self, Args, ParamError, ProcessDef, Settings};
use ballast_core::ProcessSpec;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The most samples a Python rule draws (as the `rule` process).
const MAX_D: u32 = 8;

/// The registered Python rules by kind name.
static ITEMS: Mutex<Vec<&'static PyItem>> = Mutex::new(Vec::new());

/// The first error a Python rule met since the last [`take_rule_error`].
static RULE_ERROR: Mutex<Option<PyErr>> = Mutex::new(None);

/// One registered function.
struct PyItem {
    name: &'static str,
    func: Py<PyAny>,
    d: u32,
}

impl std::fmt::Debug for PyItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (a Python function, d = {})", self.name, self.d)
    }
}

impl ProcessItem for PyItem {
    fn name(&self) -> &'static str {
        self.name
    }
    fn rule(&self, _args: &Args) -> Box<dyn CustomRule> {
        // Items are leaked on registration: they live as long as the process.
        let item = ITEMS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .find(|i| i.name == self.name);
        Box::new(PyRule { item: item.expect("a registered Python rule") })
    }
    fn levels(&self) -> Result<(), String> {
        Ok(()) // the function sees loads of uniform samples only, never a bin's identity
    }
}

/// The entry's constructor: the item registered under the entry's name.
fn build(args: &Args) -> Result<ProcessSpec, ParamError> {
    let items = ITEMS.lock().unwrap_or_else(|e| e.into_inner());
    let item = items.iter().copied().find(|i| i.name == args.kind());
    let item = item.ok_or_else(|| ParamError {
        param: None,
        message: format!("no Python rule `{}`", args.kind()),
    })?;
    Ok(ProcessSpec::Custom(CustomSpec::new(item, args.clone())))
}

/// The rule of one run.
struct PyRule {
    item: &'static PyItem,
}

impl CustomRule for PyRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let d = self.item.d as usize;
        let mut bins = [0usize; MAX_D as usize];
        let mut loads = [0.0f64; MAX_D as usize];
        for i in 0..d {
            bins[i] = at.sample();
            loads[i] = at.load(bins[i]);
        }
        let (avg, t, n) = (at.average(), at.balls(), at.n());
        let chosen = Python::with_gil(|py| -> PyResult<usize> {
            let tuple = PyTuple::new(py, &loads[..d])?;
            let v = self.item.func.call1(py, (tuple, avg, t, n))?;
            let k: i64 = v.extract(py).map_err(|_| {
                PyValueError::new_err(format!(
                    "the rule returned {}, not an integer position",
                    v.bind(py)
                ))
            })?;
            usize::try_from(k).ok().filter(|&k| k < d).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "the rule returned {k}: expected a position in 0..{d}"
                ))
            })
        });
        match chosen {
            Ok(k) => bins[k],
            Err(e) => {
                let mut slot = RULE_ERROR.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(e);
                ballast_runner::request_interrupt();
                bins[0]
            }
        }
    }
}

/// Registers `func` as the rule of a new process kind over `d` samples and returns its name.
#[pyfunction]
pub fn register_rule(func: Py<PyAny>, d: u32) -> PyResult<String> {
    if !(1..=MAX_D).contains(&d) {
        return Err(PyValueError::new_err(format!("d = {d}: expected an integer in 1..={MAX_D}")));
    }
    let mut items = ITEMS.lock().unwrap_or_else(|e| e.into_inner());
    let name: &'static str = Box::leak(format!("python_rule_{}", items.len() + 1).into_boxed_str());
    let item: &'static PyItem = Box::leak(Box::new(PyItem { name, func, d }));
    items.push(item);
    drop(items);
    let def: &'static ProcessDef = Box::leak(Box::new(ProcessDef {
        name,
        doc: "a Python function over d samples",
        params: &[],
        ties: &[],
        settings: Settings { batched: true, delay: false, biased: true },
        unit_weights_only: false,
        build,
        example: "",
    }));
    registry::register_unlisted(def).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(name.to_owned())
}

/// The first error a Python rule met since the last call (then the interrupt it requested
/// is cleared), or `None`.
#[pyfunction]
pub fn take_rule_error() -> Option<PyErr> {
    let e = RULE_ERROR.lock().unwrap_or_else(|e| e.into_inner()).take();
    if e.is_some() {
        ballast_runner::clear_interrupt();
    }
    e
}
