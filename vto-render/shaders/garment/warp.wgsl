// Warps a garment's parts onto the photo grid and layers them front to back.
// Each part's thin-plate spline (photo pixel -> garment pixel) is evaluated on the CPU at the
// nodes of a coarse grid (every `step` pixels over the parts' bounding rectangle) and
// interpolated bilinearly here per pixel, inside the part's region; the garment is sampled
// bilinearly from texels of the part's label only (premultiplied RGBA8, alpha = the garment
// mask), so overlapping parts keep clean edges. Only the rectangle is computed: output pixel
// (x, y) of the rectangle is photo pixel (ox + x, oy + y).
// Output: premultiplied RGBA8 per rectangle pixel in out[0..n], the front-most part's label
// in out[n..2n]. Labels come four to a word (little-endian bytes).
// Host mirror: `garment::warp::GarmentWarpParams`; part table: 8 floats per part
// [label, first grid node, -, -, region x0, y0, x1, y1]; grid: (u, v) per node, row-major
// `nx` by `ny` per part.

struct WarpParams {
    width: u32,
    height: u32,
    garment_w: u32,
    garment_h: u32,
    parts: u32,
    ox: u32,
    oy: u32,
    step: u32,
    nx: u32,
    ny: u32,
    _pad0: u32,
    _pad1: u32,
}

const STRIDE: u32 = 8u;

@group(0) @binding(0) var<uniform> params: WarpParams;
@group(0) @binding(1) var<storage, read> parts: array<f32>;
@group(0) @binding(2) var<storage, read> texels: array<u32>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
@group(0) @binding(4) var<storage, read> grid: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> out: array<u32>;

fn texel(x: i32, y: i32, label: u32) -> vec4<f32> {
    if (x < 0 || y < 0 || x >= i32(params.garment_w) || y >= i32(params.garment_h)) {
        return vec4<f32>(0.0);
    }
    let i = u32(y) * params.garment_w + u32(x);
    if (((labels[i >> 2u] >> ((i & 3u) * 8u)) & 255u) != label) {
        return vec4<f32>(0.0);
    }
    return unpack4x8unorm(texels[i]);
}

// The garment pixel of rectangle pixel `local` in the part whose nodes start at `first`.
fn lookup(first: u32, local: vec2<f32>) -> vec2<f32> {
    let g = local / f32(params.step);
    let c = min(floor(g), vec2<f32>(f32(params.nx - 2u), f32(params.ny - 2u)));
    let f = g - c;
    let i = first + u32(c.y) * params.nx + u32(c.x);
    let top = mix(grid[i], grid[i + 1u], f.x);
    let bottom = mix(grid[i + params.nx], grid[i + params.nx + 1u], f.x);
    return mix(top, bottom, f.y);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let local = vec2<f32>(f32(id.x), f32(id.y));
    let p = local + vec2<f32>(f32(params.ox), f32(params.oy));
    var acc = vec4<f32>(0.0);
    var front = 0u;
    for (var i = 0u; i < params.parts; i = i + 1u) {
        let base = i * STRIDE;
        if (p.x < parts[base + 4u] || p.y < parts[base + 5u] || p.x > parts[base + 6u] || p.y > parts[base + 7u]) {
            continue;
        }
        let label = u32(parts[base]);
        let uv = lookup(u32(parts[base + 1u]), local);
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
