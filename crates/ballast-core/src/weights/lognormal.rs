//! Log-normal weights: every moment finite, the moment generating function not.

use rand::RngCore;
use rand_distr::Distribution;

use super::{law, WeightLaw};
use crate::params::ParamType;

law! {
    /// `exp(N(μ, σ²))` (mean `exp(μ + σ²/2)`; its moment generating function is infinite
    /// for every positive argument).
    LogNormal = "lognormal",
        "exp(N(mu, sigma^2)), mean exp(mu + sigma^2/2): no finite moment generating function" {
        /// μ of the underlying normal.
        mu: ParamType::Real => -0.5, "mean of the normal";
        /// σ `>= 0` of the underlying normal.
        sigma: ParamType::NonNeg => 1.0, "standard deviation of the normal";
    }
}

impl WeightLaw for LogNormal {
    type Sampler = rand_distr::LogNormal<f64>;
    fn mean(&self) -> f64 {
        (self.mu + 0.5 * self.sigma * self.sigma).exp()
    }
    fn sampler(&self) -> Option<Self::Sampler> {
        rand_distr::LogNormal::new(self.mu, self.sigma).ok()
    }
    #[inline]
    fn draw<R: RngCore + ?Sized>(d: &Self::Sampler, rng: &mut R) -> f64 {
        d.sample(rng)
    }
}

#[cfg(test)]
mod tests {
    use statrs::distribution::ContinuousCDF;

    use crate::weights::testing::fits_and_rejects;
    use crate::weights::Weights;

    /// Seed 7101; the wrong variant's σ is 15 % too large.
    #[test]
    fn draws_lognormal_and_the_test_rejects_a_wrong_sigma() {
        let q = statrs::distribution::LogNormal::new(-0.5, 1.0).unwrap();
        let law = Weights::LogNormal { mu: -0.5, sigma: 1.0 };
        let wrong = Weights::LogNormal { mu: -0.5, sigma: 1.15 };
        fits_and_rejects(law, &|p| q.inverse_cdf(p), wrong, 7101);
    }
}
