// MediaPipe's Convolution2DTransposeBias: a transposed convolution plus bias, NHWC float32,
// batch 1. Output pixel (oy, ox) gathers input pixels iy with iy * stride + ky - pad = oy.
// One invocation computes 4 output channels of one output pixel. Weights are packed on the
// host as [k_h][k_w][in_c][oc4] vec4, bias as [oc4] vec4 (same packing as conv2d.wgsl).

struct TransposeConvParams {
    in_h: u32, in_w: u32, in_c: u32, out_h: u32,
    out_w: u32, out_c: u32, k_h: u32, k_w: u32,
    stride_h: u32, stride_w: u32, pad_top: u32, pad_left: u32,
    oc4: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: TransposeConvParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let pix = gid.x;
    let ob = gid.y;
    if pix >= p.out_h * p.out_w || ob >= p.oc4 {
        return;
    }
    let oy = pix / p.out_w;
    let ox = pix % p.out_w;
    var acc = bias[ob];
    for (var ky = 0u; ky < p.k_h; ky++) {
        let ty = i32(oy + p.pad_top) - i32(ky);
        if ty < 0 || ty % i32(p.stride_h) != 0 {
            continue;
        }
        let iy = u32(ty) / p.stride_h;
        if iy >= p.in_h {
            continue;
        }
        for (var kx = 0u; kx < p.k_w; kx++) {
            let tx = i32(ox + p.pad_left) - i32(kx);
            if tx < 0 || tx % i32(p.stride_w) != 0 {
                continue;
            }
            let ix = u32(tx) / p.stride_w;
            if ix >= p.in_w {
                continue;
            }
            let base = (iy * p.in_w + ix) * p.in_c;
            var wi = ((ky * p.k_w + kx) * p.in_c) * p.oc4 + ob;
            for (var ic = 0u; ic < p.in_c; ic++) {
                acc += x[base + ic] * w[wi];
                wi += p.oc4;
            }
        }
    }
    let c0 = ob * 4u;
    let n = min(4u, p.out_c - c0);
    let o = pix * p.out_c + c0;
    for (var j = 0u; j < n; j++) {
        y[o + j] = acc[j];
    }
}
