// Texture lookups (prepended after common.wgsl to the kernels that bind `texels`).

// Bilinear, repeating lookup of a material's base-colour texture; linear RGBA.
fn sample_texels(tex: vec4<u32>, uv: vec2<f32>) -> vec4<f32> {
    if (tex.w == 0u || tex.y == 0u || tex.z == 0u) {
        return vec4<f32>(1.0);
    }
    let size = vec2<f32>(f32(tex.y), f32(tex.z));
    let p = fract(uv) * size - 0.5;
    let f = fract(p);
    let i0 = vec2<i32>(floor(p));
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let o = vec2<i32>(i32(k & 1u), i32(k >> 1u));
        let q = (i0 + o + vec2<i32>(tex.yz)) % vec2<i32>(tex.yz);
        let t = unpack4x8unorm(texels[tex.x + u32(q.y) * tex.y + u32(q.x)]);
        let w = select(1.0 - f.x, f.x, o.x == 1) * select(1.0 - f.y, f.y, o.y == 1);
        acc = acc + vec4<f32>(srgb_to_linear(t.rgb), t.a) * w;
    }
    return acc;
}

// The same lookup averaged over a sample's footprint (`dx`, `dy`: the change of `uv` from one
// supersample to the next along x and y): a texture seen minified (a knit's ribs far smaller
// than a sample) is box-filtered over up to 5×5 bilinear taps instead of aliasing into moiré.
fn sample_texels_filtered(tex: vec4<u32>, uv: vec2<f32>, dx: vec2<f32>, dy: vec2<f32>) -> vec4<f32> {
    if (tex.w == 0u || tex.y == 0u || tex.z == 0u) {
        return vec4<f32>(1.0);
    }
    let size = vec2<f32>(f32(tex.y), f32(tex.z));
    let fx = dx * size;
    let fy = dy * size;
    let footprint = max(length(fx), length(fy));
    if (!(footprint > 1.0)) {
        return sample_texels(tex, uv);
    }
    let n = u32(min(ceil(footprint), 5.0));
    var acc = vec4<f32>(0.0);
    for (var j = 0u; j < n; j = j + 1u) {
        for (var i = 0u; i < n; i = i + 1u) {
            let a = (f32(i) + 0.5) / f32(n) - 0.5;
            let b = (f32(j) + 0.5) / f32(n) - 0.5;
            acc = acc + sample_texels(tex, uv + a * dx + b * dy);
        }
    }
    return acc / f32(n * n);
}

// The coordinates a material's base colour texture reads, of both UV sets (xy, zw).
fn base_uv(m: Material, uvs: vec4<f32>) -> vec2<f32> {
    return select(uvs.xy, uvs.zw, (m.flags.w & 1u) != 0u);
}

// The coordinates a material's emissive texture reads, of both UV sets (xy, zw).
fn emissive_uv(m: Material, uvs: vec4<f32>) -> vec2<f32> {
    return select(uvs.xy, uvs.zw, (m.flags.w & 2u) != 0u);
}

// A material's base colour texture (white without one).
fn sample_texture(m: Material, uv: vec2<f32>) -> vec4<f32> {
    return sample_texels(m.tex, uv);
}

// A material's base colour texture over a sample's footprint.
fn sample_texture_filtered(m: Material, uv: vec2<f32>, dx: vec2<f32>, dy: vec2<f32>) -> vec4<f32> {
    return sample_texels_filtered(m.tex, uv, dx, dy);
}
