//! `GET /v1/results/{token}`: a result image behind a signed, expiring link (results in a
//! local folder; with object storage, links point at the store and nothing is served here).

use tracing::error;
use vto_core::ResultStore;
use vto_core::{ApiError, ErrorCode};
use warp::reply::Response;

use super::{error_reply, set_header, Ctx};

pub(super) async fn result_image(ctx: Ctx, token: String) -> Response {
    let not_found = || {
        error_reply(&ApiError::new(
            ErrorCode::NotFound,
            "no such result, or the link has expired; GET the try-on again for a fresh link",
        ))
    };
    // With results in object storage, links point at the store itself: nothing is served here.
    let Some(signed) = &ctx.signed else {
        return not_found();
    };
    let now = ctx.service.now();
    let Ok(key) = signed.verify(&token, now) else {
        return not_found();
    };
    match signed.get(&key).await {
        Ok(Some(img)) => {
            let mut resp = Response::new(img.bytes.into());
            set_header(&mut resp, "content-type", img.content_type);
            set_header(&mut resp, "cache-control", "private, max-age=3600".into());
            resp
        }
        Ok(None) | Err(vto_core::results::ResultStoreError::InvalidKey(_)) => not_found(),
        Err(e) => {
            error!(error = %e, "reading a result image failed");
            error_reply(&ApiError::internal())
        }
    }
}
