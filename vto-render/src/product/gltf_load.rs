//! glTF 2.0 through the `gltf` crate's document model, with our own buffer resolution (GLB
//! `BIN` chunk or `data:` URIs; external files are refused) and our own bounds checks on every
//! accessor before it is read, so a lying file is an error, not a panic.

use base64::Engine as _;
use gltf::mesh::Mode;
use serde_json::Value;

use super::material::{self as mat, UvSets};
use super::vertices::{self, Placement};
use super::{
    compute_normals, draco, meshopt, texture, AlphaMode, Format, Limits, Material, Part, Primitive,
    Product, ProductError, ProductMeta, Texture,
};

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// Decodes a `data:` URI's payload (base64 only), checking its decoded size first.
fn data_uri(uri: &str, limits: &Limits) -> Result<Vec<u8>, ProductError> {
    let Some(rest) = uri.strip_prefix("data:") else {
        return Err(ProductError::Unsupported(format!(
            "external resource {uri:?}: embed buffers and images (GLB or data: URIs)"
        )));
    };
    let (meta, payload) = rest
        .split_once(',')
        .ok_or_else(|| malformed("data URI without a comma"))?;
    if !meta.ends_with(";base64") {
        return Err(ProductError::Unsupported(
            "data URI that is not base64".into(),
        ));
    }
    let decoded_len = payload.len() / 4 * 3;
    if decoded_len > limits.max_file_bytes {
        return Err(ProductError::TooLarge {
            what: "embedded buffer bytes",
            got: decoded_len as u64,
            limit: limits.max_file_bytes as u64,
        });
    }
    base64::engine::general_purpose::STANDARD
        .decode(payload.trim())
        .map_err(|e| malformed(format!("bad base64 in data URI: {e}")))
}

fn mat_mul(a: &[[f32; 4]; 4], b: &[[f32; 4]; 4]) -> [[f32; 4]; 4] {
    // Column-major: (a·b)[c][r] = Σ_k a[k][r] · b[c][k].
    let mut o = [[0.0f32; 4]; 4];
    for c in 0..4 {
        for r in 0..4 {
            o[c][r] = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    o
}

const IDENTITY: [[f32; 4]; 4] = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// A mesh placed by a node: the mesh, the node's world matrix, the node and the nodes above it.
struct Instance {
    mesh: usize,
    matrix: [[f32; 4]; 4],
    node: usize,
    ancestors: Vec<usize>,
}

/// A node's name for the metadata: its own, else its mesh's, else `node N`.
fn node_name(doc: &gltf::Document, index: usize) -> String {
    let node = doc.nodes().nth(index);
    node.as_ref()
        .and_then(|n| n.name().or_else(|| n.mesh().and_then(|m| m.name())))
        .map_or_else(|| format!("node {index}"), str::to_string)
}

/// Walks `node`'s subtree; `ancestors` holds the nodes above it (a node among its own
/// ancestors is a cycle, reported as such rather than as the depth limit it would reach).
fn collect_instances(
    node: gltf::Node<'_>,
    parent: &[[f32; 4]; 4],
    ancestors: &mut Vec<usize>,
    limits: &Limits,
    out: &mut Vec<Instance>,
    visits: &mut usize,
) -> Result<(), ProductError> {
    // Every visit counts, with a mesh or without: a node DAG (a child shared by two parents,
    // level after level) multiplies the paths without a single mesh instance.
    *visits += 1;
    if *visits > limits.max_node_instances {
        return Err(ProductError::TooLarge {
            what: "node instances",
            got: *visits as u64,
            limit: limits.max_node_instances as u64,
        });
    }
    if ancestors.contains(&node.index()) {
        return Err(malformed(format!(
            "node {} is part of a cycle (it is its own ancestor)",
            node.index()
        )));
    }
    let depth = ancestors.len();
    if depth > limits.max_node_depth {
        return Err(ProductError::TooLarge {
            what: "node depth",
            got: depth as u64,
            limit: limits.max_node_depth as u64,
        });
    }
    let m = mat_mul(parent, &node.transform().matrix());
    if m.iter().flatten().any(|v| !v.is_finite()) {
        return Err(malformed("non-finite node transform"));
    }
    if let Some(mesh) = node.mesh() {
        out.push(Instance {
            mesh: mesh.index(),
            matrix: m,
            node: node.index(),
            ancestors: ancestors.clone(),
        });
    }
    ancestors.push(node.index());
    for child in node.children() {
        collect_instances(child, &m, ancestors, limits, out, visits)?;
    }
    ancestors.pop();
    Ok(())
}

fn triangle_indices(mode: Mode, raw: Vec<u32>) -> Option<Vec<u32>> {
    match mode {
        Mode::Triangles => Some(raw.chunks_exact(3).flatten().copied().collect()),
        Mode::TriangleStrip => Some(
            (2..raw.len())
                .flat_map(|i| {
                    if i % 2 == 0 {
                        [raw[i - 2], raw[i - 1], raw[i]]
                    } else {
                        [raw[i - 1], raw[i - 2], raw[i]]
                    }
                })
                .collect(),
        ),
        Mode::TriangleFan => Some(
            (2..raw.len())
                .flat_map(|i| [raw[0], raw[i - 1], raw[i]])
                .collect(),
        ),
        _ => None,
    }
}

pub(super) fn load(bytes: &[u8], limits: &Limits, format: Format) -> Result<Product, ProductError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        load_inner(bytes, limits, format)
    }))
    .unwrap_or_else(|_| Err(malformed("the glTF reader failed on this file")))
}

/// Extensions vto reads when present, required or not: decoders (Draco, meshopt,
/// quantization, WebP, KTX2 / Basis Universal) and the material extensions it renders or converts. Every other
/// extension is ignored with a note when merely used, and refused when required (see
/// `docs/products.md`).
pub const RENDERED_EXTENSIONS: &[&str] = &[
    "KHR_draco_mesh_compression",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
    "KHR_mesh_quantization",
    "EXT_texture_webp",
    "KHR_texture_basisu",
    "KHR_materials_transmission",
    "KHR_materials_pbrSpecularGlossiness",
    "KHR_texture_transform",
];

/// The JSON part of a glTF / GLB file.
fn json_chunk(bytes: &[u8], format: Format) -> Result<&[u8], ProductError> {
    if format != Format::Glb {
        return Ok(bytes);
    }
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    // The header's own length first: the gltf crate subtracts the header's size from it
    // unchecked (an overflow panic under overflow checks, as the fuzz build has).
    let total = word(8).ok_or_else(|| malformed("GLB header is truncated"))?;
    if !(20..=bytes.len()).contains(&total) {
        return Err(malformed(format!(
            "the GLB header gives a length of {total} bytes, the file has {} (a GLB holds at \
             least its 12-byte header and an 8-byte chunk header)",
            bytes.len()
        )));
    }
    let len = word(12).ok_or_else(|| malformed("GLB header is truncated"))?;
    bytes
        .get(20..20usize.saturating_add(len))
        .ok_or_else(|| malformed("GLB JSON chunk is truncated"))
}

/// Refuses a file that requires an extension vto cannot read (one not in
/// [`RENDERED_EXTENSIONS`]).
fn check_required(json: &Value) -> Result<(), ProductError> {
    let required = json["extensionsRequired"].as_array();
    for ext in required.into_iter().flatten().filter_map(|e| e.as_str()) {
        if !RENDERED_EXTENSIONS.contains(&ext) {
            return Err(ProductError::Unsupported(format!(
                "the model requires the glTF extension {ext}, which vto does not render"
            )));
        }
    }
    Ok(())
}

/// The bytes of buffer view `i`: decoded (meshopt) or a slice of its buffer.
fn view_bytes<'a>(
    doc: &gltf::Document,
    decoded: &'a [Option<Vec<u8>>],
    buffers: &'a [Vec<u8>],
    i: usize,
) -> Result<&'a [u8], ProductError> {
    if let Some(Some(d)) = decoded.get(i) {
        return Ok(d);
    }
    let view = doc
        .views()
        .nth(i)
        .ok_or_else(|| malformed(format!("missing buffer view {i}")))?;
    let end = view
        .offset()
        .checked_add(view.length())
        .ok_or_else(|| malformed("buffer view overflows"))?;
    buffers
        .get(view.buffer().index())
        .and_then(|b| b.get(view.offset()..end))
        .ok_or_else(|| malformed(format!("buffer view {i} out of range")))
}

fn load_inner(bytes: &[u8], limits: &Limits, format: Format) -> Result<Product, ProductError> {
    let json: Value = serde_json::from_slice(json_chunk(bytes, format)?).map_err(malformed)?;
    check_required(&json)?;
    let mut meta = ProductMeta::from_gltf(&json);
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).map_err(malformed)?;
    let doc = &gltf.document;
    validate(doc)?;

    // Buffers; a meshopt fallback buffer may hold nothing (its views are decoded instead).
    let mut buffers = Vec::new();
    for b in doc.buffers() {
        let fallback = meshopt::extension(&json["buffers"][b.index()])
            .is_some_and(|e| e["fallback"].as_bool() == Some(true));
        let data = match b.source() {
            gltf::buffer::Source::Uri(uri) => data_uri(uri, limits)?,
            gltf::buffer::Source::Bin
                if fallback && json["buffers"][b.index()]["uri"].is_null() && b.index() > 0 =>
            {
                Vec::new()
            }
            gltf::buffer::Source::Bin => gltf
                .blob
                .clone()
                .ok_or_else(|| malformed("buffer refers to a missing GLB BIN chunk"))?,
        };
        if data.len() < b.length() && !fallback {
            return Err(malformed(format!(
                "buffer {} declares {} bytes but holds {}",
                b.index(),
                b.length(),
                data.len()
            )));
        }
        buffers.push(data);
    }

    // Which meshes, with which transforms.
    let mut instances = Vec::new();
    let roots: Vec<gltf::Node<'_>> = match doc.default_scene().or_else(|| doc.scenes().next()) {
        Some(scene) => scene.nodes().collect(),
        None => {
            let mut is_child = vec![false; doc.nodes().count()];
            for n in doc.nodes() {
                for c in n.children() {
                    is_child[c.index()] = true;
                }
            }
            doc.nodes().filter(|n| !is_child[n.index()]).collect()
        }
    };
    let mut visits = 0;
    for node in roots {
        collect_instances(
            node,
            &IDENTITY,
            &mut Vec::new(),
            limits,
            &mut instances,
            &mut visits,
        )?;
    }

    // Count before reading anything (declared counts; decoded ones are checked again).
    let (mut verts, mut tris) = (0u64, 0u64);
    for Instance {
        mesh: mesh_index, ..
    } in &instances
    {
        let mesh = doc
            .meshes()
            .nth(*mesh_index)
            .ok_or_else(|| malformed("node names a missing mesh"))?;
        for prim in mesh.primitives() {
            let Some(pos) = prim.get(&gltf::Semantic::Positions) else {
                continue;
            };
            verts += pos.count() as u64;
            tris += prim.indices().map_or(pos.count(), |i| i.count()) as u64 / 3;
        }
    }
    check_counts(verts, tris, limits)?;

    // Compressed buffer views (their decoded size is checked before decoding).
    let decoded = meshopt::decode_views(&json, &buffers, limits)?;

    // Materials and the textures they show.
    let materials_json = json["materials"].as_array().map_or(&[][..], Vec::as_slice);
    let mut textures = Vec::new();
    let mut texture_slot: std::collections::HashMap<usize, usize> = Default::default();
    let mut total_px = 0u64;
    // `keep`: a base colour texture, stored in the product (its slot is returned); otherwise
    // the decoded image is only returned (a specular-glossiness texture, reduced to its mean).
    let mut load_texture = |texture: usize,
                            textures: &mut Vec<Texture>,
                            keep: bool|
     -> Result<(Option<usize>, Option<Texture>), ProductError> {
        if let Some(&slot) = texture_slot.get(&texture) {
            return Ok((Some(slot), (!keep).then(|| textures[slot].clone())));
        }
        let image = texture::image_of(&json, texture)?;
        let img = &json["images"][image];
        let encoded: Vec<u8> = if let Some(v) = img["bufferView"].as_u64() {
            view_bytes(doc, &decoded, &buffers, v as usize)?.to_vec()
        } else if let Some(uri) = img["uri"].as_str() {
            data_uri(uri, limits)?
        } else {
            return Err(malformed(format!(
                "image {image} has neither bufferView nor uri"
            )));
        };
        let t = texture::decode(&encoded, limits, &mut total_px)?;
        if keep {
            texture_slot.insert(texture, textures.len());
            textures.push(t);
            Ok((Some(textures.len() - 1), None))
        } else {
            Ok((None, Some(t)))
        }
    };
    let mut materials = Vec::new();
    let mut uv_sets: Vec<UvSets> = Vec::new();
    for (i, m) in materials_json.iter().enumerate() {
        meta.notes.extend(mat::notes(i, m));
        let name = m["name"].as_str().unwrap_or_default().to_string();
        let pbr = &m["pbrMetallicRoughness"];
        let num = |v: &Value, d: f32| v.as_f64().map_or(d, |x| x as f32);
        let mut base_color: [f32; 4] =
            std::array::from_fn(|k| num(&pbr["baseColorFactor"][k], 1.0));
        let mut metallic = num(&pbr["metallicFactor"], 1.0);
        let mut roughness = num(&pbr["roughnessFactor"], 1.0);
        let mut tex = mat::texture_ref(&pbr["baseColorTexture"]);
        if let Some(sg) = mat::spec_gloss(m) {
            let (mut spec, mut gloss) = (sg.specular, sg.glossiness);
            if let Some(t) = sg.texture {
                if let (_, Some(img)) = load_texture(t.texture, &mut textures, false)? {
                    let (s, g) = texture::mean_spec_gloss(&img);
                    spec = std::array::from_fn(|k| spec[k] * s[k]);
                    gloss *= g;
                }
            }
            (base_color, metallic, roughness) = mat::to_metal_rough(sg.diffuse, spec, gloss);
            tex = sg.diffuse_texture;
            meta.notes.push(format!(
                "material {i} {name:?}: KHR_materials_pbrSpecularGlossiness converted to \
                 metal-rough (metallic {metallic:.2}, roughness {roughness:.2})"
            ));
        }
        let base_color_texture = match tex {
            Some(t) => load_texture(t.texture, &mut textures, true)?.0,
            None => None,
        };
        let t = mat::transmission_factor(m);
        let (mut finish, mut glow) = mat::finish(m);
        if t > 0.0 && finish.emissive.iter().any(|&c| c > 0.0) {
            // A lens draws only its tint and reflection: light it gave off would wash it out.
            finish.emissive = [0.0; 3];
            glow = None;
            meta.notes.push(format!(
                "material {i} {name:?}: emission on a transmissive material is not rendered"
            ));
        }
        if let Some(g) = glow {
            finish.emissive_texture = load_texture(g.texture, &mut textures, true)?.0;
        }
        // Each texture reads its own coordinates (a transmissive material shows none).
        let sets = if t > 0.0 {
            UvSets::default()
        } else {
            mat::uv_sets(tex, glow)
        };
        finish.emissive_uv = sets.emissive;
        let alpha_mode = match m["alphaMode"].as_str() {
            Some("MASK") => AlphaMode::Mask,
            Some("BLEND") => AlphaMode::Blend,
            _ => AlphaMode::Opaque,
        };
        let material = if t > 0.0 {
            // A transmissive surface (lens, gem) draws in the transparent layer.
            let through = mat::volume_attenuation(m);
            let tinted = std::array::from_fn(|k| {
                if k < 3 {
                    base_color[k] * through[k]
                } else {
                    base_color[k]
                }
            });
            Material {
                name,
                base_color: mat::transmission_tint(tinted, t),
                base_color_texture: None,
                base_color_uv: 0,
                metallic: 0.0,
                roughness: roughness.clamp(0.0, 1.0),
                alpha_mode: AlphaMode::Blend,
                alpha_cutoff: 0.5,
                double_sided: m["doubleSided"].as_bool().unwrap_or(false),
                finish,
            }
        } else {
            Material {
                name,
                base_color,
                base_color_texture,
                base_color_uv: sets.base,
                metallic: metallic.clamp(0.0, 1.0),
                roughness: roughness.clamp(0.0, 1.0),
                alpha_mode,
                alpha_cutoff: num(&m["alphaCutoff"], 0.5),
                double_sided: m["doubleSided"].as_bool().unwrap_or(false),
                finish,
            }
        };
        uv_sets.push(sets);
        materials.push(material);
    }
    let default_material = materials.len();
    materials.push(Material::default());
    uv_sets.push(UvSets::default());

    // Geometry.
    let mut primitives = Vec::new();
    let (mut verts, mut tris) = (0u64, 0u64);
    meta.parts = instances
        .iter()
        .map(|i| Part {
            name: node_name(doc, i.node),
            path: i.ancestors.iter().map(|&a| node_name(doc, a)).collect(),
        })
        .collect();
    for (part, instance) in instances.iter().enumerate() {
        let (mesh_index, m) = (&instance.mesh, &instance.matrix);
        let Some(mesh) = doc.meshes().nth(*mesh_index) else {
            continue;
        };
        let placement = Placement::new(m);
        for prim in mesh.primitives() {
            if prim.get(&gltf::Semantic::Positions).is_none() {
                continue;
            }
            if !matches!(
                prim.mode(),
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                continue; // points and lines are not drawn
            }
            let material = prim.material().index().unwrap_or(default_material);
            let sets = uv_sets.get(material).copied().unwrap_or_default();
            let prim_json = &json["meshes"][*mesh_index]["primitives"][prim.index()];
            let draco_ext = &prim_json["extensions"][draco::NAME];
            let raw = if draco_ext.is_object() {
                let d = draco::decode(
                    draco_ext,
                    |v| view_bytes(doc, &decoded, &buffers, v).map(<[u8]>::to_vec),
                    limits,
                )?;
                vertices::from_draco(d, &sets)
            } else {
                vertices::from_accessors(&prim, &sets, &decoded, &buffers, &mut meta.notes)?
            };
            let positions = placement.positions(&raw.positions);
            if positions.iter().flatten().any(|v| !v.is_finite()) {
                return Err(malformed("non-finite vertex position"));
            }
            let n = positions.len() as u32;
            let raw_indices = raw.indices.unwrap_or_else(|| (0..n).collect());
            if raw_indices.iter().any(|&i| i >= n) {
                return Err(malformed("index out of range"));
            }
            let Some(mut indices) = triangle_indices(prim.mode(), raw_indices) else {
                continue;
            };
            verts += u64::from(n);
            tris += indices.len() as u64 / 3;
            check_counts(verts, tris, limits)?;
            if placement.flip {
                for t in indices.chunks_exact_mut(3) {
                    t.swap(1, 2);
                }
            }
            let normals = match raw.normals {
                Some(ns) if ns.len() == positions.len() => placement.normals(ns),
                _ => compute_normals(&positions, &indices),
            };
            let [uv0, uv1] = raw.uvs;
            let colors = raw
                .colors
                .filter(|c| c.len() == positions.len())
                .unwrap_or_default();
            primitives.push(Primitive {
                uvs: vertices::uv_set(uv0, &sets, 0, positions.len()),
                uvs1: vertices::uv_set(uv1, &sets, 1, positions.len()),
                colors,
                positions,
                normals,
                indices,
                material,
                part: part as u32,
            });
        }
    }
    if materials.len() > 1 && primitives.iter().all(|p| p.material != default_material) {
        materials.pop();
    }
    Ok(Product {
        format,
        primitives,
        materials,
        textures,
        meta,
    })
}

/// The `gltf` crate's validation, less what vto checks itself: required extensions (see
/// [`check_required`]) and accessors without a buffer view (a Draco primitive's accessors
/// have none; any other is refused when it is read).
///
/// gltf-json 1.4's own checks index with unchecked indices in places (a primitive whose
/// `POSITION` names a missing accessor panicked in `primitive_validate_hook`; found by the
/// `gltf` fuzz target): the attribute indices are checked here first, and a panic inside its
/// validation is still a malformed file, not a crashed request.
fn validate(doc: &gltf::Document) -> Result<(), ProductError> {
    use gltf::json::validation::{Error, Validate};
    let root = doc.as_json();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for accessor in prim.attributes.values() {
                if accessor.value() >= root.accessors.len() {
                    return Err(malformed(format!(
                        "meshes[{m}].primitives[{p}] names accessor {}, but the file has {}",
                        accessor.value(),
                        root.accessors.len()
                    )));
                }
            }
        }
    }
    let mut errors = Vec::new();
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        root.validate(root, gltf::json::Path::new, &mut |path, error| {
            let path = path().to_string();
            let ours = (error == Error::Unsupported && path.starts_with("extensionsRequired"))
                || (error == Error::Missing
                    && path.starts_with("accessors[")
                    && path.ends_with("].bufferView"));
            if !ours {
                errors.push(format!("{path}: {error}"));
            }
        })
    }));
    if checked.is_err() {
        return Err(malformed(
            "invalid glTF (its validation failed on an index)",
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(malformed(format!("invalid glTF: {}", errors.join("; "))))
    }
}

/// Checks vertex and triangle totals against the limits.
fn check_counts(verts: u64, tris: u64, limits: &Limits) -> Result<(), ProductError> {
    if verts > limits.max_vertices as u64 {
        return Err(ProductError::TooLarge {
            what: "vertices",
            got: verts,
            limit: limits.max_vertices as u64,
        });
    }
    if tris > limits.max_triangles as u64 {
        return Err(ProductError::TooLarge {
            what: "triangles",
            got: tris,
            limit: limits.max_triangles as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_cycle_is_named_a_cycle_not_the_depth_limit() {
        // Regression: nodes 0 → 1 → 0 was "node depth is 33, the limit is 32".
        let doc = br#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
            "nodes":[{"children":[1]},{"children":[0]}]}"#;
        let e = load(doc, &Limits::default(), Format::Gltf).unwrap_err();
        assert_eq!(e.code(), "product_malformed", "{e}");
        assert!(e.to_string().contains("node 0 is part of a cycle"), "{e}");
        // A node shared by two parents is not a cycle.
        let shared = br#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
            "nodes":[{"children":[1,2]},{"children":[3]},{"children":[3]},{}]}"#;
        if let Err(e) = load(shared, &Limits::default(), Format::Gltf) {
            assert!(!e.to_string().contains("cycle"), "{e}");
        }
    }

    /// A GLB whose header gives a length under its own size (found by the `obj` fuzz
    /// target: 34 bytes, the length field 0) is refused by its header, before the gltf crate
    /// subtracts the header's size from that length.
    #[test]
    fn a_glb_length_under_its_header_is_named() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fuzz/regressions/obj/product_malformed-glb_length_under_its_header.glb"
        );
        let bytes = std::fs::read(path).expect("the fuzz regression input");
        let e = load(&bytes, &Limits::default(), Format::Glb).unwrap_err();
        assert_eq!(e.code(), "product_malformed", "{e}");
        assert!(e.to_string().contains("length of 0 bytes"), "{e}");
    }
}
