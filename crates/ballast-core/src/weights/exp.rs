//! Exponential weights: the batched papers' weighted case.

use rand::RngCore;
use rand_distr::{Distribution, Exp1};

use super::{law, WeightLaw};
use crate::params::ParamType;

law! {
    /// I.i.d. exponential weights with the given mean, drawn after the bin choice.
    Exp = "exp", "exponential with the given mean" {
        /// Mean weight, positive and finite.
        mean: ParamType::Above(0.0) => 1.0, "mean weight, > 0";
    }
}

impl WeightLaw for Exp {
    /// The mean: a weight is the mean times a standard exponential.
    type Sampler = f64;
    fn mean(&self) -> f64 {
        self.mean
    }
    fn sampler(&self) -> Option<f64> {
        Some(self.mean)
    }
    #[inline]
    fn draw<R: RngCore + ?Sized>(mean: &f64, rng: &mut R) -> f64 {
        let e: f64 = Exp1.sample(rng);
        mean * e
    }
}

#[cfg(test)]
mod tests {
    use statrs::distribution::ContinuousCDF;

    use crate::weights::testing::fits_and_rejects;
    use crate::weights::Weights;

    /// Seed 7104; the wrong variant's mean is 5 % off (chi-square about 73 there).
    #[test]
    fn draws_exp_and_the_test_rejects_a_mean_five_percent_off() {
        let q = statrs::distribution::Gamma::new(1.0, 1.0 / 2.0).unwrap();
        let wrong = Weights::Exp { mean: 2.1 };
        fits_and_rejects(Weights::Exp { mean: 2.0 }, &|p| q.inverse_cdf(p), wrong, 7104);
    }
}
