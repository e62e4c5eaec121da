//! The Markdown report on arbitrary config texts (item name, title, series names, reference
//! labels, axis label, grid variable, notes, a warning, the command): its structure must be
//! the one it has with plain texts (`ballast_runner::check_report`: the same headings, table
//! rows with the same number of cells, list items and blank lines around the notes, no `<`
//! that could open HTML outside code spans, notes that close their code fences and open no
//! HTML block), and building it must never panic.
//!
//! Input: the fields separated by byte 0x1F, series names and labels by 0x1E.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let texts = ballast_runner::ReportTexts::from_bytes(data);
    if let Err(e) = ballast_runner::check_report(&texts) {
        panic!("{e}\n{texts:?}");
    }
});
