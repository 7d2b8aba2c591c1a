// DEPTH_TO_SPACE, NHWC float32, batch 1: out[oy, ox, oc] =
// in[oy / b, ox / b, ((oy % b) * b + ox % b) * out_c + oc].

struct DepthToSpaceParams {
    in_w: u32, in_c: u32, out_w: u32, out_c: u32,
    block: u32, total: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: DepthToSpaceParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if i >= p.total {
        return;
    }
    let oc = i % p.out_c;
    let pix = i / p.out_c;
    let oy = pix / p.out_w;
    let ox = pix % p.out_w;
    let ic = ((oy % p.block) * p.block + ox % p.block) * p.out_c + oc;
    y[i] = x[((oy / p.block) * p.in_w + ox / p.block) * p.in_c + ic];
}
