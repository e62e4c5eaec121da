//! `.ci/slurm-test.sh` compares a sharded Slurm run with a single run after deleting the
//! execution fields from both JSON files with `jq`. Its list is written in shell, so this
//! test keeps it equal to `Metadata::EXECUTION_FIELDS`: a field added to the metadata and not
//! to the script made the CI's Slurm comparison fail (`cpu_time_s`, which a merge then left out).

use ballast_runner::Metadata;

#[test]
fn slurm_script_deletes_every_execution_field() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/slurm-test.sh");
    let script = std::fs::read_to_string(path).expect("read .ci/slurm-test.sh");
    let start = script.find("exec_fields='del(").expect("the script's exec_fields line");
    let end = start + script[start..].find(")'").expect("the end of exec_fields");
    let mut deleted: Vec<&str> = script[start..end]
        .split(|c: char| c == ',' || c == '(' || c.is_whitespace())
        .filter_map(|word| word.strip_prefix(".metadata."))
        .collect();
    let mut expected: Vec<&str> = Metadata::EXECUTION_FIELDS.to_vec();
    expected.sort_unstable();
    deleted.sort_unstable();
    assert_eq!(
        deleted, expected,
        "exec_fields of .ci/slurm-test.sh against Metadata::EXECUTION_FIELDS"
    );
}
