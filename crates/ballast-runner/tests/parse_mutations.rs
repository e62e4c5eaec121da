//! `Experiment::parse` never panics: a deterministic stand-in for the `cargo fuzz` target
//! (fuzz/, which needs libFuzzer) that runs in CI. Byte flips, deletions, insertions of
//! TOML-significant text, truncations and splices of the committed configs, fixed seed; plus
//! the inputs that crashed or hung the fuzzer once.

use std::path::Path;

use ballast_runner::Experiment;

/// xorshift64*: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "=",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\n",
    "#",
    ".",
    "-",
    "0",
    "1e999",
    "nan",
    "inf",
    "-1",
    "[[series]]\n",
    "kind",
    "process",
    "beta",
    "\"k*n\"",
    "\"1/0\"",
    "[quick]\n",
    "{}",
    "[]",
    "true",
    "\"\"",
    "grid",
    "x",
    "série",
    "\u{0}",
];

fn parse(src: &str) {
    let _ = Experiment::parse("fuzz/item", Path::new("fuzz.toml"), src);
}

/// A mutation of `a` (and sometimes `b`), as valid UTF-8.
fn mutate(rng: &mut Rng, a: &[u8], b: &[u8]) -> String {
    let mut v = a.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(7);
            }
            1 if !v.is_empty() => {
                let end = (at + 1 + rng.below(40)).min(v.len());
                v.drain(at.min(end)..end);
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            3 => v.truncate(at),
            4 if !b.is_empty() => {
                let from = rng.below(b.len());
                let end = (from + rng.below(400)).min(b.len());
                v.splice(at..at, b[from..end].iter().copied());
            }
            _ => {
                // Duplicate a line elsewhere (repeated keys, tables).
                let text = String::from_utf8_lossy(&v).into_owned();
                let lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let l = lines[rng.below(lines.len())].to_string() + "\n";
                    let at = at.min(v.len());
                    v.splice(at..at, l.bytes());
                }
            }
        }
    }
    String::from_utf8_lossy(&v).into_owned()
}

#[test]
fn mutated_configs_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let files: Vec<Vec<u8>> = ballast_runner::discover(&root)
        .unwrap()
        .into_iter()
        .map(|(_, p)| std::fs::read(p).unwrap())
        .collect();
    assert!(files.len() > 20);
    let mut rng = Rng(0x5eed_ba11_a570_0001);
    for _ in 0..3000 {
        let a = &files[rng.below(files.len())];
        let b = &files[rng.below(files.len())];
        parse(&mutate(&mut rng, a, b));
    }
}
