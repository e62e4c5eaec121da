//! Config parser and validator on arbitrary input: `Experiment::parse` must return `Ok` or a
//! config error, never panic, whatever the bytes.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Configs are text: invalid UTF-8 is refused before parsing (`Experiment::from_path`).
    let Ok(source) = std::str::from_utf8(data) else { return };
    if let Ok(exp) = ballast_runner::Experiment::parse("fuzz/item", Path::new("fuzz.toml"), source)
    {
        // (`plan` is not checked: for graph, dynamic and potential items it is the empty
        // stand-in, which refuses to plan.)
        let _ = exp.scale_changes(ballast_runner::Scale::Quick);
        let _ = exp.scale_changes(ballast_runner::Scale::Reduced);
    }
});
