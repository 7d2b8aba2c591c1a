//! PostgreSQL going away under a running service (a restart, a failover): requests answer
//! `503 service_unavailable` (retry shortly), not an opaque `500 internal_error`, and work again
//! once the database is back. Found by `scripts/soak.sh`, whose PostgreSQL restart made the
//! servers answer 500s. The database is reached through a TCP proxy the test can cut: every
//! open connection dropped, new ones refused.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use vto_core::{Engines, ErrorCode, ServiceConfig, TryOnService};
use vto_postgres::PgStore;

use crate::common::{backends_on, cluster_url, fresh_database, options};

/// A TCP proxy to `upstream` on a loopback port; [`Proxy::cut`] drops every connection and
/// stops listening, [`Proxy::resume`] listens again on the same port.
struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let p = Proxy {
            addr: listener.local_addr().expect("addr"),
            upstream,
            tasks: Arc::default(),
        };
        p.serve(listener);
        p
    }

    fn serve(&self, listener: TcpListener) {
        let (upstream, tasks) = (self.upstream, self.tasks.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let pipe = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                tasks.lock().expect("tasks").push(pipe);
            }
        });
        self.tasks.lock().expect("tasks").push(accept);
    }

    fn cut(&self) {
        for t in self.tasks.lock().expect("tasks").drain(..) {
            t.abort();
        }
    }

    async fn resume(&self) {
        let listener = TcpListener::bind(self.addr).await.expect("rebind");
        self.serve(listener);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_gone_away_is_a_503_and_back_is_a_200() {
    let Some(cluster) = cluster_url() else { return };
    let url = fresh_database(&cluster).await;
    // postgres://user@HOST:PORT/db: the same URL through the proxy.
    let (head, rest) = url.split_once('@').expect("the test URL names a user");
    let (authority, path) = rest.split_once('/').expect("the test URL names a database");
    let upstream: SocketAddr = authority
        .parse()
        .expect("the test cluster listens on IP:port (scripts/pg.sh)");
    let proxy = Proxy::start(upstream).await;
    let via = format!("{head}@{}/{path}", proxy.addr);

    let mut opts = options();
    opts.acquire_timeout = std::time::Duration::from_secs(2);
    opts.connect_timeout = std::time::Duration::from_secs(2);
    let store = PgStore::connect(&via, opts).await.expect("connect");
    let svc = TryOnService::new(backends_on(store), Engines::new(), ServiceConfig::default());
    let acct = svc.create_account("shop").await.expect("account");
    let key = svc.create_api_key(&acct.id, "test").await.expect("key");
    let caller = svc.authenticate(Some(&key.secret)).await.expect("auth");
    svc.balance(&caller)
        .await
        .expect("balance with the database up");

    proxy.cut();
    let err = svc
        .balance(&caller)
        .await
        .expect_err("the database is unreachable");
    assert_eq!(
        (err.code, err.http_status()),
        (ErrorCode::ServiceUnavailable, 503),
        "{err:?}"
    );
    let err = svc
        .authenticate(Some("vto_sk_unknown_key_while_the_database_is_down"))
        .await
        .expect_err("an unknown key cannot be checked while the database is down");
    assert_eq!(err.code, ErrorCode::ServiceUnavailable, "{err:?}");

    proxy.resume().await;
    let mut back = None;
    for _ in 0..50 {
        match svc.balance(&caller).await {
            Ok(b) => {
                back = Some(b);
                break;
            }
            Err(e) => assert_eq!(e.code, ErrorCode::ServiceUnavailable, "{e:?}"),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        back.is_some(),
        "the service works again once the database is back"
    );
}
