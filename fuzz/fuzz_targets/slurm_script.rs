//! The Slurm script of `ballast slurm` for arbitrary names: every value must come out as
//! exactly itself (one bash word that decodes to it, or a bare `#SBATCH` value free of the
//! characters `sbatch` or a shell would read), in a script otherwise identical to the
//! template, or be refused exactly when it cannot be written (`common/slurm_words.rs`).

#![no_main]

use ballast_cli::SlurmScriptSpec;
use libfuzzer_sys::fuzz_target;

#[path = "../common/slurm_words.rs"]
mod slurm_words;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the scale and which optional options are set; the rest is cut
    // at 0xff bytes into the texts (id, config, out, logs, workdir, binary, partition,
    // account), each read as UTF-8 (invalid bytes become U+FFFD).
    let Some((&flags, rest)) = data.split_first() else { return };
    let mut parts = rest.split(|&b| b == 0xff).map(|p| String::from_utf8_lossy(p).into_owned());
    let mut next = || parts.next().unwrap_or_default();
    let spec = SlurmScriptSpec {
        id: next(),
        config: next(),
        out: next(),
        logs: next(),
        workdir: next(),
        ballast: next(),
        partition: Some(next()).filter(|_| flags & 1 != 0),
        account: Some(next()).filter(|_| flags & 2 != 0),
        shards: 3,
        cpus: 2,
        mem: "4G".into(),
        time: "04:00:00".into(),
        scale: match flags >> 2 & 3 {
            1 => Some("--quick"),
            2 => Some("--reduced"),
            _ => None,
        },
    };
    if let Err(e) = slurm_words::check(&spec) {
        panic!("{e}\nspec: {spec:?}");
    }
});
