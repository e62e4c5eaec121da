//! Gap of Two-Choice versus (1+β) in the batched setting, from Rust code.
//!
//! Run with `cargo run --release -p ballast-core --example batched_gap`.

use ballast_core::{derive_seed, simulate_seeded, ProcessSpec, RunSpec};

fn main() -> Result<(), ballast_core::Error> {
    let n = 1000;
    let runs = 10;
    println!("{:>5}  {:>12}  {:>14}", "b/n", "Two-Choice", "(1+beta) 0.5");
    for k in [1u64, 5, 10, 20] {
        let b = k * n;
        let m = (1000 / k) * b; // about n^2 balls in floor(1000/k) batches, as in the papers
        let mut means = Vec::new();
        for process in [ProcessSpec::DChoice { d: 2 }, ProcessSpec::OnePlusBeta { beta: 0.5 }] {
            let spec = RunSpec::new(process, n, m).batched(b);
            let mut total = 0.0;
            for r in 0..runs {
                // Statistic of the batched papers: the largest gap over the batch ends.
                total += simulate_seeded(&spec, derive_seed(1, &[k, r]))?.max_gap;
            }
            means.push(total / runs as f64);
        }
        println!("{k:>5}  {:>12.2}  {:>14.2}", means[0], means[1]);
    }
    Ok(())
}
