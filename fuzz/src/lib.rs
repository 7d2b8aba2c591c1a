//! The fuzz targets' bodies, one function per parser that sees untrusted bytes. Each one
//! drives the parser the way the service does and insists on the contract: any input gives
//! a value or a typed error with a stable code, never a panic, and stays within the time and
//! memory that `scripts/fuzz.sh` allows (2 s and 1 GB per input).
//!
//! The binaries under `fuzz_targets/` are one-line wrappers; the regression tests of the
//! workspace replay the checked-in inputs of `fuzz/regressions/` through the same parsers.

use vto_core::media::{self, ImageLimits};
use vto_core::{CreateRequest, FetchLimits, RequestLimits};
use vto_render::product::{self, pose};

/// glTF 2.0, binary (GLB: JSON and BIN chunks) or JSON with `data:` buffers: accessors,
/// sparse accessors, Draco and meshopt streams, textures, node trees, `extras.vto`; then what
/// the renderer computes from a loaded model before placing it (the part pick and the
/// orientation inferred for each category).
pub fn gltf(data: &[u8]) {
    model(data);
}

/// Wavefront OBJ: the same loader entry point as [`gltf`], seeded with OBJ files.
pub fn obj(data: &[u8]) {
    model(data);
}

fn model(data: &[u8]) {
    // The HTTP engines sniff a model before sending it on; the built-in engine loads it.
    if let Err(e) = media::sniff_model(data) {
        let _ = e.code();
    }
    match product::load(data) {
        Ok(p) => {
            assert!(p.triangle_count() > 0, "a loaded product has triangles");
            let picked = product::pick::pick(&p);
            for category in [
                pose::PoseCategory::Eyewear,
                pose::PoseCategory::Hat,
                pose::PoseCategory::Shoe,
                pose::PoseCategory::Earring,
                pose::PoseCategory::Necklace,
                pose::PoseCategory::Band,
            ] {
                let posed = pose::infer(&picked.product, category);
                let _ = posed.apply(&picked.product);
            }
        }
        Err(e) => {
            let _ = (e.code(), e.to_string());
        }
    }
}

/// A person or product photo: sniffed, its header probed under the pixel limits, decoded
/// (EXIF orientation applied) and converted to RGBA8, as the renderers do.
pub fn photo(data: &[u8]) {
    let limits = ImageLimits::default();
    let _ = media::sniff_image(data);
    let probed = media::probe_image(data, &limits);
    match media::decode_image(data, &limits) {
        Ok(img) => {
            let info = probed.expect("an image that decodes has a readable header");
            assert_eq!(
                info.oriented_dimensions(),
                (img.width(), img.height()),
                "the probed size is the decoded size"
            );
            let _ = img.to_rgba8();
        }
        Err(e) => {
            let _ = (e.code(), e.to_string());
        }
    }
}

/// The create-request body: JSON into [`CreateRequest`] (as `POST /v1/try-ons` reads it),
/// validated (categories, URLs, `data:` URLs decoded under the size limit), and the decoded
/// `data:` inputs handed to the fetch step.
pub fn request(data: &[u8]) {
    let Ok(req) = serde_json::from_slice::<CreateRequest>(data) else {
        return;
    };
    validate(&req);
}

/// One `data:` or http(s) URL as the value of each input field of a request.
pub fn data_url(data: &[u8]) {
    let url = String::from_utf8_lossy(data).into_owned();
    let value = Some(serde_json::Value::String(url));
    for category in ["glasses", "dress"] {
        let req = CreateRequest {
            category: Some(category.into()),
            person_image: value.clone(),
            product_model: value.clone(),
            product_image: value.clone(),
            webhook_url: value.clone(),
            remove_own_eyewear: value.clone(),
            remove_own_hat: value.clone(),
            product_kind: value.clone(),
        };
        validate(&req);
    }
}

fn validate(req: &CreateRequest) {
    let limits = RequestLimits::default();
    match req.validate(&limits) {
        Ok(v) => {
            for input in [&v.person_image, &v.product] {
                if let Some(Ok(fetched)) =
                    vto_core::fetch::fetch_data(input, &FetchLimits::default())
                {
                    let _ = media::sniff(&fetched.bytes);
                }
            }
        }
        Err(e) => {
            assert!(!e.errors.is_empty(), "a refusal names at least one problem");
            for f in &e.errors {
                let _ = (f.code.as_str(), &f.param);
            }
        }
    }
}

/// A render service's answer body: as a `2xx` (an image, or a protocol error in a `200`) and
/// as an error status (`{"error":{…}}` or anything else).
pub fn render_reply(data: &[u8]) {
    let _ = vto_core::render_reply::rejection(data);
    match vto_core::render_reply::read_image(data, &ImageLimits::default()) {
        Ok(r) => assert!(r.png.starts_with(b"\x89PNG\r\n\x1a\n")),
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// A `.tflite` model file (operator input, but a corrupt download must not crash the
/// server): the flatbuffer reader, then the CPU executor's preparation (lowering, fusing,
/// weight decoding and packing, buffer planning).
pub fn tflite(data: &[u8]) {
    use vto_render::tflite::{CpuPlan, Model};
    let Ok(model) = Model::parse(data) else {
        return;
    };
    let _ = (model.inputs(), model.outputs());
    let _ = CpuPlan::new(&model);
}
