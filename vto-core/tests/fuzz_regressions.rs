//! The inputs the fuzz targets found (`fuzz/regressions/TARGET/`), replayed the way the
//! targets drive them: each file's name starts with the outcome it must have (an error code,
//! or `ok`), and none may panic. The 3D-model and TFLite ones are in vto-render's tests.

use vto_core::media::{self, ImageLimits};
use vto_core::testing::{regression_inputs, regression_outcome};
use vto_core::{CreateRequest, RequestLimits};

/// The code of the first problem with `param`, or `ok`.
fn outcome(req: &CreateRequest, param: &str) -> String {
    match req.validate(&RequestLimits::default()) {
        Ok(_) => "ok".into(),
        Err(e) => e
            .errors
            .iter()
            .find(|f| f.param == param)
            .map_or("ok".into(), |f| f.code.as_str().to_string()),
    }
}

#[test]
fn data_url_inputs_as_person_image_end_in_their_stated_outcome() {
    let files = regression_inputs("data_url");
    assert!(
        !files.is_empty(),
        "the multi-byte prefix input is checked in"
    );
    for (name, bytes) in files {
        let req = CreateRequest {
            category: Some("glasses".into()),
            person_image: Some(String::from_utf8_lossy(&bytes).into_owned().into()),
            product_model: Some("https://shop.example/m.glb".into()),
            ..CreateRequest::default()
        };
        assert_eq!(
            outcome(&req, "person_image"),
            regression_outcome(&name),
            "{name}"
        );
    }
}

#[test]
fn request_inputs_end_in_their_stated_outcome() {
    for (name, bytes) in regression_inputs("request") {
        let got = match serde_json::from_slice::<CreateRequest>(&bytes) {
            Err(_) => "invalid_json".to_string(),
            Ok(req) => outcome(&req, "person_image"),
        };
        assert_eq!(got, regression_outcome(&name), "{name}");
    }
}

#[test]
fn photo_inputs_end_in_their_stated_outcome() {
    for (name, bytes) in regression_inputs("photo") {
        let got = match media::decode_image(&bytes, &ImageLimits::default()) {
            Ok(_) => "ok".to_string(),
            Err(e) => e.code().as_str().to_string(),
        };
        assert_eq!(got, regression_outcome(&name), "{name}");
    }
}
