//! `vto-server`: runs the API with the configuration from defaults → `--config`/`VTO_CONFIG`
//! → `VTO_*` environment variables.

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut config_path: Option<PathBuf> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--config" | "-c" => config_path = args.next().map(PathBuf::from),
            "--print-default-config" => {
                print!("{}", vto_server::config::DEFAULT_TOML);
                return Ok(());
            }
            "--help" | "-h" => {
                println!("vto-server [--config <file.toml>] [--print-default-config]\n\nConfiguration: embedded defaults → the file (or VTO_CONFIG) → VTO_* environment variables.");
                return Ok(());
            }
            other => anyhow::bail!("unknown argument {other:?} (try --help)"),
        }
    }
    vto_server::init_tracing();
    let config = vto_server::Config::from_env(config_path.as_deref())?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(vto_server::serve(config))
}
