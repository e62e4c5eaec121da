//! Gamma weights: light-tailed, from nearly constant (large shape) to very spread (small).

use rand::RngCore;
use rand_distr::Distribution;

use super::{law, WeightLaw};
use crate::params::ParamType;

law! {
    /// Gamma with shape `k` and scale `θ` (mean `kθ`).
    Gamma = "gamma", "gamma with shape k and scale theta (mean k*theta)" {
        /// Shape `k > 0`.
        shape: ParamType::Above(0.0) => 1.0, "shape k, > 0";
        /// Scale `θ > 0`.
        scale: ParamType::Above(0.0) => 1.0, "scale theta, > 0";
    }
}

impl WeightLaw for Gamma {
    type Sampler = rand_distr::Gamma<f64>;
    fn mean(&self) -> f64 {
        self.shape * self.scale
    }
    fn sampler(&self) -> Option<Self::Sampler> {
        rand_distr::Gamma::new(self.shape, self.scale).ok()
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

    /// Seed 7100; the wrong variant reads the scale as a rate (statrs takes the rate).
    #[test]
    fn draws_gamma_and_the_test_rejects_the_scale_read_as_a_rate() {
        let q = statrs::distribution::Gamma::new(2.0, 1.0 / 0.5).unwrap();
        let wrong = Weights::Gamma { shape: 2.0, scale: 2.0 };
        fits_and_rejects(
            Weights::Gamma { shape: 2.0, scale: 0.5 },
            &|p| q.inverse_cdf(p),
            wrong,
            7100,
        );
    }
}
