// PAD with zeros over rank-4 shapes (lower ranks right-aligned by the host).

struct PadParams {
    in_shape: vec4<u32>,
    out_shape: vec4<u32>,
    before: vec4<u32>,
    total: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: PadParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if i >= p.total {
        return;
    }
    let s = p.out_shape;
    let c = i % s.w;
    let r1 = i / s.w;
    let w = r1 % s.z;
    let r2 = r1 / s.z;
    let h = r2 % s.y;
    let n = r2 / s.y;
    // Unsigned wrap-around makes coordinates before the padding huge, hence out of range.
    let q = vec4<u32>(n, h, w, c) - p.before;
    let t = p.in_shape;
    var v = 0.0;
    if all(q < t) {
        v = x[((q.x * t.y + q.y) * t.z + q.z) * t.w + q.w];
    }
    y[i] = v;
}
