//! How the τ-delay setting ([`crate::delay`]) chooses a sampled bin's reported load: plain
//! data, declared beside the other specs.

use crate::Error;

/// How a sampled bin's reported load is chosen from its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayMode {
    /// A uniformly random step of the last τ.
    Random,
    /// The step that reverses Two-Choice's decision where possible.
    Adversarial,
}

impl DelayMode {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::Adversarial => "adversarial",
        }
    }

    /// Parses `random` or `adversarial`.
    pub fn from_name(s: &str) -> Result<Self, Error> {
        match s {
            "random" => Ok(Self::Random),
            "adversarial" => Ok(Self::Adversarial),
            _ => Err(Error::invalid("mode", s, "one of random, adversarial")),
        }
    }
}
