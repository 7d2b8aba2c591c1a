// Per output pixel of the ROI: the fraction of its S×S samples covered by the opaque product
// (the thin layer by its coverage) (x) and by the occluders, i.e. the person (y). Feeds the contact shadow of resolve.wgsl.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> zbuf: array<u32>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> cover: array<vec2<f32>>;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = params.roi.z;
    let h = params.roi.w;
    if (gid.x >= w || gid.y >= h) {
        return;
    }
    let S = params.ss.x;
    let W = params.ss.y;
    let plane = W * params.ss.z;
    var product = 0.0;
    var head = 0.0;
    for (var j = 0u; j < S; j = j + 1u) {
        for (var i = 0u; i < S; i = i + 1u) {
            let k = (gid.y * S + j) * W + gid.x * S + i;
            var p = select(0.0, 1.0, ids[k] != NONE);
            if (ids[2u * plane + k] != NONE) {
                let a = thin_coverage(ids[3u * plane + k]);
                p = p + (1.0 - p) * a;
            }
            product = product + p;
            head = head + select(0.0, 1.0, zbuf[k] != NONE);
        }
    }
    let n = f32(S * S);
    cover[gid.y * w + gid.x] = vec2<f32>(product / n, head / n);
}
