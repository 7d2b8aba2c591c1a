// Triangle rasterizer, one thread per triangle, into supersampled buffers with 32-bit
// `atomicMin` depth (the bit pattern of a positive f32 view depth orders like the float).
//
// `zbuf` holds four planes of W·H values: the occluders' depth, the opaque product's
// depth, the transparent-layer depth, the thin layer's depth. `ids` holds four planes: the
// winning opaque triangle, the winning transparent triangle, the nearest thin triangle and the
// thin layer's summed coverage (fixed point, `THIN_ONE` = 1). Thin triangles (widened by the
// host, `scene::thin`; their vertices carry the coverage weight in `normal.w` > 0) are drawn only
// by modes 5 and 6. Modes (`params.mode.x`):
//   0: occluder depth (occluder triangles; depth only)
//   1: opaque depth — fragments behind the occluder are rejected and counted (counters[0])
//   2: opaque id — the lowest triangle index whose depth equals the stored depth wins
//   3: transparent depth — behind the occluder: rejected and counted; behind the opaque: hidden
//   4: transparent id
//   5: thin depth and coverage — behind the occluder: rejected and counted; behind the opaque:
//      hidden; else the weights of every thin triangle covering the sample are summed
//   6: thin id — the lowest thin triangle index at the nearest thin depth
// counters[1] counts the product fragments that passed the occluder test.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> verts: array<Vert>;
@group(0) @binding(2) var<storage, read> tris: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> materials: array<Material>;
@group(0) @binding(4) var<storage, read> texels: array<u32>;
@group(0) @binding(5) var<storage, read_write> zbuf: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> ids: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * 64u;
    if (t >= params.ss.w) {
        return;
    }
    let mode = params.mode.x;
    let tri = tris[t];
    var alpha_mode = 0u;
    var m: Material;
    if (mode != 0u) {
        m = materials[tri.w];
        alpha_mode = m.flags.x;
        let blend = alpha_mode == 2u;
        let thin = verts[tri.x].normal.w > 0.0;
        if ((mode >= 5u) != thin) {
            return;
        }
        if ((mode == 1u || mode == 2u) && blend) {
            return;
        }
        if ((mode == 3u || mode == 4u) && !blend) {
            return;
        }
    }
    let a = verts[tri.x];
    let b = verts[tri.y];
    let c = verts[tri.z];
    let near = params.ambient.w;
    if (min(a.pos.z, min(b.pos.z, c.pos.z)) < near) {
        return;
    }
    let area = edge(a.pos.xy, b.pos.xy, c.pos.xy);
    if (abs(area) < 1e-6) {
        return;
    }
    let W = params.ss.y;
    let H = params.ss.z;
    let lo = min(a.pos.xy, min(b.pos.xy, c.pos.xy));
    let hi = max(a.pos.xy, max(b.pos.xy, c.pos.xy));
    if (hi.x < 0.0 || hi.y < 0.0 || lo.x > f32(W) || lo.y > f32(H)) {
        return;
    }
    let x0 = u32(max(ceil(lo.x - 0.5), 0.0));
    let y0 = u32(max(ceil(lo.y - 0.5), 0.0));
    let x1 = u32(clamp(floor(hi.x - 0.5), -1.0, f32(W) - 1.0) + 1.0);
    let y1 = u32(clamp(floor(hi.y - 0.5), -1.0, f32(H) - 1.0) + 1.0);
    let plane = W * H;
    let inv_area = 1.0 / area;
    for (var y = y0; y < y1; y = y + 1u) {
        for (var x = x0; x < x1; x = x + 1u) {
            let p = vec2<f32>(f32(x) + 0.5, f32(y) + 0.5);
            let w0 = edge(b.pos.xy, c.pos.xy, p) * inv_area;
            let w1 = edge(c.pos.xy, a.pos.xy, p) * inv_area;
            let w2 = edge(a.pos.xy, b.pos.xy, p) * inv_area;
            if (w0 < 0.0 || w1 < 0.0 || w2 < 0.0) {
                continue;
            }
            let inv_z = w0 * a.pos.w + w1 * b.pos.w + w2 * c.pos.w;
            if (inv_z <= 0.0) {
                continue;
            }
            let z = 1.0 / inv_z;
            if (alpha_mode == 1u) {
                let uvs = (w0 * a.uv * a.pos.w + w1 * b.uv * b.pos.w + w2 * c.uv * c.pos.w) * z;
                var alpha = m.base.a * sample_texture(m, base_uv(m, uvs)).a;
                if (a.color.a != b.color.a || a.color.a != c.color.a) {
                    alpha = alpha * (w0 * a.color.a * a.pos.w + w1 * b.color.a * b.pos.w + w2 * c.color.a * c.pos.w) * z;
                } else {
                    alpha = alpha * a.color.a;
                }
                if (alpha < m.pbr.z) {
                    continue;
                }
            }
            let zb = bitcast<u32>(z);
            let i = y * W + x;
            if (mode == 0u) {
                atomicMin(&zbuf[i], zb);
            } else if (mode == 1u || mode == 3u) {
                if (zb >= atomicLoad(&zbuf[i])) {
                    atomicAdd(&counters[0], 1u);
                    continue;
                }
                if (mode == 3u && zb >= atomicLoad(&zbuf[plane + i])) {
                    continue;
                }
                atomicAdd(&counters[1], 1u);
                atomicMin(&zbuf[(mode + 1u) / 2u * plane + i], zb);
            } else if (mode == 5u) {
                if (zb >= atomicLoad(&zbuf[i])) {
                    atomicAdd(&counters[0], 1u);
                    continue;
                }
                if (zb >= atomicLoad(&zbuf[plane + i])) {
                    continue;
                }
                atomicAdd(&counters[1], 1u);
                atomicMin(&zbuf[3u * plane + i], zb);
                atomicAdd(&ids[3u * plane + i], u32(a.normal.w * f32(THIN_ONE) + 0.5));
            } else if (mode == 6u) {
                if (zb == atomicLoad(&zbuf[3u * plane + i])) {
                    atomicMin(&ids[2u * plane + i], t);
                }
            } else if (mode == 2u) {
                if (zb == atomicLoad(&zbuf[plane + i])) {
                    atomicMin(&ids[i], t);
                }
            } else {
                if (zb == atomicLoad(&zbuf[2u * plane + i])) {
                    atomicMin(&ids[plane + i], t);
                }
            }
        }
    }
}
