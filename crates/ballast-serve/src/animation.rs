//! The animation: the sorted normalised load vector (load minus the average) and the gap of
//! one run, frame by frame, from the exact bin engine of `ballast-core`.
//!
//! A frame is taken at the run's start and at every observation point of the engine: every
//! `step` balls in the sequential setting (`step = 1`: ball by ball), at every batch end in
//! the batched setting. The run is one call of [`ballast_core::simulate_observed`] with an
//! [`Observer`] that copies the loads at those points, so the frames are the engine's own
//! states, not a re-implementation. At most [`MAX_N`] bins and [`MAX_FRAMES`] frames; each
//! frame's sorted vector is thinned to at most [`MAX_POINTS`] evenly spaced ranks (the first
//! and last rank always kept) for the page.

use ballast_core::registry::{self, ParamValue};
use ballast_core::{sim_rng, simulate_observed, Engine, LoadState, Observer, RunSpec, TieBreak};
use serde_json::{json, Value};

/// The most bins an animation shows.
pub const MAX_N: u64 = 10_000;
/// The most frames of one animation (besides the start).
pub const MAX_FRAMES: u64 = 2_000;
/// The most ranks per frame sent to the page.
pub const MAX_POINTS: usize = 500;

/// What to animate.
#[derive(Clone, Debug)]
pub struct Request {
    /// Process kind (a registry name).
    pub process: String,
    /// Its parameters, name and value text.
    pub params: Vec<(String, String)>,
    /// Bins.
    pub n: u64,
    /// Balls.
    pub m: u64,
    /// Batch size (batched setting), or none (sequential).
    pub batch: Option<u64>,
    /// Balls between frames in the sequential setting.
    pub step: u64,
    /// Tie-breaking rule name.
    pub tie_break: String,
    /// Seed of the run's generator.
    pub seed: u64,
}

/// The engine's spec of `req`, or the registry's message. The front end has already checked
/// the same values through the command line; this adds the animation's own bounds.
pub fn spec_of(req: &Request) -> Result<RunSpec, String> {
    if req.n > MAX_N {
        return Err(format!("--n: the animation shows at most {MAX_N} bins, not {}", req.n));
    }
    let per_frame = req.batch.unwrap_or(req.step).max(1);
    let frames = req.m.div_ceil(per_frame);
    if frames > MAX_FRAMES {
        return Err(format!(
            "--m: {} balls in frames of {per_frame} are {frames} frames; the animation shows at \
             most {MAX_FRAMES} (raise the step or the batch, or lower m)",
            req.m
        ));
    }
    let def = registry::find(&req.process).map_err(|e| e.to_string())?;
    let mut given: Vec<(&str, ParamValue)> = Vec::new();
    for (name, raw) in &req.params {
        let p = def.param(name).map_err(|e| e.to_string())?;
        given.push((p.name, def.parse_value(p, raw).map_err(|e| e.to_string())?));
    }
    let process = def.build(&given).map_err(|e| e.to_string())?;
    let mut spec = RunSpec::new(process, req.n, req.m);
    if let Some(b) = req.batch {
        spec = spec.batched(b);
    } else {
        spec.observe_every = Some(req.step.max(1));
    }
    spec.tie_break = TieBreak::ALL
        .iter()
        .find(|(name, _)| *name == req.tie_break)
        .map(|&(_, t)| t)
        .ok_or_else(|| format!("--tie-break: unknown rule `{}`", req.tie_break))?;
    spec.engine = Engine::Bins;
    Ok(spec)
}

/// Copies the sorted normalised loads at the start and at every observation point.
struct Frames {
    frames: Vec<Value>,
}

impl Frames {
    fn take<S: LoadState>(&mut self, state: &S) {
        let n = state.n();
        let mut y: Vec<f64> = (0..n).map(|i| state.normalized(i)).collect();
        y.sort_by(|a, b| b.total_cmp(a));
        let gap = y.first().copied().unwrap_or(0.0);
        let points = n.min(MAX_POINTS);
        let thin: Vec<Value> = (0..points)
            .map(|k| {
                let rank = if points > 1 { k * (n - 1) / (points - 1) } else { 0 };
                json!([rank + 1, round6(y[rank])])
            })
            .collect();
        self.frames.push(json!({ "balls": state.total(), "gap": round6(gap), "loads": thin }));
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl Observer for Frames {
    const PER_BALL: bool = false;

    fn on_start<S: LoadState>(&mut self, state: &S) {
        self.take(state);
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.take(state);
    }
}

/// Runs `req` and returns `{n, m, frames: [{balls, gap, loads: [[rank, y], …]}], final_gap}`.
pub fn animate(req: &Request) -> Result<Value, String> {
    let spec = spec_of(req)?;
    let mut frames = Frames { frames: Vec::new() };
    let out =
        simulate_observed(&spec, &mut sim_rng(req.seed), &mut frames).map_err(|e| e.to_string())?;
    Ok(json!({
        "n": req.n,
        "m": req.m,
        "batch": req.batch,
        "step": req.step,
        "final_gap": out.final_gap,
        "frames": frames.frames,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(batch: Option<u64>) -> Request {
        Request {
            process: "two_choice".into(),
            params: vec![],
            n: 100,
            m: 1000,
            batch,
            step: 10,
            tie_break: "random".into(),
            seed: 3,
        }
    }

    #[test]
    fn frames_follow_the_balls_and_end_at_the_final_gap() {
        let v = animate(&req(None)).unwrap();
        let frames = v["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 101, "the start and every 10 balls");
        assert_eq!(frames[0]["balls"], json!(0.0));
        assert_eq!(frames[100]["balls"], json!(1000.0));
        let last = frames[100]["gap"].as_f64().unwrap();
        assert!((last - v["final_gap"].as_f64().unwrap()).abs() < 1e-6);
        let loads = frames[100]["loads"].as_array().unwrap();
        assert_eq!(loads.len(), 100);
        let ys: Vec<f64> = loads.iter().map(|p| p[1].as_f64().unwrap()).collect();
        assert!(ys.windows(2).all(|w| w[0] >= w[1]), "sorted, largest first");
        assert!(ys.iter().sum::<f64>().abs() < 1e-6, "normalised loads sum to 0");
    }

    #[test]
    fn batches_are_frames_and_bounds_are_refused() {
        let v = animate(&req(Some(100))).unwrap();
        assert_eq!(v["frames"].as_array().unwrap().len(), 11);
        let mut big = req(None);
        big.n = 20_000;
        assert!(spec_of(&big).unwrap_err().contains("at most 10000 bins"));
        big.n = 100;
        big.step = 0;
        big.m = 1_000_000;
        assert!(spec_of(&big).unwrap_err().contains("frames"));
    }
}
