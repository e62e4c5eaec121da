//! `Error::Config` lists structured problems: each has its file, line and column, the series
//! (and grid point) it is about and the message, and displays as the one line the runner has
//! always printed. Front ends that name the place their own way read the parts.

use std::path::Path;

use ballast_runner::{ConfigProblem, Error, Experiment};

const SRC: &str = r#"
title = "test"
seed = 1
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }

[point]
n = 100
b = "k * n"
batches = 4

[[series]]
name = "beta"
process = { kind = "one_plus_beta", beta = "k - 3" }

[[series]]
name = "two"
process = { kind = "two_choice" }
tie_break = "randon"
"#;

fn problems(src: &str) -> Vec<ConfigProblem> {
    match Experiment::parse("t/item", Path::new("item.toml"), src) {
        Err(Error::Config { errors, .. }) => errors,
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("config should be rejected:\n{src}"),
    }
}

#[test]
fn problems_keep_place_context_and_message_apart() {
    let all = problems(SRC);
    let beta = all.iter().find(|p| p.message.contains("beta")).expect("the beta problem");
    assert_eq!(beta.path, Path::new("item.toml"));
    // The parameter's own place: line 15, where `beta = …` is written.
    assert_eq!(beta.place.map(|(l, _)| l), Some(15), "{beta:?}");
    assert_eq!(beta.context.as_deref(), Some("series `beta` at k = 1"), "{beta:?}");
    assert!(!beta.message.starts_with("series `"), "{beta:?}");
    let (l, c) = beta.place.unwrap();
    assert_eq!(
        beta.to_string(),
        format!("item.toml:{l}:{c}: series `beta` at k = 1: {}", beta.message)
    );
    let tie = all.iter().find(|p| p.message.contains("randon")).expect("the tie-break problem");
    assert_eq!(tie.context.as_deref(), Some("series `two`"), "{tie:?}");
    assert_eq!(tie.place.map(|(l, _)| l), Some(20), "{tie:?}");
    // In the order of their places in the file.
    let places: Vec<_> = all.iter().map(|p| p.place.unwrap_or((usize::MAX, 0))).collect();
    let mut sorted = places.clone();
    sorted.sort();
    assert_eq!(places, sorted);
}

#[test]
fn schema_problems_have_a_place_and_no_series_context() {
    let src = SRC.replace("runs = 3", "runs = 3\nrunz = 4");
    let all = problems(&src);
    let unknown = all.iter().find(|p| p.message.contains("runz")).expect("the unknown field");
    assert_eq!(unknown.context, None, "{unknown:?}");
    assert_eq!(unknown.place.map(|(l, _)| l), Some(5), "{unknown:?}");
    assert!(unknown.to_string().starts_with("item.toml:5:"), "{unknown}");
}

#[test]
fn the_error_displays_every_problem_as_its_line() {
    let e = Experiment::parse("t/item", Path::new("item.toml"), SRC).unwrap_err();
    let Error::Config { errors, .. } = &e else { panic!("{e}") };
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        e.to_string(),
        format!("invalid experiment config item.toml:\n{}", lines.join("\n"))
    );
}
