//! Jobs: the playground's runs on a bounded pool of workers, their progress and their stop.
//!
//! At most `workers` jobs (playground runs and animations) run at once; one more is refused
//! with [`busy_message`] instead of queueing, so a tab never waits unseen. A job runs on a
//! thread of its own and the page polls its [`Status`] (phase, step, elapsed time).
//!
//! **Stopping one job.** The runner has a single, process-wide interrupt
//! ([`ballast_runner::request_interrupt`]): no per-run cancel exists. A Stop therefore goes
//! through a [`Gate`]: it marks its job and, when a simulation of that job is in flight,
//! raises the global interrupt and lets no new simulation start until every simulation in
//! flight has returned; then the interrupt is cleared. Each run in progress finishes (the command line's Ctrl-C promise: nothing
//! half-written, the runner only stops scheduling new runs); the stopped job ends as
//! `stopped`, and every other job that the interrupt reached runs its simulation again from
//! the start, with the same arguments and so the same numbers (its status counts the
//! restart). Other tabs lose time, never correctness.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{json, Value};

use crate::{Lab, LabError, LabErrorKind};

/// Finished jobs kept for the pages to read.
const KEEP_FINISHED: usize = 64;

/// The message of a refused job.
pub fn busy_message(workers: usize) -> String {
    format!(
        "busy: {workers} runs are in progress, the most this server runs at once (`ballast \
         serve --workers`); wait for one to finish or stop one, then run again"
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lets simulations run, or holds them back while an interrupt drains the ones in flight.
/// One for the process, as the runner's interrupt is.
pub struct Gate {
    state: Mutex<GateState>,
    open: Condvar,
}

struct GateState {
    in_flight: usize,
    draining: bool,
}

/// The gate of every job of this process.
static GATE: Gate =
    Gate { state: Mutex::new(GateState { in_flight: 0, draining: false }), open: Condvar::new() };

impl Gate {
    /// Waits while an interrupt drains, then counts one more simulation in flight.
    fn enter(&self) {
        let mut s = lock(&self.state);
        while s.draining {
            s = self.open.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.in_flight += 1;
    }

    /// One simulation returned; the last one of a drain clears the interrupt.
    fn leave(&self) {
        let mut s = lock(&self.state);
        s.in_flight -= 1;
        if s.draining && s.in_flight == 0 {
            ballast_runner::clear_interrupt();
            s.draining = false;
            self.open.notify_all();
        }
    }

    /// [`Gate::enter`], and [`Gate::leave`] when the guard is dropped (a panicking
    /// simulation included, so a drain always ends).
    fn pass(&self) -> Passage<'_> {
        self.enter();
        Passage(self)
    }

    /// Raises the runner's interrupt if a simulation is in flight.
    fn interrupt(&self) {
        let mut s = lock(&self.state);
        if s.in_flight > 0 && !s.draining {
            s.draining = true;
            ballast_runner::request_interrupt();
        }
    }
}

/// One simulation in flight through a [`Gate`].
struct Passage<'a>(&'a Gate);

impl Drop for Passage<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Running.
    Running,
    /// Finished with a result.
    Done,
    /// Stopped by its Stop button.
    Stopped,
    /// Refused input or failed: see its error.
    Failed,
}

/// What the page reads of a job.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Status {
    /// The job's id.
    pub id: u64,
    /// Its phase.
    pub phase: Phase,
    /// What it does now, e.g. `simulation 1 of 2: two_choice`.
    pub step: String,
    /// Seconds since it started (until it ended).
    pub elapsed_s: f64,
    /// How often another tab's Stop made it run a simulation again.
    pub restarts: u32,
    /// The result, once done.
    pub result: Option<Value>,
    /// The error, once failed: `{kind, message, field}`.
    pub error: Option<Value>,
}

/// One job.
pub struct Job {
    id: u64,
    started: Instant,
    stop: AtomicBool,
    /// Whether one of its simulations is running now.
    in_flight: AtomicBool,
    status: Mutex<Status>,
}

/// Runs simulations for a job (through the gate) and reports its steps.
pub struct JobCtx<'a> {
    job: &'a Job,
    gate: &'a Gate,
    lab: &'a dyn Lab,
}

impl JobCtx<'_> {
    /// Sets the step text.
    pub fn step(&self, text: String) {
        lock(&self.job.status).step = text;
    }

    /// Whether this job's Stop was pressed.
    pub fn stopped(&self) -> bool {
        self.job.stop.load(Ordering::SeqCst)
    }

    /// `ballast simulate ARGV...` through the lab, run again when another job's stop
    /// interrupted it; an interrupt of this job's own stop is returned as such.
    pub fn simulate(&self, argv: &[String]) -> Result<Value, LabError> {
        loop {
            let passage = self.gate.pass();
            // Marked in flight before the stop flag is read: a Stop either is seen here or
            // sees this job in flight and raises the interrupt.
            self.job.in_flight.store(true, Ordering::SeqCst);
            let out = if self.stopped() { Err(interrupted()) } else { self.lab.simulate(argv) };
            self.job.in_flight.store(false, Ordering::SeqCst);
            drop(passage);
            match out {
                Err(e) if e.kind == LabErrorKind::Interrupted && !self.stopped() => {
                    lock(&self.job.status).restarts += 1;
                    tracing::debug!(job = self.job.id, "interrupted by another job's stop: again");
                }
                other => return other,
            }
        }
    }
}

fn interrupted() -> LabError {
    LabError { kind: LabErrorKind::Interrupted, message: "stopped".into() }
}

/// The work of a job: a result, or an error as `{kind, message, field}`.
pub type Work = Box<dyn FnOnce(&JobCtx<'_>) -> Result<Value, Value> + Send>;

/// The pool and the table of jobs.
pub struct Jobs {
    limit: usize,
    active: Mutex<usize>,
    next: AtomicU64,
    table: Mutex<BTreeMap<u64, Arc<Job>>>,
    lab: Arc<dyn Lab>,
}

/// A place in the pool, given back when dropped.
pub struct Slot<'a>(&'a Jobs);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *lock(&self.0.active) -= 1;
    }
}

impl Jobs {
    /// A pool of `limit` workers over `lab`.
    pub fn new(lab: Arc<dyn Lab>, limit: usize) -> Self {
        Self {
            limit,
            active: Mutex::new(0),
            next: AtomicU64::new(1),
            table: Mutex::new(BTreeMap::new()),
            lab,
        }
    }

    /// The pool's size.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// A place in the pool, or the busy message.
    pub fn slot(&self) -> Result<Slot<'_>, String> {
        let mut active = lock(&self.active);
        if *active >= self.limit {
            return Err(busy_message(self.limit));
        }
        *active += 1;
        Ok(Slot(self))
    }

    /// Starts `work` as a job on a thread of its own, or returns the busy message.
    pub fn submit(self: &Arc<Self>, label: String, work: Work) -> Result<u64, String> {
        std::mem::forget(self.slot()?);
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let status = Status {
            id,
            phase: Phase::Running,
            step: label,
            elapsed_s: 0.0,
            restarts: 0,
            result: None,
            error: None,
        };
        let job = Arc::new(Job {
            id,
            started: Instant::now(),
            stop: AtomicBool::new(false),
            in_flight: AtomicBool::new(false),
            status: Mutex::new(status),
        });
        self.insert(Arc::clone(&job));
        let jobs = Arc::clone(self);
        std::thread::spawn(move || {
            let slot = Slot(&jobs);
            let ctx = JobCtx { job: &job, gate: &GATE, lab: jobs.lab.as_ref() };
            // A panic (a bug) fails the job instead of leaving it running for ever.
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ctx)))
                .unwrap_or_else(|_| {
                    Err(json!({ "kind": "failure", "field": "process",
                                "message": "the simulation failed unexpectedly (a bug: see the server's log)" }))
                });
            let stopped = ctx.stopped();
            drop(slot);
            let mut s = lock(&job.status);
            s.elapsed_s = job.started.elapsed().as_secs_f64();
            match out {
                Ok(v) => (s.phase, s.result) = (Phase::Done, Some(v)),
                Err(_) if stopped => s.phase = Phase::Stopped,
                Err(e) => (s.phase, s.error) = (Phase::Failed, Some(e)),
            }
        });
        Ok(id)
    }

    fn insert(&self, job: Arc<Job>) {
        let mut table = lock(&self.table);
        table.insert(job.id, job);
        let finished: Vec<u64> = table
            .iter()
            .filter(|(_, j)| lock(&j.status).phase != Phase::Running)
            .map(|(&id, _)| id)
            .collect();
        for id in finished.iter().take(finished.len().saturating_sub(KEEP_FINISHED)) {
            table.remove(id);
        }
    }

    /// The status of job `id`.
    pub fn status(&self, id: u64) -> Option<Status> {
        let job = lock(&self.table).get(&id).cloned()?;
        let mut s = lock(&job.status).clone();
        if s.phase == Phase::Running {
            s.elapsed_s = job.started.elapsed().as_secs_f64();
        }
        Some(s)
    }

    /// Presses job `id`'s Stop; false if there is no such job.
    pub fn stop(&self, id: u64) -> bool {
        let Some(job) = lock(&self.table).get(&id).cloned() else { return false };
        if lock(&job.status).phase == Phase::Running {
            job.stop.store(true, Ordering::SeqCst);
            // Only a simulation in flight needs the interrupt (and with it, the others in
            // flight run again); otherwise the flag stops the job before its next one.
            if job.in_flight.load(Ordering::SeqCst) {
                GATE.interrupt();
            }
        }
        true
    }

    /// Jobs running now.
    pub fn running(&self) -> usize {
        *lock(&self.active)
    }
}
