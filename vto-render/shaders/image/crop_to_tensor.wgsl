// Rotated crop: an affine region of a packed RGBA8 image -> an NHWC f32 RGB tensor.
// Output pixel (x, y) samples the source at (m0*x + m1*y + m2, m3*x + m4*y + m5), in
// pixel units with pixel centres at integers (OpenCV warp convention, as MediaPipe's
// ImageToTensorCalculator uses on the CPU). Like OpenCV's 8-bit warp, the sample position
// is rounded to 1/32 pixel and the interpolated value to an integer level. Bilinear;
// outside the image a texel is zero (border 0) or the nearest edge texel (border 1).
// Values in [0, 255] map to `v * scale + offset`. Host mirror: `image_ops::CropParams`.

struct CropParams {
    src_w: u32,
    src_h: u32,
    dst_w: u32,
    dst_h: u32,
    m0: f32,
    m1: f32,
    m2: f32,
    m3: f32,
    m4: f32,
    m5: f32,
    scale: f32,
    offset: f32,
    border: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: CropParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

fn texel(x: i32, y: i32) -> vec3<f32> {
    let w = i32(params.src_w);
    let h = i32(params.src_h);
    if (params.border == 0u && (x < 0 || y < 0 || x >= w || y >= h)) {
        return vec3<f32>(0.0);
    }
    let cx = clamp(x, 0, w - 1);
    let cy = clamp(y, 0, h - 1);
    return unpack4x8unorm(src[u32(cy) * params.src_w + u32(cx)]).rgb * 255.0;
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.dst_w || id.y >= params.dst_h) {
        return;
    }
    let ox = f32(id.x);
    let oy = f32(id.y);
    let sx = round((params.m0 * ox + params.m1 * oy + params.m2) * 32.0) / 32.0;
    let sy = round((params.m3 * ox + params.m4 * oy + params.m5) * 32.0) / 32.0;
    let x0 = floor(sx);
    let y0 = floor(sy);
    let fx = sx - x0;
    let fy = sy - y0;
    let ix = i32(x0);
    let iy = i32(y0);
    let top = mix(texel(ix, iy), texel(ix + 1, iy), fx);
    let bottom = mix(texel(ix, iy + 1), texel(ix + 1, iy + 1), fx);
    let c = round(mix(top, bottom, fy)) * params.scale + params.offset;
    let base = (id.y * params.dst_w + id.x) * 3u;
    dst[base] = c.r;
    dst[base + 1u] = c.g;
    dst[base + 2u] = c.b;
}
