//! The off-line d-choice optimum (`docs/processes.md#off-line-d-choice-optimum`): `m` balls
//! each get `d` uniform bins (with replacement); the best assignment minimises the maximum
//! load. Computed exactly, with a certificate both ways.
//!
//! # Algorithm
//!
//! Load `L` is feasible iff the flow network source → ball (capacity 1) → its bins
//! (capacity 1) → sink (capacity `L`) carries `m` units. Rather than a binary search over `L`
//! with a fresh max-flow each time, the solver keeps one assignment and raises `L` from a
//! lower bound, so every unit of flow found at a lower `L` is kept:
//!
//! 1. Greedy: each ball, in order, to a least loaded of its bins (first on ties). This is
//!    the on-line Greedy\[d\] process; its max load is reported.
//! 2. Lower bound: the balls and bins of every connected component of the choice
//!    (hyper)graph must balance inside it, so `L ≥ ⌈balls(C) / bins(C)⌉` for every
//!    component `C` (union-find).
//! 3. For `L` upwards from that bound: Dinic's algorithm on the residual network, stored
//!    implicitly. A bin with load `> L` has *excess*, a bin with load `< L` has room; the
//!    residual arcs are `b → b'` whenever a ball assigned to `b` also lists `b'`. A phase
//!    layers the bins by breadth-first search from all excess bins, up to the nearest layer
//!    that contains a bin with room, then moves balls along shortest paths by depth-first
//!    search with current-arc pointers (dead ends pruned). Phases repeat until no excess is
//!    left (`L` is the optimum) or the search reaches no bin with room. In that case the set
//!    `R` of reached bins has every load `≥ L`, one `> L`, and every ball assigned inside `R`
//!    has all its bins in `R`: more than `L·|R|` balls are confined to `R`, so `L` is
//!    infeasible (Hall's condition) and `R` is kept as the witness before `L` grows by one.
//!
//! The result therefore carries an assignment achieving `max_load` and a set of bins proving
//! that `max_load − 1` is impossible; [`OfflineOptimum::verify`] checks both independently
//! of the solver. Cost: O((m·d + n)·√(m + n)) per level in the worst case (Dinic on a
//! unit-capacity network); in practice the greedy start leaves little to repair and
//! n = m = 10⁶, d = 2 takes well under a second.
//!
//! # Known thresholds
//!
//! For `m = c·n` and `n → ∞` the optimum is the smallest `ℓ` with `c < c*(d, ℓ)`, where
//! `c*(d, ℓ)` is the ℓ-orientability threshold of the random `d`-uniform hypergraph: the
//! density at which its `(ℓ+1)`-core has more than `ℓ` edges per vertex (Cain, Sanders &
//! Wormald 2007 and Fernholz & Ramachandran 2007 for d = 2; Gao & Wormald 2010,
//! Fountoulakis, Khosla & Panagiotou 2016 for d ≥ 3). [`orientability_threshold`] computes
//! it; e.g. `c*(2, 1) = 1/2`, `c*(2, 2) ≈ 1.794`, `c*(3, 1) ≈ 0.918` (the cuckoo hashing
//! threshold), so m = n gives optimum 2 for both d = 2 and d = 3.

use ballast_core::rng::below;
use rand::RngCore;

use crate::Error;

/// The bins chosen by each ball: ball `i` lists `d` bins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choices {
    n: usize,
    d: usize,
    flat: Vec<u32>,
}

impl Choices {
    /// `m` balls with `d` independent uniform bins each, drawn in ball order with `below`.
    pub fn sample<R: RngCore + ?Sized>(
        n: usize,
        m: usize,
        d: usize,
        rng: &mut R,
    ) -> Result<Self, Error> {
        Self::check(n, m, d)?;
        let flat = (0..m * d).map(|_| below(rng, n as u64) as u32).collect();
        Ok(Self { n, d, flat })
    }

    /// Explicit choices: ball `i` lists `flat[i·d..(i+1)·d]`.
    pub fn new(n: usize, d: usize, flat: Vec<u32>) -> Result<Self, Error> {
        if d == 0 || flat.len() % d != 0 {
            return Err(Error::invalid("d", d, "at least 1 and dividing the number of choices"));
        }
        Self::check(n, flat.len() / d, d)?;
        if let Some(&b) = flat.iter().find(|&&b| b as usize >= n) {
            return Err(Error::invalid("choice", b, format!("a bin below n = {n}")));
        }
        Ok(Self { n, d, flat })
    }

    fn check(n: usize, m: usize, d: usize) -> Result<(), Error> {
        if !(1..=u32::MAX as usize).contains(&n) {
            return Err(Error::invalid("n", n, format!("an integer in 1..={}", u32::MAX)));
        }
        if !(1..=255).contains(&d) {
            return Err(Error::invalid("d", d, "an integer in 1..=255"));
        }
        if m as u64 * d as u64 >= u64::from(u32::MAX) {
            return Err(Error::TooLarge(format!("{m} balls × {d} choices")));
        }
        Ok(())
    }

    /// Number of bins.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Choices per ball.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Number of balls.
    pub fn m(&self) -> usize {
        self.flat.len() / self.d
    }
    /// The bins of ball `i`.
    pub fn ball(&self, i: usize) -> &[u32] {
        &self.flat[i * self.d..(i + 1) * self.d]
    }
}

/// Result of [`offline_optimum`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflineOptimum {
    /// The minimum possible maximum load.
    pub max_load: u32,
    /// The component lower bound the search started from.
    pub lower_bound: u32,
    /// Maximum load of the greedy (on-line Greedy\[d\], first-choice ties) start.
    pub greedy_max_load: u32,
    /// An optimal assignment: ball `i` goes to bin `assignment[i]`.
    pub assignment: Vec<u32>,
    /// Bins `S` (sorted) to which more than `(max_load − 1)·|S|` balls are confined (all their
    /// choices lie in `S`): the proof that `max_load − 1` is infeasible. Empty when
    /// `max_load = 0`.
    pub witness: Vec<u32>,
    /// Dinic phases run.
    pub phases: u64,
    /// Augmenting paths applied (balls re-homed by chains of moves).
    pub augmentations: u64,
}

impl OfflineOptimum {
    /// Checks the result against `choices` without trusting the solver: the assignment is
    /// valid and has maximum load `max_load`, and the witness confines more than
    /// `(max_load − 1)·|S|` balls.
    pub fn verify(&self, choices: &Choices) -> Result<(), String> {
        if self.assignment.len() != choices.m() {
            return Err("assignment has the wrong length".into());
        }
        let mut load = vec![0u32; choices.n()];
        for (i, &b) in self.assignment.iter().enumerate() {
            if !choices.ball(i).contains(&b) {
                return Err(format!("ball {i} assigned to bin {b}, not among its choices"));
            }
            load[b as usize] += 1;
        }
        let max = load.iter().copied().max().unwrap_or(0);
        if max != self.max_load {
            return Err(format!("assignment has max load {max}, claimed {}", self.max_load));
        }
        if self.max_load > 0 {
            let confined = balls_confined(choices, &self.witness);
            let bound = u64::from(self.max_load - 1) * self.witness.len() as u64;
            if confined <= bound {
                return Err(format!(
                    "witness of {} bins confines {confined} balls, not more than {bound}",
                    self.witness.len()
                ));
            }
        }
        Ok(())
    }
}

/// Number of balls all of whose choices lie in `bins`.
pub fn balls_confined(choices: &Choices, bins: &[u32]) -> u64 {
    let mut inside = vec![false; choices.n()];
    for &b in bins {
        inside[b as usize] = true;
    }
    (0..choices.m()).filter(|&i| choices.ball(i).iter().all(|&b| inside[b as usize])).count() as u64
}

const UNSEEN: u32 = u32::MAX;
const DEAD: u32 = u32::MAX - 1;

struct Solver<'a> {
    n: usize,
    d: usize,
    choices: &'a [u32],
    inc_off: Vec<u32>,
    inc: Vec<u32>,
    assign: Vec<u32>,
    load: Vec<u32>,
    level: Vec<u32>,
    queue: Vec<u32>,
    ptr_ball: Vec<u32>,
    ptr_choice: Vec<u8>,
    path: Vec<u32>,
    path_ball: Vec<u32>,
    phases: u64,
    augmentations: u64,
}

enum Phase {
    Done,
    Progress,
    Stuck,
}

impl<'a> Solver<'a> {
    fn new(c: &'a Choices) -> Self {
        let (n, d, m) = (c.n, c.d, c.m());
        let choices = &c.flat[..];
        // Incidence lists: the balls that list each bin (a ball listing a bin twice, once).
        let distinct =
            |i: usize, k: usize| !choices[i * d..i * d + k].contains(&choices[i * d + k]);
        let mut inc_off = vec![0u32; n + 1];
        for i in 0..m {
            for k in 0..d {
                if distinct(i, k) {
                    inc_off[choices[i * d + k] as usize + 1] += 1;
                }
            }
        }
        for b in 0..n {
            inc_off[b + 1] += inc_off[b];
        }
        let mut fill = inc_off[..n].to_vec();
        let mut inc = vec![0u32; inc_off[n] as usize];
        for i in 0..m {
            for k in 0..d {
                if distinct(i, k) {
                    let b = choices[i * d + k] as usize;
                    inc[fill[b] as usize] = i as u32;
                    fill[b] += 1;
                }
            }
        }
        let ptr_ball = inc_off[..n].to_vec();
        Self {
            n,
            d,
            choices,
            inc_off,
            inc,
            assign: vec![0; m],
            load: vec![0; n],
            level: vec![UNSEEN; n],
            queue: Vec::new(),
            ptr_ball,
            ptr_choice: vec![0; n],
            path: Vec::new(),
            path_ball: Vec::new(),
            phases: 0,
            augmentations: 0,
        }
    }

    fn greedy(&mut self) -> u32 {
        let d = self.d;
        for i in 0..self.assign.len() {
            let bins = &self.choices[i * d..(i + 1) * d];
            let mut best = bins[0];
            for &b in &bins[1..] {
                if self.load[b as usize] < self.load[best as usize] {
                    best = b;
                }
            }
            self.assign[i] = best;
            self.load[best as usize] += 1;
        }
        self.load.iter().copied().max().unwrap_or(0)
    }

    /// The component bound and the bins of a component attaining it.
    fn component_bound(&self) -> (u32, Vec<u32>) {
        let (n, d) = (self.n, self.d);
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let p = parent[parent[x as usize] as usize];
                parent[x as usize] = p;
                x = p;
            }
            x
        }
        for i in 0..self.assign.len() {
            let a = find(&mut parent, self.choices[i * d]);
            for k in 1..d {
                let b = find(&mut parent, self.choices[i * d + k]);
                if a != b {
                    parent[b as usize] = a;
                }
            }
        }
        let mut balls = vec![0u64; n];
        let mut bins = vec![0u64; n];
        for b in 0..n as u32 {
            let r = find(&mut parent, b);
            bins[r as usize] += 1;
        }
        for i in 0..self.assign.len() {
            let r = find(&mut parent, self.choices[i * d]);
            balls[r as usize] += 1;
        }
        let mut best = (0u32, 0u32);
        for r in 0..n {
            if bins[r] > 0 {
                let bound = balls[r].div_ceil(bins[r]) as u32;
                if bound > best.0 {
                    best = (bound, r as u32);
                }
            }
        }
        let witness =
            (0..n as u32).filter(|&b| find(&mut parent, b) == best.1).collect::<Vec<u32>>();
        (best.0, witness)
    }

    #[inline]
    fn reset_search(&mut self) {
        for &b in &self.queue {
            let b = b as usize;
            self.level[b] = UNSEEN;
            self.ptr_ball[b] = self.inc_off[b];
            self.ptr_choice[b] = 0;
        }
    }

    /// One Dinic phase at load cap `cap`.
    fn phase(&mut self, cap: u32) -> Phase {
        let d = self.d;
        self.queue.clear();
        for b in 0..self.n {
            if self.load[b] > cap {
                self.level[b] = 0;
                self.queue.push(b as u32);
            }
        }
        if self.queue.is_empty() {
            return Phase::Done;
        }
        self.phases += 1;
        let sources = self.queue.len();
        let mut sink_depth = UNSEEN;
        let mut head = 0;
        while head < self.queue.len() {
            let b = self.queue[head] as usize;
            head += 1;
            let depth = self.level[b];
            if depth >= sink_depth {
                continue;
            }
            for idx in self.inc_off[b]..self.inc_off[b + 1] {
                let x = self.inc[idx as usize] as usize;
                if self.assign[x] as usize != b {
                    continue;
                }
                for &c in &self.choices[x * d..(x + 1) * d] {
                    let c = c as usize;
                    if c != b && self.level[c] == UNSEEN {
                        self.level[c] = depth + 1;
                        self.queue.push(c as u32);
                        if self.load[c] < cap && sink_depth == UNSEEN {
                            sink_depth = depth + 1;
                        }
                    }
                }
            }
        }
        if sink_depth == UNSEEN {
            return Phase::Stuck;
        }
        for s in 0..sources {
            let s = self.queue[s];
            while self.load[s as usize] > cap && self.augment_from(s, cap, sink_depth) {}
        }
        self.reset_search();
        Phase::Progress
    }

    /// Depth-first search along the layers from `s` to a bin with room at depth `sink`;
    /// moves the balls along the path if found.
    fn augment_from(&mut self, s: u32, cap: u32, sink: u32) -> bool {
        let d = self.d;
        self.path.clear();
        self.path_ball.clear();
        self.path.push(s);
        while let Some(&b) = self.path.last() {
            let bu = b as usize;
            let depth = self.level[bu];
            if depth == sink {
                if self.load[bu] < cap {
                    for (k, &x) in self.path_ball.iter().enumerate() {
                        self.assign[x as usize] = self.path[k + 1];
                    }
                    self.load[s as usize] -= 1;
                    self.load[bu] += 1;
                    self.augmentations += 1;
                    return true;
                }
                self.level[bu] = DEAD;
                self.path.pop();
                self.path_ball.pop();
                continue;
            }
            let mut next = None;
            let end = self.inc_off[bu + 1];
            while self.ptr_ball[bu] < end {
                let x = self.inc[self.ptr_ball[bu] as usize] as usize;
                if self.assign[x] as usize == bu {
                    while (self.ptr_choice[bu] as usize) < d {
                        let c = self.choices[x * d + self.ptr_choice[bu] as usize];
                        if c != b && self.level[c as usize] == depth + 1 {
                            next = Some((c, x as u32));
                            break;
                        }
                        self.ptr_choice[bu] += 1;
                    }
                    if next.is_some() {
                        break;
                    }
                }
                self.ptr_ball[bu] += 1;
                self.ptr_choice[bu] = 0;
            }
            match next {
                Some((c, x)) => {
                    self.path.push(c);
                    self.path_ball.push(x);
                }
                None => {
                    self.level[bu] = DEAD;
                    self.path.pop();
                    self.path_ball.pop();
                }
            }
        }
        false
    }
}

/// The minimum possible maximum load of `choices` (see the module docs for the algorithm
/// and the certificate).
pub fn offline_optimum(choices: &Choices) -> OfflineOptimum {
    let m = choices.m();
    let mut s = Solver::new(choices);
    let greedy_max_load = s.greedy();
    if m == 0 {
        return OfflineOptimum {
            max_load: 0,
            lower_bound: 0,
            greedy_max_load: 0,
            assignment: Vec::new(),
            witness: Vec::new(),
            phases: 0,
            augmentations: 0,
        };
    }
    let (lower_bound, mut witness) = s.component_bound();
    let mut cap = lower_bound;
    loop {
        match s.phase(cap) {
            Phase::Done => break,
            Phase::Progress => {}
            Phase::Stuck => {
                witness = s.queue.clone();
                s.reset_search();
                cap += 1;
            }
        }
    }
    witness.sort_unstable();
    OfflineOptimum {
        max_load: cap,
        lower_bound,
        greedy_max_load,
        assignment: s.assign,
        witness,
        phases: s.phases,
        augmentations: s.augmentations,
    }
}

/// `P(Poisson(μ) ≥ j)`, accurate for small `μ` (tail summed directly) and large `μ`.
fn poisson_tail(j: u32, mu: f64) -> f64 {
    if mu <= 0.0 {
        return if j == 0 { 1.0 } else { 0.0 };
    }
    if mu < f64::from(j) + 10.0 {
        // Σ_{i ≥ j} e^{−μ} μ^i / i!
        let mut term = (-mu).exp();
        for i in 1..=j {
            term *= mu / f64::from(i);
        }
        let mut sum = 0.0;
        let mut i = j;
        while term > sum * 1e-17 || i < j + 5 {
            sum += term;
            i += 1;
            term *= mu / f64::from(i);
            if term == 0.0 {
                break;
            }
        }
        sum
    } else {
        let mut term = (-mu).exp();
        let mut head = 0.0;
        for i in 0..j {
            head += term;
            term *= mu / f64::from(i + 1);
        }
        1.0 - head
    }
}

/// The ℓ-orientability threshold `c*(d, ℓ)` of random `d`-uniform hypergraphs with `c·n`
/// edges (`d >= 2`, `ℓ >= 1`): for `c < c*` the off-line optimum of `m = c·n` balls with `d`
/// choices is at most `ℓ` w.h.p., for `c > c*` it exceeds `ℓ`.
///
/// Computed from the `(ℓ+1)`-core: with `π_j(μ) = P(Poisson(μ) ≥ j)`, the core of the
/// hypergraph of density `c` corresponds to the largest solution `μ` of
/// `μ = d·c·π_ℓ(μ)^{d−1}`; it has `π_{ℓ+1}(μ)·n` vertices and `(μ/d)·π_ℓ(μ)·n` edges. The
/// threshold is where the ratio reaches `ℓ`: solve `μ·π_ℓ(μ) = ℓ·d·π_{ℓ+1}(μ)` for the largest
/// root `μ*` (bisection), then `c* = μ* / (d·π_ℓ(μ*)^{d−1})`. For `d = 2, ℓ = 1` the core
/// appears continuously and the limit `μ* → 0` gives `c* = 1/2`.
pub fn orientability_threshold(d: u32, l: u32) -> Result<f64, Error> {
    if d < 2 {
        return Err(Error::invalid("d", d, "an integer >= 2"));
    }
    if l == 0 {
        return Err(Error::invalid("l", l, "an integer >= 1"));
    }
    let (df, lf) = (f64::from(d), f64::from(l));
    let f = |mu: f64| mu * poisson_tail(l, mu) - lf * df * poisson_tail(l + 1, mu);
    let c_of = |mu: f64| mu / (df * poisson_tail(l, mu).powi(d as i32 - 1));
    // f > 0 for large μ (f ≈ μ − ℓd); scan down to the largest sign change.
    let mut hi = lf * df + 20.0;
    let mut lo = hi;
    loop {
        lo *= 0.99;
        if lo < 1e-6 {
            // No negative region: the core appears continuously (d = 2, ℓ = 1).
            return Ok(c_of(1e-6));
        }
        if f(lo) < 0.0 {
            break;
        }
        hi = lo;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(c_of(0.5 * (lo + hi)))
}

/// The asymptotic off-line optimum for `m = c·n` balls with `d` choices: the smallest
/// `ℓ >= 1` with `c < c*(d, ℓ)` ([`orientability_threshold`]), or `None` if `c` is within
/// `1e-9` of a threshold. For `d = 1` use the One-Choice maximum load instead (`Err`).
pub fn predicted_optimum(c: f64, d: u32) -> Result<Option<u32>, Error> {
    if !(c.is_finite() && c > 0.0) {
        return Err(Error::invalid("c", c, "a positive density m/n"));
    }
    let mut l = 1;
    loop {
        let t = orientability_threshold(d, l)?;
        if (c - t).abs() < 1e-9 {
            return Ok(None);
        }
        if c < t {
            return Ok(Some(l));
        }
        l += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_tail_matches_both_branches() {
        for &mu in &[0.1f64, 1.0, 5.0, 12.0, 30.0] {
            for j in 0..6 {
                let direct: f64 = 1.0
                    - (0..j)
                        .map(|i| (-mu).exp() * mu.powi(i) / f64::from((1..=i).product::<i32>()))
                        .sum::<f64>();
                assert!((poisson_tail(j as u32, mu) - direct).abs() < 1e-12, "mu {mu} j {j}");
            }
        }
    }
}
