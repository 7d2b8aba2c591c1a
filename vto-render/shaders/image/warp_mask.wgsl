// Warps a one-channel f32 mask of probabilities (e.g. a model's 256x256 segmentation) onto
// an image grid: output pixel (x, y) samples the mask at (m0*x + m1*y + m2, m3*x + m4*y + m5),
// mask pixel centres at integers, bilinear, zero outside the mask. Output: 8-bit levels,
// four pixels per u32, rows of ceil(dst_w / 4) words.
// Host mirror: `image_ops::WarpParams`.

struct WarpParams {
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
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: WarpParams;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

fn texel(x: i32, y: i32) -> f32 {
    if (x < 0 || y < 0 || x >= i32(params.src_w) || y >= i32(params.src_h)) {
        return 0.0;
    }
    return src[u32(y) * params.src_w + u32(x)];
}

fn sample(ox: f32, oy: f32) -> f32 {
    let sx = params.m0 * ox + params.m1 * oy + params.m2;
    let sy = params.m3 * ox + params.m4 * oy + params.m5;
    let x0 = floor(sx);
    let y0 = floor(sy);
    let fx = sx - x0;
    let fy = sy - y0;
    let ix = i32(x0);
    let iy = i32(y0);
    let top = mix(texel(ix, iy), texel(ix + 1, iy), fx);
    let bottom = mix(texel(ix, iy + 1), texel(ix + 1, iy + 1), fx);
    return mix(top, bottom, fy);
}

// One invocation writes four horizontally adjacent pixels, packed as 8-bit levels into one
// u32 (pixel 4k + i in byte i): a quarter of the invocations and of the readback.
@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let words = (params.dst_w + 3u) / 4u;
    if (id.x >= words || id.y >= params.dst_h) {
        return;
    }
    let oy = f32(id.y);
    let x = f32(id.x * 4u);
    let v = vec4<f32>(sample(x, oy), sample(x + 1.0, oy), sample(x + 2.0, oy), sample(x + 3.0, oy));
    dst[id.y * words + id.x] = pack4x8unorm(v);
}
