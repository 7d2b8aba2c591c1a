//! glTF 2.0 through the `gltf` crate's document model, with our own buffer resolution (GLB
//! `BIN` chunk or `data:` URIs; external files are refused) and our own bounds checks on every
//! accessor before it is read, so a lying file is an error, not a panic.

use base64::Engine as _;
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::Mode;

use super::{
    compute_normals, AlphaMode, Format, Limits, Material, Primitive, Product, ProductError,
    ProductMeta, Texture,
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

fn elem_size(a: &gltf::Accessor<'_>) -> usize {
    let comp = match a.data_type() {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    };
    let n = match a.dimensions() {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 | Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    };
    comp * n
}

/// Checks that an accessor's every element lies inside its view and buffer.
fn check_accessor(a: &gltf::Accessor<'_>, buffers: &[Vec<u8>]) -> Result<(), ProductError> {
    if a.sparse().is_some() {
        return Err(ProductError::Unsupported("sparse accessors".into()));
    }
    let Some(view) = a.view() else {
        return Err(ProductError::Unsupported(
            "accessor without a buffer view".into(),
        ));
    };
    let buf = buffers
        .get(view.buffer().index())
        .ok_or_else(|| malformed("buffer view names a missing buffer"))?;
    let view_end = view
        .offset()
        .checked_add(view.length())
        .ok_or_else(|| malformed("buffer view overflows"))?;
    if view_end > buf.len() {
        return Err(malformed(format!(
            "buffer view {} ends at byte {view_end} of a {}-byte buffer",
            view.index(),
            buf.len()
        )));
    }
    let size = elem_size(a);
    let stride = view.stride().unwrap_or(size);
    if stride < size {
        return Err(malformed("buffer view stride smaller than its elements"));
    }
    if a.count() == 0 {
        return Ok(());
    }
    let last = (a.count() - 1)
        .checked_mul(stride)
        .and_then(|v| v.checked_add(a.offset()))
        .and_then(|v| v.checked_add(size))
        .ok_or_else(|| malformed("accessor overflows"))?;
    if last > view.length() {
        return Err(malformed(format!(
            "accessor {} needs {last} bytes of a {}-byte buffer view",
            a.index(),
            view.length()
        )));
    }
    Ok(())
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

/// Walks `node`'s subtree; `ancestors` holds the nodes above it (a node among its own
/// ancestors is a cycle, reported as such rather than as the depth limit it would reach).
fn collect_instances(
    node: gltf::Node<'_>,
    parent: &[[f32; 4]; 4],
    ancestors: &mut Vec<usize>,
    limits: &Limits,
    out: &mut Vec<(usize, [[f32; 4]; 4])>,
) -> Result<(), ProductError> {
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
        out.push((mesh.index(), m));
        if out.len() > 100_000 {
            return Err(ProductError::TooLarge {
                what: "mesh instances",
                got: out.len() as u64,
                limit: 100_000,
            });
        }
    }
    ancestors.push(node.index());
    for child in node.children() {
        collect_instances(child, &m, ancestors, limits, out)?;
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

/// Extensions that change how geometry or textures are stored: a file that requires one
/// cannot be read without its decoder, which vto does not ship.
pub const REFUSED_EXTENSIONS: &[(&str, &str)] = &[
    ("KHR_draco_mesh_compression", "Draco-compressed geometry"),
    (
        "EXT_meshopt_compression",
        "meshoptimizer-compressed buffers",
    ),
    (
        "KHR_meshopt_compression",
        "meshoptimizer-compressed buffers",
    ),
    ("KHR_texture_basisu", "KTX2 / Basis Universal textures"),
    ("KHR_mesh_quantization", "quantized vertex attributes"),
];

/// Extensions vto reads when present (required or not); every other extension is ignored
/// when merely used, and refused when required (see `docs/products.md`).
pub const RENDERED_EXTENSIONS: &[&str] = &["KHR_materials_transmission"];

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
    let len = word(12).ok_or_else(|| malformed("GLB header is truncated"))?;
    bytes
        .get(20..20usize.saturating_add(len))
        .ok_or_else(|| malformed("GLB JSON chunk is truncated"))
}

/// What the file's JSON says beyond the `gltf` crate's model: required extensions (checked
/// against [`REFUSED_EXTENSIONS`] and [`RENDERED_EXTENSIONS`]), each material's
/// `KHR_materials_transmission` factor and the [`ProductMeta`] (`extras.vto` and names).
fn read_extensions(bytes: &[u8], format: Format) -> Result<(Vec<f32>, ProductMeta), ProductError> {
    let json: serde_json::Value =
        serde_json::from_slice(json_chunk(bytes, format)?).map_err(malformed)?;
    let required = json["extensionsRequired"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for ext in required.iter().filter_map(|e| e.as_str()) {
        if let Some((_, what)) = REFUSED_EXTENSIONS.iter().find(|(n, _)| *n == ext) {
            return Err(ProductError::Unsupported(format!(
                "the model requires the glTF extension {ext} ({what}); export it without \
                 compression"
            )));
        }
        if !RENDERED_EXTENSIONS.contains(&ext) {
            return Err(ProductError::Unsupported(format!(
                "the model requires the glTF extension {ext}, which vto does not render"
            )));
        }
    }
    let transmission = json["materials"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    let t = &m["extensions"]["KHR_materials_transmission"];
                    if t.is_object() {
                        t["transmissionFactor"].as_f64().unwrap_or(0.0) as f32
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((transmission, ProductMeta::from_gltf(&json)))
}

/// The lens tint of a transmissive material: the base colour's hue, its luminance raised to
/// at least [`MIN_LENS_TRANSMITTANCE`] so eyes stay visible through near-black lenses, and the
/// transmission factor as the tint's density (alpha) in the transparent layer.
fn transmission_tint(base: [f32; 4], transmission: f32) -> [f32; 4] {
    let lum = 0.2126 * base[0] + 0.7152 * base[1] + 0.0722 * base[2];
    let rgb = if lum < MIN_LENS_TRANSMITTANCE {
        let k = if lum > 1e-6 {
            MIN_LENS_TRANSMITTANCE / lum
        } else {
            0.0
        };
        if k > 0.0 {
            [base[0] * k, base[1] * k, base[2] * k]
        } else {
            [MIN_LENS_TRANSMITTANCE; 3]
        }
    } else {
        [base[0], base[1], base[2]]
    };
    [
        rgb[0].min(1.0),
        rgb[1].min(1.0),
        rgb[2].min(1.0),
        transmission.clamp(0.0, 1.0),
    ]
}

/// The least luminance a transmissive lens lets through (category-3 sunglasses transmit
/// 8–18 % of visible light).
pub const MIN_LENS_TRANSMITTANCE: f32 = 0.15;

fn load_inner(bytes: &[u8], limits: &Limits, format: Format) -> Result<Product, ProductError> {
    let (transmission, meta) = read_extensions(bytes, format)?;
    let gltf = gltf::Gltf::from_slice(bytes).map_err(malformed)?;
    let doc = &gltf.document;

    // Buffers.
    let mut buffers = Vec::new();
    for b in doc.buffers() {
        let data = match b.source() {
            gltf::buffer::Source::Bin => gltf
                .blob
                .clone()
                .ok_or_else(|| malformed("buffer refers to a missing GLB BIN chunk"))?,
            gltf::buffer::Source::Uri(uri) => data_uri(uri, limits)?,
        };
        if data.len() < b.length() {
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
    for node in roots {
        collect_instances(node, &IDENTITY, &mut Vec::new(), limits, &mut instances)?;
    }

    // Count before reading anything.
    let (mut verts, mut tris) = (0u64, 0u64);
    for (mesh_index, _) in &instances {
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

    // Textures (base colour only), checked by their headers before decoding.
    let mut textures = Vec::new();
    let mut texture_slot = vec![None; doc.textures().count()];
    let mut total_px = 0u64;
    for m in doc.materials() {
        let Some(info) = m.pbr_metallic_roughness().base_color_texture() else {
            continue;
        };
        let tex = info.texture();
        if texture_slot[tex.index()].is_some() {
            continue;
        }
        let encoded: Vec<u8> = match tex.source().source() {
            gltf::image::Source::View { view, .. } => {
                let buf = buffers
                    .get(view.buffer().index())
                    .ok_or_else(|| malformed("image names a missing buffer"))?;
                buf.get(view.offset()..view.offset().saturating_add(view.length()))
                    .ok_or_else(|| malformed("image buffer view out of range"))?
                    .to_vec()
            }
            gltf::image::Source::Uri { uri, .. } => data_uri(uri, limits)?,
        };
        let reader = image::ImageReader::new(std::io::Cursor::new(&encoded))
            .with_guessed_format()
            .map_err(malformed)?;
        let (w, h) = reader
            .into_dimensions()
            .map_err(|e| malformed(format!("texture: {e}")))?;
        if w.max(h) > limits.max_texture_side {
            return Err(ProductError::TooLarge {
                what: "texture side",
                got: u64::from(w.max(h)),
                limit: u64::from(limits.max_texture_side),
            });
        }
        total_px += u64::from(w) * u64::from(h);
        if total_px > limits.max_texture_pixels {
            return Err(ProductError::TooLarge {
                what: "texture pixels",
                got: total_px,
                limit: limits.max_texture_pixels,
            });
        }
        let img = image::load_from_memory(&encoded)
            .map_err(|e| malformed(format!("texture: {e}")))?
            .to_rgba8();
        texture_slot[tex.index()] = Some(textures.len());
        textures.push(Texture {
            width: img.width(),
            height: img.height(),
            rgba: img.into_raw(),
        });
    }

    // Materials; index `len` is glTF's default material.
    let mut materials: Vec<Material> = doc
        .materials()
        .map(|m| {
            let pbr = m.pbr_metallic_roughness();
            let t = m
                .index()
                .and_then(|i| transmission.get(i).copied())
                .unwrap_or(0.0);
            if t > 0.0 {
                // A transmissive surface (lens, gem) draws in the transparent layer.
                return Material {
                    name: m.name().unwrap_or_default().to_string(),
                    base_color: transmission_tint(pbr.base_color_factor(), t),
                    base_color_texture: None,
                    metallic: 0.0,
                    roughness: pbr.roughness_factor().clamp(0.0, 1.0),
                    alpha_mode: AlphaMode::Blend,
                    alpha_cutoff: 0.5,
                    double_sided: m.double_sided(),
                };
            }
            Material {
                name: m.name().unwrap_or_default().to_string(),
                base_color: pbr.base_color_factor(),
                base_color_texture: pbr
                    .base_color_texture()
                    .and_then(|t| texture_slot[t.texture().index()]),
                metallic: pbr.metallic_factor().clamp(0.0, 1.0),
                roughness: pbr.roughness_factor().clamp(0.0, 1.0),
                alpha_mode: match m.alpha_mode() {
                    gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
                    gltf::material::AlphaMode::Mask => AlphaMode::Mask,
                    gltf::material::AlphaMode::Blend => AlphaMode::Blend,
                },
                alpha_cutoff: m.alpha_cutoff().unwrap_or(0.5),
                double_sided: m.double_sided(),
            }
        })
        .collect();
    let default_material = materials.len();
    materials.push(Material::default());

    // Geometry.
    let mut primitives = Vec::new();
    for (mesh_index, m) in &instances {
        let Some(mesh) = doc.meshes().nth(*mesh_index) else {
            continue;
        };
        // Normal matrix: the cofactor of the upper 3×3 (inverse transpose up to scale).
        let a = |r: usize, c: usize| m[c][r];
        let cof = [
            [
                a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1),
                a(1, 2) * a(2, 0) - a(1, 0) * a(2, 2),
                a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0),
            ],
            [
                a(0, 2) * a(2, 1) - a(0, 1) * a(2, 2),
                a(0, 0) * a(2, 2) - a(0, 2) * a(2, 0),
                a(0, 1) * a(2, 0) - a(0, 0) * a(2, 1),
            ],
            [
                a(0, 1) * a(1, 2) - a(0, 2) * a(1, 1),
                a(0, 2) * a(1, 0) - a(0, 0) * a(1, 2),
                a(0, 0) * a(1, 1) - a(0, 1) * a(1, 0),
            ],
        ];
        let det = a(0, 0) * cof[0][0] + a(0, 1) * cof[0][1] + a(0, 2) * cof[0][2];
        let flip = det < 0.0;
        for prim in mesh.primitives() {
            let Some(pos_acc) = prim.get(&gltf::Semantic::Positions) else {
                continue;
            };
            if pos_acc.data_type() != DataType::F32 || pos_acc.dimensions() != Dimensions::Vec3 {
                return Err(malformed("POSITION must be float VEC3"));
            }
            check_accessor(&pos_acc, &buffers)?;
            if let Some(n) = prim.get(&gltf::Semantic::Normals) {
                check_accessor(&n, &buffers)?;
                if n.count() != pos_acc.count() {
                    return Err(malformed("NORMAL count differs from POSITION count"));
                }
            }
            if let Some(t) = prim.get(&gltf::Semantic::TexCoords(0)) {
                check_accessor(&t, &buffers)?;
                if t.count() != pos_acc.count() {
                    return Err(malformed("TEXCOORD_0 count differs from POSITION count"));
                }
            }
            if let Some(i) = prim.indices() {
                check_accessor(&i, &buffers)?;
            }
            let reader = prim.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
            let positions: Vec<[f32; 3]> = reader
                .read_positions()
                .ok_or_else(|| malformed("unreadable POSITION"))?
                .map(|p| {
                    let w = |r: usize| m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
                    [w(0), w(1), w(2)]
                })
                .collect();
            if positions.iter().flatten().any(|v| !v.is_finite()) {
                return Err(malformed("non-finite vertex position"));
            }
            let n = positions.len() as u32;
            let raw: Vec<u32> = match reader.read_indices() {
                Some(i) => i.into_u32().collect(),
                None => (0..n).collect(),
            };
            if raw.iter().any(|&i| i >= n) {
                return Err(malformed("index out of range"));
            }
            let Some(mut indices) = triangle_indices(prim.mode(), raw) else {
                continue; // points and lines are not drawn
            };
            if flip {
                for t in indices.chunks_exact_mut(3) {
                    t.swap(1, 2);
                }
            }
            let normals = match reader.read_normals() {
                Some(ns) => ns
                    .map(|v| {
                        let t = [
                            cof[0][0] * v[0] + cof[0][1] * v[1] + cof[0][2] * v[2],
                            cof[1][0] * v[0] + cof[1][1] * v[1] + cof[1][2] * v[2],
                            cof[2][0] * v[0] + cof[2][1] * v[1] + cof[2][2] * v[2],
                        ];
                        let t = if flip { t.map(|x| -x) } else { t };
                        crate::math::normalize_or(t.into(), crate::math::Vec3::Z).to_array()
                    })
                    .collect(),
                None => compute_normals(&positions, &indices),
            };
            let uvs = match reader.read_tex_coords(0) {
                Some(t) => t.into_f32().collect(),
                None => vec![[0.0, 0.0]; positions.len()],
            };
            primitives.push(Primitive {
                positions,
                normals,
                uvs,
                indices,
                material: prim.material().index().unwrap_or(default_material),
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
}
