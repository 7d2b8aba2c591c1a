// CONV_2D, NHWC float32, batch 1, with bias and fused activation.
// One invocation computes 8 output channels (two vec4 of packed weights) for 8 adjacent
// output pixels of a row. On lavapipe every storage-buffer load is a per-lane gather, so
// register blocking is what matters: each input value loaded feeds 8 multiply-adds and each
// weight vec4 feeds 8 pixels (0.25 loads per multiply-add).
// Weights are packed on the host as [k_h][k_w][in_c][oc8][2] vec4 (oc8 = ceil(out_c / 8)),
// bias as [oc8][2] vec4, both zero-padded. Bounds use masks and clamped addresses rather
// than branches; only the final stores are guarded.
// The epilogue can add a residual tensor and apply a second activation (see `Epilogue` in
// prepare.rs). Needs shared/activation.wgsl prepended.

struct ConvParams {
    in_h: u32, in_w: u32, in_c: u32, out_h: u32,
    out_w: u32, out_c: u32, k_h: u32, k_w: u32,
    stride_h: u32, stride_w: u32, dil_h: u32, dil_w: u32,
    pad_top: u32, pad_left: u32, act: u32, oc8: u32,
    // Number of 8-pixel groups per output row: ceil(out_w / 8).
    groups_w: u32,
    // Epilogue: act2(act(acc + bias) + residual); res_c = residual channels (0: none).
    act2: u32, res_c: u32, _pad0: u32,
}


@group(0) @binding(0) var<uniform> p: ConvParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> res: array<f32>;
@group(0) @binding(5) var<storage, read> alpha: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;

// act2(act(acc) + residual) for 4 channels from c0 of output pixel `pix`.
fn epilogue(acc: vec4<f32>, pix: u32, c0: u32) -> vec4<f32> {
    let al = alpha[c0 / 4u];
    var v = activate_full(acc, p.act, al);
    if p.res_c > 0u {
        let rb = pix * p.res_c + c0;
        var r = vec4<f32>(0.0);
        for (var j = 0u; j < 4u; j++) {
            if c0 + j < p.res_c {
                r[j] = res[rb + j];
            }
        }
        v += r;
    }
    return activate_full(v, p.act2, al);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    // Invocation index = (pixel group, channel block), channel block fastest, so layers with
    // few pixels and many channels still fill the lanes.
    let idx = gid.x + gid.y * 65535u * 64u;
    let total = p.out_h * p.groups_w * p.oc8;
    let live = idx < total;
    let flat = min(idx, total - 1u);
    let ob = flat % p.oc8;
    let item = flat / p.oc8;
    let oy = item / p.groups_w;
    let ox0 = (item % p.groups_w) * 8u;
    let ba = bias[2u * ob];
    let bb = bias[2u * ob + 1u];
    var a0 = ba;
    var b0 = bb;
    var a1 = ba;
    var b1 = bb;
    var a2 = ba;
    var b2 = bb;
    var a3 = ba;
    var b3 = bb;
    var a4 = ba;
    var b4 = bb;
    var a5 = ba;
    var b5 = bb;
    var a6 = ba;
    var b6 = bb;
    var a7 = ba;
    var b7 = bb;
    let iy0 = i32(oy * p.stride_h) - i32(p.pad_top);
    let ix0 = i32(ox0 * p.stride_w) - i32(p.pad_left);
    let sw = i32(p.stride_w);
    let sx = sw * i32(p.in_c);
    let in_w = i32(p.in_w);
    let last = i32(p.in_h * p.in_w * p.in_c) - 1;
    let ow = i32(p.out_w) - i32(ox0);
    for (var ky = 0u; ky < p.k_h; ky++) {
        let iy = iy0 + i32(ky * p.dil_h);
        let vy = iy >= 0 && iy < i32(p.in_h);
        for (var kx = 0u; kx < p.k_w; kx++) {
            let ix = ix0 + i32(kx * p.dil_w);
            // Which of the 8 pixels read inside the image (and exist).
            let v0 = vy && ix + 0 * sw >= 0 && ix + 0 * sw < in_w && 0 < ow;
            let v1 = vy && ix + 1 * sw >= 0 && ix + 1 * sw < in_w && 1 < ow;
            let v2 = vy && ix + 2 * sw >= 0 && ix + 2 * sw < in_w && 2 < ow;
            let v3 = vy && ix + 3 * sw >= 0 && ix + 3 * sw < in_w && 3 < ow;
            let v4 = vy && ix + 4 * sw >= 0 && ix + 4 * sw < in_w && 4 < ow;
            let v5 = vy && ix + 5 * sw >= 0 && ix + 5 * sw < in_w && 5 < ow;
            let v6 = vy && ix + 6 * sw >= 0 && ix + 6 * sw < in_w && 6 < ow;
            let v7 = vy && ix + 7 * sw >= 0 && ix + 7 * sw < in_w && 7 < ow;
            let base = (iy * in_w + ix) * i32(p.in_c);
            var wi = ((ky * p.k_w + kx) * p.in_c) * p.oc8 * 2u + 2u * ob;
            let wstep = 2u * p.oc8;
            for (var ic = 0; ic < i32(p.in_c); ic++) {
                let wa = w[wi];
                let wb = w[wi + 1u];
                wi += wstep;
                let x0 = select(0.0, x[u32(clamp(base + 0 * sx + ic, 0, last))], v0);
                let x1 = select(0.0, x[u32(clamp(base + 1 * sx + ic, 0, last))], v1);
                let x2 = select(0.0, x[u32(clamp(base + 2 * sx + ic, 0, last))], v2);
                let x3 = select(0.0, x[u32(clamp(base + 3 * sx + ic, 0, last))], v3);
                let x4 = select(0.0, x[u32(clamp(base + 4 * sx + ic, 0, last))], v4);
                let x5 = select(0.0, x[u32(clamp(base + 5 * sx + ic, 0, last))], v5);
                let x6 = select(0.0, x[u32(clamp(base + 6 * sx + ic, 0, last))], v6);
                let x7 = select(0.0, x[u32(clamp(base + 7 * sx + ic, 0, last))], v7);
                a0 += x0 * wa;
                b0 += x0 * wb;
                a1 += x1 * wa;
                b1 += x1 * wb;
                a2 += x2 * wa;
                b2 += x2 * wb;
                a3 += x3 * wa;
                b3 += x3 * wb;
                a4 += x4 * wa;
                b4 += x4 * wb;
                a5 += x5 * wa;
                b5 += x5 * wb;
                a6 += x6 * wa;
                b6 += x6 * wb;
                a7 += x7 * wa;
                b7 += x7 * wb;
            }
        }
    }
    if !live {
        return;
    }
    let c0 = ob * 8u;
    let pix = oy * p.out_w + ox0;
    let o = pix * p.out_c + c0;
    let na = min(4u, p.out_c - c0);
    let nb = min(4u, max(p.out_c, c0 + 4u) - c0 - 4u);
    if 0u < u32(ow) {
        let ra = epilogue(a0, pix + 0u, c0);
        let rb = epilogue(b0, pix + 0u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 0u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 0u * p.out_c + 4u + j] = rb[j]; }
    }
    if 1u < u32(ow) {
        let ra = epilogue(a1, pix + 1u, c0);
        let rb = epilogue(b1, pix + 1u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 1u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 1u * p.out_c + 4u + j] = rb[j]; }
    }
    if 2u < u32(ow) {
        let ra = epilogue(a2, pix + 2u, c0);
        let rb = epilogue(b2, pix + 2u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 2u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 2u * p.out_c + 4u + j] = rb[j]; }
    }
    if 3u < u32(ow) {
        let ra = epilogue(a3, pix + 3u, c0);
        let rb = epilogue(b3, pix + 3u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 3u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 3u * p.out_c + 4u + j] = rb[j]; }
    }
    if 4u < u32(ow) {
        let ra = epilogue(a4, pix + 4u, c0);
        let rb = epilogue(b4, pix + 4u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 4u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 4u * p.out_c + 4u + j] = rb[j]; }
    }
    if 5u < u32(ow) {
        let ra = epilogue(a5, pix + 5u, c0);
        let rb = epilogue(b5, pix + 5u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 5u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 5u * p.out_c + 4u + j] = rb[j]; }
    }
    if 6u < u32(ow) {
        let ra = epilogue(a6, pix + 6u, c0);
        let rb = epilogue(b6, pix + 6u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 6u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 6u * p.out_c + 4u + j] = rb[j]; }
    }
    if 7u < u32(ow) {
        let ra = epilogue(a7, pix + 7u, c0);
        let rb = epilogue(b7, pix + 7u, c0 + 4u);
        for (var j = 0u; j < na; j++) { y[o + 7u * p.out_c + j] = ra[j]; }
        for (var j = 0u; j < nb; j++) { y[o + 7u * p.out_c + 4u + j] = rb[j]; }
    }
}
