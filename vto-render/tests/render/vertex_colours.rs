//! Vertex colours and UV sets through the loader and the kernels (#29): a quad written as GLB
//! (`product::write`), loaded back (`product::load`), placed with `scene::CameraMesh` and
//! rendered by the real raster kernels shows its `COLOR_0` multiplied into a white material
//! (its alpha cutting out a MASK surface and thinning a BLEND tint), and an emissive texture on `TEXCOORD_1` glows where set 1 maps it (not where set 0 would);
//! the quantized and meshopt re-encodings (normalized-byte colours) load like the float file.
//! Needs only a GPU (no models, no photos).

use image::{Rgba, RgbaImage};
use vto_render::gpu::GpuContext;
use vto_render::math::Vec3;
use vto_render::product::{self, write::write_glb, Finish, Material, Primitive, Product, Texture};
use vto_render::raster::{Lighting, Rasterizer};
use vto_render::scene::camera::PhotoCamera;
use vto_render::scene::SceneBuilder;

/// The photo's side, in pixels.
const SIDE: u32 = 64;
/// Pixels per centimetre at the quad.
const PX_PER_CM: f32 = 20.0;
/// The quad's half side (cm): 24 px either side of the photo's centre.
const HALF: f32 = 1.2;

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

/// A quad facing the camera, corners left-bottom, right-bottom, right-top, left-top (asset
/// frame: +y up, +z towards the camera). UV set 0 runs left to right (u) and top to bottom
/// (v); UV set 1 runs right to left.
fn quad() -> Primitive {
    Primitive {
        positions: vec![
            [-HALF, -HALF, 0.0],
            [HALF, -HALF, 0.0],
            [HALF, HALF, 0.0],
            [-HALF, HALF, 0.0],
        ],
        normals: vec![[0.0, 0.0, 1.0]; 4],
        uvs: vec![[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
        uvs1: vec![[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0]],
        colors: Vec::new(),
        indices: vec![0, 1, 2, 0, 2, 3],
        material: 0,
        part: 0,
    }
}

/// A white, fully rough dielectric.
fn matte_white() -> Material {
    Material {
        metallic: 0.0,
        roughness: 1.0,
        ..Material::default()
    }
}

/// `prim` and `material` written as GLB and loaded back.
fn through_glb(prim: Primitive, material: Material, textures: &[Texture]) -> Product {
    let glb = write_glb(&[(prim, [0.0; 3])], &[material], textures);
    product::load(&glb).expect("the written quad loads")
}

/// `p` rendered over a black photo, facing the camera, lit by an ambient light of `ambient`
/// only (no key light): what each pixel shows is the surface's own colour × the ambient.
fn render(p: &Product, ambient: f32) -> RgbaImage {
    let photo = RgbaImage::from_pixel(SIDE, SIDE, Rgba([0, 0, 0, 255]));
    let camera = PhotoCamera::new(SIDE, SIDE);
    let depth = camera.focal / PX_PER_CM;
    let mut sb = SceneBuilder::new(camera, SIDE, SIDE, p)
        .lighting(Lighting {
            ambient: [ambient; 3],
            key_dir: [0.0, 0.0, -1.0],
            key_color: [0.0; 3],
        })
        .supersampling(2);
    sb.product.push_product(p, |q, n| {
        (
            Vec3::new(q.x, -q.y, depth - q.z),
            Vec3::new(n.x, -n.y, -n.z),
        )
    });
    let scene = sb.build().expect("a scene");
    let raster = Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"));
    raster.render(&photo, &scene).expect("render").0
}

/// The pixel at `(x, y)` as RGB 0–255.
fn rgb(img: &RgbaImage, x: u32, y: u32) -> [i32; 3] {
    let p = img.get_pixel(x, y).0;
    [i32::from(p[0]), i32::from(p[1]), i32::from(p[2])]
}

#[test]
fn vertex_colours_tint_a_white_material() {
    // Red down the left edge, green down the right.
    let mut prim = quad();
    prim.colors = vec![RED, GREEN, GREEN, RED];
    let p = through_glb(prim, matte_white(), &[]);
    assert_eq!(p.primitives[0].colors, vec![RED, GREEN, GREEN, RED]);
    let img = render(&p, 1.0);
    let (left, mid, right) = (rgb(&img, 12, 32), rgb(&img, 32, 32), rgb(&img, 52, 32));
    eprintln!("left {left:?}, middle {mid:?}, right {right:?}");
    assert!(left[0] > 200 && left[1] < 100, "left is red: {left:?}");
    assert!(
        right[1] > 200 && right[0] < 100,
        "right is green: {right:?}"
    );
    // Between them, both, interpolated: the middle is neither red nor green.
    assert!(
        (mid[0] - mid[1]).abs() < 25 && mid[0] > 100,
        "middle is their mix: {mid:?}"
    );
    // The same quad without colours is white (the multiply is by white, not by black).
    let plain = render(&through_glb(quad(), matte_white(), &[]), 1.0);
    let white = rgb(&plain, 12, 32);
    assert!(white.iter().all(|&c| c > 200), "white: {white:?}");
}

/// The quad with white vertex colours, alpha 1 down its left edge and 0 down its right.
fn opaque_left_clear_right() -> Primitive {
    let mut prim = quad();
    prim.colors = vec![
        [1.0; 4],
        [1.0, 1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 0.0],
        [1.0; 4],
    ];
    prim
}

#[test]
fn vertex_alpha_thins_a_transparent_tint() {
    // A dark tinted glass, opaque tint on the left, none on the right (alpha 0 there).
    let glass = Material {
        base_color: [0.1, 0.1, 0.1, 0.9],
        alpha_mode: product::AlphaMode::Blend,
        ..matte_white()
    };
    let prim = opaque_left_clear_right();
    let p = through_glb(prim, glass, &[]);
    let photo = RgbaImage::from_pixel(SIDE, SIDE, Rgba([200, 200, 200, 255]));
    let camera = PhotoCamera::new(SIDE, SIDE);
    let depth = camera.focal / PX_PER_CM;
    let mut sb = SceneBuilder::new(camera, SIDE, SIDE, &p)
        .lighting(Lighting {
            ambient: [1.0; 3],
            key_dir: [0.0, 0.0, -1.0],
            key_color: [0.0; 3],
        })
        .transparency(vto_render::raster::Transparency::Material);
    sb.product.push_product(&p, |q, n| {
        (
            Vec3::new(q.x, -q.y, depth - q.z),
            Vec3::new(n.x, -n.y, -n.z),
        )
    });
    let raster = Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"));
    let img = raster.render(&photo, &sb.build().unwrap()).unwrap().0;
    let (left, right) = (rgb(&img, 10, 32), rgb(&img, 54, 32));
    eprintln!("tinted {left:?}, clear {right:?}");
    assert!(
        left[0] + 60 < right[0],
        "alpha 1 tints, alpha 0 does not: {left:?} vs {right:?}"
    );
}

#[test]
fn vertex_alpha_cuts_out_a_masked_surface() {
    // Alpha 1 down the left edge, 0 down the right: the MASK cut-off (0.5) falls mid-quad.
    let masked = Material {
        alpha_mode: product::AlphaMode::Mask,
        alpha_cutoff: 0.5,
        ..matte_white()
    };
    let prim = opaque_left_clear_right();
    let img = render(&through_glb(prim, masked, &[]), 1.0);
    let (left, right) = (rgb(&img, 20, 32), rgb(&img, 44, 32));
    eprintln!("kept {left:?}, cut {right:?}");
    assert!(left.iter().all(|&c| c > 200), "alpha 1 is drawn: {left:?}");
    assert!(
        right.iter().all(|&c| c < 10),
        "alpha 0 shows the black photo: {right:?}"
    );
}

#[test]
fn an_emissive_texture_on_texcoord_1_glows_where_set_1_maps_it() {
    // Base colour: white, under a texture dark in its top row and white in its bottom one,
    // read with set 0. Emission: blue, under a texture black in its left two columns and
    // white in its right two, read with set 1 — which runs right to left, so the quad glows
    // on its left half (set 0 would make it glow on the right).
    let base = Texture {
        width: 1,
        height: 2,
        rgba: vec![40, 40, 40, 255, 255, 255, 255, 255],
    };
    let glow = Texture {
        width: 4,
        height: 1,
        rgba: [[0, 0, 0, 255], [0, 0, 0, 255], [255; 4], [255; 4]].concat(),
    };
    let material = Material {
        base_color_texture: Some(0),
        finish: Finish {
            emissive: [0.0, 0.0, 1.0],
            emissive_texture: Some(1),
            emissive_uv: 1,
            ..Finish::default()
        },
        ..matte_white()
    };
    let p = through_glb(quad(), material, &[base, glow]);
    let m = &p.materials[0];
    assert_eq!((m.base_color_uv, m.finish.emissive_uv), (0, 1));
    assert!(
        p.meta.notes.iter().all(|n| !n.contains("emissive")),
        "{:?}",
        p.meta.notes
    );
    let img = render(&p, 0.3);
    // Set 1 is white at x = 20 and black at x = 44 (each between two texel centres of one
    // colour); set 0's dark row is at y = 20, its white row at y = 44.
    let [lt, lb, rt, rb] = [(20, 20), (20, 44), (44, 20), (44, 44)].map(|(x, y)| rgb(&img, x, y));
    eprintln!("left top {lt:?}, left bottom {lb:?}, right top {rt:?}, right bottom {rb:?}");
    for left in [lt, lb] {
        assert!(left[2] > left[0] + 80, "the left half glows blue: {left:?}");
    }
    for right in [rt, rb] {
        assert!(
            (right[2] - right[0]).abs() < 12,
            "the right half does not glow: {right:?}"
        );
    }
    // The base colour texture, read with set 0: the top row is dark, the bottom one white.
    assert!(rt[0] + 60 < rb[0], "top {rt:?}, bottom {rb:?}");
}

#[test]
fn quantized_and_meshopt_colours_load_like_the_float_ones() {
    use crate::support::gltf_encode::{reencode, Encoding};
    let mut prim = quad();
    prim.colors = vec![RED, [0.2, 0.4, 0.6, 0.8], GREEN, [0.0, 0.0, 1.0, 0.5]];
    // An emissive texture on TEXCOORD_1, so the loader reads it (as set 0: the only texture
    // reads it).
    let glowing = Material {
        finish: Finish {
            emissive: [0.0, 0.0, 1.0],
            emissive_texture: Some(0),
            emissive_uv: 1,
            ..Finish::default()
        },
        ..matte_white()
    };
    let glow = Texture {
        width: 1,
        height: 1,
        rgba: vec![255; 4],
    };
    let glb = write_glb(&[(prim, [0.0; 3])], &[glowing], &[glow]);
    let float = product::load(&glb).unwrap();
    let want = &float.primitives[0];
    assert_eq!(want.uvs, quad().uvs1);
    for encoding in [Encoding::Quantized, Encoding::Meshopt] {
        let p = product::load(&reencode(&glb, encoding))
            .unwrap_or_else(|e| panic!("{encoding:?}: {e}"));
        let got = &p.primitives[0];
        assert_eq!(got.colors.len(), 4, "{encoding:?}");
        for (g, w) in got.colors.iter().zip(&want.colors) {
            for k in 0..4 {
                assert!(
                    (g[k] - w[k]).abs() <= 0.5 / 255.0 + 1e-6,
                    "{encoding:?}: {:?} vs {:?}",
                    got.colors,
                    want.colors
                );
            }
        }
        assert_eq!(got.uvs, want.uvs, "{encoding:?}: TEXCOORD_1");
    }
}
