//! Reading glTF accessors ourselves, from buffer views already resolved to bytes (plain
//! slices of a buffer, or views that `EXT_meshopt_compression` decoded): every element is
//! bounds-checked first, and integer components are converted to `f32` the way
//! `KHR_mesh_quantization` says (normalized: `c / max`, signed clamped at −1; otherwise the
//! integer value, which the node transform scales).

use gltf::accessor::{DataType, Dimensions};

use super::ProductError;

fn malformed(e: impl std::fmt::Display) -> ProductError {
    ProductError::Malformed(e.to_string())
}

/// Bytes per component.
fn comp_size(t: DataType) -> usize {
    match t {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

/// Components per element.
pub(super) fn dims(d: Dimensions) -> usize {
    match d {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 | Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    }
}

/// The bytes of `a`'s buffer view, checked to hold every element, and the view's stride.
fn element_bytes<'v>(
    a: &gltf::Accessor<'_>,
    views: &'v [Option<Vec<u8>>],
    buffers: &'v [Vec<u8>],
) -> Result<(&'v [u8], usize, usize), ProductError> {
    if a.sparse().is_some() {
        return Err(ProductError::Unsupported("sparse accessors".into()));
    }
    let Some(view) = a.view() else {
        return Err(ProductError::Unsupported(
            "accessor without a buffer view".into(),
        ));
    };
    let bytes: &[u8] = match views.get(view.index()) {
        Some(Some(decoded)) => decoded,
        _ => {
            let buf = buffers
                .get(view.buffer().index())
                .ok_or_else(|| malformed("buffer view names a missing buffer"))?;
            let end = view
                .offset()
                .checked_add(view.length())
                .ok_or_else(|| malformed("buffer view overflows"))?;
            buf.get(view.offset()..end).ok_or_else(|| {
                malformed(format!(
                    "buffer view {} ends at byte {end} of a {}-byte buffer",
                    view.index(),
                    buf.len()
                ))
            })?
        }
    };
    let size = comp_size(a.data_type()) * dims(a.dimensions());
    let stride = view.stride().unwrap_or(size);
    if stride < size {
        return Err(malformed("buffer view stride smaller than its elements"));
    }
    if a.count() > 0 {
        let last = (a.count() - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(a.offset()))
            .and_then(|v| v.checked_add(size))
            .ok_or_else(|| malformed("accessor overflows"))?;
        if last > bytes.len() {
            return Err(malformed(format!(
                "accessor {} needs {last} bytes of a {}-byte buffer view",
                a.index(),
                bytes.len()
            )));
        }
    }
    Ok((bytes, stride, size))
}

/// One component at `b` as `f32` (normalized or not).
fn component(t: DataType, normalized: bool, b: &[u8]) -> f32 {
    match (t, normalized) {
        (DataType::F32, _) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        (DataType::I8, false) => f32::from(b[0] as i8),
        (DataType::I8, true) => (f32::from(b[0] as i8) / 127.0).max(-1.0),
        (DataType::U8, false) => f32::from(b[0]),
        (DataType::U8, true) => f32::from(b[0]) / 255.0,
        (DataType::I16, false) => f32::from(i16::from_le_bytes([b[0], b[1]])),
        (DataType::I16, true) => (f32::from(i16::from_le_bytes([b[0], b[1]])) / 32767.0).max(-1.0),
        (DataType::U16, false) => f32::from(u16::from_le_bytes([b[0], b[1]])),
        (DataType::U16, true) => f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0,
        (DataType::U32, false) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
        (DataType::U32, true) => {
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / u32::MAX as f32
        }
    }
}

/// Reads a float (or quantized) accessor of `N` components per element.
pub(super) fn read_vec<const N: usize>(
    a: &gltf::Accessor<'_>,
    views: &[Option<Vec<u8>>],
    buffers: &[Vec<u8>],
) -> Result<Vec<[f32; N]>, ProductError> {
    let n = dims(a.dimensions());
    if n < N {
        return Err(malformed(format!(
            "accessor {} has {n} components, {N} are needed",
            a.index()
        )));
    }
    let (bytes, stride, _) = element_bytes(a, views, buffers)?;
    let (t, norm, cs) = (a.data_type(), a.normalized(), comp_size(a.data_type()));
    Ok((0..a.count())
        .map(|i| {
            let at = a.offset() + i * stride;
            std::array::from_fn(|k| component(t, norm, &bytes[at + k * cs..]))
        })
        .collect())
}

/// Reads an index accessor (unsigned byte, short or int scalars).
pub(super) fn read_indices(
    a: &gltf::Accessor<'_>,
    views: &[Option<Vec<u8>>],
    buffers: &[Vec<u8>],
) -> Result<Vec<u32>, ProductError> {
    if dims(a.dimensions()) != 1
        || matches!(a.data_type(), DataType::F32 | DataType::I8 | DataType::I16)
    {
        return Err(malformed("indices must be unsigned integer scalars"));
    }
    let (bytes, stride, _) = element_bytes(a, views, buffers)?;
    Ok((0..a.count())
        .map(|i| {
            let b = &bytes[a.offset() + i * stride..];
            match a.data_type() {
                DataType::U8 => u32::from(b[0]),
                DataType::U16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_components_follow_the_quantization_rules() {
        assert_eq!(component(DataType::I8, true, &[0x81]), -1.0);
        assert_eq!(component(DataType::I8, true, &[0x80]), -1.0);
        assert_eq!(component(DataType::U8, true, &[255]), 1.0);
        assert_eq!(
            component(DataType::I16, true, &(-32767i16).to_le_bytes()),
            -1.0
        );
        assert_eq!(
            component(DataType::U16, true, &32768u16.to_le_bytes()),
            32768.0 / 65535.0
        );
        assert_eq!(
            component(DataType::I16, false, &(-300i16).to_le_bytes()),
            -300.0
        );
        assert_eq!(component(DataType::U8, false, &[7]), 7.0);
    }
}
