//! The built-in engines this binary passes to the server: every built-in renderer of vto-render
//! (today `glasses` and `sunglasses`). The one place the `vto` binary composes a renderer with the
//! server (vto-server itself depends on no renderer).

use std::path::Path;

use vto_core::Engines;
use vto_render::vision::VisionBackend;
use vto_server::Unavailable;

/// The built-in engines over the models in `models_dir` (vision networks where `backend`
/// puts them), and the built-in categories that
/// could not be offered, each with the reason and the exact command that fixes it.
pub fn builtin_engines(models_dir: &Path, backend: VisionBackend) -> (Engines, Vec<Unavailable>) {
    use vto_render::engine::RenderError;
    match vto_render::engine::builtin_with(models_dir, backend) {
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
