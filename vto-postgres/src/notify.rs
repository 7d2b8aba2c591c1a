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

/// Spawns the task that keeps one connection `LISTEN`ing and forwards notifications to
/// `wake`, reconnecting with a growing pause (up to 5 s) whenever the connection fails or ends.
/// Called on a store's first [`JobQueue::wait_for_work`](vto_core::JobQueue::wait_for_work), so a
/// store that never waits for work (an API-only instance) never opens the connection. The
/// database was already reached by the pool when the store connected.
pub(crate) fn spawn_listener(
    config: tokio_postgres::Config,
    wake: Arc<Notify>,
) -> tokio::task::AbortHandle {
    let task = tokio::spawn(async move {
        let mut pause = Duration::from_millis(100);
        loop {
            let mut listening = false;
            match session(&config, &wake, &mut listening).await {
                Err(e) => tracing::warn!(error = %e, "the LISTEN connection ended; reconnecting"),
                Ok(()) => tracing::warn!("the LISTEN connection closed; reconnecting"),
            }
            if listening {
                pause = Duration::from_millis(100);
            }
            // Anything queued while we were away is found by the workers' next poll; wake
            // them now so they look at once.
            wake.notify_waiters();
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(5));
        }
    });
    task.abort_handle()
}

/// One connection: `LISTEN`, set `listening`, then forward notifications until it ends.
async fn session(
    config: &tokio_postgres::Config,
    wake: &Notify,
    listening: &mut bool,
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
    loop {
        tokio::select! {
            r = &mut listen, if !*listening => {
                r?;
                *listening = true;
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
