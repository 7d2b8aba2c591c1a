//! The playground in a real browser: headless Chromium (the distribution's package) drives
//! `/playground` on the real `vto serve` with the built-in glasses engine, as a person would:
//! paste a key, submit with nothing chosen (the API's error code is shown), upload the
//! public-domain portrait, pick a sample frame, try on, wait for the result image to load,
//! and check the balance fell by the category's price, the `curl` command and the gallery;
//! then an asynchronous t-shirt job on the bundled portrait, polled until it succeeds.
//! Screenshots of each state go to `<target>/playground/` for a person to look at.
//!
//! Needs the models and Chromium; `scripts/test.sh` installs Chromium and sets
//! `VTO_REQUIRE_BROWSER=1`, so there a missing browser fails the test. Run any other way
//! without Chromium, the test says why and skips.

use std::process::{Command, Stdio};
use std::str::FromStr;
use std::time::Duration;

use rust_decimal::Decimal;
use serde_json::json;
use vto_tests::{free_port, models_dir, vto_bin, vto_json, Server};

use crate::cdp::{chromium, Browser};

fn text(b: &mut Browser, id: &str) -> String {
    b.eval(&format!("document.getElementById('{id}').textContent"))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn balance_of(text: &str) -> Decimal {
    let amount = text
        .strip_prefix("Balance: ")
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no balance in {text:?}"));
    Decimal::from_str(amount).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

#[test]
fn a_person_tries_glasses_on_in_the_playground() {
    let Some(exe) = chromium() else {
        assert!(
            std::env::var_os("VTO_REQUIRE_BROWSER").is_none(),
            "VTO_REQUIRE_BROWSER is set but no Chromium was found (apt-get install chromium)"
        );
        eprintln!("SKIPPED: no Chromium on PATH (scripts/test.sh installs it)");
        return;
    };
    let photo = models_dir().join("test-photos/astronaut.png");
    assert!(
        photo.is_file(),
        "{} missing: scripts/fetch-models.sh --test-photos",
        photo.display()
    );
    let shots = vto_bin()
        .parent()
        .and_then(|d| d.parent())
        .expect("the binary sits in <target>/<profile>/")
        .join("playground");
    std::fs::create_dir_all(&shots).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let envs: Vec<(&str, String)> = vec![
        (
            "VTO_DATA_DIR",
            dir.path().join("data").display().to_string(),
        ),
        ("VTO_LISTEN", format!("127.0.0.1:{port}")),
        ("VTO_MODELS_DIR", models_dir().display().to_string()),
        ("VTO_FETCH_MODELS", "false".into()),
        ("VTO_RENDER_CONCURRENCY", "1".into()),
        ("RUST_LOG", "warn".into()),
    ];
    let acct = vto_json(
        &envs,
        &[
            "admin",
            "account",
            "create",
            "--name",
            "Browser",
            "--balance",
            "10.00",
        ],
    );
    let acct = acct["account"]["id"].as_str().unwrap().to_string();
    let key = vto_json(&envs, &["admin", "key", "create", &acct])["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let mut server = Server(
        Command::new(vto_bin())
            .arg("serve")
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .env_remove("VTO_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert!(
        server.wait_up(port, Duration::from_secs(120)),
        "vto serve did not start"
    );

    let profile = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(&exe, profile.path(), 1280, 1100);
    b.navigate(&format!("http://127.0.0.1:{port}/"));
    b.wait_for(
        "document.body && document.body.dataset.ready === 'true'",
        Duration::from_secs(120),
        "the page to load its config and samples",
    );
    assert_eq!(
        b.eval("location.pathname"),
        json!("/playground"),
        "/ leads to the page"
    );
    assert_eq!(
        b.eval("document.getElementById('category').value"),
        json!("glasses")
    );
    b.screenshot(&shots.join("1-empty.png"));

    // The key: typed in, kept in this tab's sessionStorage only.
    b.eval(&format!(
        "(() => {{ const k = document.getElementById('key'); k.value = {key:?}; \
         k.dispatchEvent(new Event('change')); }})()"
    ));
    b.wait_for(
        "document.getElementById('balance').textContent === 'Balance: 10.00 USD'",
        Duration::from_secs(10),
        "the balance",
    );
    assert_eq!(
        b.eval("sessionStorage.getItem('vto.playground.key')"),
        json!(key)
    );
    assert_eq!(b.eval("localStorage.length"), json!(0));

    // Nothing chosen: the API refuses, and the page shows its error code and message.
    b.eval("document.getElementById('submit').click()");
    b.wait_for(
        "!document.getElementById('error').hidden",
        Duration::from_secs(10),
        "the error",
    );
    assert_eq!(text(&mut b, "error-code"), "invalid_request");
    assert!(!text(&mut b, "error-message").is_empty());
    b.screenshot(&shots.join("2-error.png"));

    // The portrait uploaded, a sample frame picked.
    b.set_file("#person-file", &photo);
    b.wait_for(
        "!document.getElementById('person-preview').hidden",
        Duration::from_secs(10),
        "the photo preview",
    );
    let frame = b.eval(
        "(() => { const s = document.getElementById('product-sample'); \
         const o = [...s.options].find((o) => o.value); s.value = o.value; \
         s.dispatchEvent(new Event('change')); return o.value; })()",
    );
    assert!(frame.as_str().is_some_and(|v| v.starts_with("glasses-")));
    b.wait_for(
        "document.getElementById('product-note').textContent.length > 0",
        Duration::from_secs(10),
        "the sample frame",
    );
    let before = balance_of(&text(&mut b, "balance"));
    let price = Decimal::from_str(
        b.eval(
            "fetch('/playground/config.json').then((r) => r.json()).then((c) => \
             c.categories.find((x) => x.category === 'glasses').price)",
        )
        .as_str()
        .unwrap(),
    )
    .unwrap();

    b.eval("document.getElementById('submit').click()");
    b.wait_for(
        "document.getElementById('state').classList.contains('running') || \
         !document.getElementById('compare').hidden",
        Duration::from_secs(10),
        "the progress state",
    );
    b.screenshot(&shots.join("3-running.png"));
    b.wait_for(
        "(() => { const i = document.getElementById('shown-result'); \
         return !document.getElementById('compare').hidden && i.complete && i.naturalWidth > 0; })()",
        Duration::from_secs(180),
        "the result image",
    );
    assert_eq!(
        b.eval("document.getElementById('shown-result').naturalWidth"),
        json!(512),
        "the result has the photo's size"
    );
    assert_eq!(text(&mut b, "fact-status"), "success");
    assert_eq!(text(&mut b, "fact-cost"), format!("{price} USD"));
    let after = balance_of(&text(&mut b, "balance"));
    assert_eq!(before - after, price, "the balance fell by the price");
    assert_eq!(
        text(&mut b, "fact-balance"),
        format!("{after} USD"),
        "the balance after is shown beside the result"
    );

    // The request as curl: the exact endpoint and body, the key as a variable.
    let curl = b.eval("st.lastCurl");
    let curl = curl.as_str().unwrap();
    assert!(curl.starts_with(&format!(
        "curl -sS -X POST 'http://127.0.0.1:{port}/v1/virtual-try-on'"
    )));
    assert!(curl.contains("$VTO_API_KEY") && !curl.contains(&key));
    assert!(curl.contains("\"category\": \"glasses\"") && curl.contains("data:image/png;base64,"));

    // The gallery lists the try-on with its thumbnail and cost.
    b.wait_for(
        "(() => { const i = document.querySelector('#gallery li img.thumb'); \
         return !!i && i.complete && i.naturalWidth > 0; })()",
        Duration::from_secs(20),
        "the gallery thumbnail",
    );
    assert_eq!(
        b.eval("document.querySelectorAll('#gallery li').length"),
        json!(1)
    );
    assert!(text(&mut b, "gallery").contains(&format!("{price} USD")));
    b.screenshot(&shots.join("4-result.png"));

    // An asynchronous category: a t-shirt photo from the samples on the bundled portrait; the
    // page polls the job until it succeeds, and the balance falls by that category's price.
    b.eval(
        "(() => { const c = document.getElementById('category'); c.value = 'tshirt'; \
         c.dispatchEvent(new Event('change')); })()",
    );
    let picked = b.eval(
        "(() => { const pick = (id, want) => { const s = document.getElementById(id); \
         const o = [...s.options].find((o) => o.value.startsWith(want)); s.value = o.value; \
         s.dispatchEvent(new Event('change')); return o.value; }; \
         return [pick('person-sample', 'person-grace-hopper'), pick('product-sample', 'tshirt-')]; })()",
    );
    assert_eq!(picked[0], json!("person-grace-hopper"));
    b.wait_for(
        "!document.getElementById('person-preview').hidden && \
         !document.getElementById('product-preview').hidden",
        Duration::from_secs(30),
        "the sample portrait and t-shirt photo",
    );
    let before = balance_of(&text(&mut b, "balance"));
    let tshirt_price = Decimal::from_str(
        b.eval(
            "fetch('/playground/config.json').then((r) => r.json()).then((c) => \
             c.categories.find((x) => x.category === 'tshirt').price)",
        )
        .as_str()
        .unwrap(),
    )
    .unwrap();
    b.eval("document.getElementById('submit').click()");
    b.wait_for(
        "document.getElementById('state').textContent.startsWith('Job ')",
        Duration::from_secs(30),
        "the job's polling state",
    );
    b.screenshot(&shots.join("5-polling.png"));
    b.wait_for(
        "(() => { const i = document.getElementById('shown-result'); \
         return document.getElementById('fact-status').textContent === 'success' && \
         !document.getElementById('compare').hidden && i.complete && i.naturalWidth > 0; })()",
        Duration::from_secs(240),
        "the t-shirt job's result",
    );
    let after = balance_of(&text(&mut b, "balance"));
    assert_eq!(
        before - after,
        tshirt_price,
        "the job's price was charged once"
    );
    b.screenshot(&shots.join("6-async-result.png"));
    eprintln!("playground screenshots in {}", shots.display());
    server.kill();
}
