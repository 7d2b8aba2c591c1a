// The vto playground: a client of this server's public API, nothing more (see
// vto-server/src/playground.rs). The API key stays in this tab's sessionStorage.
"use strict";

const KEY_STORE = "vto.playground.key";
const GALLERY_SIZE = 12;
const $ = (id) => document.getElementById(id);

const st = {
  config: null,      // /playground/config.json
  samples: [],       // /playground/samples
  person: null,      // { dataUrl, label }
  product: null,     // { dataUrl, label, isImage }
  lastCurl: "",
  busy: false,
};

// ---------- small helpers ----------

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

function key() { return $("key").value.trim(); }

function authHeaders() {
  return { "Authorization": "Bearer " + key() };
}

function categoryInfo(name) {
  return st.config ? st.config.categories.find((c) => c.category === name) : null;
}

// A price from config.json ("0.05") or a cost from a result object ({amount, currency}).
function money(m) {
  if (m == null) return "—";
  if (typeof m === "object") return m.amount + " " + m.currency;
  return m + " " + (st.config ? st.config.currency : "");
}

function readAsDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(r.error || new Error("could not read the file"));
    r.readAsDataURL(blob);
  });
}

// Browsers give .glb/.gltf/.obj files no media type; name it so the data URL says what it is.
function modelType(file) {
  const name = file.name.toLowerCase();
  if (name.endsWith(".glb")) return "model/gltf-binary";
  if (name.endsWith(".gltf")) return "model/gltf+json";
  if (name.endsWith(".obj")) return "model/obj";
  return file.type || "application/octet-stream";
}

async function api(method, path, body) {
  const init = { method, headers: authHeaders() };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    return { status: 0, body: { error: { code: "network_error", message: "the server could not be reached: " + e.message } } };
  }
  let json = null;
  try { json = await resp.json(); } catch (_) { json = null; }
  return { status: resp.status, body: json };
}

// ---------- showing things ----------

function setState(kind, text) {
  const el = $("state");
  el.className = "state " + kind;
  el.textContent = text;
}

function showError(err) {
  $("error").hidden = !err;
  if (!err) return;
  $("error-code").textContent = err.code || "error";
  $("error-message").textContent = (err.message || "") + (err.param ? " (param: " + err.param + ")" : "");
}

async function refreshBalance() {
  if (!key()) { $("balance").textContent = "Balance: —"; return null; }
  const r = await api("GET", "/v1/balance");
  if (r.status !== 200 || !r.body) {
    $("balance").textContent = "Balance: —";
    return null;
  }
  $("balance").textContent = "Balance: " + r.body.balance + " " + r.body.currency;
  return r.body;
}

async function refreshGallery() {
  const list = $("gallery");
  const note = $("gallery-note");
  list.replaceChildren();
  if (!key()) { note.textContent = "Paste a key to see the account's last try-ons."; note.hidden = false; return; }
  const r = await api("GET", "/v1/virtual-try-on?limit=" + GALLERY_SIZE);
  if (r.status !== 200 || !r.body) {
    note.textContent = r.body && r.body.error ? r.body.error.code + ": " + r.body.error.message : "could not list try-ons";
    note.hidden = false;
    return;
  }
  note.hidden = r.body.data.length > 0;
  note.textContent = "No try-ons on this account yet.";
  for (const job of r.body.data) {
    const li = document.createElement("li");
    li.dataset.requestId = job.request_id;
    if (job.result && job.result.image_url) {
      const img = document.createElement("img");
      img.className = "thumb";
      img.loading = "lazy";
      img.alt = job.category + " result " + job.request_id;
      img.src = job.result.image_url;
      li.append(img);
    } else {
      const ph = document.createElement("div");
      ph.className = "nothumb";
      ph.textContent = job.error ? job.error.code : job.status;
      li.append(ph);
    }
    const meta = document.createElement("div");
    meta.className = "meta";
    const cat = document.createElement("span");
    cat.textContent = job.category;
    const status = document.createElement("span");
    status.className = "status-" + job.status;
    status.textContent = job.status === "success" ? money(job.cost) : job.status;
    meta.append(cat, status);
    li.append(meta);
    list.append(li);
  }
}

function fillCategories() {
  const sel = $("category");
  sel.replaceChildren();
  const groups = [["sync", "Answered at once (sync)"], ["async", "Jobs, polled (async)"]];
  for (const [mode, label] of groups) {
    const g = document.createElement("optgroup");
    g.label = label;
    for (const c of st.config.categories.filter((c) => c.mode === mode)) {
      const o = document.createElement("option");
      o.value = c.category;
      o.textContent = c.category + " — " + money(c.price) + (c.available ? "" : " (not available here)");
      g.append(o);
    }
    sel.append(g);
  }
}

function fillPersonSamples() {
  const sel = $("person-sample");
  sel.replaceChildren(new Option("Sample photo…", ""));
  for (const s of st.samples.filter((s) => s.role === "person")) sel.append(new Option(s.label, s.id));
}

function onCategory() {
  const c = categoryInfo($("category").value);
  if (!c) return;
  const isImage = c.product_field === "product_image";
  $("product-legend").textContent = isImage ? "Product photo (product_image)" : "3D model (product_model)";
  $("product-file").accept = isImage ? "image/png,image/jpeg,image/webp" : ".glb,.gltf,.obj,model/gltf-binary,model/gltf+json";
  const sel = $("product-sample");
  sel.replaceChildren(new Option("Sample product…", ""));
  for (const s of st.samples.filter((s) => s.role === "product" && s.categories.includes(c.category))) {
    sel.append(new Option(s.label, s.id));
  }
  const note = [c.mode === "sync" ? "Answers in the POST's reply." : "A job: the page polls GET /v1/virtual-try-on/{id} with backoff."];
  note.push("Price " + money(c.price) + ", charged only on success.");
  if (!c.available) note.push("Not available on this server: " + c.reason);
  $("category-note").textContent = note.join(" ");
  setProduct(null);
  $("product-file").value = "";
}

function setPerson(p) {
  st.person = p;
  const img = $("person-preview");
  img.hidden = !p;
  if (p) img.src = p.dataUrl; else img.removeAttribute("src");
  $("person-credit").textContent = p && p.credit ? p.credit : "";
}

function setProduct(p) {
  st.product = p;
  const img = $("product-preview");
  img.hidden = !(p && p.isImage);
  if (p && p.isImage) img.src = p.dataUrl; else img.removeAttribute("src");
  $("product-note").textContent = p ? p.label + (p.bytes ? " · " + Math.round(p.bytes / 1024) + " KiB" : "") : "";
}

async function loadSample(id) {
  const s = st.samples.find((s) => s.id === id);
  const resp = await fetch(s.url);
  const blob = await resp.blob();
  return {
    dataUrl: await readAsDataUrl(new Blob([blob], { type: s.content_type })),
    label: s.label,
    credit: s.credit,
    bytes: blob.size,
    isImage: s.content_type.startsWith("image/"),
  };
}

// ---------- the request ----------

function requestBody() {
  const c = categoryInfo($("category").value);
  const body = { category: c.category };
  if (st.person) body.person_image = st.person.dataUrl;
  if (st.product) body[c.product_field] = st.product.dataUrl;
  return body;
}

function curlFor(body) {
  const json = JSON.stringify(body, null, 2);
  return [
    "curl -sS -X POST '" + location.origin + "/v1/virtual-try-on' \\",
    "  -H \"Authorization: Bearer $VTO_API_KEY\" \\",
    "  -H 'Content-Type: application/json' \\",
    "  --data-binary @- <<'JSON'",
    json,
    "JSON",
  ].join("\n");
}

function showCurl(body) {
  st.lastCurl = curlFor(body);
  // Data URLs run to megabytes: the box shows them shortened, the copy is the exact request.
  const shown = JSON.parse(JSON.stringify(body));
  for (const k of Object.keys(shown)) {
    if (typeof shown[k] === "string" && shown[k].length > 120) {
      shown[k] = shown[k].slice(0, 60) + "…(" + shown[k].length + " characters)";
    }
  }
  $("curl").textContent = curlFor(shown);
  $("curl").hidden = false;
  $("copy-curl").disabled = false;
}

async function copyCurl() {
  const btn = $("copy-curl");
  try {
    await navigator.clipboard.writeText(st.lastCurl);
    btn.textContent = "Copied";
  } catch (_) {
    // Clipboard API refused (not a secure context): select a temporary copy instead.
    const ta = document.createElement("textarea");
    ta.value = st.lastCurl;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    btn.textContent = ok ? "Copied" : "Copy failed";
  }
  setTimeout(() => { btn.textContent = "Copy as curl"; }, 1500);
}

function showResult(obj, started, balance) {
  $("facts").hidden = false;
  $("fact-id").textContent = obj.request_id;
  $("fact-status").textContent = obj.status;
  $("fact-cost").textContent = obj.cost == null ? "not charged" : money(obj.cost);
  $("fact-balance").textContent = balance ? balance.balance + " " + balance.currency : "—";
  $("fact-time").textContent = ((performance.now() - started) / 1000).toFixed(1) + " s in the browser"
    + (obj.processing_time_ms != null ? ", " + obj.processing_time_ms + " ms rendering" : "");
  if (obj.status === "success" && obj.result) {
    $("shown-input").src = st.person ? st.person.dataUrl : "";
    $("shown-result").src = obj.result.image_url;
    $("compare").hidden = false;
    setState("done", "Done: " + obj.category + " in " + ((performance.now() - started) / 1000).toFixed(1) + " s.");
  } else {
    setState("idle", "Finished with status " + obj.status + ".");
    showError(obj.error || { code: obj.status, message: "no result" });
  }
}

async function submit() {
  if (st.busy) return;
  const body = requestBody();
  showCurl(body);
  showError(null);
  $("compare").hidden = true;
  $("facts").hidden = true;
  st.busy = true;
  $("submit").disabled = true;
  const started = performance.now();
  const tick = setInterval(() => {
    if ($("state").dataset.phase === "render") {
      setState("running", "Rendering… " + ((performance.now() - started) / 1000).toFixed(1) + " s");
    }
  }, 100);
  try {
    $("state").dataset.phase = "render";
    setState("running", "Sending…");
    let r = await api("POST", "/v1/virtual-try-on", body);
    if (r.status === 202 && r.body) {
      $("state").dataset.phase = "poll";
      let delay = 500;
      let obj = r.body;
      while (obj.status === "queued" || obj.status === "processing") {
        setState("running", "Job " + obj.status + " (" + ((performance.now() - started) / 1000).toFixed(0)
          + " s); next check in " + (delay / 1000).toFixed(1) + " s");
        await sleep(delay);
        delay = Math.min(Math.round(delay * 1.6), 5000);
        const g = await api("GET", "/v1/virtual-try-on/" + encodeURIComponent(obj.request_id));
        if (g.status !== 200 || !g.body) { r = g; obj = null; break; }
        obj = g.body;
      }
      if (obj) r = { status: 200, body: obj };
    }
    $("state").dataset.phase = "";
    const balance = await refreshBalance();
    if (r.body && r.body.request_id && r.body.status) {
      showResult(r.body, started, balance);
    } else {
      setState("idle", "The request was refused (HTTP " + r.status + ").");
      showError(r.body && r.body.error ? r.body.error : { code: "http_" + r.status, message: "unexpected reply" });
    }
  } finally {
    clearInterval(tick);
    st.busy = false;
    $("submit").disabled = false;
    refreshGallery();
  }
}

// ---------- wiring ----------

async function init() {
  $("key").value = sessionStorage.getItem(KEY_STORE) || "";
  $("key").addEventListener("change", () => {
    if (key()) sessionStorage.setItem(KEY_STORE, key()); else sessionStorage.removeItem(KEY_STORE);
    refreshBalance();
    refreshGallery();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    $("key").value = "";
    refreshBalance();
    refreshGallery();
  });
  $("category").addEventListener("change", onCategory);
  $("person-sample").addEventListener("change", async (e) => {
    $("person-file").value = "";
    setPerson(e.target.value ? await loadSample(e.target.value) : null);
  });
  $("person-file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    $("person-sample").value = "";
    setPerson(f ? { dataUrl: await readAsDataUrl(f), label: f.name, bytes: f.size, isImage: true } : null);
  });
  $("product-sample").addEventListener("change", async (e) => {
    $("product-file").value = "";
    setProduct(e.target.value ? await loadSample(e.target.value) : null);
  });
  $("product-file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    $("product-sample").value = "";
    if (!f) { setProduct(null); return; }
    const isImage = f.type.startsWith("image/");
    const blob = isImage ? f : new Blob([f], { type: modelType(f) });
    setProduct({ dataUrl: await readAsDataUrl(blob), label: f.name, bytes: f.size, isImage });
  });
  $("submit").addEventListener("click", submit);
  $("copy-curl").addEventListener("click", copyCurl);
  $("refresh").addEventListener("click", refreshGallery);

  const [config, samples] = await Promise.all([
    fetch("/playground/config.json").then((r) => r.json()),
    fetch("/playground/samples").then((r) => r.json()),
  ]);
  st.config = config;
  st.samples = samples.samples;
  fillCategories();
  fillPersonSamples();
  onCategory();
  document.body.dataset.ready = "true";
  refreshBalance();
  refreshGallery();
}

document.addEventListener("DOMContentLoaded", () => {
  init().catch((e) => {
    setState("idle", "The playground could not start.");
    showError({ code: "playground_error", message: String(e) });
  });
});
