// CONV_2D for wide layers (out_c >= 32): like conv2d.wgsl, but one invocation computes
// 16 output channels (4 vec4 of packed weights) for 8 adjacent output pixels of a row:
// 8 input loads and 16 weight loads feed 128 multiply-adds (0.19 loads per multiply-add,
// against 0.25 in conv2d.wgsl). Weights are packed as [k_h][k_w][in_c][oc16][4] vec4,
// bias as [oc16][4] vec4, zero-padded; `oc8` holds the number of 16-channel blocks here.
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
    let idx = gid.x + gid.y * 65535u * 64u;
    let total = p.out_h * p.groups_w * p.oc8;
    let live = idx < total;
    let flat = min(idx, total - 1u);
    let ob = flat % p.oc8;
    let item = flat / p.oc8;
    let oy = item / p.groups_w;
    let ox0 = (item % p.groups_w) * 8u;
    let bias0 = bias[4u * ob + 0u];
    let bias1 = bias[4u * ob + 1u];
    let bias2 = bias[4u * ob + 2u];
    let bias3 = bias[4u * ob + 3u];
    var a0_0 = bias0;
    var a0_1 = bias1;
    var a0_2 = bias2;
    var a0_3 = bias3;
    var a1_0 = bias0;
    var a1_1 = bias1;
    var a1_2 = bias2;
    var a1_3 = bias3;
    var a2_0 = bias0;
    var a2_1 = bias1;
    var a2_2 = bias2;
    var a2_3 = bias3;
    var a3_0 = bias0;
    var a3_1 = bias1;
    var a3_2 = bias2;
    var a3_3 = bias3;
    var a4_0 = bias0;
    var a4_1 = bias1;
    var a4_2 = bias2;
    var a4_3 = bias3;
    var a5_0 = bias0;
    var a5_1 = bias1;
    var a5_2 = bias2;
    var a5_3 = bias3;
    var a6_0 = bias0;
    var a6_1 = bias1;
    var a6_2 = bias2;
    var a6_3 = bias3;
    var a7_0 = bias0;
    var a7_1 = bias1;
    var a7_2 = bias2;
    var a7_3 = bias3;
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
            let v0 = vy && ix + 0 * sw >= 0 && ix + 0 * sw < in_w && 0 < ow;
            let v1 = vy && ix + 1 * sw >= 0 && ix + 1 * sw < in_w && 1 < ow;
            let v2 = vy && ix + 2 * sw >= 0 && ix + 2 * sw < in_w && 2 < ow;
            let v3 = vy && ix + 3 * sw >= 0 && ix + 3 * sw < in_w && 3 < ow;
            let v4 = vy && ix + 4 * sw >= 0 && ix + 4 * sw < in_w && 4 < ow;
            let v5 = vy && ix + 5 * sw >= 0 && ix + 5 * sw < in_w && 5 < ow;
            let v6 = vy && ix + 6 * sw >= 0 && ix + 6 * sw < in_w && 6 < ow;
            let v7 = vy && ix + 7 * sw >= 0 && ix + 7 * sw < in_w && 7 < ow;
            let base = (iy * in_w + ix) * i32(p.in_c);
            var wi = ((ky * p.k_w + kx) * p.in_c) * p.oc8 * 4u + 4u * ob;
            let wstep = 4u * p.oc8;
            for (var ic = 0; ic < i32(p.in_c); ic++) {
                let w0 = w[wi + 0u];
                let w1 = w[wi + 1u];
                let w2 = w[wi + 2u];
                let w3 = w[wi + 3u];
                wi += wstep;
                let x0 = select(0.0, x[u32(clamp(base + 0 * sx + ic, 0, last))], v0);
                let x1 = select(0.0, x[u32(clamp(base + 1 * sx + ic, 0, last))], v1);
                let x2 = select(0.0, x[u32(clamp(base + 2 * sx + ic, 0, last))], v2);
                let x3 = select(0.0, x[u32(clamp(base + 3 * sx + ic, 0, last))], v3);
                let x4 = select(0.0, x[u32(clamp(base + 4 * sx + ic, 0, last))], v4);
                let x5 = select(0.0, x[u32(clamp(base + 5 * sx + ic, 0, last))], v5);
                let x6 = select(0.0, x[u32(clamp(base + 6 * sx + ic, 0, last))], v6);
                let x7 = select(0.0, x[u32(clamp(base + 7 * sx + ic, 0, last))], v7);
                a0_0 += x0 * w0;
                a0_1 += x0 * w1;
                a0_2 += x0 * w2;
                a0_3 += x0 * w3;
                a1_0 += x1 * w0;
                a1_1 += x1 * w1;
                a1_2 += x1 * w2;
                a1_3 += x1 * w3;
                a2_0 += x2 * w0;
                a2_1 += x2 * w1;
                a2_2 += x2 * w2;
                a2_3 += x2 * w3;
                a3_0 += x3 * w0;
                a3_1 += x3 * w1;
                a3_2 += x3 * w2;
                a3_3 += x3 * w3;
                a4_0 += x4 * w0;
                a4_1 += x4 * w1;
                a4_2 += x4 * w2;
                a4_3 += x4 * w3;
                a5_0 += x5 * w0;
                a5_1 += x5 * w1;
                a5_2 += x5 * w2;
                a5_3 += x5 * w3;
                a6_0 += x6 * w0;
                a6_1 += x6 * w1;
                a6_2 += x6 * w2;
                a6_3 += x6 * w3;
                a7_0 += x7 * w0;
                a7_1 += x7 * w1;
                a7_2 += x7 * w2;
                a7_3 += x7 * w3;
            }
        }
    }
    if !live {
        return;
    }
    let c0 = ob * 16u;
    let pix = oy * p.out_w + ox0;
    let o = pix * p.out_c + c0;
    let n0 = min(4u, max(p.out_c, c0 + 0u) - c0 - 0u);
    let n1 = min(4u, max(p.out_c, c0 + 4u) - c0 - 4u);
    let n2 = min(4u, max(p.out_c, c0 + 8u) - c0 - 8u);
    let n3 = min(4u, max(p.out_c, c0 + 12u) - c0 - 12u);
    if 0u < u32(ow) {
        let r0 = epilogue(a0_0, pix + 0u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 0u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a0_1, pix + 0u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 0u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a0_2, pix + 0u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 0u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a0_3, pix + 0u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 0u * p.out_c + 12u + j] = r3[j]; }
    }
    if 1u < u32(ow) {
        let r0 = epilogue(a1_0, pix + 1u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 1u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a1_1, pix + 1u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 1u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a1_2, pix + 1u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 1u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a1_3, pix + 1u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 1u * p.out_c + 12u + j] = r3[j]; }
    }
    if 2u < u32(ow) {
        let r0 = epilogue(a2_0, pix + 2u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 2u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a2_1, pix + 2u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 2u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a2_2, pix + 2u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 2u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a2_3, pix + 2u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 2u * p.out_c + 12u + j] = r3[j]; }
    }
    if 3u < u32(ow) {
        let r0 = epilogue(a3_0, pix + 3u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 3u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a3_1, pix + 3u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 3u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a3_2, pix + 3u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 3u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a3_3, pix + 3u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 3u * p.out_c + 12u + j] = r3[j]; }
    }
    if 4u < u32(ow) {
        let r0 = epilogue(a4_0, pix + 4u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 4u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a4_1, pix + 4u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 4u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a4_2, pix + 4u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 4u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a4_3, pix + 4u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 4u * p.out_c + 12u + j] = r3[j]; }
    }
    if 5u < u32(ow) {
        let r0 = epilogue(a5_0, pix + 5u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 5u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a5_1, pix + 5u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 5u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a5_2, pix + 5u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 5u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a5_3, pix + 5u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 5u * p.out_c + 12u + j] = r3[j]; }
    }
    if 6u < u32(ow) {
        let r0 = epilogue(a6_0, pix + 6u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 6u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a6_1, pix + 6u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 6u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a6_2, pix + 6u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 6u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a6_3, pix + 6u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 6u * p.out_c + 12u + j] = r3[j]; }
    }
    if 7u < u32(ow) {
        let r0 = epilogue(a7_0, pix + 7u, c0 + 0u);
        for (var j = 0u; j < n0; j++) { y[o + 7u * p.out_c + 0u + j] = r0[j]; }
        let r1 = epilogue(a7_1, pix + 7u, c0 + 4u);
        for (var j = 0u; j < n1; j++) { y[o + 7u * p.out_c + 4u + j] = r1[j]; }
        let r2 = epilogue(a7_2, pix + 7u, c0 + 8u);
        for (var j = 0u; j < n2; j++) { y[o + 7u * p.out_c + 8u + j] = r2[j]; }
        let r3 = epilogue(a7_3, pix + 7u, c0 + 12u);
        for (var j = 0u; j < n3; j++) { y[o + 7u * p.out_c + 12u + j] = r3[j]; }
    }
}
