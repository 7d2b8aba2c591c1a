// Warps a garment's parts onto the photo grid and layers them front to back.
// Each part is a thin-plate spline from normalised photo coordinates to garment pixels
// (u = a0 + a1 x + a2 y + sum w_i r_i^2 ln r_i^2, the same for v), evaluated per pixel inside
// the part's region; the garment is sampled bilinearly from texels of the part's label only
// (premultiplied RGBA8, alpha = the garment mask), so overlapping parts keep clean edges.
// Output: premultiplied RGBA8 per pixel in out[0..n], the front-most part's label in
// out[n..2n]. Host mirror: `garment::warp::GarmentWarpParams`; part table layout: see
// `garment::warp::PartWarp::pack` (80 floats per part).

struct WarpParams {
    width: u32,
    height: u32,
    garment_w: u32,
    garment_h: u32,
    parts: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

const STRIDE: u32 = 80u;

@group(0) @binding(0) var<uniform> params: WarpParams;
@group(0) @binding(1) var<storage, read> parts: array<f32>;
@group(0) @binding(2) var<storage, read> texels: array<u32>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

fn texel(x: i32, y: i32, label: u32) -> vec4<f32> {
    if (x < 0 || y < 0 || x >= i32(params.garment_w) || y >= i32(params.garment_h)) {
        return vec4<f32>(0.0);
    }
    let i = u32(y) * params.garment_w + u32(x);
    if (labels[i] != label) {
        return vec4<f32>(0.0);
    }
    return unpack4x8unorm(texels[i]);
}

// The garment pixel photo pixel p takes in the part at `base`.
fn spline(base: u32, p: vec2<f32>) -> vec2<f32> {
    let n = u32(parts[base]);
    let q = p;
    var u = parts[base + 8u] + parts[base + 9u] * q.x + parts[base + 10u] * q.y;
    var v = parts[base + 11u] + parts[base + 12u] * q.x + parts[base + 13u] * q.y;
    for (var k = 0u; k < n; k = k + 1u) {
        let o = base + 16u + 4u * k;
        let d = q - vec2<f32>(parts[o], parts[o + 1u]);
        let d2 = dot(d, d);
        var b = 0.0;
        if (d2 > 1e-12) {
            b = d2 * log(d2);
        }
        u = u + parts[o + 2u] * b;
        v = v + parts[o + 3u] * b;
    }
    return vec2<f32>(u, v);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let p = vec2<f32>(f32(id.x), f32(id.y));
    var acc = vec4<f32>(0.0);
    var front = 0u;
    for (var i = 0u; i < params.parts; i = i + 1u) {
        let base = i * STRIDE;
        if (p.x < parts[base + 4u] || p.y < parts[base + 5u] || p.x > parts[base + 6u] || p.y > parts[base + 7u]) {
            continue;
        }
        let label = u32(parts[base + 1u]);
        // parts[base + 2] holds 1 / the normalising length.
        let uv = spline(base, p * parts[base + 2u]);
        let c0 = floor(uv);
        let f = uv - c0;
        let ix = i32(c0.x);
        let iy = i32(c0.y);
        let top = mix(texel(ix, iy, label), texel(ix + 1, iy, label), f.x);
        let bottom = mix(texel(ix, iy + 1, label), texel(ix + 1, iy + 1, label), f.x);
        let s = mix(top, bottom, f.y);
        if (s.a > 0.0) {
            if (front == 0u) {
                front = label;
            }
            acc = acc + (1.0 - acc.a) * s;
        }
    }
    let n = params.width * params.height;
    let idx = id.y * params.width + id.x;
    out[idx] = pack4x8unorm(acc);
    out[n + idx] = front;
}
