//! The `vto` binary against a temporary data dir: accounts, funds, keys, jobs, errors.

use std::process::Command;

use serde_json::Value;

fn vto(dir: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vto"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("VTO_CONFIG")
        .output()
        .expect("run vto");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(dir: &std::path::Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (ok, out, err) = vto(dir, &a);
    assert!(ok, "vto {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn admin_commands_manage_accounts_keys_and_jobs_scriptably() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let created = json(
        d,
        &[
            "admin",
            "account",
            "create",
            "--name",
            "Shop",
            "--balance",
            "2.50",
        ],
    );
    let acct = created["account"]["id"].as_str().unwrap().to_string();
    assert!(acct.starts_with("acct_"));
    assert_eq!(created["balance"]["balance"], "2.50");

    let credited = json(
        d,
        &[
            "admin", "account", "credit", &acct, "1.25", "--memo", "inv 1",
        ],
    );
    assert_eq!(credited["balance"], "3.75");
    let list = json(d, &["admin", "account", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["balance"]["available"], "3.75");

    let key = json(d, &["admin", "key", "create", &acct, "--name", "prod"]);
    let secret = key["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("vto_sk_") && secret.len() == 39);
    let key_id = key["key"]["id"].as_str().unwrap().to_string();
    // the secret is shown once: listings never contain it
    let (ok, text, _) = vto(d, &["admin", "key", "list"]);
    assert!(ok && text.contains(&key_id) && !text.contains(&secret));
    let keys = json(d, &["admin", "key", "list", "--account", &acct]);
    assert!(!keys.to_string().contains(&secret));
    assert!(keys[0]["revoked_at"].is_null());
    json(d, &["admin", "key", "revoke", &key_id]);
    let keys = json(d, &["admin", "key", "list"]);
    assert!(keys[0]["revoked_at"].is_i64());

    assert_eq!(json(d, &["admin", "jobs", "list"]), Value::Array(vec![]));
    let (ok, _, err) = vto(
        d,
        &[
            "admin",
            "jobs",
            "show",
            "00000000-0000-0000-0000-000000000001",
        ],
    );
    assert!(!ok && err.contains("no job"));

    // errors exit non-zero with a message that says what is wrong
    let (ok, _, err) = vto(d, &["admin", "account", "credit", &acct, "lots"]);
    assert!(!ok && err.contains("not a decimal"), "{err}");
    let (ok, _, err) = vto(d, &["admin", "key", "create", "acct_missing"]);
    assert!(!ok && err.contains("no account"), "{err}");
    let (ok, _, err) = vto(d, &["admin", "key", "revoke", "key_missing"]);
    assert!(!ok && err.contains("no key"), "{err}");

    // per-account limits: stored with the account, shown, reset
    let shown = json(d, &["admin", "account", "show", &acct]);
    assert_eq!(shown["limits"]["create_try_on"]["limit"], "10/1");
    assert_eq!(shown["limits"]["create_try_on"]["source"], "default");
    json(
        d,
        &[
            "admin", "account", "limits", &acct, "--create", "20/1", "--get", "100/1",
        ],
    );
    json(
        d,
        &["admin", "account", "limits", &acct, "--balance", "600/60"],
    );
    let shown = json(d, &["admin", "account", "show", &acct]);
    for (ep, limit, source) in [
        ("create_try_on", "20/1", "account"),
        ("get_try_on", "100/1", "account"),
        ("balance", "600/60", "account"),
        ("cancel_try_on", "10/1", "default"),
    ] {
        assert_eq!(shown["limits"][ep]["limit"], limit, "{ep}: {shown}");
        assert_eq!(shown["limits"][ep]["source"], source, "{ep}: {shown}");
    }
    let (ok, text, _) = vto(d, &["admin", "account", "show", &acct]);
    assert!(
        ok && text.contains("20/1") && text.contains("(account)"),
        "{text}"
    );
    json(d, &["admin", "account", "limits", &acct, "--reset"]);
    let shown = json(d, &["admin", "account", "show", &acct]);
    assert_eq!(shown["limits"]["create_try_on"]["source"], "default");
    let (ok, _, err) = vto(d, &["admin", "account", "limits", &acct, "--create", "0/1"]);
    assert!(!ok && err.contains("burst must be at least 1"), "{err}");
    let (ok, _, err) = vto(d, &["admin", "account", "limits", &acct, "--get", "fast"]);
    assert!(
        !ok && err.contains("expected <burst>/<period_secs>"),
        "{err}"
    );
    let (ok, _, err) = vto(d, &["admin", "account", "limits", &acct]);
    assert!(!ok && err.contains("--reset"), "{err}");
    let (ok, _, err) = vto(
        d,
        &[
            "admin",
            "account",
            "limits",
            "acct_missing",
            "--create",
            "5/1",
        ],
    );
    assert!(!ok && err.contains("no account"), "{err}");
    let (ok, _, err) = vto(d, &["admin", "account", "show", "acct_missing"]);
    assert!(!ok && err.contains("no account"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_vto"))
        .args(["admin", "account", "list"])
        .env("VTO_DATA_DIR", d)
        .env("VTO_WORKERS", "0")
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("workers: must be between 1 and 1024"));
}

/// The models `scripts/fetch-models.sh --test-photos` fetched: `VTO_MODELS_DIR`, else
/// `<workspace>/models`.
fn fetched_models() -> std::path::PathBuf {
    std::env::var_os("VTO_MODELS_DIR")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("models")
        })
}

/// `vto` run in `cwd` as a new user runs it after `scripts/quickstart.sh`: no
/// `VTO_MODELS_DIR`, no config, no `XDG_RUNTIME_DIR`.
fn vto_in(cwd: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vto"))
        .current_dir(cwd)
        .args(args)
        .env_remove("VTO_MODELS_DIR")
        .env_remove("VTO_DATA_DIR")
        .env_remove("VTO_CONFIG")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run vto");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_command_uses_the_quickstarts_models_dir_and_a_success_prints_no_error() {
    // Regressions: with the models where the quickstart puts them (./models), `vto try-on`
    // said "models directory ./vto-data/models does not exist" (the default was
    // `<data dir>/models`); and without XDG_RUNTIME_DIR every GPU command printed
    // libwayland's "error: XDG_RUNTIME_DIR is invalid or not set in the environment." twice
    // before succeeding.
    let models = fetched_models();
    let photo = models.join("test-photos/astronaut.png");
    assert!(
        photo.exists(),
        "{} missing: scripts/fetch-models.sh --test-photos",
        photo.display()
    );
    let cwd = tempfile::tempdir().unwrap();
    let d = cwd.path();
    std::os::unix::fs::symlink(std::path::absolute(&models).unwrap(), d.join("models")).unwrap();
    std::fs::write(
        d.join("frame.glb"),
        vto_render::samples::product::eyewear::SampleFrame::AviatorGoldTinted.glb(),
    )
    .unwrap();

    let (ok, out, err) = vto_in(d, &["models", "fetch", "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["dir"], "./models", "{v}");
    assert_eq!(v["status"], "already present and verified", "{v}");

    let (ok, out, err) = vto_in(
        d,
        &[
            "try-on",
            "--category",
            "sunglasses",
            "--person",
            "models/test-photos/astronaut.png",
            "--product",
            "frame.glb",
            "-o",
            "out.png",
        ],
    );
    assert!(ok, "try-on failed: {err}");
    assert!(
        !err.to_lowercase().contains("error"),
        "a successful try-on printed: {err}"
    );
    assert!(image::open(d.join("out.png")).is_ok(), "{out}");

    let (ok, _, err) = vto_in(d, &["inspect", "models/test-photos/astronaut.png"]);
    assert!(ok, "inspect failed: {err}");
    assert!(
        !err.to_lowercase().contains("error"),
        "a successful inspect printed: {err}"
    );
}

#[test]
fn inpaint_fills_only_the_masked_pixels_and_refuses_a_mask_of_another_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A horizontal gradient with a red square, masked.
    let mut photo = image::RgbImage::from_fn(96, 64, |x, y| {
        image::Rgb([(x * 2) as u8, 80, (y * 3) as u8])
    });
    for y in 20..40 {
        for x in 30..60 {
            photo.put_pixel(x, y, image::Rgb([255, 0, 0]));
        }
    }
    let mask = image::GrayImage::from_fn(96, 64, |x, y| {
        image::Luma([if (30..60).contains(&x) && (20..40).contains(&y) {
            255
        } else {
            0
        }])
    });
    photo.save(d.join("photo.png")).unwrap();
    mask.save(d.join("mask.png")).unwrap();
    let (p, m, o) = (d.join("photo.png"), d.join("mask.png"), d.join("out.png"));
    let out = json(
        d,
        &[
            "inpaint",
            "--photo",
            p.to_str().unwrap(),
            "--mask",
            m.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ],
    );
    assert_eq!(out["filled_pixels"], 600);
    let filled = image::open(&o).unwrap().to_rgb8();
    for (x, y, px) in filled.enumerate_pixels() {
        if mask.get_pixel(x, y).0[0] == 0 {
            assert_eq!(px, photo.get_pixel(x, y));
        } else {
            assert!(
                px.0[1] > 40 && px.0[0] < 200,
                "({x}, {y}) still red: {px:?}"
            );
        }
    }
    image::GrayImage::new(95, 64)
        .save(d.join("small.png"))
        .unwrap();
    let s = d.join("small.png");
    let (ok, _, err) = vto(
        d,
        &[
            "inpaint",
            "--photo",
            p.to_str().unwrap(),
            "--mask",
            s.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ],
    );
    assert!(
        !ok && err.contains("95×64") && err.contains("same size"),
        "{err}"
    );
}
