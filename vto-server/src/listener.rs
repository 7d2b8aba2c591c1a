//! The accept loop: warp's routes served on hyper-util's HTTP/1 + HTTP/2 connection builder,
//! with graceful shutdown — what `warp::serve(..).incoming(..).graceful(..)` does, except for
//! how a connection's end is logged.
//!
//! warp logs every connection that ends in an error at `ERROR` ("server connection error:
//! hyper::Error(IncompleteMessage)"): under `wrk -c 2000` against `/healthz` that was 391,893
//! lines in 8 s, one per connection the load generator dropped. A client closing or resetting
//! its connection, or sending bytes that are not HTTP, is not a server error: those are logged
//! at `DEBUG` and counted in `/metrics` (`vto_http_client_connection_errors_total`); anything
//! else still logs at `ERROR`.

use std::error::Error as StdError;
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use warp::filters::BoxedFilter;
use warp::reply::Response;

use crate::metrics::Metrics;

/// Serves `routes` on `listener` until `stop` turns true, then stops accepting and waits for
/// the open connections to finish their requests.
pub(crate) async fn serve(
    listener: TcpListener,
    routes: BoxedFilter<(Response,)>,
    mut stop: watch::Receiver<bool>,
    metrics: Arc<Metrics>,
) {
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped(&mut stop) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if is_client_side_io(&e) => continue,
            Err(e) => {
                // Typically EMFILE: wait for connections to close rather than spin.
                tracing::error!(error = %e, "accept error");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let svc = TowerToHyperService::new(warp::service(routes.clone()));
        let watcher = graceful.watcher();
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let builder = auto::Builder::new(TokioExecutor::new());
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), svc);
            if let Err(e) = watcher.watch(conn).await {
                if is_client_side(&*e) {
                    metrics.client_connection_error();
                    tracing::debug!(error = ?e, "client connection error");
                } else {
                    tracing::error!(error = ?e, "server connection error");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Resolves once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    while !*stop.borrow() {
        if stop.changed().await.is_err() {
            return;
        }
    }
}

/// Whether a connection's error is the client's doing: it closed mid-message, reset the
/// connection, timed out, or sent something that is not HTTP — anywhere in the error chain.
fn is_client_side(e: &(dyn StdError + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(h) = c.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message()
                || h.is_parse()
                || h.is_parse_too_large()
                || h.is_canceled()
                || h.is_closed()
                || h.is_timeout()
                || h.is_body_write_aborted()
            {
                return true;
            }
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if is_client_side_io(io) {
                return true;
            }
        }
        cause = c.source();
    }
    false
}

/// The socket errors a peer causes by going away.
fn is_client_side_io(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionRefused
            | ErrorKind::BrokenPipe
            | ErrorKind::UnexpectedEof
            | ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_going_away_is_client_side_and_a_full_disk_is_not() {
        let reset = std::io::Error::from(ErrorKind::ConnectionReset);
        assert!(is_client_side(&reset));
        // Found anywhere down the chain, as hyper-util nests it.
        let wrapped = vto_core::BackendError::new(
            "serving a connection",
            std::io::Error::from(ErrorKind::BrokenPipe),
        );
        assert!(is_client_side(&wrapped));
        let disk = std::io::Error::from(ErrorKind::StorageFull);
        assert!(!is_client_side(&disk));
    }
}
