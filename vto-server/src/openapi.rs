//! The OpenAPI 3.1 document served at `/openapi.json`, built from the same tables the code
//! uses (categories, error codes, prices), so it cannot drift from them.

use serde_json::{json, Value};

use vto_core::{Category, ErrorCode, ProductKind, ServiceConfig};

fn error_response(description: &str, codes: &[ErrorCode]) -> Value {
    let list: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    json!({
        "description": format!("{description} (`error.code`: {})", list.join(", ")),
        "headers": { "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" } },
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

fn limited_headers() -> Value {
    json!({
        "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" },
        "RateLimit-Policy": { "$ref": "#/components/headers/RateLimit-Policy" },
        "RateLimit": { "$ref": "#/components/headers/RateLimit" }
    })
}

fn common_errors(endpoint_extra: &[(&str, Value)]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "401".into(),
        error_response(
            "No API key, or an unknown or revoked one",
            &[ErrorCode::MissingApiKey, ErrorCode::InvalidApiKey],
        ),
    );
    let mut r429 = error_response(
        "Too many requests to this endpoint for this key; decided before any other processing and never billed",
        &[ErrorCode::RateLimitExceeded],
    );
    r429["headers"]["Retry-After"] = json!({ "description": "Seconds to wait before retrying.", "schema": { "type": "integer" } });
    r429["headers"]["RateLimit-Policy"] =
        json!({ "$ref": "#/components/headers/RateLimit-Policy" });
    r429["headers"]["RateLimit"] = json!({ "$ref": "#/components/headers/RateLimit" });
    m.insert("429".into(), r429);
    m.insert(
        "500".into(),
        error_response(
            "Something failed inside the server; details are only in its log",
            &[ErrorCode::InternalError],
        ),
    );
    let mut r503 = error_response(
        "The service's database is briefly unavailable (a restart, a failover); nothing was done — no job, no charge. Retry after Retry-After seconds (with the same Idempotency-Key for a POST)",
        &[ErrorCode::ServiceUnavailable],
    );
    r503["headers"]["Retry-After"] = json!({ "description": "Seconds to wait before retrying.", "schema": { "type": "integer" } });
    m.insert("503".into(), r503);
    m.insert(
        "405".into(),
        error_response(
            "The path exists but not for this method",
            &[ErrorCode::MethodNotAllowed],
        ),
    );
    for (k, v) in endpoint_extra {
        m.insert((*k).into(), v.clone());
    }
    m
}

/// The document.
pub fn document(config: &ServiceConfig) -> Value {
    let categories: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let product_kinds: Vec<&str> = ProductKind::ALL.iter().map(|k| k.as_str()).collect();
    let prices: serde_json::Map<String, Value> = Category::ALL
        .iter()
        .map(|c| {
            (
                c.as_str().to_string(),
                json!(config.prices.price(*c).amount.to_string()),
            )
        })
        .collect();
    let sync: Vec<&str> = Category::ALL
        .iter()
        .filter(|c| c.is_sync())
        .map(|c| c.as_str())
        .collect();
    let request_id_param = json!({
        "name": "request_id", "in": "path", "required": true,
        "schema": { "type": "string", "format": "uuid" }
    });

    let mut create_responses = common_errors(&[
        (
            "400",
            error_response(
                "The body is not JSON, or a field is wrong (`param` names it)",
                &[ErrorCode::InvalidRequest],
            ),
        ),
        (
            "402",
            error_response(
                "The available balance does not cover this category's price",
                &[ErrorCode::InsufficientBalance],
            ),
        ),
        (
            "413",
            error_response(
                "The body is over the configured limit",
                &[ErrorCode::PayloadTooLarge],
            ),
        ),
        (
            "415",
            error_response(
                "The body is not `application/json`",
                &[ErrorCode::UnsupportedMediaType],
            ),
        ),
        (
            "501",
            error_response(
                "No engine is configured for this category on this server",
                &[ErrorCode::EngineUnavailable],
            ),
        ),
    ]);
    create_responses.insert("200".into(), json!({
        "description": format!("Synchronous category ({}) rendered: the result object with `status: success`.", sync.join(", ")),
        "headers": limited_headers(),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Result" } } }
    }));
    create_responses.insert("202".into(), json!({
        "description": "Asynchronous category accepted: `{request_id, status: \"queued\", category, result: null, cost: null}`. Poll the `Location` or wait for the webhook.",
        "headers": {
            "Location": { "description": "The status URL of the new request.", "schema": { "type": "string" } },
            "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" },
            "RateLimit-Policy": { "$ref": "#/components/headers/RateLimit-Policy" },
            "RateLimit": { "$ref": "#/components/headers/RateLimit" }
        },
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Result" } } }
    }));
    create_responses.insert("409".into(), error_response(
        "The same `Idempotency-Key` was used with a different body, or its first request is still running",
        &[ErrorCode::IdempotencyConflict],
    ));
    create_responses.insert("422".into(), json!({
        "description": "Synchronous category whose render failed: the result object with `status: failed`, `result` and `cost` null and `error.code` `processing_failed` (or `input_fetch_failed`, `unsupported_media`, `input_too_large`). Not billed.",
        "headers": limited_headers(),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Result" } } }
    }));
    create_responses.insert("503".into(), json!({
        "description": "The service's database is briefly unavailable (a restart, a failover): the error body; nothing was done — no job, no charge. Or a synchronous category whose request waited longer than `sync_wait_secs` (default 30) for a free renderer: the result object with `status: failed` and `error.code` `service_unavailable`; not billed, and its `Idempotency-Key` is not saved, so a retry under it runs. Either way retry after Retry-After seconds (with the same Idempotency-Key) (`error.code`: service_unavailable)",
        "headers": {
            "Retry-After": { "description": "Seconds to wait before retrying.", "schema": { "type": "integer" } },
            "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" }
        },
        "content": { "application/json": { "schema": { "oneOf": [
            { "$ref": "#/components/schemas/Error" },
            { "$ref": "#/components/schemas/Result" }
        ] } } }
    }));

    let mut get_responses = common_errors(&[(
        "404",
        error_response(
            "No request with this id for this account (another account's id included)",
            &[ErrorCode::NotFound],
        ),
    )]);
    get_responses.insert("200".into(), json!({
        "description": "The result object, in any state (`queued`, `processing`, `success`, `failed`, `canceled`).",
        "headers": limited_headers(),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Result" } } }
    }));

    let mut list_responses = common_errors(&[(
        "400",
        error_response(
            "`limit` outside 1–100, an unknown `status`, or an unknown query parameter (`param` names it)",
            &[ErrorCode::InvalidRequest],
        ),
    )]);
    list_responses.insert("200".into(), json!({
        "description": "`{\"object\": \"list\", \"data\": [result objects, newest first], \"has_more\": bool}`: the account's latest try-ons.",
        "headers": limited_headers(),
        "content": { "application/json": { "schema": {
            "type": "object",
            "required": ["object", "data", "has_more"],
            "properties": {
                "object": { "type": "string", "enum": ["list"] },
                "data": { "type": "array", "items": { "$ref": "#/components/schemas/Result" } },
                "has_more": { "type": "boolean", "description": "Older try-ons exist beyond this page." }
            }
        } } }
    }));

    let mut cancel_responses = common_errors(&[
        (
            "404",
            error_response(
                "No request with this id for this account",
                &[ErrorCode::NotFound],
            ),
        ),
        (
            "409",
            error_response("The request already finished", &[ErrorCode::NotCancelable]),
        ),
    ]);
    cancel_responses.insert("200".into(), json!({
        "description": "The result object with `status: canceled` (also when it was canceled before). Not billed.",
        "headers": limited_headers(),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Result" } } }
    }));

    let mut balance_responses = common_errors(&[]);
    balance_responses.insert("200".into(), json!({
        "description": "The caller's account balance.",
        "headers": limited_headers(),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Balance" } } }
    }));

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "vto virtual try-on API",
            "version": "1.0.0",
            "description": "Submit a person photo and a product; get an image of the person wearing it. Synchronous categories answer in the POST; asynchronous ones are polled with GET (or delivered by webhook). Only successful results are billed; a 429 is never billed."
        },
        "servers": [{ "url": "/" }],
        "security": [{ "bearer": [] }],
        "paths": {
            "/v1/virtual-try-on": { "post": {
                "operationId": "createTryOn",
                "summary": "Create a try-on",
                "parameters": [{
                    "name": "Idempotency-Key", "in": "header", "required": false,
                    "description": "Stripe's semantics: the same key and body replay the first response (header `Idempotent-Replayed: true`) with no second job or charge; the same key with another body is 409 `idempotency_conflict`. 1–255 printable ASCII characters, per account, kept 24 h.",
                    "schema": { "type": "string", "minLength": 1, "maxLength": 255 }
                }],
                "requestBody": { "required": true, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/CreateRequest" } } } },
                "responses": create_responses
            }, "get": {
                "operationId": "listTryOns",
                "summary": "The account's latest try-ons, newest first (counted against the `get_try_on` limit)",
                "parameters": [
                    { "name": "limit", "in": "query", "required": false, "description": "How many (1–100, default 10).", "schema": { "type": "integer", "minimum": 1, "maximum": 100, "default": 10 } },
                    { "name": "status", "in": "query", "required": false, "description": "Only try-ons in this state.", "schema": { "type": "string", "enum": ["queued", "processing", "success", "failed", "canceled"] } }
                ],
                "responses": list_responses
            }},
            "/v1/virtual-try-on/{request_id}": { "get": {
                "operationId": "getTryOn",
                "summary": "Read a try-on's state and result",
                "parameters": [request_id_param.clone()],
                "responses": get_responses
            }},
            "/v1/virtual-try-on/{request_id}/cancel": { "post": {
                "operationId": "cancelTryOn",
                "summary": "Cancel a queued or processing try-on",
                "parameters": [request_id_param],
                "responses": cancel_responses
            }},
            "/v1/results/{token}": { "get": {
                "operationId": "getResultImage",
                "summary": "Download a result image (signed, expiring link; no API key needed)",
                "security": [],
                "parameters": [{ "name": "token", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": {
                    "200": { "description": "The image.", "content": { "image/png": {}, "image/jpeg": {}, "image/webp": {} } },
                    "404": error_response("Unknown, tampered or expired link", &[ErrorCode::NotFound]),
                    "405": error_response("Wrong method", &[ErrorCode::MethodNotAllowed]),
                    "500": error_response("Internal error", &[ErrorCode::InternalError])
                }
            }},
            "/v1/balance": { "get": {
                "operationId": "getBalance",
                "summary": "The caller's balance and currency",
                "responses": balance_responses
            }},
            "/openapi.json": { "get": {
                "operationId": "openapi", "security": [], "summary": "This document",
                "responses": { "200": { "description": "OpenAPI 3.1", "content": { "application/json": {} } } }
            }},
            "/healthz": { "get": {
                "operationId": "healthz", "security": [], "summary": "Liveness: the process answers",
                "responses": { "200": { "description": "`{\"status\": \"ok\"}`", "content": { "application/json": {} } } }
            }},
            "/readyz": { "get": {
                "operationId": "readyz", "security": [], "summary": "Readiness: the database answers and the server is not shutting down",
                "responses": {
                    "200": { "description": "`{\"status\": \"ready\" | \"degraded\", \"engines\": {<category>: {engine, reachable, error?}}, \"unavailable\": {<category>: {reason, fix}}}`. `degraded` (still 200: the other categories work) when an external render service is unreachable or a built-in engine could not start (e.g. the models are missing); `unavailable` lists every category without an engine with the exact command or config section that fixes it.", "content": { "application/json": {} } },
                    "503": { "description": "`{\"status\": \"shutting_down\" | \"database_unavailable\"}`", "content": { "application/json": {} } }
                }
            }},
            "/metrics": { "get": {
                "operationId": "metrics", "security": [], "summary": "OpenMetrics text (prometheus-client): requests by route and status, jobs by state, queue depth, render-time histogram, external engine counters",
                "responses": { "200": { "description": "application/openmetrics-text; version=1.0.0", "content": { "application/openmetrics-text": {} } } }
            }}
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer", "description": "`Authorization: Bearer vto_sk_…`" } },
            "headers": {
                "X-Request-Id": { "description": "The request's id (the client's own if it sent one); also in the server log.", "schema": { "type": "string" } },
                "RateLimit-Policy": { "description": "draft-ietf-httpapi-ratelimit-headers: `\"default\";q=<burst>;w=<window seconds>`, the quota that applied: the account's own (`vto admin account limits`) or the server's default for the endpoint", "schema": { "type": "string" } },
                "RateLimit": { "description": "draft-ietf-httpapi-ratelimit-headers: `\"default\";r=<remaining>;t=<seconds until full>`", "schema": { "type": "string" } }
            },
            "schemas": {
                "RenderProtocolMeta": {
                    "description": "External render service protocol v1 (docs/render-protocol.md): the `meta` part of vto's `POST <url>/render` multipart request; the `person` and `product` parts carry the bytes.",
                    "type": "object",
                    "required": ["protocol", "request_id", "category", "mode", "person", "product", "timeout_ms"],
                    "properties": {
                        "protocol": { "type": "integer", "enum": [1] },
                        "request_id": { "type": "string" },
                        "category": { "type": "string" },
                        "mode": { "type": "string", "enum": ["synchronous", "asynchronous"] },
                        "person": { "$ref": "#/components/schemas/RenderProtocolPart" },
                        "product": { "$ref": "#/components/schemas/RenderProtocolPart" },
                        "timeout_ms": { "type": "integer", "minimum": 1 }
                    }
                },
                "RenderProtocolPart": {
                    "type": "object", "required": ["content_type", "bytes"],
                    "properties": {
                        "content_type": { "type": "string", "enum": ["image/png", "image/jpeg", "image/webp", "model/gltf-binary", "model/gltf+json", "model/obj"] },
                        "bytes": { "type": "integer", "minimum": 0 },
                        "width": { "type": "integer", "minimum": 1 },
                        "height": { "type": "integer", "minimum": 1 }
                    }
                },
                "RenderProtocolError": {
                    "description": "What a render service answers on failure (any 4xx/5xx); the job fails with `processing_failed` and this message. On success it answers 200 with a PNG, JPEG or WebP body.",
                    "type": "object", "required": ["error"],
                    "properties": { "error": { "type": "object", "required": ["message"],
                        "properties": { "code": { "type": "string" }, "message": { "type": "string" } } } }
                },
                "WebhookPayload": {
                    "description": "The body of a completion webhook: the result object, POSTed with headers `webhook-id` (stable across retries), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of \"id.timestamp.body\">` (Standard Webhooks; the account's `whsec_` secret).",
                    "$ref": "#/components/schemas/Result"
                },
                "CreateRequest": {
                    "type": "object", "required": ["category", "person_image"],
                    "properties": {
                        "category": { "type": "string", "enum": categories },
                        "person_image": { "type": "string", "description": "https/http URL or a `data:` URL of the person photo" },
                        "product_model": { "type": "string", "description": "3D model URL; required for glasses, sunglasses, hats, jewelry, shoes (and refused for the others)" },
                        "product_image": { "type": "string", "description": "Product photo URL; required for shirt, tshirt, dress, jacket, pants, full_outfit (and refused for the others)" },
                        "webhook_url": { "type": "string", "description": "Asynchronous categories only; ignored for synchronous ones" },
                        "remove_own_eyewear": { "type": "string", "enum": ["auto", "never", "always"], "default": "auto", "description": "glasses and sunglasses: take off the glasses the person already wears before the new frame goes on. `auto` removes them when the detector's confidence is at least 0.5 (dark lenses are kept for a clear `glasses` product, the eyes behind them not being in the photo, and so are the glasses of a head turned more than 35°), `never` keeps them, `always` removes whatever was traced. Ignored by other categories. Any other value is refused with `invalid_value` in `error.details`." },
                        "remove_own_hat": { "type": "string", "enum": ["auto", "never", "always"], "default": "auto", "description": "hats: take off the hat the person already wears before the new one goes on. `auto` removes it when the detector's confidence is at least 0.5 (the old hat's parts the new hat does not cover are filled from the background and the hair around them), `never` keeps it, `always` removes whatever was traced. Ignored by other categories. Any other value is refused with `invalid_value` in `error.details`." },
                        "product_kind": { "type": "string", "enum": product_kinds, "description": "Optional: what the product is, when the shop knows it better than the model file or the photo says. Overrides the file's `extras.vto.kind`, its node names and the shape inference; the result's metadata then gives `kind_source: request`. `jewelry` takes `ring`, `earrings` (the earring type its shape shows: a loop is a hoop, a long shape a drop, else a stud), `stud`, `hoop`, `drop`, `necklace`, `bracelet`, `watch` (worn on the wrist like a bracelet); `hats` takes `cap`, `brimmed`, `beanie`; `dress` takes `dress` (worn from the shoulders, even without a neckline) and `skirt` (a skirt on its own, worn from the waist; without the field a garment whose top edge shows no neckline is read as a skirt); the other categories take none. A kind of another category is refused with `unsupported_product_kind` in `error.details`, an unknown value with `invalid_value`." }
                    }
                },
                "Result": {
                    "type": "object", "required": ["request_id", "status", "category", "result", "cost"],
                    "properties": {
                        "request_id": { "type": "string", "format": "uuid" },
                        "status": { "type": "string", "enum": ["queued", "processing", "success", "failed", "canceled"] },
                        "category": { "type": "string", "enum": categories },
                        "result": { "oneOf": [ { "type": "null" }, { "type": "object", "required": ["image_url"], "properties": { "image_url": { "type": "string" } } } ] },
                        "cost": { "oneOf": [ { "type": "null" }, { "$ref": "#/components/schemas/Money" } ] },
                        "processing_time_ms": { "type": "integer", "description": "On success" },
                        "error": { "$ref": "#/components/schemas/JobError" }
                    }
                },
                "Money": { "type": "object", "required": ["amount", "currency"], "properties": { "amount": { "type": "string", "description": "Decimal" }, "currency": { "type": "string" } } },
                "JobError": { "type": "object", "required": ["code", "message"], "properties": { "code": { "type": "string", "enum": codes }, "message": { "type": "string" } } },
                "Error": {
                    "type": "object", "required": ["error"],
                    "properties": { "error": {
                        "type": "object", "required": ["code", "message"],
                        "properties": {
                            "code": { "type": "string", "enum": codes },
                            "message": { "type": "string" },
                            "param": { "type": "string", "description": "The request field at fault" },
                            "details": { "type": "array", "items": { "type": "object" }, "description": "Every validation problem, when there were several" }
                        }
                    }}
                },
                "Balance": {
                    "type": "object",
                    "properties": {
                        "account_id": { "type": "string" }, "currency": { "type": "string" },
                        "balance": { "type": "string" }, "held": { "type": "string" }, "available": { "type": "string" }
                    }
                }
            }
        },
        "x-prices": prices,
        "x-error-codes": ErrorCode::ALL.iter().map(|c| json!({"code": c.as_str(), "http_status": c.http_status()})).collect::<Vec<_>>()
    })
}
