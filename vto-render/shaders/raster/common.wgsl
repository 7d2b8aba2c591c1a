// Shared declarations of the raster kernels (prepended to raster.wgsl, coverage.wgsl and
// resolve.wgsl by `raster::shader_source`).
// Host mirrors: `raster::RasterVertex`, `raster::RasterMaterial`, `raster::RasterParams`.

// One vertex, already projected by the host.
struct Vert {
    // Supersampled pixel position (x, y) inside the ROI, view depth z (cm, > 0), 1 / z.
    pos: vec4<f32>,
    // Camera-space position (cm; x right, y down, z forward) and `aux` (the tint gradient
    // coordinate: 0 at the top of the product, 1 at its bottom).
    view: vec4<f32>,
    // Camera-space unit normal, the thin layer's coverage weight (0: not thin).
    normal: vec4<f32>,
    // Texture coordinates: UV set 0 (xy), UV set 1 (zw).
    uv: vec4<f32>,
    // Linear RGBA vertex colour (white: none).
    color: vec4<f32>,
}

struct Material {
    // Linear RGBA base colour factor.
    base: vec4<f32>,
    // metallic, roughness, alpha cutoff, dielectric reflectance head on (0: glTF's 0.04).
    pbr: vec4<f32>,
    // texel offset, width, height, has texture (0/1).
    tex: vec4<u32>,
    // alpha mode (0 opaque, 1 mask, 2 blend), double sided, shading (0 standard, 1 cut gem),
    // UV sets (bit 0: the base colour texture reads UV set 1; bit 1: the emissive texture does).
    flags: vec4<u32>,
    // clearcoat strength, clearcoat roughness, sheen roughness, unused (0: none).
    coat: vec4<f32>,
    // linear sheen colour (black: none), unused.
    sheen: vec4<f32>,
    // linear emitted colour (black: none), unused.
    glow: vec4<f32>,
    // the emissive texture, as `tex`.
    glow_tex: vec4<u32>,
}

struct Params {
    // ROI in output pixels: x0, y0, width, height.
    roi: vec4<u32>,
    // Supersampling factor S, supersampled width W = S·w, height H = S·h, triangle count.
    ss: vec4<u32>,
    // Raster mode (0 occluder, 1 opaque depth, 2 opaque id, 3 transparent depth, 4 transparent id,
    // 5 thin depth and coverage, 6 thin id),
    // transparency (0 clear, 1 tint from material, 2 default grey gradient), unused, unused.
    mode: vec4<u32>,
    // Ambient light (linear rgb), near plane (cm).
    ambient: vec4<f32>,
    // Direction towards the key light (camera space, unit), unused.
    key_dir: vec4<f32>,
    // Key light colour (linear rgb), unused.
    key_color: vec4<f32>,
    // Contact shadow: offset x, offset y (output pixels), radius (pixels), strength.
    shadow: vec4<f32>,
}

// No fragment here (depth and id buffers are cleared to this).
const NONE: u32 = 0xffffffffu;
// Full coverage in the thin layer's fixed-point coverage plane (`ids` plane 3).
const THIN_ONE: u32 = 65536u;

// The thin layer's coverage (0–1) from its fixed-point sum.
fn thin_coverage(sum: u32) -> f32 {
    return min(f32(sum) / f32(THIN_ONE), 1.0);
}

fn edge(a: vec2<f32>, b: vec2<f32>, p: vec2<f32>) -> f32 {
    return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

fn linear_to_srgb(c: vec3<f32>) -> vec3<f32> {
    let x = clamp(c, vec3<f32>(0.0), vec3<f32>(1.0));
    let lo = x * 12.92;
    let hi = 1.055 * pow(x, vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, x <= vec3<f32>(0.0031308));
}
