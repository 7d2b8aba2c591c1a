//! Decoding constants from the file: float16 → float32, int32 and sparse tensors
//! (TFLite's DENSIFY format) → dense.

use super::*;

/// IEEE half → single, exact.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f32;
    match exp {
        0 => sign * frac * (2.0f32).powi(-24),
        31 => {
            if frac == 0.0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        e => sign * (1.0 + frac / 1024.0) * (2.0f32).powi(e - 15),
    }
}

/// Decodes the raw buffer of a float tensor (as stored: for sparse tensors, the stored values).
pub(super) fn decode_floats(ty: TensorType, data: &[u8]) -> Result<Vec<f32>, TfliteError> {
    match ty {
        TensorType::F32 => {
            if data.len() % 4 != 0 {
                return Err(bad("float32 buffer length not a multiple of 4"));
            }
            Ok(data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        }
        TensorType::F16 => {
            if data.len() % 2 != 0 {
                return Err(bad("float16 buffer length not a multiple of 2"));
            }
            Ok(data
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect())
        }
        other => Err(TfliteError::Unsupported(format!(
            "constant tensor of type {other:?} where floats are expected"
        ))),
    }
}

pub(super) fn decode_i32s(data: &[u8]) -> Result<Vec<i32>, TfliteError> {
    if data.len() % 4 != 0 {
        return Err(bad("int32 buffer length not a multiple of 4"));
    }
    Ok(data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Expands a sparse tensor's stored `values` into a dense row-major array of `shape`.
pub(crate) fn densify(
    shape: &[usize],
    sp: &Sparsity,
    values: &[f32],
) -> Result<Vec<f32>, TfliteError> {
    let rank = shape.len();
    let levels = sp.traversal_order.len();
    if levels > 16 {
        return Err(bad("sparsity: too many dimensions"));
    }
    if levels < rank || sp.block_map.len() != levels - rank {
        return Err(bad("sparsity: traversal order does not match the shape"));
    }
    for &o in &sp.traversal_order {
        if o >= levels {
            return Err(bad("sparsity: traversal order out of range"));
        }
    }
    for &m in &sp.block_map {
        if m >= rank {
            return Err(bad("sparsity: block map out of range"));
        }
    }
    // Size of every traversal level: dense levels say so; for a sparse level the size of the
    // dimension it covers (tensor dims divided by their block sizes).
    let mut block_size = vec![1usize; rank];
    for (k, &m) in sp.block_map.iter().enumerate() {
        // The block dimension rank + k sits at the traversal level whose order is rank + k.
        let level = sp
            .traversal_order
            .iter()
            .position(|&o| o == rank + k)
            .ok_or_else(|| bad("sparsity: block dimension missing from traversal order"))?;
        match &sp.dim_metadata[level] {
            DimMeta::Dense { size } if *size > 0 => block_size[m] = *size,
            _ => return Err(bad("sparsity: block dimensions must be dense")),
        }
    }
    let total: usize = shape.iter().product();
    let mut dense = vec![0.0f32; total];
    let mut coords = vec![0usize; levels];
    // Iterative depth-first traversal; each stack entry is (level, position in parent, next).
    fn walk(
        level: usize,
        parent: usize,
        coords: &mut Vec<usize>,
        ctx: &mut WalkCtx<'_>,
    ) -> Result<(), TfliteError> {
        if level == ctx.sp.dim_metadata.len() {
            let v = *ctx
                .values
                .get(parent)
                .ok_or_else(|| bad("sparsity: value index out of range"))?;
            // Map traversal coordinates to the dense index.
            let rank = ctx.shape.len();
            let mut idx = vec![0usize; rank];
            for (l, &o) in ctx.sp.traversal_order.iter().enumerate() {
                if o < rank {
                    idx[o] += coords[l] * ctx.block_size[o];
                } else {
                    let m = ctx.sp.block_map[o - rank];
                    idx[m] += coords[l];
                }
            }
            let mut flat = 0usize;
            for (&i, &size) in idx.iter().zip(ctx.shape) {
                if i >= size {
                    return Err(bad("sparsity: coordinate out of range"));
                }
                flat = flat * size + i;
            }
            ctx.dense[flat] = v;
            return Ok(());
        }
        match &ctx.sp.dim_metadata[level] {
            DimMeta::Dense { size } => {
                let size = *size;
                for j in 0..size {
                    coords[level] = j;
                    let next = parent
                        .checked_mul(size)
                        .and_then(|p| p.checked_add(j))
                        .ok_or_else(|| bad("sparsity: index overflow"))?;
                    walk(level + 1, next, coords, ctx)?;
                }
            }
            DimMeta::SparseCsr { segments, indices } => {
                let (Some(&start), Some(&end)) = (segments.get(parent), segments.get(parent + 1))
                else {
                    return Err(bad("sparsity: segment index out of range"));
                };
                if start > end || end > indices.len() {
                    return Err(bad("sparsity: bad segments"));
                }
                for (j, &ix) in indices.iter().enumerate().take(end).skip(start) {
                    coords[level] = ix;
                    walk(level + 1, j, coords, ctx)?;
                }
            }
        }
        Ok(())
    }
    struct WalkCtx<'a> {
        sp: &'a Sparsity,
        values: &'a [f32],
        shape: &'a [usize],
        block_size: &'a [usize],
        dense: &'a mut Vec<f32>,
    }
    let mut ctx = WalkCtx {
        sp,
        values,
        shape,
        block_size: &block_size,
        dense: &mut dense,
    };
    walk(0, 0, &mut coords, &mut ctx)?;
    Ok(dense)
}
