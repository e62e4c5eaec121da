//! `Experiment::from_table`: a config built in memory (as `ballast simulate` builds the
//! one-point config of its arguments) is validated and planned exactly as the same config
//! read from text, without being written out and read back; its problems have no place.

use std::path::Path;

use ballast_runner::{ConfigProblem, Error, Experiment};

const SRC: &str = r#"
title = "test"
seed = 7
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }

[point]
n = 100
b = "k * n"
batches = 4

[[series]]
name = "beta"
process = { kind = "one_plus_beta", beta = "1 / k" }
tie_break = "first"

[[series]]
name = "two"
process = { kind = "two_choice" }
weights = { kind = "exp", mean = 2 }
"#;

fn table(src: &str) -> toml::Table {
    src.parse().expect("test configs are TOML")
}

fn problems(r: Result<Experiment, Error>) -> Vec<ConfigProblem> {
    match r {
        Err(Error::Config { errors, .. }) => errors,
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("the config should be rejected"),
    }
}

#[test]
fn a_table_plans_the_runs_of_its_text() {
    let path = Path::new("item.toml");
    let text = Experiment::parse("t/item", path, SRC).unwrap();
    let built = Experiment::from_table("t/item", path, &table(SRC)).unwrap();
    for quick in [false, true] {
        let (a, b) = (text.plan(quick).unwrap(), built.plan(quick).unwrap());
        assert_eq!(a.points.len(), 4);
        assert_eq!(format!("{:?}", a.points), format!("{:?}", b.points));
        assert_eq!(a.runs, b.runs);
    }
    assert_eq!(text.title(), built.title());
}

#[test]
fn a_tables_problems_are_the_texts_without_places() {
    let bad = SRC.replace("\"1 / k\"", "\"k + 1\"").replace("\"first\"", "\"frist\"");
    let path = Path::new("item.toml");
    let from_text = problems(Experiment::parse("t/item", path, &bad));
    let from_table = problems(Experiment::from_table("t/item", path, &table(&bad)));
    assert!(from_text.len() >= 2, "{from_text:?}");
    assert!(from_text.iter().all(|p| p.place.is_some()), "{from_text:?}");
    assert!(from_table.iter().all(|p| p.place.is_none()), "{from_table:?}");
    let messages = |ps: &[ConfigProblem]| -> Vec<String> {
        let mut m: Vec<String> = ps.iter().map(|p| p.message.clone()).collect();
        m.sort();
        m
    };
    assert_eq!(messages(&from_text), messages(&from_table));
}

#[test]
fn a_tables_unknown_field_is_refused() {
    let bad = SRC.replace("seed = 7", "seed = 7\nseeds = 8");
    let from_table = problems(Experiment::from_table("t/item", Path::new("x"), &table(&bad)));
    assert_eq!(from_table.len(), 1, "{from_table:?}");
    assert!(from_table[0].message.contains("unknown field `seeds`"), "{from_table:?}");
    assert_eq!(from_table[0].place, None);
}

#[test]
fn non_allocation_kinds_read_from_a_table_too() {
    let src = r#"
kind = "dynamic"
title = "rbb"
seed = 1
runs = 2
x = { variable = "k", label = "m/n" }
grid = { k = [1, 2] }
point = { n = 50, m = "k * n", rounds = 100 }

[[series]]
name = "RBB"
process = { kind = "rbb" }
statistic = "avg_max_load"
"#;
    let path = Path::new("dyn.toml");
    let text = Experiment::parse("t/dyn", path, src).unwrap();
    let built = Experiment::from_table("t/dyn", path, &table(src)).unwrap();
    assert_eq!(text.title(), built.title());
    let bad = src.replace("rounds = 100", "rounds = 100, roundz = 3");
    let errs = problems(Experiment::from_table("t/dyn", path, &table(&bad)));
    assert!(errs.iter().any(|p| p.message.contains("roundz") && p.place.is_none()), "{errs:?}");
}
