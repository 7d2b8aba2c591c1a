// DEPTHWISE_CONV_2D, NHWC float32, batch 1, with bias and fused activation.
// One invocation computes 4 adjacent output channels of one output pixel. Output channel c
// reads input channel c / mult (mult = depth multiplier). Weights are packed on the host as
// [k_h][k_w][oc4] vec4, bias as [oc4] vec4, zero-padded.
// The epilogue can add a residual tensor and apply a second activation (see
// `Epilogue` in prepare.rs). Needs shared/activation.wgsl prepended.

struct DepthwiseParams {
    in_h: u32, in_w: u32, in_c: u32, out_h: u32,
    out_w: u32, out_c: u32, k_h: u32, k_w: u32,
    stride_h: u32, stride_w: u32, dil_h: u32, dil_w: u32,
    pad_top: u32, pad_left: u32, act: u32, oc4: u32,
    mult: u32,
    // Epilogue: act2(act(acc + bias) + residual); res_c = residual channels (0: none).
    act2: u32, res_c: u32, _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: DepthwiseParams;
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
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    // x: output pixels; the channel block comes from the workgroup id, so weight addresses
    // are uniform across a workgroup. Control flow depends only on uniforms: bounds use masks
    // and clamped addresses, and only the final stores are guarded.
    let ob = wg.y;
    let npix = p.out_h * p.out_w;
    let live = gid.x < npix;
    let pix = min(gid.x, npix - 1u);
    let oy = pix / p.out_w;
    let ox = pix % p.out_w;
    let c0 = ob * 4u;
    let last_c = p.in_c - 1u;
    let ic = vec4<u32>(
        min(c0 / p.mult, last_c),
        min((c0 + 1u) / p.mult, last_c),
        min((c0 + 2u) / p.mult, last_c),
        min((c0 + 3u) / p.mult, last_c),
    );
    var acc = bias[ob];
    let iy0 = i32(oy * p.stride_h) - i32(p.pad_top);
    let ix0 = i32(ox * p.stride_w) - i32(p.pad_left);
    for (var ky = 0u; ky < p.k_h; ky++) {
        let iy = iy0 + i32(ky * p.dil_h);
        let vy = iy >= 0 && iy < i32(p.in_h);
        let cy = u32(clamp(iy, 0, i32(p.in_h) - 1));
        for (var kx = 0u; kx < p.k_w; kx++) {
            let ix = ix0 + i32(kx * p.dil_w);
            let inside = vy && ix >= 0 && ix < i32(p.in_w);
            let cx = u32(clamp(ix, 0, i32(p.in_w) - 1));
            let base = (cy * p.in_w + cx) * p.in_c;
            let v = vec4<f32>(x[base + ic.x], x[base + ic.y], x[base + ic.z], x[base + ic.w]);
            acc += select(vec4<f32>(0.0), v, inside) * w[(ky * p.k_w + kx) * p.oc4 + ob];
        }
    }
    let r = epilogue(acc, pix, c0, ob);
    if !live {
        return;
    }
    let n = min(4u, p.out_c - c0);
    let o = pix * p.out_c + c0;
    for (var j = 0u; j < n; j++) {
        y[o + j] = r[j];
    }
}
