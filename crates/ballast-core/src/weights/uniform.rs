//! Uniform weights: bounded, with a spread.

use rand::RngCore;
use rand_distr::Distribution;

use super::{law, WeightLaw};
use crate::params::ParamType;
use crate::Error;

law! {
    /// Uniform on `[low, high)`.
    Uniform = "uniform", "uniform on [low, high)" {
        /// Lower end, `>= 0`.
        low: ParamType::NonNeg => 0.0, "lower end, >= 0";
        /// Upper end, `> low`.
        high: ParamType::NonNeg => 2.0, "upper end, > low";
    }
}

impl WeightLaw for Uniform {
    type Sampler = rand_distr::Uniform<f64>;
    fn mean(&self) -> f64 {
        0.5 * (self.low + self.high)
    }
    fn check(&self) -> Result<(), Error> {
        if self.high > self.low {
            return Ok(());
        }
        Err(Error::invalid("weights.high", self.high, "a finite number greater than `low`"))
    }
    fn sampler(&self) -> Option<Self::Sampler> {
        rand_distr::Uniform::new(self.low, self.high).ok()
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

    /// Seed 7103; the wrong variant starts 0.05 too low.
    #[test]
    fn draws_uniform_and_the_test_rejects_a_wrong_interval() {
        let q = statrs::distribution::Uniform::new(0.5, 1.5).unwrap();
        let law = Weights::Uniform { low: 0.5, high: 1.5 };
        let wrong = Weights::Uniform { low: 0.45, high: 1.5 };
        fits_and_rejects(law, &|p| q.inverse_cdf(p), wrong, 7103);
    }
}
