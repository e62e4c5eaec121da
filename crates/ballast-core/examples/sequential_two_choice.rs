//! The power of two choices: sequential One-Choice versus Two-Choice gaps as m grows.
//!
//! Run with `cargo run --release -p ballast-core --example sequential_two_choice`.

use ballast_core::{simulate_seeded, ProcessSpec, RunSpec};

fn main() -> Result<(), ballast_core::Error> {
    let n = 10_000;
    for m in [n, 10 * n, 100 * n, 1000 * n] {
        let one = simulate_seeded(&RunSpec::new(ProcessSpec::OneChoice, n, m), 7)?;
        let two = simulate_seeded(&RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m), 7)?;
        println!(
            "m = {m:>10}: One-Choice gap {:>7.2}, Two-Choice gap {:>5.2}",
            one.final_gap, two.final_gap
        );
    }
    Ok(())
}
