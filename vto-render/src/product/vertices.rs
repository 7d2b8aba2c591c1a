//! One glTF primitive's vertices as a [`Primitive`](super::Primitive) keeps them: read from
//! its accessors (plain, `KHR_mesh_quantization`, or views `EXT_meshopt_compression` decoded)
//! or from its `KHR_draco_mesh_compression` stream, then placed by its node.
//!
//! - Positions and normals: the node's matrix, and its cofactor for the normals (a mirroring
//!   node flips them, and the caller flips the winding).
//! - UV sets: the two `TEXCOORD_n` its material's textures read ([`UvSets`]), each with its
//!   texture's `KHR_texture_transform` applied.
//! - Vertex colours (`COLOR_0`): `VEC3` or `VEC4` of floats, or of unsigned bytes or shorts
//!   normalized to 0–1, as glTF allows; clamped to 0–1, alpha 1 for `VEC3`. Another type is
//!   ignored with a note.

use gltf::accessor::{DataType, Dimensions};

use super::accessor::{read_indices, read_vec};
use super::draco::Decoded;
use super::material::{transform_uv, UvSets, UvSource};
use super::ProductError;

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// One primitive's vertices before its node places them; indices as stored.
pub(super) struct RawGeometry {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Normals, if the primitive has them.
    pub normals: Option<Vec<[f32; 3]>>,
    /// The coordinates of UV set 0 and 1, as stored (transforms not applied yet).
    pub uvs: [Option<Vec<[f32; 2]>>; 2],
    /// Linear RGBA vertex colours, if the primitive has usable ones.
    pub colors: Option<Vec<[f32; 4]>>,
    /// Indices, if the primitive has them.
    pub indices: Option<Vec<u32>>,
}

/// The `TEXCOORD_n` each UV set reads: set 0 `TEXCOORD_0` when no texture names one, set 1
/// none.
fn source_sets(sets: &UvSets) -> [Option<u32>; 2] {
    [
        Some(sets.sources[0].map_or(0, |s| s.set)),
        sets.sources[1].map(|s| s.set),
    ]
}

/// Reads a primitive's vertices from its accessors; a `COLOR_0` of a type glTF does not allow
/// for colours is left out, with a note in `notes`.
pub(super) fn from_accessors(
    prim: &gltf::Primitive<'_>,
    sets: &UvSets,
    views: &[Option<Vec<u8>>],
    buffers: &[Vec<u8>],
    notes: &mut Vec<String>,
) -> Result<RawGeometry, ProductError> {
    let pos = prim
        .get(&gltf::Semantic::Positions)
        .ok_or_else(|| malformed("primitive without POSITION"))?;
    if pos.dimensions() != Dimensions::Vec3 {
        return Err(malformed("POSITION must be VEC3"));
    }
    let count = pos.count();
    let attribute = |semantic: gltf::Semantic| match prim.get(&semantic) {
        Some(a) if a.count() != count => {
            let name = semantic.to_string();
            Err(malformed(format!(
                "{name} count differs from POSITION count"
            )))
        }
        other => Ok(other),
    };
    let positions = read_vec::<3>(&pos, views, buffers)?;
    let normals = match attribute(gltf::Semantic::Normals)? {
        Some(n) => Some(read_vec::<3>(&n, views, buffers)?),
        None => None,
    };
    let mut uvs = [None, None];
    for (slot, set) in source_sets(sets).into_iter().enumerate() {
        let Some(set) = set else { continue };
        if let Some(t) = attribute(gltf::Semantic::TexCoords(set))? {
            uvs[slot] = Some(read_vec::<2>(&t, views, buffers)?);
        }
    }
    let colors = match attribute(gltf::Semantic::Colors(0))? {
        Some(c) => {
            let read = read_colors(&c, views, buffers)?;
            if read.is_none() {
                notes.push(format!(
                    "COLOR_0 of accessor {} is {:?} {:?}{}, not a glTF colour \
                     (float, or normalized unsigned byte or short, VEC3 or VEC4): ignored",
                    c.index(),
                    c.dimensions(),
                    c.data_type(),
                    if c.normalized() { " normalized" } else { "" }
                ));
            }
            read
        }
        None => None,
    };
    let indices = match prim.indices() {
        Some(i) => Some(read_indices(&i, views, buffers)?),
        None => None,
    };
    Ok(RawGeometry {
        positions,
        normals,
        uvs,
        colors,
        indices,
    })
}

/// A `COLOR_0` accessor as linear RGBA in 0–1; `None` when its type is not one glTF allows
/// for colours.
fn read_colors(
    a: &gltf::Accessor<'_>,
    views: &[Option<Vec<u8>>],
    buffers: &[Vec<u8>],
) -> Result<Option<Vec<[f32; 4]>>, ProductError> {
    let allowed = match a.data_type() {
        DataType::F32 => true,
        DataType::U8 | DataType::U16 => a.normalized(),
        _ => false,
    };
    if !allowed {
        return Ok(None);
    }
    let rgba: Vec<[f32; 4]> = match a.dimensions() {
        Dimensions::Vec3 => read_vec::<3>(a, views, buffers)?
            .into_iter()
            .map(|[r, g, b]| [r, g, b, 1.0])
            .collect(),
        Dimensions::Vec4 => read_vec::<4>(a, views, buffers)?,
        _ => return Ok(None),
    };
    Ok(Some(rgba.into_iter().map(|c| c.map(unit)).collect()))
}

/// A colour component clamped to 0–1, a NaN to 0.
fn unit(v: f32) -> f32 {
    if v > 0.0 {
        v.min(1.0)
    } else {
        0.0
    }
}

/// A Draco primitive's decoded vertices, with the UV sets `sets` names.
pub(super) fn from_draco(d: Decoded, sets: &UvSets) -> RawGeometry {
    let mut tex_coords = d.tex_coords;
    let uvs = source_sets(sets).map(|set| {
        let at = tex_coords.iter().position(|(s, _)| Some(*s) == set)?;
        Some(tex_coords.swap_remove(at).1)
    });
    RawGeometry {
        positions: d.positions,
        normals: d.normals,
        uvs,
        colors: d
            .colors
            .map(|c| c.into_iter().map(|c| c.map(unit)).collect()),
        indices: Some(d.indices),
    }
}

/// A node's placement of its mesh's vertices: the matrix (column-major), the cofactor of its
/// upper 3×3 for normals (the inverse transpose up to scale), and whether it mirrors.
pub(super) struct Placement {
    matrix: [[f32; 4]; 4],
    cofactor: [[f32; 3]; 3],
    /// Whether the node mirrors (negative determinant): winding and normals flip.
    pub flip: bool,
}

impl Placement {
    /// The placement of a node whose world matrix is `m`.
    pub fn new(m: &[[f32; 4]; 4]) -> Self {
        let a = |r: usize, c: usize| m[c][r];
        let cofactor = [
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
        let det = a(0, 0) * cofactor[0][0] + a(0, 1) * cofactor[0][1] + a(0, 2) * cofactor[0][2];
        Placement {
            matrix: *m,
            cofactor,
            flip: det < 0.0,
        }
    }

    /// Positions in the asset frame.
    pub fn positions(&self, raw: &[[f32; 3]]) -> Vec<[f32; 3]> {
        let m = &self.matrix;
        raw.iter()
            .map(|p| {
                let w = |r: usize| m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
                [w(0), w(1), w(2)]
            })
            .collect()
    }

    /// Unit normals in the asset frame.
    pub fn normals(&self, raw: Vec<[f32; 3]>) -> Vec<[f32; 3]> {
        let cof = &self.cofactor;
        raw.into_iter()
            .map(|v| {
                let t = [
                    cof[0][0] * v[0] + cof[0][1] * v[1] + cof[0][2] * v[2],
                    cof[1][0] * v[0] + cof[1][1] * v[1] + cof[1][2] * v[2],
                    cof[2][0] * v[0] + cof[2][1] * v[1] + cof[2][2] * v[2],
                ];
                let t = if self.flip { t.map(|x| -x) } else { t };
                crate::math::normalize_or(t.into(), crate::math::Vec3::Z).to_array()
            })
            .collect()
    }
}

/// UV set `slot` of `n` vertices with its texture's transform applied: zeros when the file
/// lacks the coordinates set 0 reads; empty for set 1 when no texture reads it.
pub(super) fn uv_set(
    raw: Option<Vec<[f32; 2]>>,
    sets: &UvSets,
    slot: usize,
    n: usize,
) -> Vec<[f32; 2]> {
    let source: Option<UvSource> = sets.sources[slot];
    if slot == 1 && source.is_none() {
        return Vec::new();
    }
    match (raw, source.and_then(|s| s.transform)) {
        (Some(uvs), Some(tf)) if uvs.len() == n => {
            uvs.into_iter().map(|uv| transform_uv(&tf, uv)).collect()
        }
        (Some(uvs), None) if uvs.len() == n => uvs,
        _ => vec![[0.0, 0.0]; n],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::material::{uv_sets, TexRef};
    use base64::Engine as _;
    use serde_json::json;

    /// Three float colours, and the three vertices they colour.
    const COLOURS: [[f32; 4]; 3] = [
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 0.5, 1.0, 0.25],
        [0.2, 0.4, 0.6, 1.0],
    ];

    /// A one-triangle `.gltf` whose `COLOR_0` is `bytes` as `componentType`, `type` (and
    /// `normalized`), `stride` bytes apart.
    fn triangle(
        component: u32,
        kind: &str,
        normalized: bool,
        stride: usize,
        bytes: &[u8],
    ) -> Vec<u8> {
        let mut bin: Vec<u8> = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        bin.extend_from_slice(bytes);
        let mut colour = json!({"bufferView": 1, "componentType": component, "count": 3,
            "type": kind});
        if normalized {
            colour["normalized"] = json!(true);
        }
        let doc = json!({
            "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [{"mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "COLOR_0": 1}}]}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                "min": [0, 0, 0], "max": [1, 1, 0]}, colour],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                {"buffer": 0, "byteOffset": 36, "byteLength": bytes.len(), "byteStride": stride}],
            "buffers": [{"byteLength": bin.len(), "uri": format!(
                "data:application/octet-stream;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(&bin))}],
        });
        serde_json::to_vec(&doc).unwrap()
    }

    fn loaded_colours(file: &[u8]) -> (Vec<[f32; 4]>, Vec<String>) {
        let p = crate::product::load(file).unwrap();
        (p.primitives[0].colors.clone(), p.meta.notes)
    }

    #[test]
    fn normalized_byte_and_short_colours_read_like_float_ones() {
        let floats: Vec<u8> = COLOURS
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let (want, notes) = loaded_colours(&triangle(5126, "VEC4", false, 16, &floats));
        assert_eq!(want, COLOURS.to_vec());
        assert!(notes.iter().all(|n| !n.contains("COLOR_0")), "{notes:?}");
        // Normalized unsigned bytes, RGBA.
        let bytes: Vec<u8> = COLOURS
            .iter()
            .flatten()
            .map(|x| (x * 255.0).round() as u8)
            .collect();
        let (got, _) = loaded_colours(&triangle(5121, "VEC4", true, 4, &bytes));
        for (g, w) in got.iter().zip(&want) {
            for k in 0..4 {
                assert!(
                    (g[k] - w[k]).abs() <= 0.5 / 255.0 + 1e-6,
                    "u8 {got:?} vs {want:?}"
                );
            }
        }
        // Normalized unsigned shorts, RGB (alpha 1), padded to 8-byte elements.
        let shorts: Vec<u8> = COLOURS
            .iter()
            .flat_map(|c| {
                let mut e: Vec<u8> = c[..3]
                    .iter()
                    .flat_map(|x| ((x * 65535.0).round() as u16).to_le_bytes())
                    .collect();
                e.extend([0, 0]);
                e
            })
            .collect();
        let (got, _) = loaded_colours(&triangle(5123, "VEC3", true, 8, &shorts));
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(&want) {
            for k in 0..3 {
                assert!(
                    (g[k] - w[k]).abs() <= 0.5 / 65535.0 + 1e-7,
                    "u16 {got:?} vs {want:?}"
                );
            }
            assert_eq!(g[3], 1.0, "VEC3 colours are opaque");
        }
    }

    #[test]
    fn a_colour_type_gltf_does_not_allow_is_ignored_with_a_note() {
        // Unnormalized bytes are not a glTF colour (255 would read as 255, not 1).
        let (got, notes) = loaded_colours(&triangle(5121, "VEC4", false, 4, &[255; 12]));
        assert!(got.is_empty(), "{got:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("COLOR_0") && n.contains("ignored")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_mirroring_node_flips_normals_and_is_told() {
        let mut m = [[0.0; 4]; 4];
        m[0][0] = -1.0;
        m[1][1] = 1.0;
        m[2][2] = 1.0;
        m[3] = [1.0, 2.0, 3.0, 1.0];
        let p = Placement::new(&m);
        assert!(p.flip);
        assert_eq!(p.positions(&[[1.0, 1.0, 1.0]]), vec![[0.0, 3.0, 4.0]]);
        // The inverse transpose: x normals mirror, z normals stay.
        assert_eq!(
            p.normals(vec![[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
            vec![[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
        );
    }

    #[test]
    fn each_uv_set_gets_its_own_textures_transform() {
        let shift = |dx: f32| Some([[1.0, 0.0, dx], [0.0, 1.0, 0.0]]);
        let base = TexRef {
            texture: 0,
            set: 0,
            transform: shift(0.5),
        };
        let glow = TexRef {
            texture: 1,
            set: 0,
            transform: shift(0.25),
        };
        let sets = uv_sets(Some(base), Some(glow));
        assert_eq!((sets.base, sets.emissive), (0, 1));
        let raw = || Some(vec![[0.0, 0.0], [1.0, 1.0]]);
        assert_eq!(uv_set(raw(), &sets, 0, 2), vec![[0.5, 0.0], [1.5, 1.0]]);
        assert_eq!(uv_set(raw(), &sets, 1, 2), vec![[0.25, 0.0], [1.25, 1.0]]);
        // One texture: set 1 stays empty; a missing TEXCOORD reads zeros.
        let one = uv_sets(Some(base), None);
        assert!(uv_set(raw(), &one, 1, 2).is_empty());
        assert_eq!(uv_set(None, &one, 0, 2), vec![[0.0, 0.0]; 2]);
    }
}
