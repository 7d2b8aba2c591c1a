// RESIZE_BILINEAR, NHWC float32, batch 1, TFLite semantics (align_corners,
// half_pixel_centers). The host computes the scales (in / out, or (in - 1) / (out - 1) with
// align_corners).

struct ResizeParams {
    in_h: u32, in_w: u32, c: u32, out_h: u32,
    out_w: u32, half_pixel: u32, total: u32, _pad0: u32,
    scale_y: f32, scale_x: f32, _pad1: f32, _pad2: f32,
}

@group(0) @binding(0) var<uniform> p: ResizeParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

// Source coordinate, its clamped lower and upper neighbours, and the fraction.
fn source(v: u32, scale: f32, size: u32) -> vec4<f32> {
    var s = f32(v) * scale;
    if p.half_pixel == 1u {
        s = (f32(v) + 0.5) * scale - 0.5;
    }
    let lo = max(floor(s), 0.0);
    let hi = clamp(ceil(s), 0.0, f32(size - 1u));
    return vec4<f32>(s, lo, hi, s - lo);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if i >= p.total {
        return;
    }
    let c = i % p.c;
    let pix = i / p.c;
    let oy = pix / p.out_w;
    let ox = pix % p.out_w;
    let sy = source(oy, p.scale_y, p.in_h);
    let sx = source(ox, p.scale_x, p.in_w);
    let y0 = u32(sy.y);
    let y1 = u32(sy.z);
    let x0 = u32(sx.y);
    let x1 = u32(sx.z);
    let dy = sy.w;
    let dx = sx.w;
    let tl = x[(y0 * p.in_w + x0) * p.c + c];
    let bl = x[(y1 * p.in_w + x0) * p.c + c];
    let tr = x[(y0 * p.in_w + x1) * p.c + c];
    let br = x[(y1 * p.in_w + x1) * p.c + c];
    y[i] = tl * (1.0 - dy) * (1.0 - dx) + bl * dy * (1.0 - dx) + tr * (1.0 - dy) * dx + br * dy * dx;
}
