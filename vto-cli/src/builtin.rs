//! The built-in engines this binary passes to the server: vto-render's eyewear engine for
//! `glasses` and `sunglasses`. The one place the `vto` binary composes a renderer with the
//! server (vto-server itself depends on no renderer).

use std::path::Path;
use std::sync::Arc;

use vto_core::{Category, Engines};
use vto_server::Unavailable;

/// The built-in engines over the models in `models_dir`, and the built-in categories that
/// could not be offered, each with the reason and the exact command that fixes it.
pub fn builtin_engines(models_dir: &Path) -> (Engines, Vec<Unavailable>) {
    use vto_render::engine::{EyewearEngine, RenderError, Renderer};
    let mut engines = Engines::new();
    match Renderer::shared(models_dir) {
        Ok(renderer) => {
            let eyewear = Arc::new(EyewearEngine::new(renderer));
            engines
                .register(Category::Glasses, eyewear.clone())
                .register(Category::Sunglasses, eyewear);
            (engines, Vec::new())
        }
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
            let unavailable = [Category::Glasses, Category::Sunglasses]
                .into_iter()
                .map(|category| Unavailable {
                    category,
                    reason: format!("built-in engine unavailable: {e}"),
                    fix: fix.clone(),
                })
                .collect();
            (engines, unavailable)
        }
    }
}
