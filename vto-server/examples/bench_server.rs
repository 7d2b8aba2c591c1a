//! The server `scripts/bench-server.sh` measures: the real `vto_server::start` with the
//! configuration from the environment, plus a BENCH DOUBLE engine for `shirt` that never
//! finishes (so submitted jobs stay queued and the benchmark measures the API path: auth,
//! rate limit, validation, the durable hold and insert). Not for production.

use vto_core::testing::NeverEngine;
use vto_core::{Category, Engines};

fn main() -> anyhow::Result<()> {
    vto_server::init_tracing();
    let config = vto_server::Config::from_env(None)?;
    let mut engines = Engines::new();
    engines.register(Category::Shirt, std::sync::Arc::new(NeverEngine));
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(vto_server::serve_with(config, engines))
}
