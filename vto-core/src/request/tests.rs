//! Tests of the create-request body's validation.

use super::*;
use serde_json::json;

fn req(v: serde_json::Value) -> CreateRequest {
    serde_json::from_value(v).unwrap()
}

fn codes(e: &ValidationErrors) -> Vec<(ValidationCode, &str)> {
    e.errors
        .iter()
        .map(|e| (e.code, e.param.as_str()))
        .collect()
}

const PERSON: &str = "https://shop.example/p.jpg";
const PRODUCT: &str = "https://shop.example/x.glb";

/// Every category × every combination of the two product fields.
#[test]
fn every_category_and_product_field_combination() {
    for c in Category::ALL {
        let wanted = c.product_input().field();
        let other = c.product_input().other().field();
        for (has_model, has_image) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut body = json!({"category": c.as_str(), "person_image": PERSON});
            if has_model {
                body["product_model"] = json!(PRODUCT);
            }
            if has_image {
                body["product_image"] = json!(PRODUCT);
            }
            let has_wanted = if wanted == "product_model" {
                has_model
            } else {
                has_image
            };
            let has_other = if other == "product_model" {
                has_model
            } else {
                has_image
            };
            let out = req(body).validate(&RequestLimits::default());
            match (has_wanted, has_other) {
                (true, false) => {
                    let v = out.unwrap();
                    assert_eq!(v.category, c);
                    assert_eq!(
                        v.product,
                        InputRef::Url {
                            url: PRODUCT.into()
                        }
                    );
                }
                (true, true) => assert_eq!(
                    codes(&out.unwrap_err()),
                    vec![(ValidationCode::FieldNotAllowed, other)],
                    "{c}"
                ),
                (false, true) => assert_eq!(
                    codes(&out.unwrap_err()),
                    vec![
                        (ValidationCode::FieldNotAllowed, other),
                        (ValidationCode::MissingField, wanted)
                    ],
                    "{c}"
                ),
                (false, false) => assert_eq!(
                    codes(&out.unwrap_err()),
                    vec![(ValidationCode::MissingField, wanted)],
                    "{c}"
                ),
            }
        }
    }
}

#[test]
fn unknown_category_and_missing_person_are_both_reported() {
    let e = req(json!({"category": "socks", "product_model": "ftp://x/y"}))
        .validate(&RequestLimits::default())
        .unwrap_err();
    assert_eq!(
        codes(&e),
        vec![
            (ValidationCode::UnknownCategory, "category"),
            (ValidationCode::MissingField, "person_image"),
            (ValidationCode::UnsupportedScheme, "product_model"),
        ]
    );
}

#[test]
fn bad_urls_and_schemes_name_the_field() {
    let cases = [
        ("not a url", ValidationCode::InvalidUrl),
        ("ftp://host/file.png", ValidationCode::UnsupportedScheme),
        ("file:///etc/passwd", ValidationCode::UnsupportedScheme),
        ("https://user:pw@host/x.png", ValidationCode::InvalidUrl),
        ("data:image/png,rawdata", ValidationCode::InvalidUrl),
        ("data:image/png;base64,@@@@", ValidationCode::InvalidUrl),
        // Regression (fuzz target `data_url`): a multi-byte character across the
        // `data:` prefix's length panicked ("not a char boundary").
        (
            "http\u{b6}://shop.example/a.jpg",
            ValidationCode::InvalidUrl,
        ),
        ("dat\u{e9}://x", ValidationCode::InvalidUrl),
    ];
    for (url, code) in cases {
        let e = req(json!({"category": "shirt", "person_image": url, "product_image": PRODUCT}))
            .validate(&RequestLimits::default())
            .unwrap_err();
        assert_eq!(codes(&e), vec![(code, "person_image")], "{url}");
    }
    let e = req(json!({"category": 3, "person_image": PERSON}))
        .validate(&RequestLimits::default())
        .unwrap_err();
    assert_eq!(codes(&e), vec![(ValidationCode::InvalidType, "category")]);
}

#[test]
fn data_urls_decode_and_respect_the_size_limit() {
    let body = json!({"category": "shirt", "person_image": "data:image/png;base64,iVBORw0KGgo=",
                      "product_image": PRODUCT});
    let v = req(body.clone())
        .validate(&RequestLimits::default())
        .unwrap();
    match v.person_image {
        InputRef::Data { media_type, bytes } => {
            assert_eq!(media_type, "image/png");
            assert_eq!(bytes, b"\x89PNG\r\n\x1a\n");
        }
        other => panic!("{other:?}"),
    }
    let tiny = RequestLimits {
        max_data_bytes: 4,
        ..Default::default()
    };
    let e = req(body).validate(&tiny).unwrap_err();
    assert_eq!(codes(&e), vec![(ValidationCode::TooLarge, "person_image")]);
}

#[test]
fn webhook_is_ignored_for_sync_and_checked_for_async() {
    let sync = req(json!({"category": "glasses", "person_image": PERSON,
                           "product_model": PRODUCT, "webhook_url": "not a url"}))
    .validate(&RequestLimits::default())
    .unwrap();
    assert_eq!(sync.webhook_url, None);

    let e = req(json!({"category": "dress", "person_image": PERSON,
                        "product_image": PRODUCT, "webhook_url": "data:text/plain;base64,AA=="}))
    .validate(&RequestLimits::default())
    .unwrap_err();
    assert_eq!(
        codes(&e),
        vec![(ValidationCode::UnsupportedScheme, "webhook_url")]
    );

    let ok = req(json!({"category": "dress", "person_image": PERSON,
                         "product_image": PRODUCT, "webhook_url": "https://shop.example/hook"}))
    .validate(&RequestLimits::default())
    .unwrap();
    assert_eq!(ok.webhook_url.as_deref(), Some("https://shop.example/hook"));
}

#[test]
fn remove_own_eyewear_defaults_to_auto_and_rejects_other_values() {
    let base = json!({"category": "glasses", "person_image": PERSON, "product_model": PRODUCT});
    let v = req(base.clone())
        .validate(&RequestLimits::default())
        .unwrap();
    assert_eq!(v.options.remove_own_eyewear, RemoveOwnEyewear::Auto);
    for value in RemoveOwnEyewear::ALL {
        let mut body = base.clone();
        body["remove_own_eyewear"] = json!(value.as_str());
        let v = req(body).validate(&RequestLimits::default()).unwrap();
        assert_eq!(v.options.remove_own_eyewear, value);
    }
    for (bad, code) in [
        (json!("sometimes"), ValidationCode::InvalidValue),
        (json!("AUTO"), ValidationCode::InvalidValue),
        (json!(true), ValidationCode::InvalidType),
    ] {
        let mut body = base.clone();
        body["remove_own_eyewear"] = bad;
        let e = req(body).validate(&RequestLimits::default()).unwrap_err();
        assert_eq!(codes(&e), vec![(code, "remove_own_eyewear")]);
    }
    // A job stored before the option existed reads back with the default.
    let v = req(base).validate(&RequestLimits::default()).unwrap();
    let mut stored = serde_json::to_value(&v).unwrap();
    stored.as_object_mut().unwrap().remove("options");
    let back: ValidatedRequest = serde_json::from_value(stored).unwrap();
    assert_eq!(back, v);
}

#[test]
fn remove_own_hat_defaults_to_auto_and_rejects_other_values() {
    let base = json!({"category": "hats", "person_image": PERSON, "product_model": PRODUCT});
    let v = req(base.clone())
        .validate(&RequestLimits::default())
        .unwrap();
    assert_eq!(v.options.remove_own_hat, RemoveOwnHat::Auto);
    for value in RemoveOwnHat::ALL {
        let mut body = base.clone();
        body["remove_own_hat"] = json!(value.as_str());
        let v = req(body).validate(&RequestLimits::default()).unwrap();
        assert_eq!(v.options.remove_own_hat, value);
    }
    for (bad, code) in [
        (json!("sometimes"), ValidationCode::InvalidValue),
        (json!("Never"), ValidationCode::InvalidValue),
        (json!(1), ValidationCode::InvalidType),
    ] {
        let mut body = base.clone();
        body["remove_own_hat"] = bad;
        let e = req(body).validate(&RequestLimits::default()).unwrap_err();
        assert_eq!(codes(&e), vec![(code, "remove_own_hat")]);
    }
    // A job stored before the option existed reads back with the default.
    let v = req(base).validate(&RequestLimits::default()).unwrap();
    let mut stored = serde_json::to_value(&v).unwrap();
    stored["options"]
        .as_object_mut()
        .unwrap()
        .remove("remove_own_hat");
    let back: ValidatedRequest = serde_json::from_value(stored).unwrap();
    assert_eq!(back, v);
}

#[test]
fn product_kind_must_belong_to_the_category() {
    let body = |category: &str, kind: serde_json::Value| {
        // A dress is a product photo; the others here take a 3D model.
        let product = if category == "dress" {
            "product_image"
        } else {
            "product_model"
        };
        let mut r = json!({"category": category, "person_image": PERSON, "product_kind": kind});
        r[product] = json!(PRODUCT);
        req(r).validate(&RequestLimits::default())
    };
    // Absent or null: read from the model.
    let v = req(json!({"category": "jewelry", "person_image": PERSON,
                       "product_model": PRODUCT}))
    .validate(&RequestLimits::default())
    .unwrap();
    assert_eq!(v.options.product_kind, None);
    assert_eq!(
        body("jewelry", json!(null)).unwrap().options.product_kind,
        None
    );
    // Every kind in its own category; refused in every other 3D category.
    for kind in ProductKind::ALL {
        let own = kind.category();
        let v = body(own.as_str(), json!(kind.as_str())).unwrap();
        assert_eq!(v.options.product_kind, Some(kind));
        for c in [
            Category::Glasses,
            Category::Sunglasses,
            Category::Hats,
            Category::Jewelry,
            Category::Shoes,
            Category::Dress,
        ] {
            if c == own {
                continue;
            }
            let e = body(c.as_str(), json!(kind.as_str())).unwrap_err();
            assert_eq!(
                codes(&e),
                vec![(ValidationCode::UnsupportedProductKind, "product_kind")],
                "{kind} as {c}"
            );
            assert!(e.to_string().contains(kind.as_str()), "{e}");
        }
    }
    assert_eq!(ProductKind::of(Category::Hats).len(), 3);
    assert_eq!(
        ProductKind::of(Category::Dress),
        vec![ProductKind::Dress, ProductKind::Skirt]
    );
    assert!(ProductKind::of(Category::Glasses).is_empty());
    for (bad, code) in [
        (json!("tiara"), ValidationCode::InvalidValue),
        (json!("Ring"), ValidationCode::InvalidValue),
        (json!(["ring"]), ValidationCode::InvalidType),
    ] {
        let e = body("jewelry", bad).unwrap_err();
        assert_eq!(codes(&e), vec![(code, "product_kind")]);
    }
    // Stored with the job and read back.
    let v = body("hats", json!("brimmed")).unwrap();
    let back: ValidatedRequest = serde_json::from_value(serde_json::to_value(&v).unwrap()).unwrap();
    assert_eq!(back.options.product_kind, Some(ProductKind::Brimmed));
}

#[test]
fn overlong_urls_are_rejected() {
    let long = format!("https://shop.example/{}", "a".repeat(3000));
    let e = req(json!({"category": "shirt", "person_image": long, "product_image": PRODUCT}))
        .validate(&RequestLimits::default())
        .unwrap_err();
    assert_eq!(codes(&e), vec![(ValidationCode::TooLarge, "person_image")]);
}
