//! The shape of One-Choice RBB's level histogram and the occupancy work of a round on it
//! (`ballast_benches::rbb_levels`): for each (n, m/n), warm a dense run up for 4k² + 200
//! rounds (as the `floor --dynamic` table does), then run 200 rounds on the histogram and
//! print the occupied span of levels, the throws per round and the occupancy sampler's
//! binomial draws, recursive calls and one-by-one balls per round.
//!
//! `cargo run --release -p ballast-benches --example rbb_levels_shape`
use ballast_benches::rbb_levels::RbbOnLevels;
use ballast_core::sim_rng;
use ballast_dynamic::{Rbb, RbbConfig, RoundProcess};

fn main() {
    let cases = [
        (100, 52),
        (1000, 1),
        (1000, 52),
        (10_000, 1),
        (10_000, 4),
        (10_000, 16),
        (10_000, 52),
        (100_000, 52),
    ];
    println!("| n | m/n | levels | throws/round | binomials/round | calls/round | balls one by one/round |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, k) in cases {
        let mut p = Rbb::new(&RbbConfig::one_choice(n, k * n as u64)).expect("valid");
        let mut rng = sim_rng(1);
        for _ in 0..(4 * k * k + 200) {
            p.round(&mut rng);
        }
        let mut q = RbbOnLevels::from_loads(p.loads());
        let levels = q.state().levels();
        let rounds = 200;
        let moved = q.run(rounds, 2);
        let st = q.stats();
        let per = |x: u64| x as f64 / rounds as f64;
        println!(
            "| {n} | {k} | {levels} | {:.0} | {:.0} | {:.0} | {:.0} |",
            per(moved),
            per(st.binomials),
            per(st.calls),
            per(st.naive_balls)
        );
    }
}
