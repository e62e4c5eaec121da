//! Neumaier's compensated summation (an improved Kahan–Babuška sum): the error of a long
//! running sum stays at a few units in the last place of the result instead of growing
//! with the number of terms.

/// A running sum with a separate compensation term.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Neumaier {
    sum: f64,
    comp: f64,
}

impl Neumaier {
    /// Adds `x`.
    #[inline]
    pub(crate) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.comp += (self.sum - t) + x;
        } else {
            self.comp += (x - t) + self.sum;
        }
        self.sum = t;
    }

    /// Multiplies the sum by `f` (both parts, so the compensation keeps its meaning).
    #[inline]
    pub(crate) fn scale(&mut self, f: f64) {
        self.sum *= f;
        self.comp *= f;
    }

    /// The compensated value.
    #[inline]
    pub(crate) fn value(&self) -> f64 {
        self.sum + self.comp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_what_naive_summation_loses() {
        let mut s = Neumaier::default();
        s.add(1.0);
        let mut naive = 1.0f64;
        for _ in 0..1_000_000 {
            s.add(1e-16);
            naive += 1e-16;
        }
        assert_eq!(naive, 1.0);
        assert!((s.value() - (1.0 + 1e-10)).abs() < 1e-22);
        // Large cancelling terms.
        let mut s = Neumaier::default();
        for x in [1e100, 1.0, -1e100] {
            s.add(x);
        }
        assert_eq!(s.value(), 1.0);
    }
}
