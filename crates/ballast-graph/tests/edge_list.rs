//! The edge-list loader: accepted syntax, policies for loops and repeated edges, and errors
//! that name the file, the line and the problem.

use std::path::PathBuf;

use ballast_core::{sim_rng, ProcessSpec, RunSpec};
use ballast_graph::io::{parse_edge_list, read_edge_list, Duplicates, EdgeListOptions, Loops};
use ballast_graph::{Error, Graph, GraphKind, Neighbors};

fn parse(text: &str) -> Result<ballast_graph::Csr, Error> {
    parse_edge_list(text, "g.txt", &EdgeListOptions::default())
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn accepts_comments_blank_lines_and_any_whitespace() {
    let g = parse("# a 4-cycle\n\n0 1\n1\t2   # trailing\n  2 3\r\n3 0\n# end\n").unwrap();
    assert_eq!((g.n_vertices(), g.n_edges()), (4, 4));
    assert!((0..4).all(|v| g.degree(v) == 2));
}

#[test]
fn errors_name_file_line_column_and_problem_but_not_the_text() {
    assert_eq!(
        error("0 1\n1 2 3\n"),
        "g.txt:2:1: expected two vertex ids separated by whitespace, found 3 fields"
    );
    assert_eq!(
        error("0 1\n\n# x\n  7\n"),
        "g.txt:4:3: expected two vertex ids separated by whitespace, found 1 field"
    );
    assert_eq!(
        error("0 1\n1 xy\n"),
        "g.txt:2:3: a field of 2 characters that is not a vertex id (a non-negative integer)"
    );
    assert!(error("0 -1\n").starts_with("g.txt:1:3: a field of 2 characters"));
    assert!(error("0 1.5\n").starts_with("g.txt:1:3: a field of 3 characters"));
    let e = error("0 99999999999\n");
    assert!(e.starts_with("g.txt:1:3: a vertex id above 4294967294"), "{e}");
    assert!(!e.contains("99999999999"), "{e}");
    assert_eq!(
        error("0 1\n1 1\n"),
        "g.txt:2:1: a loop (both ids equal; loops are rejected, allow them with loops = keep)"
    );
    assert_eq!(
        error("0 1\n1 2\n2 0\n1 0\n"),
        "g.txt:4:1: the edge of line 1 again (use duplicates = merge to ignore repeats, or \
         keep for parallel edges)"
    );
    assert_eq!(
        error("# nothing\n\n"),
        "g.txt: no edges (an edge list needs at least one `u v` line)"
    );
    assert_eq!(
        error("1 2\n2 3\n"),
        "g.txt: vertex 0 occurs in no edge, but ids must cover 0..3 without gaps (n = largest \
         id + 1 = 4) (are the ids 1-based? number vertices from 0)"
    );
    assert!(error("0 1\n1 5\n").contains("vertex 2 occurs in no edge"));
    // The text of a refused line never appears.
    for text in ["PATH=/usr/bin\n", "0 1\nHOME=/root x y\n", "0 1\n0 SECRET\n"] {
        let e = error(text);
        assert!(!e.contains("PATH") && !e.contains("HOME") && !e.contains("SECRET"), "{e}");
    }
}

#[test]
fn loop_and_duplicate_policies() {
    let text = "0 1\n1 0\n1 1\n1 2\n";
    let keep_all = EdgeListOptions { loops: Loops::Keep, duplicates: Duplicates::Keep };
    let g = parse_edge_list(text, "g", &keep_all).unwrap();
    assert_eq!((g.n_edges(), g.degree(1)), (4, 5));
    let merge = EdgeListOptions { loops: Loops::Keep, duplicates: Duplicates::Merge };
    let g = parse_edge_list(text, "g", &merge).unwrap();
    assert_eq!((g.n_edges(), g.degree(0)), (3, 1));
    let no_loops = EdgeListOptions { loops: Loops::Reject, duplicates: Duplicates::Merge };
    assert!(parse_edge_list(text, "g", &no_loops)
        .unwrap_err()
        .to_string()
        .starts_with("g:3:1: a loop"));
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ballast-graph-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn files_load_run_and_report_their_own_path() {
    let path = temp_file("cycle5.txt", "0 1\n1 2\n2 3\n3 4\n4 0\n");
    let g = read_edge_list(&path, &EdgeListOptions::default()).unwrap();
    assert_eq!(g.n_vertices(), 5);
    // Through the shorthand, as `--graph file:PATH`.
    let kind: GraphKind = format!("file:{}", path.display()).parse().unwrap();
    let topo = kind.build(None, &mut sim_rng(1)).unwrap();
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 5, 1000);
    assert_eq!(topo.simulate(&spec, &mut sim_rng(2)).unwrap().balls, 1000);
    let err = kind.build(Some(6), &mut sim_rng(1)).unwrap_err().to_string();
    assert!(err.contains("n = 6") && err.contains("5 vertices"), "{err}");

    let bad = temp_file("bad.txt", "0 1\n1 2\n2 zero\n");
    let err = read_edge_list(&bad, &EdgeListOptions::default()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "graph file `{}`: line 3, column 3: a field of 4 characters that is not a vertex id \
             (a non-negative integer)",
            bad.display()
        )
    );

    let missing = path.with_file_name("missing.txt");
    let err = read_edge_list(&missing, &EdgeListOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Input(_)));
    assert_eq!(err.to_string(), format!("graph file `{}`: no such file", missing.display()));
    let dir = path.parent().unwrap();
    let err = read_edge_list(dir, &EdgeListOptions::default()).unwrap_err().to_string();
    assert!(err.ends_with("is a directory, expected a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn shorthand_round_trips() {
    for s in [
        "complete",
        "cycle",
        "torus:3",
        "hypercube",
        "star",
        "regular:3",
        "gnp:0.01",
        "gnp:0.5:connected",
        "file:a/b.txt",
    ] {
        let k: GraphKind = s.parse().unwrap();
        assert_eq!(k.to_string(), s);
    }
    assert_eq!("torus".parse::<GraphKind>().unwrap().to_string(), "torus:2");
    let err = "ring".parse::<GraphKind>().unwrap_err().to_string();
    assert!(err.contains("one of complete, cycle"), "{err}");
    assert!("regular:x".parse::<GraphKind>().is_err());
    assert!("gnp:0.1:sometimes".parse::<GraphKind>().is_err());
}
