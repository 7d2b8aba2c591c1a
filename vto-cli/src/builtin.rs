//! The built-in engines this binary passes to the server: every built-in renderer of vto-render
//! (today `glasses` and `sunglasses`). The one place the `vto` binary composes a renderer with the
//! server (vto-server itself depends on no renderer).

use std::path::Path;

use vto_core::Engines;
use vto_render::engine::RendererConfig;
use vto_server::Unavailable;

/// The built-in engines over the models in `models_dir` (built as `config` says and warmed
/// up: every network has run once, so the first request pays no first-run cost), and the
/// built-in categories that could not be offered, each with the reason and the exact command
/// that fixes it. Logs how long building and warming took.
pub fn builtin_engines(models_dir: &Path, config: RendererConfig) -> (Engines, Vec<Unavailable>) {
    use vto_render::engine::RenderError;
    let started = std::time::Instant::now();
    let built =
        vto_render::engine::Renderer::shared_with(models_dir, config).and_then(|renderer| {
            let built_in = started.elapsed();
            let warm = renderer.warm_up()?;
            tracing::info!(
                build_ms = built_in.as_millis() as u64,
                warm_up_ms = warm.as_millis() as u64,
                vision = if renderer.vision_on_cpu() {
                    "cpu"
                } else {
                    "gpu"
                },
                concurrency = renderer.concurrency(),
                "built-in engines ready"
            );
            Ok(vto_render::engine::builtin_on(&renderer))
        });
    match built {
        Ok(engines) => (engines, Vec::new()),
        Err(e) => {
            let fix = match &e {
                RenderError::Models(_) => format!(
                    "VTO_MODELS_DIR={} vto models fetch",
                    std::path::absolute(models_dir)
                        .unwrap_or_else(|_| models_dir.to_path_buf())
                        .display()
                ),
                RenderError::Gpu(_) => "install a Vulkan driver (lavapipe runs on any CPU): \
                     apt-get install mesa-vulkan-drivers libvulkan1 (or scripts/setup.sh)"
                    .to_string(),
                _ => "see the error; `vto inspect <photo>` runs the same vision stack".to_string(),
            };
            let unavailable = vto_render::engine::builtin_tryons()
                .into_iter()
                .map(|t| Unavailable {
                    category: t.category(),
                    reason: format!("built-in engine unavailable: {e}"),
                    fix: fix.clone(),
                })
                .collect();
            (Engines::new(), unavailable)
        }
    }
}
