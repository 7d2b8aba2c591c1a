//! Material finishes through the rasterizer (#29): clearcoat, sheen, index of refraction and
//! emission, set on a product's materials, reach the GPU kernels (`scene::materials`) and
//! change the rendered colour the way each layer should — and a plain material renders as
//! before (all of them off).

use image::RgbaImage;
use vto_render::gpu::GpuContext;
use vto_render::product::{Finish, Format, Material, Product, Texture};
use vto_render::raster::{Mesh, RasterVertex, Rasterizer, Scene, Shadow, Transparency};

/// A 64 × 64 square at 50 cm, all of it with the normal `normal` (camera space: −z faces the
/// camera), in material 0, drawn over a mid-grey photo; returns the mean linear-ish RGB
/// (0–255) of its middle.
fn render(material: Material, textures: Vec<Texture>, normal: [f32; 3]) -> [f32; 3] {
    let product = Product {
        format: Format::Glb,
        primitives: Vec::new(),
        materials: vec![material],
        textures,
        meta: Default::default(),
    };
    let (materials, texels) = vto_render::scene::materials(&product);
    let len = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]).sqrt();
    let n = normal.map(|c| c / len);
    let mut mesh = Mesh::default();
    for (c, uv) in [
        ([0.0, 0.0], [0.0, 0.0]),
        ([128.0, 0.0], [1.0, 0.0]),
        ([128.0, 128.0], [1.0, 1.0]),
        ([0.0, 128.0], [0.0, 1.0]),
    ] {
        // Supersampled pixels (2×) and camera-space centimetres: the square spans the ROI.
        let view = [(c[0] - 64.0) / 20.0, (c[1] - 64.0) / 20.0, 50.0];
        mesh.vertices.push(RasterVertex {
            pos: [c[0], c[1], 50.0, 1.0 / 50.0],
            view: [view[0], view[1], view[2], 0.5],
            normal: [n[0], n[1], n[2], 0.0],
            uv: [uv[0], uv[1], 0.0, 0.0],
            color: [1.0; 4],
        });
    }
    mesh.triangles.push([0, 1, 2, 0]);
    mesh.triangles.push([0, 2, 3, 0]);
    let scene = Scene {
        roi: [0, 0, 64, 64],
        ss: 2,
        product: mesh,
        occluders: Vec::new(),
        materials,
        texels,
        lighting: crate::support::studio_light(),
        transparency: Transparency::Clear,
        shadow: Shadow {
            offset: [0.0, 0.0],
            radius: 0.0,
            strength: 0.0,
        },
        near: 1.0,
    };
    let photo = RgbaImage::from_pixel(64, 64, image::Rgba([128, 128, 128, 255]));
    let raster = Rasterizer::new(GpuContext::shared().expect("a wgpu adapter"));
    let (out, _) = raster.render(&photo, &scene).unwrap();
    let mut sum = [0.0f32; 3];
    let mut count = 0.0;
    for y in 16..48 {
        for x in 16..48 {
            let p = out.get_pixel(x, y).0;
            for k in 0..3 {
                sum[k] += f32::from(p[k]);
            }
            count += 1.0;
        }
    }
    sum.map(|s| s / count)
}

fn matte(base: [f32; 3], finish: Finish) -> Material {
    Material {
        base_color: [base[0], base[1], base[2], 1.0],
        metallic: 0.0,
        roughness: 1.0,
        finish,
        ..Material::default()
    }
}

const HEAD_ON: [f32; 3] = [0.0, 0.0, -1.0];
// Tilted up (camera y points down): a smooth surface mirrors the bright ceiling.
const GRAZING: [f32; 3] = [0.0, -0.97, -0.25];

fn luma(c: [f32; 3]) -> f32 {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

#[test]
fn emission_lights_a_black_material_and_its_texture_masks_it() {
    let black = render(matte([0.0; 3], Finish::default()), vec![], HEAD_ON);
    let glowing = Finish {
        emissive: [0.0, 0.6, 1.0],
        ..Finish::default()
    };
    let lit = render(matte([0.0; 3], glowing.clone()), vec![], HEAD_ON);
    assert!(black.iter().all(|&c| c < 60.0), "black: {black:?}");
    assert!(
        lit[2] > 200.0 && lit[1] > 150.0 && lit[0] < black[0] + 5.0,
        "cyan light: {lit:?}"
    );
    // The emissive texture: black on the left half, white on the right.
    let tex = Texture {
        width: 2,
        height: 1,
        rgba: vec![0, 0, 0, 255, 255, 255, 255, 255],
    };
    let textured = Finish {
        emissive_texture: Some(0),
        ..glowing
    };
    let half = render(matte([0.0; 3], textured), vec![tex], HEAD_ON);
    assert!(
        half[2] > black[2] + 40.0 && half[2] < lit[2] - 40.0,
        "half the square glows: {half:?} (none {black:?}, all {lit:?})"
    );
}

#[test]
fn a_clearcoat_reflects_over_a_matte_base() {
    let plain = render(matte([0.05; 3], Finish::default()), vec![], GRAZING);
    let coated = render(
        matte(
            [0.05; 3],
            Finish {
                clearcoat: 1.0,
                clearcoat_roughness: 0.05,
                ..Finish::default()
            },
        ),
        vec![],
        GRAZING,
    );
    assert!(
        luma(coated) > luma(plain) + 8.0,
        "lacquer over black: {coated:?} vs {plain:?}"
    );
}

#[test]
fn sheen_brightens_fabric_at_grazing_angles_more_than_head_on() {
    let velvet = Finish {
        sheen_color: [1.0; 3],
        sheen_roughness: 0.5,
        ..Finish::default()
    };
    let gain = |normal| {
        luma(render(
            matte([0.1, 0.0, 0.0], velvet.clone()),
            vec![],
            normal,
        )) - luma(render(
            matte([0.1, 0.0, 0.0], Finish::default()),
            vec![],
            normal,
        ))
    };
    let (grazing, head_on) = (gain(GRAZING), gain(HEAD_ON));
    assert!(grazing > 10.0, "sheen at grazing angles: +{grazing}");
    assert!(
        grazing > 3.0 * head_on.max(0.5),
        "+{grazing} grazing, +{head_on} head on"
    );
}

#[test]
fn a_higher_index_of_refraction_reflects_more() {
    let shine = |ior| {
        luma(render(
            Material {
                roughness: 0.1,
                ..matte(
                    [0.02; 3],
                    Finish {
                        ior,
                        ..Finish::default()
                    },
                )
            },
            vec![],
            GRAZING,
        ))
    };
    let (glass, diamond) = (shine(1.5), shine(2.4));
    assert!(diamond > glass + 3.0, "ior 2.4: {diamond}, 1.5: {glass}");
}
