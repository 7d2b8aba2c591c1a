// Elementwise unary operators.
// op: 0 RELU, 1 RELU6, 2 LOGISTIC, 3 HARD_SWISH (x * relu6(x + 3) / 6), 4 TANH.

struct UnaryParams {
    op: u32, total: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: UnaryParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if i >= p.total {
        return;
    }
    let v = x[i];
    var r: f32;
    switch p.op {
        case 0u: { r = max(v, 0.0); }
        case 1u: { r = clamp(v, 0.0, 6.0); }
        case 2u: { r = 1.0 / (1.0 + exp(-v)); }
        case 3u: { r = v * clamp(v + 3.0, 0.0, 6.0) / 6.0; }
        default: { r = tanh(v); }
    }
    y[i] = r;
}
