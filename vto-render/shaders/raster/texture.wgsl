// Base-colour texture lookup (prepended after common.wgsl to the kernels that bind `texels`).

// Bilinear, repeating lookup of a material's base-colour texture; linear RGBA.
fn sample_texture(m: Material, uv: vec2<f32>) -> vec4<f32> {
    if (m.tex.w == 0u || m.tex.y == 0u || m.tex.z == 0u) {
        return vec4<f32>(1.0);
    }
    let size = vec2<f32>(f32(m.tex.y), f32(m.tex.z));
    let p = fract(uv) * size - 0.5;
    let f = fract(p);
    let i0 = vec2<i32>(floor(p));
    var acc = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let o = vec2<i32>(i32(k & 1u), i32(k >> 1u));
        let q = (i0 + o + vec2<i32>(m.tex.yz)) % vec2<i32>(m.tex.yz);
        let t = unpack4x8unorm(texels[m.tex.x + u32(q.y) * m.tex.y + u32(q.x)]);
        let w = select(1.0 - f.x, f.x, o.x == 1) * select(1.0 - f.y, f.y, o.y == 1);
        acc = acc + vec4<f32>(srgb_to_linear(t.rgb), t.a) * w;
    }
    return acc;
}
