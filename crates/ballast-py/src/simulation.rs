//! `ballast._native.Simulation`: one allocation process run step by step from a load vector,
//! with the generator kept between steps.
//!
//! The run spec and the seed come from [`ballast_cli::embed::simulate_spec`]: the point of the
//! one-point config of `ballast simulate` and the seed of its run 0. Each `run(m, every)` is
//! one core run ([`ballast_core::simulate_observed`]) of `m` balls that starts from the
//! current loads (the spec's start for the first call, `Start::Loads` afterwards) and draws
//! from the same generator, which is never reseeded: the first call is run 0 of
//! `ballast simulate` with `--m m --observe-every every`, number for number, and later calls
//! continue that random stream. An observer reads the gap and the extreme loads at every
//! observation point and the loads at the last one.

use ballast_core::{LoadState, Observer, RunSpec, SimRng, Start};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// One observation: balls placed by the process since the start, gap, max and min load.
type Record = (u64, f64, f64, f64);

/// The observer of one call: a record per observation point, and the loads once the run has
/// placed all of its balls.
struct Watch {
    /// Total load before the first ball of this call.
    start_total: f64,
    /// Balls placed by earlier calls.
    offset: u64,
    /// The total load at which the run is complete.
    end_total: f64,
    records: Vec<Record>,
    loads: Option<Vec<u64>>,
}

impl Observer for Watch {
    const PER_BALL: bool = false;

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        let total = state.total();
        let (max, min) = state.max_min();
        let placed = (total - self.start_total).round().max(0.0) as u64;
        self.records.push((self.offset + placed, state.gap(), max, min));
        if total >= self.end_total {
            self.loads = Some((0..state.n()).map(|i| state.load(i).into() as u64).collect());
        }
    }
}

/// An allocation process run step by step (see the Python class `ballast.Simulation`).
#[pyclass(module = "ballast._native")]
pub struct Simulation {
    spec: RunSpec,
    rng: SimRng,
    /// The loads now (`None` until the first call when the start is not a load vector).
    loads: Option<Vec<u64>>,
    /// Balls placed by the process so far.
    balls: u64,
    history: Vec<Record>,
}

/// A core error as ValueError (invalid input) or RuntimeError.
fn core_err(e: &ballast_core::Error) -> PyErr {
    match e {
        ballast_core::Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

#[pymethods]
impl Simulation {
    /// `argv`: the `ballast simulate` arguments (`--m` is replaced by each call's `m`);
    /// `start`: a load vector to start from instead of the arguments' start.
    #[new]
    #[pyo3(signature = (argv, start=None))]
    fn new(argv: Vec<String>, start: Option<Vec<u64>>) -> PyResult<Self> {
        let (mut spec, seed) = ballast_cli::with_surface(ballast_cli::Surface::Python, || {
            ballast_cli::embed::simulate_spec(&argv)
        })
        .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        if let Some(loads) = start {
            if loads.len() as u64 != spec.n {
                return Err(PyValueError::new_err(format!(
                    "start: {} loads for n = {} bins",
                    loads.len(),
                    spec.n
                )));
            }
            spec.start = Start::Loads(loads);
        }
        let loads = match &spec.start {
            Start::Loads(l) => Some(l.clone()),
            Start::Empty => Some(vec![0; usize::try_from(spec.n).unwrap_or(usize::MAX)]),
            _ => None,
        };
        let rng = ballast_core::sim_rng(seed);
        Ok(Self { spec, rng, loads, balls: 0, history: Vec::new() })
    }

    /// Places `m` more balls, observing every `every` balls (and at the end); returns the
    /// records of this call.
    #[pyo3(signature = (m, every=None))]
    fn run(&mut self, py: Python<'_>, m: u64, every: Option<u64>) -> PyResult<Vec<Record>> {
        let mut spec = self.spec.clone();
        spec.m = m;
        spec.observe_every = every;
        spec.record_trajectory = false;
        if self.balls > 0 {
            let loads = self.loads.clone().unwrap_or_default();
            spec.start = Start::Loads(loads);
        }
        let start_total = match &spec.start {
            Start::Loads(l) => l.iter().sum::<u64>() as f64,
            Start::Empty => 0.0,
            Start::Uniform { k } => (k * spec.n) as f64,
            Start::OneBin { balls } | Start::Random { balls } => *balls as f64,
        };
        let mut watch = Watch {
            start_total,
            offset: self.balls,
            end_total: start_total + m as f64,
            records: Vec::new(),
            loads: None,
        };
        let mut rng = self.rng.clone();
        let out = py
            .allow_threads(|| ballast_core::simulate_observed(&spec, &mut rng, &mut watch))
            .map_err(|e| core_err(&e))?;
        self.rng = rng;
        self.balls += out.balls;
        if let Some(l) = watch.loads {
            self.loads = Some(l);
        }
        self.history.extend_from_slice(&watch.records);
        Ok(watch.records)
    }

    /// The loads now as little-endian u64 bytes (`None` before the first call of a random
    /// start, which is drawn by the run); on the level engine the loads in ascending order.
    fn loads<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        let l = self.loads.as_ref()?;
        let bytes: Vec<u8> = l.iter().flat_map(|v| v.to_le_bytes()).collect();
        Some(PyBytes::new(py, &bytes))
    }

    /// Every record so far: (balls, gap, max load, min load).
    fn history(&self) -> Vec<Record> {
        self.history.clone()
    }

    /// Balls placed by the process so far.
    #[getter]
    fn balls(&self) -> u64 {
        self.balls
    }

    /// Bins.
    #[getter]
    fn n(&self) -> u64 {
        self.spec.n
    }

    /// The engine the spec names (`auto` is resolved per call by the core).
    #[getter]
    fn engine(&self) -> &'static str {
        self.spec.engine.name()
    }
}
