// CONV_2D, NHWC float32, batch 1, with bias and fused activation.
// One invocation computes 4 output channels (one vec4 of packed weights) for PIX adjacent
// output pixels of a row, so every weight load feeds PIX multiply-adds and every input load 4.
// Weights are packed on the host as [k_h][k_w][in_c][oc4] vec4 (oc4 = ceil(out_c / 4)),
// bias as [oc4] vec4, both zero-padded.
// The epilogue can add a residual tensor and apply a second activation (see
// `Epilogue` in prepare.rs). Needs shared/activation.wgsl prepended.

struct ConvParams {
    in_h: u32, in_w: u32, in_c: u32, out_h: u32,
    out_w: u32, out_c: u32, k_h: u32, k_w: u32,
    stride_h: u32, stride_w: u32, dil_h: u32, dil_w: u32,
    pad_top: u32, pad_left: u32, act: u32, oc4: u32,
    // Number of PIX-wide pixel groups per output row: ceil(out_w / PIX).
    groups_w: u32,
    // Epilogue: act2(act(acc + bias) + residual); res_c = residual channels (0: none).
    act2: u32, res_c: u32, _pad0: u32,
}

const PIX: u32 = 4u;

@group(0) @binding(0) var<uniform> p: ConvParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> res: array<f32>;
@group(0) @binding(5) var<storage, read> alpha: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;

// act2(act(acc) + residual) for 4 channels from c0 of output pixel `pix`.
fn epilogue(acc: vec4<f32>, pix: u32, c0: u32, ob: u32) -> vec4<f32> {
    let al = alpha[ob];
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
    let item = gid.x;
    let ob = gid.y;
    if item >= p.out_h * p.groups_w || ob >= p.oc4 {
        return;
    }
    let oy = item / p.groups_w;
    let ox0 = (item % p.groups_w) * PIX;
    let b = bias[ob];
    var acc0 = b;
    var acc1 = b;
    var acc2 = b;
    var acc3 = b;
    let iy0 = i32(oy * p.stride_h) - i32(p.pad_top);
    let ix0 = i32(ox0 * p.stride_w) - i32(p.pad_left);
    let sx = i32(p.stride_w * p.in_c);
    for (var ky = 0u; ky < p.k_h; ky++) {
        let iy = iy0 + i32(ky * p.dil_h);
        if iy < 0 || iy >= i32(p.in_h) {
            continue;
        }
        for (var kx = 0u; kx < p.k_w; kx++) {
            let ix = ix0 + i32(kx * p.dil_w);
            // Which of the PIX pixels read inside the image along x.
            let v0 = ix >= 0 && ix < i32(p.in_w);
            let v1 = ix + i32(p.stride_w) >= 0 && ix + i32(p.stride_w) < i32(p.in_w) && ox0 + 1u < p.out_w;
            let v2 = ix + 2 * i32(p.stride_w) >= 0 && ix + 2 * i32(p.stride_w) < i32(p.in_w) && ox0 + 2u < p.out_w;
            let v3 = ix + 3 * i32(p.stride_w) >= 0 && ix + 3 * i32(p.stride_w) < i32(p.in_w) && ox0 + 3u < p.out_w;
            let row = iy * i32(p.in_w);
            // Clamp addresses so masked pixels still read inside the buffer.
            let last = i32(p.in_h * p.in_w * p.in_c) - 1;
            let base = (row + ix) * i32(p.in_c);
            var wi = ((ky * p.k_w + kx) * p.in_c) * p.oc4 + ob;
            for (var ic = 0; ic < i32(p.in_c); ic++) {
                let wv = w[wi];
                wi += p.oc4;
                let a0 = select(0.0, x[u32(clamp(base + ic, 0, last))], v0);
                let a1 = select(0.0, x[u32(clamp(base + sx + ic, 0, last))], v1);
                let a2 = select(0.0, x[u32(clamp(base + 2 * sx + ic, 0, last))], v2);
                let a3 = select(0.0, x[u32(clamp(base + 3 * sx + ic, 0, last))], v3);
                acc0 += a0 * wv;
                acc1 += a1 * wv;
                acc2 += a2 * wv;
                acc3 += a3 * wv;
            }
        }
    }
    let c0 = ob * 4u;
    let n = min(4u, p.out_c - c0);
    let pix = oy * p.out_w + ox0;
    let r0 = epilogue(acc0, pix, c0, ob);
    let r1 = epilogue(acc1, min(pix + 1u, p.out_h * p.out_w - 1u), c0, ob);
    let r2 = epilogue(acc2, min(pix + 2u, p.out_h * p.out_w - 1u), c0, ob);
    let r3 = epilogue(acc3, min(pix + 3u, p.out_h * p.out_w - 1u), c0, ob);
    let o = pix * p.out_c + c0;
    for (var j = 0u; j < n; j++) {
        y[o + j] = r0[j];
        if ox0 + 1u < p.out_w { y[o + p.out_c + j] = r1[j]; }
        if ox0 + 2u < p.out_w { y[o + 2u * p.out_c + j] = r2[j]; }
        if ox0 + 3u < p.out_w { y[o + 3u * p.out_c + j] = r3[j]; }
    }
}
