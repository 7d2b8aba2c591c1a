//! `EXT_meshopt_compression` (and its ratified twin `KHR_meshopt_compression`): buffer views
//! whose bytes are meshoptimizer-encoded in another buffer. Each such view is decoded once,
//! with the `meshopt-rs` crate (a pure-Rust port of meshoptimizer's codecs), into the plain
//! bytes the accessors then read; the decoded size (`count × byteStride`) is checked against
//! the limits **before** anything is allocated.

use serde_json::Value;

use super::{Limits, ProductError};

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// The names under which the extension appears.
pub(super) const NAMES: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// The extension object of a buffer or buffer view, if it has one.
pub(super) fn extension(holder: &Value) -> Option<&Value> {
    NAMES
        .iter()
        .map(|n| &holder["extensions"][*n])
        .find(|e| e.is_object())
}

/// Most decoded bytes over all compressed views: enough for the vertex and triangle limits
/// with 64-byte vertices.
fn max_decoded_bytes(limits: &Limits) -> u64 {
    (limits.max_vertices as u64 * 64).max(limits.max_triangles as u64 * 12) * 2
}

/// Decodes every compressed buffer view; `None` for the views that are plain slices.
pub(super) fn decode_views(
    json: &Value,
    buffers: &[Vec<u8>],
    limits: &Limits,
) -> Result<Vec<Option<Vec<u8>>>, ProductError> {
    let views = json["bufferViews"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut total = 0u64;
    let mut out = Vec::with_capacity(views.len());
    for (i, view) in views.iter().enumerate() {
        let Some(ext) = extension(view) else {
            out.push(None);
            continue;
        };
        let field = |k: &str| ext[k].as_u64();
        let (Some(buffer), Some(length), Some(stride), Some(count)) = (
            field("buffer"),
            field("byteLength"),
            field("byteStride"),
            field("count"),
        ) else {
            return Err(malformed(format!(
                "buffer view {i}: meshopt extension without buffer, byteLength, byteStride or count"
            )));
        };
        let offset = field("byteOffset").unwrap_or(0);
        let decoded = count
            .checked_mul(stride)
            .ok_or_else(|| malformed("meshopt view size overflows"))?;
        total = total.saturating_add(decoded);
        if total > max_decoded_bytes(limits) {
            return Err(ProductError::TooLarge {
                what: "decoded meshopt bytes",
                got: total,
                limit: max_decoded_bytes(limits),
            });
        }
        let src = buffers
            .get(buffer as usize)
            .and_then(|b| b.get(offset as usize..offset.checked_add(length)? as usize))
            .ok_or_else(|| malformed(format!("buffer view {i}: meshopt data out of range")))?;
        let mode = ext["mode"].as_str().unwrap_or("");
        let filter = ext["filter"].as_str().unwrap_or("NONE");
        let bytes = decode(src, count as usize, stride as usize, mode, filter)
            .map_err(|e| malformed(format!("buffer view {i}: meshopt {mode}: {e}")))?;
        out.push(Some(bytes));
    }
    Ok(out)
}

macro_rules! vertex_strides {
    ($count:expr, $stride:expr, $src:expr, $($n:literal)*) => {
        match $stride {
            $($n => {
                let mut v = vec![[0u8; $n]; $count];
                meshopt_rs::vertex::buffer::decode_vertex_buffer(&mut v, $src)
                    .map_err(|e| format!("{e:?}"))?;
                v.into_iter().flatten().collect::<Vec<u8>>()
            })*
            s => return Err(format!("vertex stride {s} (4 to 64, a multiple of 4, are read)")),
        }
    };
}

/// Decodes one view: `count` elements of `stride` bytes.
fn decode(
    src: &[u8],
    count: usize,
    stride: usize,
    mode: &str,
    filter: &str,
) -> Result<Vec<u8>, String> {
    let mut bytes = match mode {
        "ATTRIBUTES" => {
            vertex_strides!(count, stride, src, 4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64)
        }
        "TRIANGLES" | "INDICES" => {
            if stride != 2 && stride != 4 {
                return Err(format!("index stride {stride}"));
            }
            if mode == "TRIANGLES" && count % 3 != 0 {
                return Err("triangle index count is not a multiple of 3".into());
            }
            let mut idx = vec![0u32; count];
            let r = if mode == "TRIANGLES" {
                meshopt_rs::index::buffer::decode_index_buffer(&mut idx, src)
            } else {
                meshopt_rs::index::sequence::decode_index_sequence(&mut idx, src)
            };
            r.map_err(|e| format!("{e:?}"))?;
            if stride == 2 {
                idx.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
            } else {
                idx.iter().flat_map(|&i| i.to_le_bytes()).collect()
            }
        }
        m => return Err(format!("unknown mode {m:?}")),
    };
    unfilter(&mut bytes, stride, filter)?;
    Ok(bytes)
}

/// Undoes a vertex filter in place.
fn unfilter(bytes: &mut [u8], stride: usize, filter: &str) -> Result<(), String> {
    use meshopt_rs::vertex::filter as f;
    match (filter, stride) {
        ("NONE", _) => {}
        ("OCTAHEDRAL", 4) => {
            let mut v: Vec<[u8; 4]> = bytes
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect();
            f::decode_filter_oct_8(&mut v);
            bytes.copy_from_slice(&v.concat());
        }
        ("OCTAHEDRAL", 8) | ("QUATERNION", 8) => {
            let mut v: Vec<[u16; 4]> = bytes
                .chunks_exact(8)
                .map(|c| std::array::from_fn(|k| u16::from_le_bytes([c[2 * k], c[2 * k + 1]])))
                .collect();
            if filter == "OCTAHEDRAL" {
                f::decode_filter_oct_16(&mut v);
            } else {
                f::decode_filter_quat(&mut v);
            }
            for (c, q) in bytes.chunks_exact_mut(8).zip(&v) {
                for k in 0..4 {
                    c[2 * k..2 * k + 2].copy_from_slice(&q[k].to_le_bytes());
                }
            }
        }
        ("EXPONENTIAL", s) if s % 4 == 0 => {
            let mut v: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            f::decode_filter_exp(&mut v);
            for (c, x) in bytes.chunks_exact_mut(4).zip(&v) {
                c.copy_from_slice(&x.to_le_bytes());
            }
        }
        (f, s) => return Err(format!("filter {f} on {s}-byte elements")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_through_the_encoder_gives_the_bytes_back() {
        let verts: Vec<[u8; 8]> = (0..100u8)
            .map(|i| [i, i / 2, 3, 4, 255 - i, 0, 9, i])
            .collect();
        let mut enc = vec![0u8; meshopt_rs::vertex::buffer::encode_vertex_buffer_bound(100, 8)];
        let n = meshopt_rs::vertex::buffer::encode_vertex_buffer(
            &mut enc,
            &verts,
            meshopt_rs::vertex::VertexEncodingVersion::default(),
        )
        .unwrap();
        let back = decode(&enc[..n], 100, 8, "ATTRIBUTES", "NONE").unwrap();
        assert_eq!(back, verts.concat());
        // A truncated stream is an error, not a panic or garbage.
        assert!(decode(&enc[..n / 2], 100, 8, "ATTRIBUTES", "NONE").is_err());
        assert!(decode(&enc[..n], 100, 8, "STRIPS", "NONE").is_err());
    }

    #[test]
    fn decoded_size_is_checked_before_decoding() {
        let json = serde_json::json!({"bufferViews": [{"buffer": 0, "byteLength": 4,
            "extensions": {"EXT_meshopt_compression": {"buffer": 0, "byteLength": 4,
            "byteStride": 64, "count": 4_000_000_000u64, "mode": "ATTRIBUTES"}}}]});
        let e = decode_views(&json, &[vec![0; 4]], &Limits::default()).unwrap_err();
        assert_eq!(e.code(), "product_too_large", "{e}");
    }
}
