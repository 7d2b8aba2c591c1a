//! # An EXAMPLE render service for vto's HTTP engine (protocol version 1)
//!
//! **This is not vto's renderer and not a try-on model.** It is a small, real program that
//! speaks the render protocol (`docs/render-protocol.md`, `vto_core::http_engine`) so that
//! the asynchronous garment categories can be exercised end to end, in tests and on a laptop,
//! without a GPU. A shop plugs its own diffusion try-on service (IDM-VTON- or CatVTON-class) in
//! its place.
//!
//! What it does to the pictures, a plain "garment overlay":
//!
//! 1. **Cut the garment out of its photo.** Product photos are shot on a plain background: the
//!    background colour is the median of the photo's border pixels, and a pixel's opacity rises
//!    smoothly with its colour distance from it. A photo that is already transparent at its
//!    border (a cut-out PNG) keeps its own alpha. The garment is cropped to what is left.
//! 2. **Place it on a torso box.** Without pose detection, the torso is assumed where it is in
//!    a centred, upright portrait or full-body photo: 42 % of the width around the centre, from
//!    30 % to 72 % of the height. The garment is scaled to fit that box, keeping its aspect.
//! 3. **Blend with a feathered mask and the person's shading.** Opacity falls off smoothly over
//!    the last 6 % of the garment's extent, and the garment's colour is multiplied by the
//!    person's local brightness relative to the box's mean, so folds and lighting show through.
//!
//! Run it: `cargo run -p vto-examples --bin render_service -- --port 9100` (or set
//! `VTO_RENDER_PORT`; port 0 picks a free one). It listens on 127.0.0.1 only. Then point a
//! category at it in vto's configuration: `[engines.dress] kind = "http"`,
//! `url = "http://127.0.0.1:9100"`.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Buf;
use futures::TryStreamExt;
use image::{imageops, Rgba, RgbaImage};
use vto_core::http_engine::{PROTOCOL_HEADER, PROTOCOL_VERSION};
use vto_core::media::{self, ImageLimits};
use warp::http::{Response, StatusCode};
use warp::{Filter, Rejection, Reply};

/// Largest request body accepted (two 20 MiB inputs plus the form's overhead).
pub const MAX_REQUEST_BYTES: u64 = 48 * 1024 * 1024;

/// Why a render failed: becomes `{"error":{"code","message"}}` with a status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    /// HTTP status.
    pub status: u16,
    /// Stable code.
    pub code: &'static str,
    /// A sentence.
    pub message: String,
}

impl RenderError {
    fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn reply(&self) -> Response<Vec<u8>> {
        let body = serde_json::json!({ "error": { "code": self.code, "message": self.message } });
        Response::builder()
            .status(self.status)
            .header("content-type", "application/json")
            .header(PROTOCOL_HEADER, PROTOCOL_VERSION.to_string())
            .body(body.to_string().into_bytes())
            .expect("static response parts are valid")
    }
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn luminance(p: &Rgba<u8>) -> f32 {
    0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2])
}

/// Step 1: the garment with its background made transparent, cropped to the garment.
pub fn cut_out_garment(photo: &RgbaImage) -> Result<RgbaImage, RenderError> {
    let (w, h) = photo.dimensions();
    let mut border: Vec<Rgba<u8>> = Vec::with_capacity(2 * (w + h) as usize);
    for x in 0..w {
        border.push(*photo.get_pixel(x, 0));
        border.push(*photo.get_pixel(x, h - 1));
    }
    for y in 0..h {
        border.push(*photo.get_pixel(0, y));
        border.push(*photo.get_pixel(w - 1, y));
    }
    let median = |c: usize| {
        let mut v: Vec<u8> = border.iter().map(|p| p[c]).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let background = [median(0), median(1), median(2)];
    let transparent_border = median(3) < 128;
    let mut cut = photo.clone();
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for (x, y, p) in cut.enumerate_pixels_mut() {
        let own = f32::from(p[3]) / 255.0;
        let alpha = if transparent_border {
            own
        } else {
            let d = (0..3)
                .map(|c| (i16::from(p[c]) - i16::from(background[c])).unsigned_abs())
                .max()
                .unwrap_or(0);
            smoothstep(12.0, 48.0, f32::from(d)) * own
        };
        p[3] = (alpha * 255.0).round() as u8;
        if alpha > 0.1 {
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
    }
    if x1 < x0 || (x1 - x0 + 1) * (y1 - y0 + 1) < 16 {
        return Err(RenderError::new(
            422,
            "no_garment",
            "no garment found in the product photo (it is blank or all background)",
        ));
    }
    Ok(imageops::crop_imm(&cut, x0, y0, x1 - x0 + 1, y1 - y0 + 1).to_image())
}

/// Steps 2 and 3: the person wearing the cut-out garment.
pub fn overlay(person: &RgbaImage, garment: &RgbaImage) -> RgbaImage {
    let (pw, ph) = person.dimensions();
    let box_w = (pw as f32 * 0.42).max(1.0);
    let box_h = (ph as f32 * 0.42).max(1.0);
    let (gw, gh) = garment.dimensions();
    let scale = (box_w / gw as f32).min(box_h / gh as f32);
    let tw = ((gw as f32 * scale).round() as u32).max(1);
    let th = ((gh as f32 * scale).round() as u32).max(1);
    let fitted = imageops::resize(garment, tw, th, imageops::FilterType::Triangle);
    let left = pw.saturating_sub(tw) / 2;
    let top = (ph as f32 * 0.30).round() as u32;

    let inside = |x: u32, y: u32| x < pw && y < ph;
    let mut sum = 0.0f64;
    let mut n = 0u32;
    for y in 0..th {
        for x in 0..tw {
            if inside(left + x, top + y) {
                sum += f64::from(luminance(person.get_pixel(left + x, top + y)));
                n += 1;
            }
        }
    }
    let mean = if n == 0 {
        128.0
    } else {
        (sum / f64::from(n)) as f32
    }
    .max(1.0);
    let feather = (tw.min(th) as f32 * 0.06).max(1.0);

    let mut out = person.clone();
    for y in 0..th {
        for x in 0..tw {
            let (px, py) = (left + x, top + y);
            if !inside(px, py) {
                continue;
            }
            let g = fitted.get_pixel(x, y);
            let edge = x.min(y).min(tw - 1 - x).min(th - 1 - y) as f32;
            let a = f32::from(g[3]) / 255.0 * smoothstep(0.0, feather, edge) * 0.92;
            if a <= 0.0 {
                continue;
            }
            let base = *person.get_pixel(px, py);
            let shade = (luminance(&base) / mean).clamp(0.55, 1.35);
            let o = out.get_pixel_mut(px, py);
            for c in 0..3 {
                let garment_c = (f32::from(g[c]) * shade).min(255.0);
                o[c] = (f32::from(base[c]) * (1.0 - a) + garment_c * a).round() as u8;
            }
        }
    }
    out
}

/// The whole operation on encoded inputs: decode (under limits), cut out, overlay, PNG.
pub fn render(person: &[u8], product: &[u8]) -> Result<Vec<u8>, RenderError> {
    let limits = ImageLimits::default();
    let decode = |what: &str, bytes: &[u8]| {
        media::decode_image(bytes, &limits)
            .map_err(|e| RenderError::new(422, "unreadable_input", format!("{what}: {e}")))
    };
    let person = decode("person", person)?.to_rgba8();
    let garment = cut_out_garment(&decode("product", product)?.to_rgba8())?;
    let out = overlay(&person, &garment);
    media::encode_png(&image::DynamicImage::ImageRgba8(out))
        .map_err(|e| RenderError::new(500, "encode_failed", e.to_string()))
}

/// Reads every part of a multipart form into memory (bounded by the form's `max_length`).
pub async fn read_form(
    form: warp::multipart::FormData,
) -> Result<Vec<(String, Vec<u8>)>, RenderError> {
    form.map_err(|e| RenderError::new(400, "bad_request", format!("unreadable form: {e}")))
        .and_then(|part| async move {
            let name = part.name().to_string();
            let data = part
                .stream()
                .try_fold(Vec::new(), |mut acc, mut buf| async move {
                    while buf.has_remaining() {
                        let chunk = buf.chunk();
                        acc.extend_from_slice(chunk);
                        let n = chunk.len();
                        buf.advance(n);
                    }
                    Ok(acc)
                })
                .await
                .map_err(|e| {
                    RenderError::new(400, "bad_request", format!("unreadable part: {e}"))
                })?;
            Ok((name, data))
        })
        .try_collect()
        .await
}

async fn handle_render(
    version: Option<String>,
    form: warp::multipart::FormData,
) -> Result<Response<Vec<u8>>, Infallible> {
    let result = async {
        if version.as_deref().map(str::trim) != Some(PROTOCOL_VERSION.to_string().as_str()) {
            return Err(RenderError::new(
                400,
                "unsupported_protocol",
                format!("send {PROTOCOL_HEADER}: {PROTOCOL_VERSION}"),
            ));
        }
        let parts = read_form(form).await?;
        let get = |name: &str| {
            parts
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
                .ok_or_else(|| {
                    RenderError::new(400, "bad_request", format!("missing part {name:?}"))
                })
        };
        let meta: serde_json::Value = serde_json::from_slice(&get("meta")?)
            .map_err(|e| RenderError::new(400, "bad_request", format!("meta is not JSON: {e}")))?;
        let product_type = meta["product"]["content_type"].as_str().unwrap_or_default();
        if !product_type.starts_with("image/") {
            return Err(RenderError::new(
                422,
                "unsupported_product",
                "this example service renders garment photos only, not 3D models",
            ));
        }
        let (person, product) = (get("person")?, get("product")?);
        tokio::task::spawn_blocking(move || render(&person, &product))
            .await
            .map_err(|e| RenderError::new(500, "internal", e.to_string()))?
    }
    .await;
    Ok(match result {
        Ok(png) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "image/png")
            .header(PROTOCOL_HEADER, PROTOCOL_VERSION.to_string())
            .body(png)
            .expect("static response parts are valid"),
        Err(e) => e.reply(),
    })
}

async fn recover(r: Rejection) -> Result<warp::reply::Response, Infallible> {
    let e = if r.is_not_found() {
        RenderError::new(404, "not_found", "no such route")
    } else {
        RenderError::new(400, "bad_request", format!("{r:?}"))
    };
    Ok(e.reply().into_response())
}

/// The service's routes: `GET /healthz`, `POST /render`.
pub fn routes() -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let health = warp::get().and(warp::path!("healthz")).map(|| "ok");
    let render = warp::post()
        .and(warp::path!("render"))
        .and(warp::header::optional::<String>(PROTOCOL_HEADER))
        .and(warp::multipart::form().max_length(MAX_REQUEST_BYTES))
        .and_then(handle_render);
    health
        .map(Reply::into_response)
        .or(render.map(Reply::into_response))
        .unify()
        .recover(recover)
        .unify()
}

/// Serves [`routes`] on a bound listener until the process ends.
pub async fn serve(listener: tokio::net::TcpListener) {
    warp::serve(routes()).incoming(listener).run().await;
}

#[cfg_attr(test, allow(dead_code))]
fn port_from_args() -> Result<u16, String> {
    let mut args = std::env::args().skip(1);
    let mut port = std::env::var("VTO_RENDER_PORT").ok();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => port = args.next(),
            "-h" | "--help" => {
                return Err("usage: render_service [--port N]   (or VTO_RENDER_PORT=N)".into())
            }
            other => return Err(format!("unknown argument {other:?}; try --help")),
        }
    }
    port.map_or(Ok(9100), |p| {
        p.parse().map_err(|_| format!("invalid port {p:?}"))
    })
}

#[cfg_attr(test, allow(dead_code))]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = port_from_args()?;
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    println!(
        "example render service (protocol {PROTOCOL_VERSION}; NOT vto's renderer) listening on http://{}",
        listener.local_addr()?
    );
    serve(listener).await;
    Ok(())
}
