//! `KHR_draco_mesh_compression`: a primitive whose attributes and indices are one Draco
//! stream in a buffer view, decoded with the pure-Rust `draco-core` crate. The decoder is given
//! our vertex and triangle limits as its own ceilings, so it refuses a stream that would expand
//! past them while decoding, and the counts are checked again on what it returns. Positions,
//! normals, every `TEXCOORD_n` and `COLOR_0` are read.

use draco_core::{DataType, DecodeLimits, DecoderBuffer, Mesh, MeshDecoder};
use serde_json::Value;

use super::{Limits, ProductError};

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// The extension's name.
pub(super) const NAME: &str = "KHR_draco_mesh_compression";

/// A decoded Draco primitive: one entry per point, triangle-list indices.
#[derive(Debug, Default)]
pub(super) struct Decoded {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Normals, if the stream has them.
    pub normals: Option<Vec<[f32; 3]>>,
    /// `TEXCOORD_n` sets by `n`.
    pub tex_coords: Vec<(u32, Vec<[f32; 2]>)>,
    /// `COLOR_0` as RGBA (alpha 1 when the stream has three components), if the stream has
    /// it; normalized integers already scaled to 0–1.
    pub colors: Option<Vec<[f32; 4]>>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

/// Decodes the Draco stream of a primitive whose extension object is `ext`.
pub(super) fn decode(
    ext: &Value,
    view_bytes: impl Fn(usize) -> Result<Vec<u8>, ProductError>,
    limits: &Limits,
) -> Result<Decoded, ProductError> {
    let view = ext["bufferView"]
        .as_u64()
        .ok_or_else(|| malformed("Draco extension without a bufferView"))?;
    let bytes = view_bytes(view as usize)?;
    let mut buffer = DecoderBuffer::new(&bytes).with_limits(
        DecodeLimits::default()
            .with_max_points(limits.max_vertices as u64)
            .with_max_faces(limits.max_triangles as u64)
            .with_max_decoded_bytes(limits.max_vertices as u64 * 256),
    );
    let mut mesh = Mesh::new();
    MeshDecoder::new()
        .decode(&mut buffer, &mut mesh)
        .map_err(|e| malformed(format!("Draco stream: {e}")))?;
    let points = mesh.num_points();
    if points > limits.max_vertices || mesh.num_faces() > limits.max_triangles {
        return Err(ProductError::TooLarge {
            what: "decoded Draco vertices",
            got: points as u64,
            limit: limits.max_vertices as u64,
        });
    }
    // `n` components per point (0: as many as the stream has), and how many that was.
    let attribute = |name: &str, n: usize| -> Result<Option<(Vec<f32>, usize)>, ProductError> {
        let Some(id) = ext["attributes"][name].as_u64() else {
            return Ok(None);
        };
        let att = mesh
            .attribute_by_unique_id(id as u32)
            .ok_or_else(|| malformed(format!("Draco stream has no attribute {id} ({name})")))?;
        let n = if n == 0 {
            usize::from(att.num_components()).clamp(1, 4)
        } else {
            n
        };
        let mut v = att.read_f32s(points, n);
        if att.normalized() {
            let max = match att.data_type() {
                DataType::Int8 => 127.0,
                DataType::Uint8 => 255.0,
                DataType::Int16 => 32767.0,
                DataType::Uint16 => 65535.0,
                _ => 1.0,
            };
            v.iter_mut().for_each(|x| *x = (*x / max).max(-1.0));
        }
        Ok(Some((v, n)))
    };
    let positions: Vec<[f32; 3]> = attribute("POSITION", 3)?
        .ok_or_else(|| malformed("Draco primitive without POSITION"))?
        .0
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let normals = attribute("NORMAL", 3)?
        .map(|(v, _)| v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
    let colors = attribute("COLOR_0", 0)?.map(|(v, n)| {
        v.chunks_exact(n)
            .map(|c| std::array::from_fn(|k| c.get(k).copied().unwrap_or(1.0)))
            .collect()
    });
    let mut tex_coords = Vec::new();
    if let Some(atts) = ext["attributes"].as_object() {
        for key in atts.keys() {
            if let Some(set) = key.strip_prefix("TEXCOORD_").and_then(|s| s.parse().ok()) {
                if let Some((v, _)) = attribute(key, 2)? {
                    tex_coords.push((set, v.chunks_exact(2).map(|c| [c[0], c[1]]).collect()));
                }
            }
        }
    }
    let indices: Vec<u32> = mesh.faces().iter().flat_map(|f| f.map(|p| p.0)).collect();
    if indices.iter().any(|&i| i as usize >= points) {
        return Err(malformed("Draco face index out of range"));
    }
    Ok(Decoded {
        positions,
        normals,
        tex_coords,
        colors,
        indices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use draco_core::encoder_buffer::EncoderBuffer;
    use draco_core::geometry_attribute::{GeometryAttributeType, PointAttribute};
    use draco_core::geometry_indices::{FaceIndex, PointIndex};
    use draco_core::mesh_encoder::MeshEncoder;
    use draco_core::EncoderOptions;

    /// One triangle with float positions and `COLOR_0` as normalized RGBA bytes, encoded by
    /// `draco-core`'s encoder (sequential, lossless), and its extension object.
    fn coloured_triangle(colours: [[u8; 4]; 3]) -> (Vec<u8>, Value) {
        let mut mesh = Mesh::new();
        mesh.set_num_points(3);
        mesh.set_num_faces(1);
        let mut pos = PointAttribute::new();
        pos.init(
            GeometryAttributeType::Position,
            3,
            DataType::Float32,
            false,
            3,
        );
        for (i, p) in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
            .iter()
            .enumerate()
        {
            let bytes: Vec<u8> = p.iter().flat_map(|x| x.to_le_bytes()).collect();
            pos.buffer_mut().write(i * 12, &bytes);
        }
        let mut colour = PointAttribute::new();
        colour.init(GeometryAttributeType::Color, 4, DataType::Uint8, true, 3);
        for (i, c) in colours.iter().enumerate() {
            colour.buffer_mut().write(i * 4, c);
        }
        let pos_id = mesh.add_attribute(pos);
        let colour_id = mesh.add_attribute(colour);
        mesh.set_face(FaceIndex(0), [PointIndex(0), PointIndex(1), PointIndex(2)]);
        let mut options = EncoderOptions::new();
        options.set_encoding_method(0);
        let mut encoder = MeshEncoder::new();
        encoder.set_mesh(mesh);
        let mut out = EncoderBuffer::new();
        encoder
            .encode(&options, &mut out)
            .expect("the encoder takes it");
        let ext = serde_json::json!({"bufferView": 0,
            "attributes": {"POSITION": pos_id, "COLOR_0": colour_id}});
        (out.data().to_vec(), ext)
    }

    #[test]
    fn a_draco_streams_colours_are_read_normalized() {
        let (bytes, ext) =
            coloured_triangle([[255, 0, 0, 255], [0, 128, 255, 64], [51, 102, 153, 255]]);
        let d = decode(&ext, |_| Ok(bytes.clone()), &Limits::default()).unwrap();
        assert_eq!(d.positions.len(), 3);
        let want = [
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 128.0 / 255.0, 1.0, 64.0 / 255.0],
            [0.2, 0.4, 0.6, 1.0],
        ];
        let got = d.colors.expect("COLOR_0 is read");
        for (g, w) in got.iter().zip(&want) {
            for k in 0..4 {
                assert!((g[k] - w[k]).abs() < 1e-6, "{got:?}");
            }
        }
    }
}
