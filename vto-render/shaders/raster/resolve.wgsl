// Shading and resolve, one thread per output pixel of the ROI: each of the S×S samples is the
// photo (darkened by the contact shadow), or the shaded opaque product, under the thin layer
// (the nearest thin triangle's shade at the layer's coverage), then seen through the
// transparent layer when one covers it — except where the thin triangle is nearer than the
// glass (a wire in front of a lens): then the glass is under it, and the thin layer is laid
// over the glass; the samples are averaged (supersampled anti-aliasing). A pixel
// that no product sample and no shadow touches is copied from the photo bit for bit.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> verts: array<Vert>;
@group(0) @binding(2) var<storage, read> tris: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> materials: array<Material>;
@group(0) @binding(4) var<storage, read> texels: array<u32>;
@group(0) @binding(5) var<storage, read> ids: array<u32>;
@group(0) @binding(6) var<storage, read> cover: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> photo: array<u32>;
@group(0) @binding(8) var<storage, read_write> out: array<u32>;

const PI: f32 = 3.14159265;

struct Surface {
    view: vec3<f32>,
    normal: vec3<f32>,
    // UV set 0 (xy) and UV set 1 (zw).
    uv: vec4<f32>,
    // Linear RGBA vertex colour.
    color: vec4<f32>,
    aux: f32,
}

// Perspective-correct attributes of triangle `t` at supersampled position `p`.
fn surface(t: u32, p: vec2<f32>) -> Surface {
    let tri = tris[t];
    let a = verts[tri.x];
    let b = verts[tri.y];
    let c = verts[tri.z];
    let area = edge(a.pos.xy, b.pos.xy, c.pos.xy);
    var w0 = edge(b.pos.xy, c.pos.xy, p) / area;
    var w1 = edge(c.pos.xy, a.pos.xy, p) / area;
    var w2 = 1.0 - w0 - w1;
    w0 = w0 * a.pos.w;
    w1 = w1 * b.pos.w;
    w2 = w2 * c.pos.w;
    let s = 1.0 / (w0 + w1 + w2);
    var res: Surface;
    res.view = (w0 * a.view.xyz + w1 * b.view.xyz + w2 * c.view.xyz) * s;
    res.aux = (w0 * a.view.w + w1 * b.view.w + w2 * c.view.w) * s;
    res.normal = normalize(w0 * a.normal.xyz + w1 * b.normal.xyz + w2 * c.normal.xyz);
    res.uv = (w0 * a.uv + w1 * b.uv + w2 * c.uv) * s;
    // One colour over the triangle (white, most often) is taken as it is: interpolated, the
    // weights' rounding would leave it a hair off.
    if (all(a.color == b.color) && all(a.color == c.color)) {
        res.color = a.color;
    } else {
        res.color = (w0 * a.color + w1 * b.color + w2 * c.color) * s;
    }
    return res;
}

// A studio-like environment of the photo's own light, with the contrast polished metal needs
// to read as metal (a mirror of a uniform haze looks like porcelain): a dark floor below the
// horizon, dim walls round it, a bright ceiling, a strip light overhead and two tall
// softboxes either side of the camera, and the key light's hot spot. Colours come from the
// photo's ambient and key light (camera y points down, a surface facing the camera reflects
// towards −z).
//
// `lit` (0–1) lights the floor (the ground and the body under a jewel bounce light) and
// keeps its deep dark to a band along the horizon (a studio's black flag): polished metal
// uses 1, so a bangle facing the camera shows greys in its lower half with a narrow dark
// line, not a dark half-ring; gems and glass keep the dark floor (0) their facets and
// reflections are tuned to.
fn environment(r: vec3<f32>, lit: f32) -> vec3<f32> {
    let amb = params.ambient.rgb;
    let key = params.key_color.rgb;
    let up = -r.y;
    let floor_c = amb * mix(0.06, 0.26, lit);
    let wall = amb * mix(0.38, 0.45, lit) + key * 0.04;
    let ceiling = amb * 1.25 + key * 0.3;
    var c = mix(floor_c, wall, smoothstep(-0.12, 0.02, up));
    let flag = 1.0 - smoothstep(0.13, 0.18, abs(up + 0.17));
    c = mix(c, amb * 0.02, lit * flag);
    c = mix(c, ceiling, smoothstep(0.42, 0.6, up));
    // A strip light across the ceiling, and two softboxes 50° either side of the camera.
    let strip = 1.0 - smoothstep(0.0, 0.07, abs(up - 0.3));
    let az = atan2(r.x, -r.z);
    let side = 1.0 - smoothstep(0.12, 0.2, abs(abs(az) - 0.9));
    let tall = 1.0 - smoothstep(0.55, 0.7, abs(up - 0.15));
    let lamp = amb * 1.6 + key * 1.3;
    c = mix(c, lamp, max(strip * 0.85, side * tall));
    let k = max(dot(r, params.key_dir.xyz), 0.0);
    return c + key * (4.0 * pow(k, 64.0) + 0.35 * pow(k, 6.0));
}

// The environment's mean (what a fully rough surface reflects).
fn environment_mean() -> vec3<f32> {
    return params.ambient.rgb * 0.55 + params.key_color.rgb * 0.18;
}

// A pseudo-random unit-cube vector per integer (a facet's scatter).
fn hash3(i: u32) -> vec3<f32> {
    var x = i * 747796405u + 2891336453u;
    var res = vec3<f32>(0.0);
    for (var k = 0u; k < 3u; k = k + 1u) {
        x = x * 747796405u + 2891336453u;
        var w = ((x >> ((x >> 28u) + 4u)) ^ x) * 277803737u;
        w = (w >> 22u) ^ w;
        res[k] = f32(w & 0xffffu) / 65535.0 * 2.0 - 1.0;
    }
    return res;
}

// A cut gem (material flags.z = 1): each facet returns light that bounced inside the stone
// from a direction its tilt and the cut scatter, so the environment breaks into bright and
// dark facets, with the three colours looked up a little apart (fire); the girdle and the
// facets seen edge-on are dark (the stone's outline); the table adds a faint surface
// reflection and the key light's glint.
fn shade_gem(t: u32, s: Surface, m: Material, v: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let ndv = max(dot(n, v), 0.0);
    let h = hash3(t >> 1u);
    let inner = normalize(reflect(-v, n) * 0.6 + h);
    let d = normalize(cross(inner, n + vec3<f32>(1e-3, 0.0, 0.0))) * 0.08;
    let split = vec3<f32>(
        environment(normalize(inner + d), 0.0).r,
        environment(inner, 0.0).g,
        environment(normalize(inner - d), 0.0).b,
    );
    // Fire is a flash of colour on a mostly white, grey and black stone.
    let fire = mix(vec3<f32>(dot(split, vec3<f32>(0.2126, 0.7152, 0.0722))), split, 0.45);
    let body = m.base.rgb * sample_texture(m, base_uv(m, s.uv)).rgb * s.color.rgb;
    let outline = smoothstep(0.2, 0.65, ndv);
    // A polished facet mirrors the lamps (brighter than the photo's light suggests) even
    // on a dark ruby: the glint that makes a 6 px stud read as a stone.
    let f = 0.07 + 0.93 * pow(1.0 - ndv, 5.0);
    let surface_refl = f * environment(reflect(-v, n), 0.0) * 1.5;
    let glint = params.key_color.rgb * blinn(n, v, 0.06) * 0.4;
    return fire * body * 1.5 * outline + surface_refl * outline + glint;
}

fn blinn(n: vec3<f32>, v: vec3<f32>, roughness: f32) -> f32 {
    let l = params.key_dir.xyz;
    let h = normalize(l + v);
    let r = max(roughness, 0.03);
    let shin = clamp(2.0 / (r * r * r * r) - 2.0, 1.0, 4096.0);
    return (shin + 8.0) / (8.0 * PI) * pow(max(dot(n, h), 0.0), shin) * max(dot(n, l), 0.0);
}

fn shade_opaque(t: u32, p: vec2<f32>) -> vec3<f32> {
    let s = surface(t, p);
    let m = materials[tris[t].w];
    let v = normalize(-s.view);
    var n = s.normal;
    if (dot(n, v) < 0.0) {
        n = -n;
    }
    if (m.flags.z == 1u) {
        return shade_gem(t, s, m, v, n);
    }
    var tex = vec4<f32>(1.0);
    if (m.tex.w != 0u) {
        // The texture's footprint: the change of uv to the next supersample.
        let uv = base_uv(m, s.uv);
        let dx = base_uv(m, surface(t, p + vec2<f32>(1.0, 0.0)).uv) - uv;
        let dy = base_uv(m, surface(t, p + vec2<f32>(0.0, 1.0)).uv) - uv;
        tex = sample_texture_filtered(m, uv, dx, dy);
    }
    // glTF's base colour: factor × texture × vertex colour.
    let base = m.base.rgb * tex.rgb * s.color.rgb;
    let metallic = m.pbr.x;
    let rough = m.pbr.y;
    let l = params.key_dir.xyz;
    let ndl = max(dot(n, l), 0.0);
    let light = params.ambient.rgb + params.key_color.rgb * ndl;
    var diffuse = base * light * (1.0 - metallic);
    let dielectric = select(0.04, m.pbr.w, m.pbr.w > 0.0);
    let f0 = mix(vec3<f32>(dielectric), base, metallic);
    let ndv = max(dot(n, v), 0.0);
    // Schlick's Fresnel with the grazing reflectance lowered on rough surfaces (fabric, felt
    // and matte plastics do not turn mirror-like at grazing angles).
    let f90 = max(vec3<f32>(1.0 - rough), f0);
    let fres = f0 + (f90 - f0) * pow(1.0 - ndv, 5.0);
    let spec = fres * params.key_color.rgb * blinn(n, v, rough);
    // Rough surfaces blur the environment rather than darken it: fade towards its mean
    // (polished metal, roughness ≲ 0.2, keeps most of the environment's contrast).
    let env_sharp = environment(reflect(-v, n), metallic);
    let env = fres * mix(env_sharp, environment_mean(), smoothstep(0.05, 0.6, rough));
    var colour = diffuse + spec + env;
    // Sheen (velvet, felt, knit): light caught by fibres at grazing angles, broader the
    // rougher the sheen; the base below loses what the sheen reflects.
    let sheen = m.sheen.rgb;
    if (max(sheen.r, max(sheen.g, sheen.b)) > 0.0) {
        let rim = pow(1.0 - ndv, mix(4.0, 1.0, m.coat.z));
        let scale = 1.0 - 0.157 * max(sheen.r, max(sheen.g, sheen.b));
        colour = colour * scale + sheen * light * rim;
    }
    // Clearcoat (lacquer): a second, clear dielectric layer with its own highlight and
    // reflection on top, dimming what lies below by what it reflects.
    let coat = m.coat.x;
    if (coat > 0.0) {
        let fc = (0.04 + 0.96 * pow(1.0 - ndv, 5.0)) * coat;
        let coat_rough = m.coat.y;
        let coat_env = mix(
            environment(reflect(-v, n), 0.0),
            environment_mean(),
            smoothstep(0.05, 0.6, coat_rough),
        );
        let coat_spec = params.key_color.rgb * blinn(n, v, coat_rough) * 0.04 * coat;
        colour = colour * (1.0 - fc) + fc * coat_env + coat_spec;
    }
    // Emission: light of its own, whatever the photo's light (a watch's luminous hands).
    var glow = m.glow.rgb;
    if (m.glow_tex.w != 0u) {
        glow = glow * sample_texels(m.glow_tex, emissive_uv(m, s.uv)).rgb;
    }
    return colour + glow;
}

struct TransparentLight {
    transmit: vec3<f32>,
    add: vec3<f32>,
}

fn shade_transparent(t: u32, p: vec2<f32>) -> TransparentLight {
    let s = surface(t, p);
    let m = materials[tris[t].w];
    let v = normalize(-s.view);
    var n = s.normal;
    if (dot(n, v) < 0.0) {
        n = -n;
    }
    let ndv = max(dot(n, v), 0.0);
    let f = 0.04 + 0.96 * pow(1.0 - ndv, 5.0);
    let reflection = f * environment(reflect(-v, n), 0.0) + 0.04 * params.key_color.rgb * blinn(n, v, 0.08);
    var tint = vec3<f32>(1.0);
    var density = 0.0;
    let transparency = params.mode.y;
    if (transparency == 1u) {
        tint = m.base.rgb * sample_texture(m, base_uv(m, s.uv)).rgb * s.color.rgb;
        density = m.base.a * s.color.a;
    } else if (transparency == 2u) {
        // Default sunglasses: neutral grey, darker at the top.
        tint = vec3<f32>(0.20, 0.20, 0.21);
        density = mix(0.9, 0.6, clamp(s.aux, 0.0, 1.0));
    }
    var res: TransparentLight;
    res.transmit = (1.0 - f) * mix(vec3<f32>(1.0), tint, density);
    res.add = reflection + density * tint * params.ambient.rgb * 0.1;
    return res;
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = params.roi.z;
    let h = params.roi.w;
    if (gid.x >= w || gid.y >= h) {
        return;
    }
    let idx = gid.y * w + gid.x;
    let raw = photo[idx];
    let px = unpack4x8unorm(raw);
    let photo_lin = srgb_to_linear(px.rgb);

    // Contact shadow: the product's coverage, shifted away from the key light and blurred,
    // falling on the person (the occluders) only.
    var shadow = 0.0;
    let head = cover[idx].y;
    let radius = i32(params.shadow.z);
    if (head > 0.0 && params.shadow.w > 0.0) {
        var acc = 0.0;
        var wsum = 0.0;
        let cx = i32(gid.x) - i32(round(params.shadow.x));
        let cy = i32(gid.y) - i32(round(params.shadow.y));
        let sigma = max(params.shadow.z * 0.5, 0.5);
        for (var dy = -radius; dy <= radius; dy = dy + 1) {
            for (var dx = -radius; dx <= radius; dx = dx + 1) {
                let wgt = exp(-f32(dx * dx + dy * dy) / (2.0 * sigma * sigma));
                wsum = wsum + wgt;
                let x = cx + dx;
                let y = cy + dy;
                if (x >= 0 && y >= 0 && x < i32(w) && y < i32(h)) {
                    acc = acc + wgt * cover[u32(y) * w + u32(x)].x;
                }
            }
        }
        shadow = params.shadow.w * head * acc / wsum;
    }

    let S = params.ss.x;
    let W = params.ss.y;
    let plane = W * params.ss.z;
    var touched = shadow > 0.0;
    var sum = vec3<f32>(0.0);
    for (var j = 0u; j < S; j = j + 1u) {
        for (var i = 0u; i < S; i = i + 1u) {
            let sx = gid.x * S + i;
            let sy = gid.y * S + j;
            let k = sy * W + sx;
            let p = vec2<f32>(f32(sx) + 0.5, f32(sy) + 0.5);
            var col = photo_lin * (1.0 - shadow);
            let o = ids[k];
            if (o != NONE) {
                col = shade_opaque(o, p);
                touched = true;
            }
            let th = ids[2u * plane + k];
            let l = ids[plane + k];
            // The thin layer over the glass when its triangle is the nearer of the two here.
            let thin_front = th != NONE && l != NONE
                && surface(th, p).view.z < surface(l, p).view.z;
            if (th != NONE && !thin_front) {
                col = mix(col, shade_opaque(th, p), thin_coverage(ids[3u * plane + k]));
                touched = true;
            }
            if (l != NONE) {
                let glass = shade_transparent(l, p);
                col = col * glass.transmit + glass.add;
                touched = true;
            }
            if (thin_front) {
                col = mix(col, shade_opaque(th, p), thin_coverage(ids[3u * plane + k]));
            }
            sum = sum + col;
        }
    }
    if (!touched) {
        out[idx] = raw;
        return;
    }
    let rgb = linear_to_srgb(sum / f32(S * S));
    out[idx] = pack4x8unorm(vec4<f32>(rgb, px.a));
}
