//! Two-point weights: bounded, the simplest law with two sizes of balls.

use rand::RngCore;

use super::{law, WeightLaw};
use crate::params::ParamType;
use crate::Error;

law! {
    /// `high` with probability `p`, else `low`.
    TwoPoint = "two_point", "high with probability p, else low" {
        /// The weight with probability `1 − p`, `>= 0`.
        low: ParamType::NonNeg => 0.0, "weight with probability 1 - p";
        /// The weight with probability `p`, `>= low`.
        high: ParamType::NonNeg => 2.0, "weight with probability p, >= low";
        /// Probability of `high`, in `[0, 1]`.
        p: ParamType::Unit => 0.5, "probability of high";
    }
}

impl WeightLaw for TwoPoint {
    /// The law itself: one coin per ball.
    type Sampler = Self;
    fn mean(&self) -> f64 {
        (1.0 - self.p) * self.low + self.p * self.high
    }
    fn check(&self) -> Result<(), Error> {
        if self.high >= self.low {
            return Ok(());
        }
        Err(Error::invalid("weights.high", self.high, "a finite number at least `low`"))
    }
    fn sampler(&self) -> Option<Self> {
        Some(*self)
    }
    #[inline]
    fn draw<R: RngCore + ?Sized>(law: &Self, rng: &mut R) -> f64 {
        if crate::rng::bernoulli(rng, law.p) {
            law.high
        } else {
            law.low
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rng::sim_rng;
    use crate::weights::testing::DRAWS;
    use crate::weights::Sampler;
    use crate::weights::Weights;

    /// The frequency of `high` in 40 000 draws (seed 7201) against `p`: |z| < 4 (a false
    /// alarm has probability 6·10⁻⁵); `p` read as the probability of `low` gives |z| ≈ 175.
    fn z_of_highs(law: Weights, low: f64, high: f64, p: f64) -> f64 {
        let mut rng = sim_rng(7201);
        let t = Sampler::of(law).unwrap();
        let mut highs = 0u64;
        for _ in 0..DRAWS {
            let w = t.draw(&mut rng);
            assert!(w == low || w == high, "{w}");
            highs += u64::from(w == high);
        }
        let n = DRAWS as f64;
        (highs as f64 - n * p) / (n * p * (1.0 - p)).sqrt()
    }

    #[test]
    fn draws_high_with_probability_p_and_the_test_rejects_one_minus_p() {
        let (low, high, p) = (0.25, 3.0, 0.3);
        let z = z_of_highs(Weights::TwoPoint { low, high, p }, low, high, p);
        assert!(z.abs() < 4.0, "two_point: z = {z:.2}");
        let z = z_of_highs(Weights::TwoPoint { low, high, p: 1.0 - p }, low, high, p);
        assert!(z.abs() > 4.0, "p read as the probability of low passed: z = {z:.2}");
    }
}
