// Bilinear resize of a packed RGBA8 image (one u32 per pixel, R in the low byte).
// Half-pixel centres (like OpenCV INTER_LINEAR); edges replicate.
// Host mirror: `image_ops::ResizeParams`.

struct ResizeParams {
    src_w: u32,
    src_h: u32,
    dst_w: u32,
    dst_h: u32,
}

@group(0) @binding(0) var<uniform> params: ResizeParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

fn texel(x: i32, y: i32) -> vec4<f32> {
    let cx = clamp(x, 0, i32(params.src_w) - 1);
    let cy = clamp(y, 0, i32(params.src_h) - 1);
    return unpack4x8unorm(src[u32(cy) * params.src_w + u32(cx)]);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.dst_w || id.y >= params.dst_h) {
        return;
    }
    let sx = (f32(id.x) + 0.5) * f32(params.src_w) / f32(params.dst_w) - 0.5;
    let sy = (f32(id.y) + 0.5) * f32(params.src_h) / f32(params.dst_h) - 0.5;
    let x0 = floor(sx);
    let y0 = floor(sy);
    let fx = sx - x0;
    let fy = sy - y0;
    let ix = i32(x0);
    let iy = i32(y0);
    let top = mix(texel(ix, iy), texel(ix + 1, iy), fx);
    let bottom = mix(texel(ix, iy + 1), texel(ix + 1, iy + 1), fx);
    let c = mix(top, bottom, fy);
    dst[id.y * params.dst_w + id.x] = pack4x8unorm(c);
}
