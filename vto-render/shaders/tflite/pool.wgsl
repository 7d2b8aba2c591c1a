// MAX_POOL_2D and AVERAGE_POOL_2D, NHWC float32, batch 1, with fused activation.
// The average divides by the number of in-bounds elements, as TFLite does.
// Needs shared/activation.wgsl prepended.

struct PoolParams {
    in_h: u32, in_w: u32, c: u32, out_h: u32,
    out_w: u32, k_h: u32, k_w: u32, stride_h: u32,
    stride_w: u32, pad_top: u32, pad_left: u32, is_max: u32,
    act: u32, total: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: PoolParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

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
    var acc = select(0.0, -3.4028235e38, p.is_max == 1u);
    var count = 0u;
    let iy0 = i32(oy * p.stride_h) - i32(p.pad_top);
    let ix0 = i32(ox * p.stride_w) - i32(p.pad_left);
    for (var ky = 0u; ky < p.k_h; ky++) {
        let iy = iy0 + i32(ky);
        if iy < 0 || iy >= i32(p.in_h) {
            continue;
        }
        for (var kx = 0u; kx < p.k_w; kx++) {
            let ix = ix0 + i32(kx);
            if ix < 0 || ix >= i32(p.in_w) {
                continue;
            }
            let v = x[(u32(iy) * p.in_w + u32(ix)) * p.c + c];
            if p.is_max == 1u {
                acc = max(acc, v);
            } else {
                acc += v;
            }
            count++;
        }
    }
    if p.is_max == 0u && count > 0u {
        acc = acc / f32(count);
    }
    y[i] = activate(acc, p.act);
}
