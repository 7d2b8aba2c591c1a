//! `GET /v1/balance`.

use vto_core::Endpoint;
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;

use super::{authorize, finish, json_reply, Ctx};

pub(super) async fn balance(ctx: Ctx, headers: HeaderMap) -> Response {
    let (caller, decision) = match authorize(&ctx, &headers, Endpoint::Balance).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let result = ctx
        .service
        .balance(&caller)
        .await
        .map(|b| json_reply(StatusCode::OK, &b));
    finish(result, decision)
}
