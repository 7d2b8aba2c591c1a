// One input of a CONCATENATION: copies x, seen as [outer, len, inner], into y, seen as
// [outer, out_axis, inner], at `offset` along the middle axis, with fused activation.
// Needs shared/activation.wgsl prepended.

struct ConcatParams {
    len: u32, inner: u32, out_axis: u32, offset: u32,
    act: u32, total: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: ConcatParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if i >= p.total {
        return;
    }
    let inner = i % p.inner;
    let r = i / p.inner;
    let a = r % p.len;
    let o = r / p.len;
    y[(o * p.out_axis + p.offset + a) * p.inner + inner] = activate(x[i], p.act);
}
