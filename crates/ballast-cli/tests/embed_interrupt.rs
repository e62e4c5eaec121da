//! An interrupt request stops a library call with its kind (a test binary of its own: the
//! request is process-wide and would stop the other tests' runs).

use ballast_cli::embed::{self, ErrorKind};

#[test]
fn an_interrupt_stops_a_run_with_its_kind() {
    ballast_runner::request_interrupt();
    let r =
        embed::simulate(&["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "50"]);
    ballast_runner::clear_interrupt();
    let e = r.expect_err("an interrupted run fails");
    assert_eq!(embed::error_kind(&e), ErrorKind::Interrupted, "{e:#}");
}
