//! Re-encodes a float GLB (as `vto_render::product::write` makes it) the way web pipelines
//! do (gltfpack, glTF-Transform): `KHR_mesh_quantization` (positions as normalized shorts under
//! a node scale, normals as normalized bytes, colours as normalized unsigned bytes), then optionally `EXT_meshopt_compression` of
//! every vertex and index view. Test-only: it reads exactly the layout the writer produces.

use serde_json::{json, Value};

/// How to re-encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Quantized attributes (`KHR_mesh_quantization`).
    Quantized,
    /// Quantized, then meshopt-compressed (`EXT_meshopt_compression`).
    Meshopt,
}

fn split_glb(glb: &[u8]) -> (Value, Vec<u8>) {
    let word = |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    let jlen = word(12);
    let json = serde_json::from_slice(&glb[20..20 + jlen]).unwrap();
    let bin_at = 20 + jlen;
    let blen = word(bin_at);
    (json, glb[bin_at + 8..bin_at + 8 + blen].to_vec())
}

/// Packs JSON and a BIN chunk into a GLB.
pub fn join_glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while b.len() % 4 != 0 {
        b.push(0);
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + j.len() + 8 + b.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

fn view_of<'a>(json: &Value, bin: &'a [u8], accessor: usize) -> &'a [u8] {
    let a = &json["accessors"][accessor];
    let v = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let off = v["byteOffset"].as_u64().unwrap_or(0) as usize
        + a["byteOffset"].as_u64().unwrap_or(0) as usize;
    &bin[off..off + v["byteLength"].as_u64().unwrap() as usize]
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Re-encodes `glb` (written by `product::write::write_glb`).
pub fn reencode(glb: &[u8], encoding: Encoding) -> Vec<u8> {
    let (mut json, bin) = split_glb(glb);
    let mut out_bin = bin.clone(); // images stay where they are
                                   // (element bytes, stride, is_index, vertex count) of each new view, added at the end.
    let mut new_views: Vec<(Vec<u8>, usize, bool)> = Vec::new();
    let meshes = json["meshes"].as_array().unwrap().clone();
    for (mi, mesh) in meshes.iter().enumerate() {
        let prims = mesh["primitives"].as_array().unwrap();
        // One dequantization transform per mesh: centre + uniform half-extent.
        let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
        for p in prims {
            let pos = floats(view_of(
                &json,
                &bin,
                p["attributes"]["POSITION"].as_u64().unwrap() as usize,
            ));
            for q in pos.chunks_exact(3) {
                for k in 0..3 {
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
        }
        let c: [f32; 3] = std::array::from_fn(|k| (lo[k] + hi[k]) / 2.0);
        let s = (0..3)
            .map(|k| (hi[k] - lo[k]) / 2.0)
            .fold(1e-9f32, f32::max);
        for p in prims {
            let attrs = &p["attributes"];
            let pa = attrs["POSITION"].as_u64().unwrap() as usize;
            let pos = floats(view_of(&json, &bin, pa));
            let mut q = Vec::new();
            for v in pos.chunks_exact(3) {
                for k in 0..3 {
                    let x = ((v[k] - c[k]) / s * 32767.0)
                        .round()
                        .clamp(-32767.0, 32767.0) as i16;
                    q.extend_from_slice(&x.to_le_bytes());
                }
                q.extend_from_slice(&[0, 0]);
            }
            new_views.push((q, 8, false));
            let a = &mut json["accessors"][pa];
            a["componentType"] = json!(5122);
            a["normalized"] = json!(true);
            a["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            a["min"] = json!([-1, -1, -1]);
            a["max"] = json!([1, 1, 1]);
            if let Some(na) = attrs["NORMAL"].as_u64() {
                let na = na as usize;
                let n = floats(view_of(&json, &bin, na));
                let mut q = Vec::new();
                for v in n.chunks_exact(3) {
                    for x in v {
                        q.push((x * 127.0).round().clamp(-127.0, 127.0) as i8 as u8);
                    }
                    q.push(0);
                }
                new_views.push((q, 4, false));
                let a = &mut json["accessors"][na];
                a["componentType"] = json!(5120);
                a["normalized"] = json!(true);
                a["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            }
            if let Some(ta) = attrs["TEXCOORD_0"].as_u64() {
                let ta = ta as usize;
                let t = view_of(&json, &bin, ta).to_vec();
                new_views.push((t, 8, false));
                json["accessors"][ta]["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            }
            if let Some(ta) = attrs["TEXCOORD_1"].as_u64() {
                let ta = ta as usize;
                let t = view_of(&json, &bin, ta).to_vec();
                new_views.push((t, 8, false));
                json["accessors"][ta]["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            }
            // Colours (float RGBA) as normalized unsigned bytes, as gltfpack writes them.
            if let Some(ca) = attrs["COLOR_0"].as_u64() {
                let ca = ca as usize;
                let q: Vec<u8> = floats(view_of(&json, &bin, ca))
                    .iter()
                    .map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8)
                    .collect();
                new_views.push((q, 4, false));
                let a = &mut json["accessors"][ca];
                a["componentType"] = json!(5121);
                a["normalized"] = json!(true);
                a["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            }
            if let Some(ia) = p["indices"].as_u64() {
                let ia = ia as usize;
                let t = view_of(&json, &bin, ia).to_vec();
                new_views.push((t, 4, true));
                json["accessors"][ia]["bufferView"] = json!(usize::MAX - new_views.len() + 1);
            }
        }
        // The mesh's node takes the dequantization: T(t + c) · S(s).
        for node in json["nodes"].as_array_mut().unwrap() {
            if node["mesh"].as_u64() == Some(mi as u64) {
                let t: [f32; 3] =
                    std::array::from_fn(|k| node["translation"][k].as_f64().unwrap_or(0.0) as f32);
                node["translation"] = json!([t[0] + c[0], t[1] + c[1], t[2] + c[2]]);
                node["scale"] = json!([s, s, s]);
            }
        }
    }
    // Lay the new views out.
    let first = json["bufferViews"].as_array().unwrap().len();
    let mut fallback_len = 0usize;
    for (bytes, stride, is_index) in &new_views {
        while out_bin.len() % 4 != 0 {
            out_bin.push(0);
        }
        let count = bytes.len() / stride;
        let mut view = match encoding {
            Encoding::Quantized => {
                let v =
                    json!({"buffer": 0, "byteOffset": out_bin.len(), "byteLength": bytes.len()});
                out_bin.extend_from_slice(bytes);
                v
            }
            Encoding::Meshopt => {
                let (enc, mode) = if *is_index {
                    let idx: Vec<u32> = bytes
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect();
                    let max = idx.iter().copied().max().unwrap_or(0) as usize + 1;
                    let mut e =
                        vec![
                            0u8;
                            meshopt_rs::index::buffer::encode_index_buffer_bound(idx.len(), max)
                        ];
                    let n = meshopt_rs::index::buffer::encode_index_buffer(
                        &mut e,
                        &idx,
                        meshopt_rs::index::IndexEncodingVersion::V0,
                    )
                    .unwrap();
                    e.truncate(n);
                    (e, "TRIANGLES")
                } else {
                    let mut e =
                        vec![
                            0u8;
                            meshopt_rs::vertex::buffer::encode_vertex_buffer_bound(count, *stride)
                        ];
                    let n = match stride {
                        4 => {
                            let v: Vec<[u8; 4]> = bytes
                                .chunks_exact(4)
                                .map(|c| c.try_into().unwrap())
                                .collect();
                            meshopt_rs::vertex::buffer::encode_vertex_buffer(
                                &mut e,
                                &v,
                                meshopt_rs::vertex::VertexEncodingVersion::V0,
                            )
                        }
                        _ => {
                            let v: Vec<[u8; 8]> = bytes
                                .chunks_exact(8)
                                .map(|c| c.try_into().unwrap())
                                .collect();
                            meshopt_rs::vertex::buffer::encode_vertex_buffer(
                                &mut e,
                                &v,
                                meshopt_rs::vertex::VertexEncodingVersion::V0,
                            )
                        }
                    };
                    e.truncate(n.expect("the bound holds the encoding"));
                    (e, "ATTRIBUTES")
                };
                let v = json!({"buffer": 1, "byteOffset": fallback_len, "byteLength": bytes.len(),
                    "extensions": {"EXT_meshopt_compression": {"buffer": 0, "byteOffset": out_bin.len(),
                    "byteLength": enc.len(), "byteStride": stride, "count": count, "mode": mode}}});
                fallback_len += bytes.len().next_multiple_of(4);
                out_bin.extend_from_slice(&enc);
                v
            }
        };
        if !is_index {
            view["byteStride"] = json!(stride);
        }
        json["bufferViews"].as_array_mut().unwrap().push(view);
    }
    for a in json["accessors"].as_array_mut().unwrap() {
        if let Some(v) = a["bufferView"].as_u64() {
            if v as usize >= first + new_views.len() {
                a["bufferView"] = json!(first + (usize::MAX - v as usize));
            }
        }
    }
    let mut required = vec!["KHR_mesh_quantization"];
    if encoding == Encoding::Meshopt {
        required.push("EXT_meshopt_compression");
        json["buffers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"byteLength": fallback_len,
            "extensions": {"EXT_meshopt_compression": {"fallback": true}}}));
    }
    while out_bin.len() % 4 != 0 {
        out_bin.push(0);
    }
    json["buffers"][0]["byteLength"] = json!(out_bin.len());
    json["extensionsUsed"] = json!(required);
    json["extensionsRequired"] = json!(required);
    join_glb(&json, &out_bin)
}
