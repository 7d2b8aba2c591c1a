//! A small Wavefront OBJ reader: `v`, `vt`, `vn`, `f` (polygons fan-triangulated, negative
//! indices, `v`, `v/vt`, `v//vn`, `v/vt/vn`). Materials (`mtllib`, `usemtl`) are ignored: the
//! whole object gets one default material (grey, slightly metallic, mid roughness).

use std::collections::HashMap;

use super::{
    compute_normals, AlphaMode, Format, Limits, Material, Primitive, Product, ProductError,
    ProductMeta,
};

fn bad(line: usize, what: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(format!("OBJ line {line}: {what}"))
}

fn floats<const N: usize>(
    parts: &mut std::str::SplitWhitespace<'_>,
    line: usize,
    min: usize,
) -> Result<[f32; N], ProductError> {
    let mut out = [0.0f32; N];
    let mut got = 0;
    for (slot, p) in out.iter_mut().zip(parts.by_ref()) {
        *slot = p
            .parse::<f32>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad(line, format!("not a number: {p:?}")))?;
        got += 1;
    }
    if got < min {
        return Err(bad(line, format!("expected {min} numbers, got {got}")));
    }
    Ok(out)
}

fn resolve(idx: &str, len: usize, line: usize) -> Result<Option<usize>, ProductError> {
    if idx.is_empty() {
        return Ok(None);
    }
    let i: i64 = idx
        .parse()
        .map_err(|_| bad(line, format!("bad index {idx:?}")))?;
    let r = if i > 0 {
        i - 1
    } else if i < 0 {
        len as i64 + i
    } else {
        return Err(bad(line, "index 0"));
    };
    if r < 0 || r as usize >= len {
        return Err(bad(line, format!("index {i} out of range (have {len})")));
    }
    Ok(Some(r as usize))
}

pub(super) fn load(bytes: &[u8], limits: &Limits) -> Result<Product, ProductError> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        ProductError::Malformed("not glTF, and not OBJ text (invalid UTF-8)".into())
    })?;
    let (mut v, mut vt, mut vn) = (Vec::new(), Vec::new(), Vec::new());
    let mut prim = Primitive::default();
    let mut map: HashMap<(usize, Option<usize>, Option<usize>), u32> = HashMap::new();
    let mut any_normals = true;
    let mut recognised = 0usize;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let raw = raw.split('#').next().unwrap_or("");
        let mut parts = raw.split_whitespace();
        let Some(tag) = parts.next() else { continue };
        match tag {
            "v" => {
                if v.len() >= limits.max_vertices {
                    return Err(ProductError::TooLarge {
                        what: "vertices",
                        got: v.len() as u64 + 1,
                        limit: limits.max_vertices as u64,
                    });
                }
                v.push(floats::<3>(&mut parts, line, 3)?);
            }
            "vt" => vt.push(floats::<2>(&mut parts, line, 1)?),
            "vn" => vn.push(floats::<3>(&mut parts, line, 3)?),
            "f" => {
                let mut face = Vec::new();
                for corner in parts {
                    let mut it = corner.split('/');
                    let vi = resolve(it.next().unwrap_or(""), v.len(), line)?
                        .ok_or_else(|| bad(line, "face corner without a vertex"))?;
                    let ti = resolve(it.next().unwrap_or(""), vt.len(), line)?;
                    let ni = resolve(it.next().unwrap_or(""), vn.len(), line)?;
                    any_normals &= ni.is_some();
                    let key = (vi, ti, ni);
                    let id = match map.get(&key) {
                        Some(&id) => id,
                        None => {
                            let id = prim.positions.len() as u32;
                            prim.positions.push(v[vi]);
                            prim.uvs.push(ti.map_or([0.0, 0.0], |t| {
                                let [a, b]: [f32; 2] = vt[t];
                                [a, 1.0 - b]
                            }));
                            prim.normals.push(ni.map_or([0.0, 0.0, 1.0], |k| vn[k]));
                            map.insert(key, id);
                            id
                        }
                    };
                    face.push(id);
                }
                if face.len() < 3 {
                    return Err(bad(line, "face with fewer than 3 corners"));
                }
                for i in 2..face.len() {
                    prim.indices.extend([face[0], face[i - 1], face[i]]);
                }
                if prim.indices.len() / 3 > limits.max_triangles {
                    return Err(ProductError::TooLarge {
                        what: "triangles",
                        got: (prim.indices.len() / 3) as u64,
                        limit: limits.max_triangles as u64,
                    });
                }
            }
            "o" | "g" | "s" | "usemtl" | "mtllib" | "l" | "p" | "vp" => {}
            _ => continue,
        }
        recognised += 1;
    }
    if recognised == 0 {
        return Err(ProductError::Malformed(
            "not glTF (no glTF magic or JSON), and no OBJ statements".into(),
        ));
    }
    if !any_normals {
        prim.normals = compute_normals(&prim.positions, &prim.indices);
    }
    Ok(Product {
        format: Format::Obj,
        primitives: vec![prim],
        materials: vec![Material {
            name: "obj-default".into(),
            base_color: [0.2, 0.2, 0.22, 1.0],
            base_color_texture: None,
            base_color_uv: 0,
            metallic: 0.3,
            roughness: 0.5,
            alpha_mode: AlphaMode::Opaque,
            alpha_cutoff: 0.5,
            double_sided: true,
            finish: Default::default(),
        }],
        textures: Vec::new(),
        meta: ProductMeta {
            names: String::from_utf8_lossy(bytes)
                .lines()
                .filter_map(|l| l.strip_prefix("o ").or_else(|| l.strip_prefix("g ")))
                .map(|n| n.trim().to_string())
                .collect(),
            ..ProductMeta::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::{load, Limits};

    #[test]
    fn reads_a_quad_with_negative_indices() {
        let p = load(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf -4 -3 -2 -1\n").unwrap();
        assert_eq!(p.triangle_count(), 2);
        assert_eq!(p.vertex_count(), 4);
        assert!((p.primitives[0].normals[0][2] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn bad_indices_and_numbers_are_typed_errors() {
        for src in [
            &b"v 0 0 0\nf 1 2 3\n"[..],
            b"v 0 0 zero\n",
            b"v 0 0 0\nv 1 0 0\nf 1 2\n",
            b"\xff\xfe\x00garbage",
            b"hello world\n",
        ] {
            let e = load(src).unwrap_err();
            assert_eq!(e.code(), "product_malformed", "{e}");
        }
    }

    #[test]
    fn vertex_limit_is_checked_while_reading() {
        let limits = Limits {
            max_vertices: 2,
            ..Limits::default()
        };
        let e = super::super::load_with_limits(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n", &limits)
            .unwrap_err();
        assert_eq!(e.code(), "product_too_large");
    }
}
