// DEPTHWISE_CONV_2D, NHWC float32, batch 1, with bias and fused activation.
// One invocation computes 4 adjacent output channels of 4 adjacent output pixels of a row,
// so each weight vec4 loaded feeds 4 pixels. Output channel c
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

// The 4 channels `ic` of input column `col` of the row starting at pixel `row`; zero outside
// the image (`vy`: the row is inside).
fn column(row: u32, col: i32, vy: bool, ic: vec4<u32>) -> vec4<f32> {
    let in_w = i32(p.in_w);
    let b = (row + u32(clamp(col, 0, in_w - 1))) * p.in_c;
    let v = vec4<f32>(x[b + ic.x], x[b + ic.y], x[b + ic.z], x[b + ic.w]);
    return select(vec4<f32>(0.0), v, vy && col >= 0 && col < in_w);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    // Each invocation: 4 output pixels along a row x 4 channels. Bounds use masks and clamped
    // addresses rather than branches; only the final stores are guarded.
    // Invocation index = (pixel group, channel block), channel block fastest.
    let idx = gid.x + gid.y * 65535u * 64u;
    let groups_w = (p.out_w + 3u) / 4u;
    let total = p.out_h * groups_w * p.oc4;
    let live = idx < total;
    let flat = min(idx, total - 1u);
    let ob = flat % p.oc4;
    let item = flat / p.oc4;
    let oy = item / groups_w;
    let ox0 = (item % groups_w) * 4u;
    let c0 = ob * 4u;
    let last_c = p.in_c - 1u;
    let ic = vec4<u32>(
        min(c0 / p.mult, last_c),
        min((c0 + 1u) / p.mult, last_c),
        min((c0 + 2u) / p.mult, last_c),
        min((c0 + 3u) / p.mult, last_c),
    );
    let b = bias[ob];
    var acc0 = b;
    var acc1 = b;
    var acc2 = b;
    var acc3 = b;
    let iy0 = i32(oy * p.stride_h) - i32(p.pad_top);
    let ix0 = i32(ox0 * p.stride_w) - i32(p.pad_left);
    let sw = i32(p.stride_w);
    for (var ky = 0u; ky < p.k_h; ky++) {
        let iy = iy0 + i32(ky * p.dil_h);
        let vy = iy >= 0 && iy < i32(p.in_h);
        let row = u32(clamp(iy, 0, i32(p.in_h) - 1)) * p.in_w;
        if sw == 1 && p.dil_w == 1u {
            // Stride 1: pixel j at tap kx reads column ix0 + j + kx, so the four columns
            // slide by one per tap and each tap loads one new column.
            var v0 = column(row, ix0, vy, ic);
            var v1 = column(row, ix0 + 1, vy, ic);
            var v2 = column(row, ix0 + 2, vy, ic);
            var v3 = column(row, ix0 + 3, vy, ic);
            for (var kx = 0u; kx < p.k_w; kx++) {
                let wv = w[(ky * p.k_w + kx) * p.oc4 + ob];
                acc0 += v0 * wv;
                acc1 += v1 * wv;
                acc2 += v2 * wv;
                acc3 += v3 * wv;
                v0 = v1;
                v1 = v2;
                v2 = v3;
                v3 = column(row, ix0 + i32(kx) + 4, vy, ic);
            }
        } else {
            for (var kx = 0u; kx < p.k_w; kx++) {
                let ix = ix0 + i32(kx * p.dil_w);
                let wv = w[(ky * p.k_w + kx) * p.oc4 + ob];
                acc0 += column(row, ix, vy, ic) * wv;
                acc1 += column(row, ix + sw, vy, ic) * wv;
                acc2 += column(row, ix + 2 * sw, vy, ic) * wv;
                acc3 += column(row, ix + 3 * sw, vy, ic) * wv;
            }
        }
    }
    if !live {
        return;
    }
    let n = min(4u, p.out_c - c0);
    let pix = oy * p.out_w + ox0;
    let ow = p.out_w - ox0;
    let r0 = epilogue(acc0, pix, c0, ob);
    for (var j = 0u; j < n; j++) {
        y[pix * p.out_c + c0 + j] = r0[j];
    }
    if ow > 1u {
        let r1 = epilogue(acc1, pix + 1u, c0, ob);
        for (var j = 0u; j < n; j++) {
            y[(pix + 1u) * p.out_c + c0 + j] = r1[j];
        }
    }
    if ow > 2u {
        let r2 = epilogue(acc2, pix + 2u, c0, ob);
        for (var j = 0u; j < n; j++) {
            y[(pix + 2u) * p.out_c + c0 + j] = r2[j];
        }
    }
    if ow > 3u {
        let r3 = epilogue(acc3, pix + 3u, c0, ob);
        for (var j = 0u; j < n; j++) {
            y[(pix + 3u) * p.out_c + c0 + j] = r3[j];
        }
    }
}
