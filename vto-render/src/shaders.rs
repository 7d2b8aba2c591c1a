//! The shader table: every WGSL kernel of the crate, by name, with the shared preludes it is
//! compiled with. Pipelines are created from this table only ([`crate::gpu::GpuContext::pipeline`]),
//! and one naga test validates every entry, so a broken shader fails on any machine, GPU or not.
//!
//! Kernels live one per file under `shaders/`; helpers shared by several kernels live in
//! `shaders/shared/` (activations) or as a prelude of their family (`raster/common.wgsl`,
//! `raster/texture.wgsl`).

const ACTIVATION: &str = include_str!("../shaders/shared/activation.wgsl");
const RASTER_COMMON: &str = include_str!("../shaders/raster/common.wgsl");
const RASTER_TEXTURE: &str = include_str!("../shaders/raster/texture.wgsl");

/// One compute kernel: its name and the WGSL pieces it is built from, in order (preludes first,
/// the kernel last). Every kernel's entry point is `main`.
#[derive(Debug, Clone, Copy)]
pub struct Shader {
    /// The kernel's name (`family/file` without `.wgsl`).
    pub name: &'static str,
    /// The WGSL sources concatenated to build it.
    pub parts: &'static [&'static str],
}

impl Shader {
    /// The full WGSL source.
    pub fn source(&self) -> String {
        self.parts.join("\n")
    }
}

macro_rules! kernel {
    ($name:literal, [$($prelude:expr),*], $file:literal) => {
        Shader {
            name: $name,
            parts: &[$($prelude,)* include_str!(concat!("../shaders/", $file))],
        }
    };
}

/// Every kernel of the crate.
pub const SHADERS: &[Shader] = &[
    // The TFLite executor's operators.
    kernel!("tflite/conv2d", [ACTIVATION], "tflite/conv2d.wgsl"),
    kernel!(
        "tflite/conv2d_wide",
        [ACTIVATION],
        "tflite/conv2d_wide.wgsl"
    ),
    kernel!("tflite/depthwise", [ACTIVATION], "tflite/depthwise.wgsl"),
    kernel!(
        "tflite/transpose_conv",
        [ACTIVATION],
        "tflite/transpose_conv.wgsl"
    ),
    kernel!("tflite/binary", [ACTIVATION], "tflite/binary.wgsl"),
    kernel!("tflite/unary", [ACTIVATION], "tflite/unary.wgsl"),
    kernel!("tflite/pad", [ACTIVATION], "tflite/pad.wgsl"),
    kernel!("tflite/pool", [ACTIVATION], "tflite/pool.wgsl"),
    kernel!(
        "tflite/resize_bilinear",
        [ACTIVATION],
        "tflite/resize_bilinear.wgsl"
    ),
    kernel!(
        "tflite/depth_to_space",
        [ACTIVATION],
        "tflite/depth_to_space.wgsl"
    ),
    kernel!("tflite/concat", [ACTIVATION], "tflite/concat.wgsl"),
    // Image operations of the vision pipelines.
    kernel!("image/resize", [], "image/resize.wgsl"),
    kernel!("image/crop_to_tensor", [], "image/crop_to_tensor.wgsl"),
    kernel!("image/composite", [], "image/composite.wgsl"),
    kernel!("image/warp_mask", [], "image/warp_mask.wgsl"),
    // The garment pipeline.
    kernel!("garment/warp", [], "garment/warp.wgsl"),
    // The product rasterizer.
    kernel!(
        "raster/raster",
        [RASTER_COMMON, RASTER_TEXTURE],
        "raster/raster.wgsl"
    ),
    kernel!("raster/coverage", [RASTER_COMMON], "raster/coverage.wgsl"),
    kernel!(
        "raster/resolve",
        [RASTER_COMMON, RASTER_TEXTURE],
        "raster/resolve.wgsl"
    ),
];

/// The kernel called `name`.
pub fn shader(name: &str) -> Option<&'static Shader> {
    SHADERS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel parses and validates with the capabilities wgpu asks of every device
    /// (none beyond the WebGPU baseline), and every `.wgsl` file is used by some kernel.
    #[test]
    fn every_shader_validates_with_naga_and_every_file_is_in_the_table() {
        for s in SHADERS {
            let src = s.source();
            let module = naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("{}: {}", s.name, e.emit_to_string(&src)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {e:?}", s.name));
            assert!(
                module.entry_points.iter().any(|e| e.name == "main"),
                "{}: no `main` entry point",
                s.name
            );
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
        let mut files = 0;
        for family in std::fs::read_dir(&root).unwrap() {
            let family = family.unwrap().path();
            for f in std::fs::read_dir(&family).unwrap() {
                let f = f.unwrap().path();
                let text = std::fs::read_to_string(&f).unwrap();
                files += 1;
                assert!(
                    SHADERS.iter().any(|s| s.parts.contains(&text.as_str())),
                    "{} is in no kernel of the table",
                    f.display()
                );
            }
        }
        assert_eq!(files, 22, "shader files under shaders/");
        let mut names: Vec<_> = SHADERS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SHADERS.len(), "kernel names are unique");
    }
}
