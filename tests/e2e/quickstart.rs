//! The README's first command, in its smoke mode: `scripts/quickstart.sh --smoke` sets up,
//! builds `vto` and the sample frames by name, creates the demo account and key, starts the
//! server on a free port, sends the printed demo request (the public-domain astronaut photo
//! with a generated frame, category `glasses`, on the built-in engine) and checks `success`.
//!
//! Run here on the binary under test (`VTO_BIN`, see the crate docs; without it, with
//! `VTO_PROFILE=dev`, the script builds the dev binary by name) and a temporary data dir.
//! `.ci/run` runs the script as the README writes it, release build included. Needs the models
//! (`scripts/setup.sh` fetches them).

use std::process::Command;

#[test]
fn the_quickstart_smoke_answers_the_demo_request_with_success() {
    let dir = tempfile::tempdir().unwrap();
    let root = vto_tests::workspace_root();
    let vto = vto_tests::vto_bin();
    let make_glasses = vto_tests::example("make_glasses");
    assert_eq!(
        make_glasses.parent().and_then(|d| d.parent()),
        vto.parent(),
        "the script looks for examples/make_glasses beside the vto binary"
    );
    let out = Command::new(root.join("scripts/quickstart.sh"))
        .arg("--smoke")
        .env("VTO_PROFILE", "dev")
        .env("VTO_BIN", vto)
        .env("VTO_DATA_DIR", dir.path().join("data"))
        .env("VTO_MODELS_DIR", vto_tests::models_dir())
        .env_remove("VTO_CONFIG")
        .env_remove("VTO_LISTEN")
        .output()
        .expect("run scripts/quickstart.sh");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "quickstart --smoke failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("smoke: success"), "{stdout}\n{stderr}");
    assert!(
        dir.path().join("data/demo-request.json").is_file(),
        "the demo request was written"
    );
}
