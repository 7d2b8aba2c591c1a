//! The `LISTEN vto_jobs` connection: wakes idle workers when a job is queued.
//!
//! One dedicated connection (outside the pool) per store. Each notification wakes every worker
//! waiting in [`JobQueue::wait_for_work`](vto_core::JobQueue::wait_for_work); they race to
//! claim, and the losers wait again. When the connection drops, the listener reconnects with
//! a growing pause (up to 5 s); meanwhile workers poll, as they do when a notification is lost.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::{PgError, JOBS_CHANNEL};

/// Connects, `LISTEN`s, and spawns the task that forwards notifications to `wake`. The first
/// connection must succeed (so a wrong URL fails at start); later ones are retried.
pub(crate) async fn spawn_listener(
    config: tokio_postgres::Config,
    wake: Arc<Notify>,
) -> Result<tokio::task::AbortHandle, PgError> {
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Result<(), PgError>>();
    let task = tokio::spawn(async move {
        let mut ready = Some(ready_tx);
        let mut pause = Duration::from_millis(100);
        loop {
            let ended = session(&config, &wake, &mut ready).await;
            if let Some(r) = ready.take() {
                // The first connection failed: report it to `connect` and stop.
                let _ = r.send(ended);
                return;
            }
            match ended {
                Err(e) => tracing::warn!(error = %e, "the LISTEN connection ended; reconnecting"),
                Ok(()) => tracing::warn!("the LISTEN connection closed; reconnecting"),
            }
            // Anything queued while we were away is found by the workers' next poll; wake
            // them now so they look at once.
            wake.notify_waiters();
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(5));
        }
    });
    match ready_rx.await {
        Ok(Ok(())) => Ok(task.abort_handle()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(PgError("the LISTEN task stopped before connecting".into())),
    }
}

/// One connection: `LISTEN`, tell `ready`, then forward notifications until it ends.
async fn session(
    config: &tokio_postgres::Config,
    wake: &Notify,
    ready: &mut Option<tokio::sync::oneshot::Sender<Result<(), PgError>>>,
) -> Result<(), PgError> {
    let (client, mut connection) = config
        .connect(NoTls)
        .await
        .map_err(|e| PgError::ctx("connecting the LISTEN connection", e))?;
    let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
    let listen = async {
        client
            .batch_execute(&format!("LISTEN {JOBS_CHANNEL}"))
            .await
            .map_err(|e| PgError::ctx("LISTEN", e))
    };
    tokio::pin!(listen);
    let mut listening = false;
    loop {
        tokio::select! {
            r = &mut listen, if !listening => {
                r?;
                listening = true;
                if let Some(tx) = ready.take() {
                    let _ = tx.send(Ok(()));
                }
            }
            m = messages.next() => match m {
                Some(Ok(AsyncMessage::Notification(_))) => wake.notify_waiters(),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(PgError::ctx("the LISTEN connection", e)),
                None => return Ok(()),
            },
        }
    }
}
