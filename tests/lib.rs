//! # vto-tests: the real `vto` binary, end to end, over HTTP
//!
//! The workspace's top-level `tests/` package. Its one test binary (`e2e/`) starts the `vto`
//! binary as a child process on a free loopback port and talks to it as a client would:
//!
//! - `api`: a black-box walk through every endpoint and every error code, plus the operations
//!   a shop relies on (per-account limits and revocation applied to a running server);
//! - `quickstart`: the README's demo (account, key, server, the printed glasses request with
//!   the public-domain photo and a sample frame) answers `success`;
//! - `crash`: `vto serve` killed with SIGKILL at random moments loses no job and bills exactly;
//! - `playground`: headless Chromium drives the playground page through a glasses try-on.
//!
//! ## How the binary is found
//! `env!("CARGO_BIN_EXE_vto")` only exists inside the package that owns the binary (vto-cli),
//! so [`vto_bin`] either takes `VTO_BIN` (a path, for testing an installed or release build)
//! or runs `cargo build -p vto-cli --bin vto` through `escargot`, in the profile the tests
//! were built with (debug, or release under `cargo test --release`) and the same
//! `CARGO_TARGET_DIR`. When the binary is up to date (as after `cargo test --workspace`, which
//! builds it for vto-cli's own tests) that build is a no-op; otherwise it builds it, so
//! `cargo test -p vto-tests` alone never runs a stale binary. [`example`] does the same for
//! the examples' programs (the sample-frame writer). `scripts/test.sh` sets `VTO_BIN` to the
//! binary its own `cargo test --workspace` builds: escargot's build would use other feature
//! flags than `--all-features` and rebuild wgpu and its dependencies a second time.
//!
//! Render services and webhook receivers in these tests are TEST DOUBLES on loopback, named
//! as such where they are defined.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The workspace root (this package's parent folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The MediaPipe models: `VTO_MODELS_DIR`, else `<workspace>/models` (where
/// `scripts/setup.sh` puts them).
pub fn models_dir() -> PathBuf {
    std::env::var_os("VTO_MODELS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("models"))
}

fn build(what: escargot::CargoBuild) -> PathBuf {
    let run = what
        .manifest_path(workspace_root().join("Cargo.toml"))
        .current_release()
        .run()
        .unwrap_or_else(|e| panic!("building a test subject failed: {e}"));
    run.path().to_path_buf()
}

/// The `vto` binary under test (see the crate docs for how it is found).
pub fn vto_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(
        || match std::env::var_os("VTO_BIN").filter(|v| !v.is_empty()) {
            Some(p) => {
                let p = PathBuf::from(p);
                assert!(p.is_file(), "VTO_BIN={} is not a file", p.display());
                p
            }
            None => build(escargot::CargoBuild::new().package("vto-cli").bin("vto")),
        },
    )
}

/// An example program of `vto-examples` (e.g. `make_glasses`): next to `VTO_BIN` (in its
/// `examples/` folder, where `cargo test --workspace` puts them) when that is set, else built
/// like [`vto_bin`].
pub fn example(name: &str) -> PathBuf {
    if let Some(bin) = std::env::var_os("VTO_BIN").filter(|v| !v.is_empty()) {
        let beside = Path::new(&bin)
            .parent()
            .map(|d| d.join("examples").join(name));
        if let Some(p) = beside.filter(|p| p.is_file()) {
            return p;
        }
    }
    build(
        escargot::CargoBuild::new()
            .package("vto-examples")
            .example(name),
    )
}

/// A port free on loopback right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Runs `vto --json <args>` with `envs`; panics with its stderr if it fails.
pub fn vto_json(envs: &[(&str, String)], args: &[&str]) -> serde_json::Value {
    let out = Command::new(vto_bin())
        .arg("--json")
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .env_remove("VTO_CONFIG")
        .output()
        .expect("run vto");
    assert!(
        out.status.success(),
        "vto {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("vto {args:?}: not JSON ({e}): {:?}", out.stdout))
}

/// A `vto serve` child process, SIGKILLed when dropped, so a failing test leaves nothing
/// running.
#[derive(Debug)]
pub struct Server(pub Child);

impl Server {
    /// Stops it with SIGKILL and reaps it.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Waits until `GET /healthz` on `port` answers (at most `within`); false if the process
    /// exited or the time ran out.
    pub fn wait_up(&mut self, port: u16, within: Duration) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.0.try_wait() {
                return false;
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        false
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}
