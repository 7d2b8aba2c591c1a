//! A minimal Chrome DevTools Protocol client for the playground test: Chromium (from the
//! distribution's packages) started headless with `--remote-debugging-port=0`, one page
//! target, commands as JSON over its WebSocket. Only what the test needs: evaluate
//! JavaScript, set a file input's files, take a screenshot. (A browser-automation crate would
//! bring a large async stack for these three commands.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

/// Chromium's executable: `VTO_CHROMIUM`, else the first of the usual names on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("VTO_CHROMIUM").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// A headless Chromium and a session on its one page; the browser is killed when dropped.
pub struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    next_id: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` on Chromium's DevTools HTTP endpoint; the body (read to its `Content-Length`:
/// Chromium keeps the connection open).
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())
                    .flatten()
            });
            if length.is_some_and(|len| body.len() >= len) {
                return Ok(body.to_string());
            }
        }
    }
    Ok(String::from_utf8_lossy(&buf)
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default())
}

impl Browser {
    /// Starts Chromium with a fresh profile in `profile` and a `width`×`height` window.
    pub fn launch(exe: &Path, profile: &Path, width: u32, height: u32) -> Browser {
        let child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium writes the port it chose into the profile once it listens.
        let port_file = profile.join("DevToolsActivePort");
        let until = Instant::now() + Duration::from_secs(60);
        let port: u16 = loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
            {
                break p;
            }
            assert!(Instant::now() < until, "chromium did not open DevTools");
            std::thread::sleep(Duration::from_millis(50));
        };
        let page_ws = loop {
            let list: Value =
                serde_json::from_str(&http_get(port, "/json/list").unwrap_or_default())
                    .unwrap_or(Value::Null);
            if let Some(url) = list.as_array().and_then(|targets| {
                targets
                    .iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str())
                    .map(str::to_string)
            }) {
                break url;
            }
            assert!(Instant::now() < until, "chromium has no page target");
            std::thread::sleep(Duration::from_millis(50));
        };
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to DevTools");
        let (ws, _) = tungstenite::client(page_ws.as_str(), stream).expect("DevTools WebSocket");
        let mut b = Browser {
            child,
            ws,
            next_id: 0,
        };
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b
    }

    /// Sends one command and returns its `result` (panics on a protocol error); events that
    /// arrive meanwhile are skipped.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.ws
            .send(Message::text(
                json!({"id": id, "method": method, "params": params}).to_string(),
            ))
            .expect("send a DevTools command");
        loop {
            let msg = self.ws.read().expect("read from DevTools");
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(text.as_str()).expect("DevTools JSON");
            if v["id"] == id {
                assert!(v["error"].is_null(), "{method} failed: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page (awaiting a promise) and returns its value.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r["exceptionDetails"].is_null(),
            "{expr} threw: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Polls `expr` until it is `true` (at most `within`); panics with `what` otherwise.
    pub fn wait_for(&mut self, expr: &str, within: Duration, what: &str) {
        let until = Instant::now() + within;
        while self.eval(expr) != json!(true) {
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens `url` in the page.
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    /// Gives the file input matching `selector` the file at `path` (fires `change`).
    pub fn set_file(&mut self, selector: &str, path: &Path) {
        let doc = self.call("DOM.getDocument", json!({}));
        let node = self.call(
            "DOM.querySelector",
            json!({"nodeId": doc["root"]["nodeId"], "selector": selector}),
        );
        self.call(
            "DOM.setFileInputFiles",
            json!({"nodeId": node["nodeId"], "files": [path.display().to_string()]}),
        );
    }

    /// A PNG screenshot of the page.
    pub fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("screenshot data"))
            .expect("screenshot base64");
        std::fs::write(path, png).expect("write the screenshot");
    }
}
