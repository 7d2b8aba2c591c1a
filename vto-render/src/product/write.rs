//! Writing products back out: GLB, `.gltf` with an embedded buffer, and OBJ geometry — the
//! inverse of [`load`](super::load), for building test assets and exporting samples.
//!
//! Every mesh becomes one node under a single root node (named and given `extras` by
//! [`GlbRoot`]), with an optional node translation, so files written here exercise the loader's
//! node transforms too. Textures are embedded as PNG. A primitive's second UV set and its
//! vertex colours are written as `TEXCOORD_1` and `COLOR_0` (float `VEC4`), and each texture
//! names the set it reads (`texCoord`); of a material's finish, only emission is written.

use base64::Engine as _;
use serde_json::json;

use super::{AlphaMode, Material, Primitive, Product, Texture};

fn push_aligned(bin: &mut Vec<u8>, bytes: &[u8]) -> (usize, usize) {
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let off = bin.len();
    bin.extend_from_slice(bytes);
    (off, bytes.len())
}

fn f32_bytes<const N: usize>(v: &[[f32; N]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes meshes (each with a node translation) as glTF JSON and the BIN payload.
fn gltf_parts(
    meshes: &[(Primitive, [f32; 3])],
    materials: &[Material],
    textures: &[Texture],
    root: &GlbRoot,
) -> (serde_json::Value, Vec<u8>) {
    let mut bin = Vec::new();
    let (mut views, mut accessors, mut jmeshes, mut nodes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut view = |bin: &mut Vec<u8>, bytes: &[u8], target: Option<u32>| {
        let (off, len) = push_aligned(bin, bytes);
        let mut v = json!({"buffer": 0, "byteOffset": off, "byteLength": len});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        views.push(v);
        views.len() - 1
    };
    for (mi, (p, t)) in meshes.iter().enumerate() {
        let (lo, hi) = {
            let mut lo = [f32::MAX; 3];
            let mut hi = [f32::MIN; 3];
            for q in &p.positions {
                for k in 0..3 {
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
            (lo, hi)
        };
        let n = p.positions.len();
        let pv = view(&mut bin, &f32_bytes(&p.positions), Some(34962));
        accessors.push(json!({"bufferView": pv, "componentType": 5126, "count": n, "type": "VEC3", "min": lo, "max": hi}));
        let nv = view(&mut bin, &f32_bytes(&p.normals), Some(34962));
        accessors
            .push(json!({"bufferView": nv, "componentType": 5126, "count": n, "type": "VEC3"}));
        let tv = view(&mut bin, &f32_bytes(&p.uvs), Some(34962));
        accessors
            .push(json!({"bufferView": tv, "componentType": 5126, "count": n, "type": "VEC2"}));
        let idx: Vec<u8> = p.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let iv = view(&mut bin, &idx, Some(34963));
        accessors.push(json!({"bufferView": iv, "componentType": 5125, "count": p.indices.len(), "type": "SCALAR"}));
        let a0 = accessors.len() - 4;
        let mut attributes = json!({"POSITION": a0, "NORMAL": a0 + 1, "TEXCOORD_0": a0 + 2});
        // The optional attributes, after the indices (the accessors above keep their order).
        if p.uvs1.len() == n {
            let v = view(&mut bin, &f32_bytes(&p.uvs1), Some(34962));
            accessors
                .push(json!({"bufferView": v, "componentType": 5126, "count": n, "type": "VEC2"}));
            attributes["TEXCOORD_1"] = json!(accessors.len() - 1);
        }
        if p.colors.len() == n {
            let v = view(&mut bin, &f32_bytes(&p.colors), Some(34962));
            accessors
                .push(json!({"bufferView": v, "componentType": 5126, "count": n, "type": "VEC4"}));
            attributes["COLOR_0"] = json!(accessors.len() - 1);
        }
        jmeshes.push(json!({"primitives": [{
            "attributes": attributes,
            "indices": a0 + 3, "material": p.material, "mode": 4}]}));
        let mut node = json!({"mesh": mi});
        if *t != [0.0; 3] {
            node["translation"] = json!(t);
        }
        nodes.push(node);
    }
    let mut images = Vec::new();
    for t in textures {
        let mut png = Vec::new();
        let img = image::RgbaImage::from_raw(t.width, t.height, t.rgba.clone())
            .unwrap_or_else(|| image::RgbaImage::new(1, 1));
        let _ = img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png);
        let v = view(&mut bin, &png, None);
        images.push(json!({"bufferView": v, "mimeType": "image/png"}));
    }
    let jmats: Vec<serde_json::Value> = materials
        .iter()
        .map(|m| {
            let mut pbr = json!({
                "baseColorFactor": m.base_color,
                "metallicFactor": m.metallic,
                "roughnessFactor": m.roughness,
            });
            if let Some(t) = m.base_color_texture {
                pbr["baseColorTexture"] = json!({"index": t, "texCoord": m.base_color_uv});
            }
            let mut j =
                json!({"name": m.name, "pbrMetallicRoughness": pbr, "doubleSided": m.double_sided});
            write_emission(&mut j, m);
            match m.alpha_mode {
                AlphaMode::Opaque => {}
                AlphaMode::Mask => {
                    j["alphaMode"] = json!("MASK");
                    j["alphaCutoff"] = json!(m.alpha_cutoff);
                }
                AlphaMode::Blend => j["alphaMode"] = json!("BLEND"),
            }
            j
        })
        .collect();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let mut doc = json!({
        "asset": {"version": "2.0", "generator": "vto-render sample frames"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": root.name, "children": (1..=nodes.len()).collect::<Vec<_>>()}],
        "meshes": jmeshes,
        "accessors": accessors,
        "bufferViews": views,
        "materials": &jmats,
        "buffers": [{"byteLength": bin.len()}],
    });
    if !root.extras.is_null() {
        doc["nodes"][0]["extras"] = root.extras.clone();
    }
    if jmats.iter().any(|m| m["extensions"].is_object()) {
        doc["extensionsUsed"] = json!(["KHR_materials_emissive_strength"]);
    }
    if let Some(m) = root.matrix {
        doc["nodes"][0]["matrix"] = json!(m);
    }
    if let Some(arr) = doc["nodes"].as_array_mut() {
        arr.extend(nodes);
    }
    if !images.is_empty() {
        doc["images"] = json!(images);
        doc["samplers"] = json!([{"magFilter": 9729, "minFilter": 9729}]);
        doc["textures"] = json!((0..textures.len())
            .map(|i| json!({"source": i, "sampler": 0}))
            .collect::<Vec<_>>());
    }
    (doc, bin)
}

/// A material's emission: `emissiveFactor` (over 1: scaled into 0–1, the rest as
/// `KHR_materials_emissive_strength`) and `emissiveTexture`.
fn write_emission(j: &mut serde_json::Value, m: &Material) {
    let e = m.finish.emissive;
    let strength = e.iter().copied().fold(1.0f32, f32::max);
    if e.iter().all(|&c| c <= 0.0) {
        return;
    }
    j["emissiveFactor"] = json!(e.map(|c| c / strength));
    if strength > 1.0 {
        j["extensions"] =
            json!({"KHR_materials_emissive_strength": {"emissiveStrength": strength}});
    }
    if let Some(t) = m.finish.emissive_texture {
        j["emissiveTexture"] = json!({"index": t, "texCoord": m.finish.emissive_uv});
    }
}

/// The root node of a written file: its name and extras.
#[derive(Debug, Clone)]
pub struct GlbRoot {
    /// The node name.
    pub name: String,
    /// The node's `extras` (`null` for none).
    pub extras: serde_json::Value,
    /// The node's `matrix` (column-major), wrapping the whole scene in one transform (the
    /// same product re-exported in another convention); `None`: none.
    pub matrix: Option<[f32; 16]>,
}

impl Default for GlbRoot {
    fn default() -> Self {
        GlbRoot {
            name: "glasses".into(),
            extras: serde_json::Value::Null,
            matrix: None,
        }
    }
}

/// Writes a GLB file.
pub fn write_glb(
    meshes: &[(Primitive, [f32; 3])],
    materials: &[Material],
    textures: &[Texture],
) -> Vec<u8> {
    write_glb_with_root(meshes, materials, textures, &GlbRoot::default())
}

/// Writes a GLB file whose root node has the given name and extras.
pub fn write_glb_with_root(
    meshes: &[(Primitive, [f32; 3])],
    materials: &[Material],
    textures: &[Texture],
    root: &GlbRoot,
) -> Vec<u8> {
    let (doc, bin) = gltf_parts(meshes, materials, textures, root);
    let mut json_bytes = serde_json::to_vec(&doc).unwrap_or_default();
    while json_bytes.len() % 4 != 0 {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((json_bytes.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(json_bytes);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(bin);
    out
}

/// Writes a `.gltf` JSON file with the buffer embedded as a `data:` URI.
pub fn write_gltf_embedded(
    meshes: &[(Primitive, [f32; 3])],
    materials: &[Material],
    textures: &[Texture],
) -> Vec<u8> {
    let (mut doc, bin) = gltf_parts(meshes, materials, textures, &GlbRoot::default());
    doc["buffers"][0]["uri"] = json!(format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    ));
    serde_json::to_vec_pretty(&doc).unwrap_or_default()
}

/// Writes a product's geometry as OBJ text (materials are not written).
pub fn write_obj(product: &Product) -> String {
    let mut s = String::new();
    let mut base = 1usize;
    for p in &product.primitives {
        for v in &p.positions {
            s.push_str(&format!("v {} {} {}\n", v[0], v[1], v[2]));
        }
        for n in &p.normals {
            s.push_str(&format!("vn {} {} {}\n", n[0], n[1], n[2]));
        }
        for t in p.indices.chunks_exact(3) {
            let [a, b, c] = [
                t[0] as usize + base,
                t[1] as usize + base,
                t[2] as usize + base,
            ];
            s.push_str(&format!("f {a}//{a} {b}//{b} {c}//{c}\n"));
        }
        base += p.positions.len();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::{load, Finish, Format};

    /// A unit quad: UV set 0 runs left to right, set 1 right to left; red on the left, green
    /// on the right; a base colour texture on set 0 and an emissive texture on set 1.
    fn quad() -> (Primitive, Material, Vec<Texture>) {
        let prim = Primitive {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            normals: vec![[0.0, 0.0, 1.0]; 4],
            uvs: vec![[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
            uvs1: vec![[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0]],
            colors: vec![
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 0.5],
                [0.0, 1.0, 0.0, 0.5],
                [1.0, 0.0, 0.0, 1.0],
            ],
            indices: vec![0, 1, 2, 0, 2, 3],
            material: 0,
            part: 0,
        };
        let material = Material {
            base_color_texture: Some(0),
            finish: Finish {
                emissive: [0.0, 0.0, 2.0],
                emissive_texture: Some(1),
                emissive_uv: 1,
                ..Finish::default()
            },
            ..Material::default()
        };
        let texture = |v: u8| Texture {
            width: 2,
            height: 1,
            rgba: vec![0, 0, 0, 255, v, v, v, 255],
        };
        (prim, material, vec![texture(128), texture(255)])
    }

    #[test]
    fn a_second_uv_set_colours_and_emission_round_trip() {
        let (prim, material, textures) = quad();
        let glb = write_glb(&[(prim.clone(), [0.0; 3])], &[material], &textures);
        let p = load(&glb).unwrap();
        assert_eq!(p.format, Format::Glb);
        let q = &p.primitives[0];
        assert_eq!(
            (&q.uvs, &q.uvs1, &q.colors),
            (&prim.uvs, &prim.uvs1, &prim.colors)
        );
        let m = &p.materials[0];
        assert_eq!((m.base_color_uv, m.finish.emissive_uv), (0, 1));
        assert_eq!(
            m.finish.emissive,
            [0.0, 0.0, 2.0],
            "strength 2 written as the extension"
        );
        assert!(m.finish.emissive_texture.is_some() && m.base_color_texture.is_some());
        assert!(
            p.meta.notes.iter().all(|n| !n.contains("not rendered")),
            "{:?}",
            p.meta.notes
        );
    }

    #[test]
    fn a_texture_on_texcoord_2_reads_it() {
        // The quad's second set stored as TEXCOORD_2, the emissive texture naming it.
        let (prim, material, textures) = quad();
        let file = write_gltf_embedded(&[(prim.clone(), [0.0; 3])], &[material], &textures);
        let mut doc: serde_json::Value = serde_json::from_slice(&file).unwrap();
        let attributes = &mut doc["meshes"][0]["primitives"][0]["attributes"];
        attributes["TEXCOORD_2"] = attributes["TEXCOORD_1"].take();
        attributes.as_object_mut().unwrap().remove("TEXCOORD_1");
        doc["materials"][0]["emissiveTexture"]["texCoord"] = json!(2);
        let p = load(&serde_json::to_vec(&doc).unwrap()).unwrap();
        assert_eq!(p.primitives[0].uvs1, prim.uvs1);
        assert_eq!(p.materials[0].finish.emissive_uv, 1);
    }

    #[test]
    fn an_emissive_texture_under_its_own_transform_gets_its_own_set() {
        // Both textures on TEXCOORD_0, the emissive one shifted by half a texture.
        let (mut prim, mut material, textures) = quad();
        prim.uvs1.clear();
        material.finish.emissive_uv = 0;
        let file = write_gltf_embedded(&[(prim.clone(), [0.0; 3])], &[material], &textures);
        let mut doc: serde_json::Value = serde_json::from_slice(&file).unwrap();
        doc["materials"][0]["emissiveTexture"]["extensions"] =
            json!({"KHR_texture_transform": {"offset": [0.5, 0.0]}});
        let p = load(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let q = &p.primitives[0];
        assert_eq!(q.uvs, prim.uvs, "the base colour's set is untouched");
        let shifted: Vec<[f32; 2]> = prim.uvs.iter().map(|t| [t[0] + 0.5, t[1]]).collect();
        assert_eq!(q.uvs1, shifted);
        assert_eq!(p.materials[0].finish.emissive_uv, 1);
    }
}
