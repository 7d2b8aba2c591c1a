// Alpha composite: `src` over `dst`, both packed RGBA8 of the same size, straight
// (non-premultiplied) alpha; `opacity` scales the source alpha.
// Host mirror: `image_ops::CompositeParams`.

struct CompositeParams {
    width: u32,
    height: u32,
    opacity: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: CompositeParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let i = id.y * params.width + id.x;
    let s = unpack4x8unorm(src[i]);
    let d = unpack4x8unorm(dst[i]);
    let sa = s.a * params.opacity;
    let da = d.a * (1.0 - sa);
    let oa = sa + da;
    var rgb = vec3<f32>(0.0);
    if (oa > 0.0) {
        rgb = (s.rgb * sa + d.rgb * da) / oa;
    }
    dst[i] = pack4x8unorm(vec4<f32>(rgb, oa));
}
