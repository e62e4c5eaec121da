//! Pareto weights: heavy-tailed, infinite variance for `α <= 2`.

use rand::RngCore;
use rand_distr::Distribution;

use super::{law, WeightLaw};
use crate::params::ParamType;

law! {
    /// Pareto with tail index `α` and minimum `scale` (`P(W > w) = (scale/w)^α`, mean
    /// `α·scale/(α − 1)`): heavy-tailed, infinite variance for `α <= 2`.
    Pareto = "pareto",
        "Pareto, P(W > w) = (scale/w)^alpha: heavy-tailed, infinite variance for alpha <= 2" {
        /// Tail index `α > 1` (a finite mean, so `W/n` is meaningful).
        alpha: ParamType::Above(1.0) => 1.5, "tail index, > 1 (finite mean)";
        /// Minimum weight, `> 0`.
        scale: ParamType::Above(0.0) => 1.0 / 3.0, "minimum weight, > 0";
    }
}

impl WeightLaw for Pareto {
    type Sampler = rand_distr::Pareto<f64>;
    fn mean(&self) -> f64 {
        self.alpha * self.scale / (self.alpha - 1.0)
    }
    fn sampler(&self) -> Option<Self::Sampler> {
        rand_distr::Pareto::new(self.scale, self.alpha).ok()
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

    /// Seed 7102; the wrong variant swaps the two parameters.
    #[test]
    fn draws_pareto_and_the_test_rejects_swapped_parameters() {
        let q = statrs::distribution::Pareto::new(1.0 / 3.0, 1.5).unwrap(); // scale, shape
        let law = Weights::Pareto { alpha: 1.5, scale: 1.0 / 3.0 };
        let wrong = Weights::Pareto { alpha: 1.0 / 3.0 + 1.0, scale: 1.5 };
        fits_and_rejects(law, &|p| q.inverse_cdf(p), wrong, 7102);
    }
}
