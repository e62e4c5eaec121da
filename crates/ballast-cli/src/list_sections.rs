//! The sections of `ballast list` for the settings (with the delay modes), the stopping
//! rules, the statistics (with recovery time), the potentials and the off-line optimum. Each
//! section is one list of entries read from the declarations that own the items (the core's
//! enums, the runner's [`Statistic`] by [`Kind`], ballast-potential's [`POTENTIALS`],
//! the `--offline` flag of `simulate`); the text and the JSON are both made from it.

use std::fmt::Write as _;

use ballast_core::delay::DelayMode;
use ballast_core::{Setting, Stop};
use ballast_potential::POTENTIALS;
use ballast_runner::{Kind, Statistic};
use serde_json::{json, Value};

/// One entry of a section: its name, how it is written (flags, config keys; may be empty),
/// its meaning, and what it needs (may be empty).
pub(crate) struct Entry {
    pub name: &'static str,
    pub form: String,
    pub doc: String,
    pub needs: &'static str,
}

impl Entry {
    fn new(name: &'static str, form: impl Into<String>, doc: impl Into<String>) -> Self {
        Entry { name, form: form.into(), doc: doc.into(), needs: "" }
    }

    fn json(&self) -> Value {
        json!({ "name": self.name, "form": self.form, "doc": self.doc, "needs": self.needs })
    }

    fn text(&self, s: &mut String, indent: &str) {
        let _ = writeln!(s, "{indent}{:<23} {}", self.name, self.doc);
        let sub = format!("{indent}    ");
        if !self.form.is_empty() {
            let _ = writeln!(s, "{sub}{:<19} {}", "written:", self.form);
        }
        if !self.needs.is_empty() {
            let _ = writeln!(s, "{sub}{:<19} {}", "needs:", self.needs);
        }
    }
}

/// One example of every setting, in the order listed (a test keeps it complete).
const SETTINGS: [Setting; 3] = [
    Setting::Sequential,
    Setting::Batched { b: 1 },
    Setting::Delay { tau: 1, mode: DelayMode::Random },
];

/// The delay modes, in the order listed (a test keeps it complete).
pub(crate) const DELAY_MODES: [DelayMode; 2] = [DelayMode::Random, DelayMode::Adversarial];

/// The listing entry of a setting (exhaustive: a new setting does not compile unlisted).
pub(crate) fn setting_entry(s: &Setting) -> Entry {
    match s {
        Setting::Sequential => Entry::new(
            "sequential",
            "the default; setting = \"sequential\" in a series",
            "every decision sees the current loads (default)",
        ),
        Setting::Batched { .. } => Entry::new(
            "batched",
            "--batch B (B >= 1); setting = \"batched\" with b = B",
            "batches of b balls decide on the loads frozen at the batch start",
        ),
        Setting::Delay { .. } => Entry::new(
            "delay",
            "--tau TAU [--delay-mode MODE]; setting = \"delay\" with tau = TAU, delay_mode = \"MODE\"",
            "every sampled bin reports one of its loads of the last tau steps (unit weights, \
             bin engine; modes below)",
        ),
    }
}

/// The name of a setting, as listings and the per-process `settings` show it.
pub(crate) fn setting_name(s: &Setting) -> &'static str {
    setting_entry(s).name
}

/// One-line meaning of a delay mode (exhaustive).
fn delay_mode_doc(m: DelayMode) -> &'static str {
    match m {
        DelayMode::Random => "the load at a uniformly random step of the window (default)",
        DelayMode::Adversarial => {
            "two_choice only: the lighter sample reports its current load, the heavier its \
             oldest of the window, reversing the decision where possible"
        }
    }
}

/// One-line meaning of a stopping rule (exhaustive).
fn stop_doc(s: Stop) -> &'static str {
    match s {
        Stop::Truncate => "cut the last multi-ball step at m balls (and at batch ends): exactly m",
        Stop::Finish => "complete the step that reaches m (or a batch end): m or a few more balls",
    }
}

/// What an allocation statistic needs besides the series' process (empty for nothing).
fn statistic_needs(s: Statistic) -> &'static str {
    match s {
        Statistic::RecoveryTime => {
            "recovery_target = GAP (a number or a formula) in the series (--recovery-target \
             GAP on simulate); the sequential or batched setting, a process other than equalize"
        }
        Statistic::PotentialTrajectory => "potentials = [...] in the series (see Potentials)",
        Statistic::ProbesDistribution => "the bin engine (--probes on simulate)",
        Statistic::LoadDistribution => {
            "unit weights; not with recovery_target or equalize (--loads on simulate)"
        }
        Statistic::TopLoads => {
            "unit weights; top_k = K in the series (default 10); not with recovery_target or \
             equalize (--loads --top-k K on simulate)"
        }
        Statistic::BallsAbove => {
            "unit weights; above = C in the series (the capacity c, a non-negative integer); \
             not with recovery_target or equalize (--above C on simulate)"
        }
        Statistic::SortedLoads => {
            "unit weights, n <= 100000; not with recovery_target or equalize (--loads on \
             simulate)"
        }
        _ => "",
    }
}

fn settings() -> Vec<Entry> {
    SETTINGS.iter().map(setting_entry).collect()
}

fn delay_modes() -> Vec<Entry> {
    DELAY_MODES
        .iter()
        .map(|&m| Entry::new(m.name(), format!("delay_mode = \"{}\"", m.name()), delay_mode_doc(m)))
        .collect()
}

fn stops() -> Vec<Entry> {
    Stop::ALL
        .iter()
        .map(|&(name, s)| {
            Entry::new(name, format!("--stop {name}; stop = \"{name}\""), stop_doc(s))
        })
        .collect()
}

fn statistics() -> Vec<Entry> {
    Statistic::allocation()
        .iter()
        .map(|&s| Entry { needs: statistic_needs(s), ..Entry::new(s.name(), "", s.describe()) })
        .collect()
}

/// The statistics of the graph, dynamic and potential items (the `measures` of the JSON).
fn measures() -> Vec<Entry> {
    Statistic::ALL
        .iter()
        .filter(|s| s.kinds().iter().any(|&k| k != Kind::Allocation))
        .map(|&m| Entry::new(m.name(), "", m.describe()))
        .collect()
}

fn potentials() -> Vec<Entry> {
    POTENTIALS
        .iter()
        .map(|k| {
            let params = if k.params.is_empty() { "no parameters" } else { k.params };
            Entry::new(k.name, format!("{params}; e.g. --potential {}", k.example), k.doc)
        })
        .collect()
}

/// The `--offline` flag of `simulate`, with its help text as declared there.
fn offline() -> Entry {
    use clap::Args as _;
    let cmd = crate::simulate::SimulateArgs::augment_args(clap::Command::new("simulate"));
    let arg = cmd.get_arguments().find(|a| a.get_id() == "offline");
    let doc = arg.and_then(|a| a.get_help()).map(ToString::to_string).unwrap_or_default();
    let value = arg
        .and_then(|a| a.get_value_names())
        .and_then(|v| v.first())
        .map(ToString::to_string)
        .unwrap_or_default();
    let form = format!(
        "ballast simulate --offline {value} --n N --m M; statistic = \"{}\" or \"{}\" in \
         kind = \"graph\" configs",
        Statistic::OfflineOptimum.name(),
        Statistic::GreedyMaxLoad.name()
    );
    Entry::new("offline", form, doc)
}

/// The text of these sections, in listing order.
pub(crate) fn render(s: &mut String) {
    let _ = writeln!(s, "\nSettings:");
    for e in settings() {
        e.text(s, "  ");
    }
    let _ = writeln!(s, "  Delay modes (--delay-mode MODE, default random):");
    for e in delay_modes() {
        e.text(s, "    ");
    }
    let _ = writeln!(s, "\nStopping rules (--stop RULE; multi-ball steps only):");
    for e in stops() {
        e.text(s, "  ");
    }
    let _ = writeln!(s, "\nStatistics of allocation series (statistic = \"…\" or also = [\"…\"]):");
    for e in statistics() {
        e.text(s, "  ");
    }
    let _ = writeln!(s, "\nStatistics of graph, dynamic and potential items (statistic = \"…\"):");
    for e in measures() {
        e.text(s, "  ");
    }
    let _ = writeln!(
        s,
        "\nPotentials (--potential SPEC, repeatable; potentials = [\"SPEC\", ...] in a series):"
    );
    for e in potentials() {
        e.text(s, "  ");
    }
    let _ = writeln!(s, "\nOff-line optimum:");
    offline().text(s, "  ");
}

/// The JSON of these sections, as (key, value) pairs of the listing's object.
pub(crate) fn structured() -> Vec<(&'static str, Value)> {
    let list = |v: Vec<Entry>| Value::Array(v.iter().map(Entry::json).collect());
    vec![
        ("settings", list(settings())),
        ("delay_modes", list(delay_modes())),
        ("stops", list(stops())),
        ("statistics", list(statistics())),
        ("measures", list(measures())),
        ("potentials", list(potentials())),
        ("offline", offline().json()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions in [`SETTINGS`] and [`DELAY_MODES`]; exhaustive, so a new setting or mode
    /// does not compile until it is listed.
    fn setting_at(s: &Setting) -> usize {
        match s {
            Setting::Sequential => 0,
            Setting::Batched { .. } => 1,
            Setting::Delay { .. } => 2,
        }
    }

    fn mode_at(m: DelayMode) -> usize {
        match m {
            DelayMode::Random => 0,
            DelayMode::Adversarial => 1,
        }
    }

    #[test]
    fn settings_and_delay_modes_are_complete() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert_eq!(setting_at(s), i);
        }
        for (i, m) in DELAY_MODES.iter().enumerate() {
            assert_eq!(mode_at(*m), i);
            assert_eq!(DelayMode::from_name(m.name()).unwrap(), *m);
        }
    }

    #[test]
    fn every_statistic_is_listed_once_per_section_of_its_kinds() {
        let listed = statistics();
        assert_eq!(listed.len(), Statistic::allocation().len());
        for (i, s) in Statistic::allocation().iter().enumerate() {
            assert_eq!(listed[i].name, s.name());
        }
        let others = measures();
        assert_eq!(others.len(), 18);
        for s in Statistic::ALL {
            let in_allocation = listed.iter().filter(|e| e.name == s.name()).count();
            let in_others = others.iter().filter(|e| e.name == s.name()).count();
            let elsewhere = s.kinds().iter().any(|&k| k != Kind::Allocation);
            assert_eq!(in_allocation, usize::from(s.kinds().contains(&Kind::Allocation)));
            assert_eq!(in_others, usize::from(elsewhere), "{}", s.name());
        }
    }

    #[test]
    fn offline_reads_the_simulate_flag() {
        let e = offline();
        assert!(e.doc.contains("off-line d-choice optimum"), "{}", e.doc);
        assert!(e.form.contains("--offline D "), "{}", e.form);
    }
}
