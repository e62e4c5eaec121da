//! Constant weights: the weighted engine with a law that draws no random number.

use rand::RngCore;

use super::{law, WeightLaw};
use crate::params::ParamType;

law! {
    /// Every ball has weight `w` (real-valued loads: the weighted engine with a law that
    /// draws no random number).
    Constant = "constant", "every ball weighs w (the weighted engine without random weights)" {
        /// The weight, positive and finite.
        w: ParamType::Above(0.0) => 1.0, "the weight, > 0";
    }
}

impl WeightLaw for Constant {
    /// The weight.
    type Sampler = f64;
    fn mean(&self) -> f64 {
        self.w
    }
    fn sampler(&self) -> Option<f64> {
        Some(self.w)
    }
    #[inline]
    fn draw<R: RngCore + ?Sized>(w: &f64, _rng: &mut R) -> f64 {
        *w
    }
}

#[cfg(test)]
mod tests {
    use crate::rng::sim_rng;
    use crate::weights::Sampler;
    use crate::weights::Weights;

    /// Exact: every draw is `w`, and no random number is used (the generator's next output
    /// is the one a fresh generator of the same seed gives first).
    #[test]
    fn every_draw_is_w_and_draws_no_random_number() {
        let mut rng = sim_rng(7200);
        let c = Sampler::of(Weights::Constant { w: 2.5 }).unwrap();
        assert!((0..1000).all(|_| c.draw(&mut rng) == 2.5));
        assert_eq!(rand::RngCore::next_u64(&mut rng), rand::RngCore::next_u64(&mut sim_rng(7200)));
        let wrong = Sampler::of(Weights::Exp { mean: 2.5 }).unwrap();
        assert!((0..1000).any(|_| wrong.draw(&mut rng) != 2.5), "the test finds a random law");
    }
}
