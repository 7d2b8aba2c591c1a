//! A minimal, bounds-checked reader of the TFLite flatbuffer (`schema.fbs`, "TFL3").
//!
//! Only what the executor needs is read: the first subgraph, its tensors (shape, type, buffer,
//! sparsity), its operators with the builtin options of the supported operators, custom op
//! names and options, and the graph inputs and outputs. Every offset is checked against the
//! file length; a malformed file gives [`TfliteError::Malformed`], never a panic.
//!
//! Flatbuffer wire format in one paragraph: the file starts with a `u32` offset to the root
//! table. A table starts with an `i32` that, subtracted from the table position, gives its
//! vtable: `u16` vtable size, `u16` table size, then one `u16` per field with the field's
//! offset inside the table (0 = absent, use the default). Reference fields (tables, vectors,
//! strings) hold a `u32` offset relative to the field's own position; a vector is a `u32`
//! length followed by its elements.

use super::TfliteError;

/// A TFLite tensor element type (the subset of `TensorType` we recognise by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorType {
    /// `FLOAT32`.
    F32,
    /// `FLOAT16`.
    F16,
    /// `INT32`.
    I32,
    /// `INT64`.
    I64,
    /// `UINT8`.
    U8,
    /// `INT8`.
    I8,
    /// Any other type, with its schema code.
    Other(i8),
}

impl TensorType {
    fn from_code(code: i8) -> Self {
        match code {
            0 => Self::F32,
            1 => Self::F16,
            2 => Self::I32,
            3 => Self::U8,
            4 => Self::I64,
            9 => Self::I8,
            other => Self::Other(other),
        }
    }
}

/// One dimension of a sparse tensor's storage (`DimensionMetadata`).
#[derive(Debug, Clone, PartialEq)]
pub enum DimMeta {
    /// Every coordinate is stored; `size` of them.
    Dense {
        /// The dimension's size.
        size: usize,
    },
    /// Compressed sparse row: `segments[i]..segments[i+1]` index into `indices`.
    SparseCsr {
        /// Row pointers, one more than the number of elements of the previous level.
        segments: Vec<usize>,
        /// Coordinates of the stored elements in this dimension.
        indices: Vec<usize>,
    },
}

/// Sparsity parameters of a constant tensor (`SparsityParameters`), consumed by DENSIFY.
#[derive(Debug, Clone, PartialEq)]
pub struct Sparsity {
    /// Traversal order over the `n + k` dimensions (n tensor dims, k block dims).
    pub traversal_order: Vec<usize>,
    /// For each block dimension, the tensor dimension it subdivides.
    pub block_map: Vec<usize>,
    /// Storage of each dimension, in traversal order.
    pub dim_metadata: Vec<DimMeta>,
}

/// A tensor of the subgraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Its name (may be empty).
    pub name: String,
    /// Its shape (TFLite uses NHWC for images).
    pub shape: Vec<usize>,
    /// Element type.
    pub ty: TensorType,
    /// Index into [`super::Model`]'s buffers; constant tensors have non-empty data there.
    pub buffer: usize,
    /// Sparsity, for sparse constant tensors.
    pub sparsity: Option<Sparsity>,
}

/// Padding scheme of convolutions and pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// Output size `ceil(in / stride)`, zero padding split with the extra on the bottom/right.
    Same,
    /// No padding.
    Valid,
}

/// A fused activation function, applied to an operator's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// None.
    None,
    /// `max(x, 0)`.
    Relu,
    /// `clamp(x, -1, 1)`.
    ReluN1To1,
    /// `clamp(x, 0, 6)`.
    Relu6,
    /// `tanh(x)`.
    Tanh,
}

impl Activation {
    fn from_code(code: i8) -> Result<Self, TfliteError> {
        Ok(match code {
            0 => Self::None,
            1 => Self::Relu,
            2 => Self::ReluN1To1,
            3 => Self::Relu6,
            4 => Self::Tanh,
            other => {
                return Err(TfliteError::Unsupported(format!(
                    "fused activation function code {other}"
                )))
            }
        })
    }

    /// The code the WGSL kernels use (`shared/activation.wgsl`).
    pub fn gpu_code(self) -> u32 {
        match self {
            Self::None => 0,
            Self::Relu => 1,
            Self::ReluN1To1 => 2,
            Self::Relu6 => 3,
            Self::Tanh => 4,
        }
    }

    /// Applies the activation on the CPU (reference).
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Self::None => x,
            Self::Relu => x.max(0.0),
            Self::ReluN1To1 => x.clamp(-1.0, 1.0),
            Self::Relu6 => x.clamp(0.0, 6.0),
            Self::Tanh => x.tanh(),
        }
    }
}

/// Convolution parameters shared by CONV_2D and DEPTHWISE_CONV_2D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvOptions {
    /// Padding scheme.
    pub padding: Padding,
    /// Stride along height.
    pub stride_h: usize,
    /// Stride along width.
    pub stride_w: usize,
    /// Dilation along height.
    pub dilation_h: usize,
    /// Dilation along width.
    pub dilation_w: usize,
    /// Depth multiplier (depthwise only; 1 for CONV_2D).
    pub depth_multiplier: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// Pooling parameters (`Pool2DOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// Padding scheme.
    pub padding: Padding,
    /// Stride along height.
    pub stride_h: usize,
    /// Stride along width.
    pub stride_w: usize,
    /// Window height.
    pub filter_h: usize,
    /// Window width.
    pub filter_w: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// What an operator does, with its options.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// CONV_2D: inputs (x, filter `[O,KH,KW,I]`, bias `[O]`).
    Conv2d(ConvOptions),
    /// DEPTHWISE_CONV_2D: inputs (x, filter `[1,KH,KW,C*M]`, bias).
    DepthwiseConv2d(ConvOptions),
    /// ADD with broadcasting.
    Add(Activation),
    /// MUL with broadcasting.
    Mul(Activation),
    /// RELU.
    Relu,
    /// RELU6.
    Relu6,
    /// PRELU: inputs (x, alpha), alpha broadcast against x.
    Prelu,
    /// HARD_SWISH: `x * relu6(x + 3) / 6`.
    HardSwish,
    /// LOGISTIC (sigmoid).
    Logistic,
    /// TANH.
    Tanh,
    /// PAD with zeros; inputs (x, paddings `[rank,2]` int32).
    Pad,
    /// MAX_POOL_2D.
    MaxPool2d(PoolOptions),
    /// AVERAGE_POOL_2D (the average counts only in-bounds elements).
    AveragePool2d(PoolOptions),
    /// RESHAPE (a view: same data, new shape).
    Reshape,
    /// CONCATENATION along `axis` (negative counts from the end).
    Concatenation {
        /// The axis.
        axis: i32,
        /// Fused activation.
        activation: Activation,
    },
    /// RESIZE_BILINEAR; the output size comes from the output tensor's shape.
    ResizeBilinear {
        /// Corner pixels of input and output are aligned.
        align_corners: bool,
        /// Pixel centres at +0.5 (TF2 behaviour).
        half_pixel_centers: bool,
    },
    /// DEPTH_TO_SPACE with the given block size.
    DepthToSpace {
        /// Block size.
        block_size: usize,
    },
    /// DEQUANTIZE (float16 → float32 for these models).
    Dequantize,
    /// DENSIFY (sparse constant → dense).
    Densify,
    /// MediaPipe's custom `Convolution2DTransposeBias`: inputs (x, filter `[O,KH,KW,I]`, bias).
    TransposeConvBias {
        /// Padding scheme.
        padding: Padding,
        /// Stride along height.
        stride_h: usize,
        /// Stride along width.
        stride_w: usize,
    },
    /// FULLY_CONNECTED: inputs (x `[.., K]`, weights `[O, K]`, bias `[O]`); lowered to a 1×1
    /// convolution.
    FullyConnected {
        /// Fused activation.
        activation: Activation,
    },
    /// MEAN over constant axes (input 1); lowered to an average pool over H and W.
    Mean {
        /// Whether the reduced axes stay as size 1.
        keep_dims: bool,
    },
    /// Anything else, by name (`CONV_3D`, or a custom op's code).
    Unsupported {
        /// The operator name.
        name: String,
    },
}

/// One operator of the subgraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// What it does.
    pub kind: OpKind,
    /// Input tensor indices (`None` for an omitted optional input, `-1` in the file).
    pub inputs: Vec<Option<usize>>,
    /// Output tensor indices.
    pub outputs: Vec<usize>,
}

/// The parsed contents of a `.tflite` file (first subgraph).
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// All tensors.
    pub tensors: Vec<Tensor>,
    /// Raw buffer contents (index 0 is the empty sentinel buffer).
    pub buffers: Vec<Vec<u8>>,
    /// Operators in execution order.
    pub operators: Vec<Operator>,
    /// Graph input tensor indices.
    pub inputs: Vec<usize>,
    /// Graph output tensor indices.
    pub outputs: Vec<usize>,
}

fn bad(msg: impl Into<String>) -> TfliteError {
    TfliteError::Malformed(msg.into())
}

/// A bounds-checked view of the file.
#[derive(Clone, Copy)]
struct Buf<'a>(&'a [u8]);

impl<'a> Buf<'a> {
    fn bytes(&self, pos: usize, len: usize) -> Result<&'a [u8], TfliteError> {
        let end = pos.checked_add(len).ok_or_else(|| bad("offset overflow"))?;
        self.0.get(pos..end).ok_or_else(|| {
            bad(format!(
                "read of {len} bytes at {pos} past the end ({})",
                self.0.len()
            ))
        })
    }
    fn u8(&self, pos: usize) -> Result<u8, TfliteError> {
        Ok(self.bytes(pos, 1)?[0])
    }
    fn u16(&self, pos: usize) -> Result<u16, TfliteError> {
        let b = self.bytes(pos, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, pos: usize) -> Result<u32, TfliteError> {
        let b = self.bytes(pos, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&self, pos: usize) -> Result<i32, TfliteError> {
        Ok(self.u32(pos)? as i32)
    }
    fn u64(&self, pos: usize) -> Result<u64, TfliteError> {
        let b = self.bytes(pos, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    /// Follows the `u32` relative offset stored at `pos`.
    fn deref(&self, pos: usize) -> Result<usize, TfliteError> {
        let off = self.u32(pos)? as usize;
        let target = pos.checked_add(off).ok_or_else(|| bad("offset overflow"))?;
        if target >= self.0.len() {
            return Err(bad(format!("offset at {pos} points past the end")));
        }
        Ok(target)
    }
    fn table(&self, pos: usize) -> Result<Table<'a>, TfliteError> {
        let soff = self.i32(pos)? as i64;
        let vt = pos as i64 - soff;
        if vt < 0 {
            return Err(bad(format!(
                "vtable of table at {pos} before the file start"
            )));
        }
        let vt = vt as usize;
        let vt_size = self.u16(vt)? as usize;
        if vt_size < 4 || vt_size % 2 != 0 {
            return Err(bad(format!("bad vtable size {vt_size} at {vt}")));
        }
        self.bytes(vt, vt_size)?;
        Ok(Table {
            buf: *self,
            pos,
            vt,
            vt_size,
        })
    }
}

/// A table: looks fields up through its vtable.
#[derive(Clone, Copy)]
struct Table<'a> {
    buf: Buf<'a>,
    pos: usize,
    vt: usize,
    vt_size: usize,
}

/// A vector: `len` elements of `elem` bytes starting at `start`.
#[derive(Clone, Copy)]
struct Vector<'a> {
    buf: Buf<'a>,
    start: usize,
    len: usize,
}

impl<'a> Vector<'a> {
    fn new(buf: Buf<'a>, pos: usize, elem: usize) -> Result<Self, TfliteError> {
        let len = buf.u32(pos)? as usize;
        let start = pos + 4;
        let total = len
            .checked_mul(elem)
            .ok_or_else(|| bad("vector length overflow"))?;
        buf.bytes(start, total)?;
        Ok(Self { buf, start, len })
    }
    fn table(&self, i: usize) -> Result<Table<'a>, TfliteError> {
        let p = self.buf.deref(self.start + 4 * i)?;
        self.buf.table(p)
    }
    fn i32s(&self) -> Result<Vec<i32>, TfliteError> {
        (0..self.len)
            .map(|i| self.buf.i32(self.start + 4 * i))
            .collect()
    }
}

impl<'a> Table<'a> {
    /// Absolute position of field `id`, or `None` when absent.
    fn field(&self, id: usize) -> Result<Option<usize>, TfliteError> {
        let slot = 4 + 2 * id;
        if slot + 2 > self.vt_size {
            return Ok(None);
        }
        let off = self.buf.u16(self.vt + slot)? as usize;
        Ok(if off == 0 { None } else { Some(self.pos + off) })
    }
    fn u8_or(&self, id: usize, default: u8) -> Result<u8, TfliteError> {
        match self.field(id)? {
            Some(p) => self.buf.u8(p),
            None => Ok(default),
        }
    }
    fn i8_or(&self, id: usize, default: i8) -> Result<i8, TfliteError> {
        Ok(self.u8_or(id, default as u8)? as i8)
    }
    fn bool_or(&self, id: usize, default: bool) -> Result<bool, TfliteError> {
        Ok(self.u8_or(id, default as u8)? != 0)
    }
    fn i32_or(&self, id: usize, default: i32) -> Result<i32, TfliteError> {
        match self.field(id)? {
            Some(p) => self.buf.i32(p),
            None => Ok(default),
        }
    }
    fn u32_or(&self, id: usize, default: u32) -> Result<u32, TfliteError> {
        match self.field(id)? {
            Some(p) => self.buf.u32(p),
            None => Ok(default),
        }
    }
    fn u64_or(&self, id: usize, default: u64) -> Result<u64, TfliteError> {
        match self.field(id)? {
            Some(p) => self.buf.u64(p),
            None => Ok(default),
        }
    }
    fn table_field(&self, id: usize) -> Result<Option<Table<'a>>, TfliteError> {
        match self.field(id)? {
            Some(p) => Ok(Some(self.buf.table(self.buf.deref(p)?)?)),
            None => Ok(None),
        }
    }
    fn vector(&self, id: usize, elem: usize) -> Result<Option<Vector<'a>>, TfliteError> {
        match self.field(id)? {
            Some(p) => Ok(Some(Vector::new(self.buf, self.buf.deref(p)?, elem)?)),
            None => Ok(None),
        }
    }
    fn i32_vec(&self, id: usize) -> Result<Vec<i32>, TfliteError> {
        match self.vector(id, 4)? {
            Some(v) => v.i32s(),
            None => Ok(Vec::new()),
        }
    }
    fn bytes(&self, id: usize) -> Result<&'a [u8], TfliteError> {
        match self.vector(id, 1)? {
            Some(v) => self.buf.bytes(v.start, v.len),
            None => Ok(&[]),
        }
    }
    fn string(&self, id: usize) -> Result<String, TfliteError> {
        Ok(String::from_utf8_lossy(self.bytes(id)?).into_owned())
    }
}

fn to_usize(v: i32, what: &str) -> Result<usize, TfliteError> {
    usize::try_from(v).map_err(|_| bad(format!("negative {what}: {v}")))
}

fn positive(v: i32, what: &str) -> Result<usize, TfliteError> {
    if v <= 0 {
        return Err(bad(format!("{what} must be positive, got {v}")));
    }
    Ok(v as usize)
}

fn padding(code: i8) -> Result<Padding, TfliteError> {
    match code {
        0 => Ok(Padding::Same),
        1 => Ok(Padding::Valid),
        other => Err(bad(format!("unknown padding code {other}"))),
    }
}

/// Builtin operator names by code, for error messages (only the ones a reader may meet often).
fn builtin_name(code: i32) -> String {
    let name = match code {
        0 => "ADD",
        1 => "AVERAGE_POOL_2D",
        2 => "CONCATENATION",
        3 => "CONV_2D",
        4 => "DEPTHWISE_CONV_2D",
        5 => "DEPTH_TO_SPACE",
        6 => "DEQUANTIZE",
        9 => "FULLY_CONNECTED",
        14 => "LOGISTIC",
        17 => "MAX_POOL_2D",
        18 => "MUL",
        19 => "RELU",
        20 => "RELU_N1_TO_1",
        21 => "RELU6",
        22 => "RESHAPE",
        23 => "RESIZE_BILINEAR",
        25 => "SOFTMAX",
        28 => "TANH",
        32 => "CUSTOM",
        34 => "PAD",
        39 => "TRANSPOSE",
        40 => "MEAN",
        41 => "SUB",
        42 => "DIV",
        54 => "PRELU",
        67 => "TRANSPOSE_CONV",
        97 => "RESIZE_NEAREST_NEIGHBOR",
        117 => "HARD_SWISH",
        124 => "DENSIFY",
        other => return format!("BUILTIN_{other}"),
    };
    name.to_string()
}

fn conv_options(t: Option<Table<'_>>, depthwise: bool) -> Result<ConvOptions, TfliteError> {
    // Conv2DOptions: padding, stride_w, stride_h, fused_activation_function,
    //                dilation_w_factor, dilation_h_factor.
    // DepthwiseConv2DOptions: padding, stride_w, stride_h, depth_multiplier,
    //                fused_activation_function, dilation_w_factor, dilation_h_factor.
    let Some(t) = t else {
        return Err(bad("convolution without options"));
    };
    let (act_id, dil_w_id, dil_h_id) = if depthwise { (4, 5, 6) } else { (3, 4, 5) };
    Ok(ConvOptions {
        padding: padding(t.i8_or(0, 0)?)?,
        stride_w: positive(t.i32_or(1, 1)?, "stride_w")?,
        stride_h: positive(t.i32_or(2, 1)?, "stride_h")?,
        depth_multiplier: if depthwise {
            // 0 appears in some converted files and means "infer from the shapes".
            to_usize(t.i32_or(3, 1)?, "depth_multiplier")?
        } else {
            1
        },
        activation: Activation::from_code(t.i8_or(act_id, 0)?)?,
        dilation_w: positive(t.i32_or(dil_w_id, 1)?, "dilation_w")?,
        dilation_h: positive(t.i32_or(dil_h_id, 1)?, "dilation_h")?,
    })
}

fn pool_options(t: Option<Table<'_>>) -> Result<PoolOptions, TfliteError> {
    // Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height, activation.
    let Some(t) = t else {
        return Err(bad("pooling without options"));
    };
    Ok(PoolOptions {
        padding: padding(t.i8_or(0, 0)?)?,
        stride_w: positive(t.i32_or(1, 1)?, "stride_w")?,
        stride_h: positive(t.i32_or(2, 1)?, "stride_h")?,
        filter_w: positive(t.i32_or(3, 1)?, "filter_width")?,
        filter_h: positive(t.i32_or(4, 1)?, "filter_height")?,
        activation: Activation::from_code(t.i8_or(5, 0)?)?,
    })
}

fn activation_only(t: Option<Table<'_>>, id: usize) -> Result<Activation, TfliteError> {
    match t {
        Some(t) => Activation::from_code(t.i8_or(id, 0)?),
        None => Ok(Activation::None),
    }
}

fn op_kind(
    code: i32,
    custom_code: &str,
    options: Option<Table<'_>>,
    custom_options: &[u8],
) -> Result<OpKind, TfliteError> {
    Ok(match code {
        0 => OpKind::Add(activation_only(options, 0)?),
        1 => OpKind::AveragePool2d(pool_options(options)?),
        2 => {
            let (axis, activation) = match options {
                Some(t) => (t.i32_or(0, 0)?, Activation::from_code(t.i8_or(1, 0)?)?),
                None => (0, Activation::None),
            };
            OpKind::Concatenation { axis, activation }
        }
        3 => OpKind::Conv2d(conv_options(options, false)?),
        4 => OpKind::DepthwiseConv2d(conv_options(options, true)?),
        5 => {
            let block = options.map(|t| t.i32_or(0, 0)).transpose()?.unwrap_or(0);
            OpKind::DepthToSpace {
                block_size: positive(block, "depth_to_space block_size")?,
            }
        }
        6 => OpKind::Dequantize,
        9 => {
            // FullyConnectedOptions: fused_activation_function, weights_format,
            // keep_num_dims, asymmetric_quantize_inputs. Only the default weights format.
            let (activation, format) = match options {
                Some(t) => (Activation::from_code(t.i8_or(0, 0)?)?, t.i8_or(1, 0)?),
                None => (Activation::None, 0),
            };
            if format != 0 {
                return Err(TfliteError::Unsupported(format!(
                    "FULLY_CONNECTED weights format {format} (only the default is supported)"
                )));
            }
            OpKind::FullyConnected { activation }
        }
        14 => OpKind::Logistic,
        40 => OpKind::Mean {
            // ReducerOptions: keep_dims.
            keep_dims: options
                .map(|t| t.bool_or(0, false))
                .transpose()?
                .unwrap_or(false),
        },
        17 => OpKind::MaxPool2d(pool_options(options)?),
        18 => OpKind::Mul(activation_only(options, 0)?),
        19 => OpKind::Relu,
        21 => OpKind::Relu6,
        22 => OpKind::Reshape,
        23 => {
            // ResizeBilinearOptions: new_height (deprecated), new_width (deprecated),
            // align_corners, half_pixel_centers.
            let (align_corners, half_pixel_centers) = match options {
                Some(t) => (t.bool_or(2, false)?, t.bool_or(3, false)?),
                None => (false, false),
            };
            OpKind::ResizeBilinear {
                align_corners,
                half_pixel_centers,
            }
        }
        28 => OpKind::Tanh,
        34 => OpKind::Pad,
        54 => OpKind::Prelu,
        117 => OpKind::HardSwish,
        124 => OpKind::Densify,
        32 if custom_code == "Convolution2DTransposeBias" => {
            // The custom options are a raw TfLiteTransposeConvParams:
            // i32 padding (1 = SAME, 2 = VALID), i32 stride_width, i32 stride_height.
            let b = Buf(custom_options);
            let pad = b.i32(0)?;
            let stride_w = positive(b.i32(4)?, "transpose conv stride_w")?;
            let stride_h = positive(b.i32(8)?, "transpose conv stride_h")?;
            let padding = match pad {
                1 => Padding::Same,
                2 => Padding::Valid,
                other => return Err(bad(format!("transpose conv padding code {other}"))),
            };
            OpKind::TransposeConvBias {
                padding,
                stride_h,
                stride_w,
            }
        }
        32 => OpKind::Unsupported {
            name: if custom_code.is_empty() {
                "CUSTOM".to_string()
            } else {
                custom_code.to_string()
            },
        },
        other => OpKind::Unsupported {
            name: builtin_name(other),
        },
    })
}

/// Reads one sparse index at a position.
type ReadIndex = fn(Buf<'_>, usize) -> Result<usize, TfliteError>;

/// Reads a `SparseIndexVector` union (type field `type_id`, value field `type_id + 1`).
fn index_vector(t: &Table<'_>, type_id: usize) -> Result<Vec<usize>, TfliteError> {
    let ty = t.u8_or(type_id, 0)?;
    let Some(v) = t.table_field(type_id + 1)? else {
        return Err(bad("sparse dimension without index vector"));
    };
    // Int32Vector / Uint16Vector / Uint8Vector all hold `values` as field 0.
    let (elem, read): (usize, ReadIndex) = match ty {
        1 => (4, |b, p| to_usize(b.i32(p)?, "sparse index")),
        2 => (2, |b, p| Ok(b.u16(p)? as usize)),
        3 => (1, |b, p| Ok(b.u8(p)? as usize)),
        other => return Err(bad(format!("unknown sparse index vector type {other}"))),
    };
    match v.vector(0, elem)? {
        Some(vec) => (0..vec.len)
            .map(|i| read(vec.buf, vec.start + elem * i))
            .collect(),
        None => Ok(Vec::new()),
    }
}

fn sparsity(t: Table<'_>) -> Result<Sparsity, TfliteError> {
    let traversal_order = t
        .i32_vec(0)?
        .into_iter()
        .map(|v| to_usize(v, "traversal order"))
        .collect::<Result<Vec<_>, _>>()?;
    let block_map = t
        .i32_vec(1)?
        .into_iter()
        .map(|v| to_usize(v, "block map"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut dim_metadata = Vec::new();
    if let Some(v) = t.vector(2, 4)? {
        for i in 0..v.len {
            let d = v.table(i)?;
            dim_metadata.push(match d.u8_or(0, 0)? {
                0 => DimMeta::Dense {
                    size: to_usize(d.i32_or(1, 0)?, "dense_size")?,
                },
                1 => DimMeta::SparseCsr {
                    segments: index_vector(&d, 2)?,
                    indices: index_vector(&d, 4)?,
                },
                other => return Err(bad(format!("unknown dimension type {other}"))),
            });
        }
    }
    if dim_metadata.len() != traversal_order.len() {
        return Err(bad(
            "sparsity: dim_metadata and traversal_order lengths differ",
        ));
    }
    Ok(Sparsity {
        traversal_order,
        block_map,
        dim_metadata,
    })
}

/// Parses a `.tflite` file into a [`Graph`] (first subgraph only).
pub fn parse(bytes: &[u8]) -> Result<Graph, TfliteError> {
    let buf = Buf(bytes);
    if bytes.len() < 8 {
        return Err(bad("file shorter than a flatbuffer header"));
    }
    if bytes.get(4..8) != Some(b"TFL3".as_slice()) {
        return Err(bad("missing TFL3 file identifier (not a TFLite model?)"));
    }
    let root = buf.table(buf.deref(0)?)?;

    // Model: version, operator_codes, subgraphs, description, buffers.
    let mut opcodes = Vec::new();
    if let Some(v) = root.vector(1, 4)? {
        for i in 0..v.len {
            let t = v.table(i)?;
            // OperatorCode: deprecated_builtin_code (i8), custom_code, version, builtin_code (i32).
            let deprecated = t.i8_or(0, 0)? as i32;
            let builtin = t.i32_or(3, 0)?;
            let custom = t.string(1)?;
            opcodes.push((deprecated.max(builtin), custom));
        }
    }

    let mut buffers = Vec::new();
    if let Some(v) = root.vector(4, 4)? {
        for i in 0..v.len {
            let t = v.table(i)?;
            // Buffer: data, offset (u64), size (u64); offset > 1 means data outside the
            // flatbuffer, relative to the file start.
            let data = t.bytes(0)?;
            let offset = t.u64_or(1, 0)?;
            let size = t.u64_or(2, 0)?;
            if data.is_empty() && offset > 1 {
                let off = usize::try_from(offset).map_err(|_| bad("buffer offset too big"))?;
                let len = usize::try_from(size).map_err(|_| bad("buffer size too big"))?;
                buffers.push(buf.bytes(off, len)?.to_vec());
            } else {
                buffers.push(data.to_vec());
            }
        }
    }

    let subgraphs = root
        .vector(2, 4)?
        .ok_or_else(|| bad("model has no subgraphs"))?;
    if subgraphs.len == 0 {
        return Err(bad("model has no subgraphs"));
    }
    let sg = subgraphs.table(0)?;

    let mut tensors = Vec::new();
    if let Some(v) = sg.vector(0, 4)? {
        for i in 0..v.len {
            let t = v.table(i)?;
            let shape = t
                .i32_vec(0)?
                .into_iter()
                .map(|d| to_usize(d, "dimension"))
                .collect::<Result<Vec<_>, _>>()?;
            let buffer = t.u32_or(2, 0)? as usize;
            if buffer >= buffers.len().max(1) {
                return Err(bad(format!("tensor {i} refers to missing buffer {buffer}")));
            }
            tensors.push(Tensor {
                shape,
                ty: TensorType::from_code(t.i8_or(1, 0)?),
                buffer,
                name: t.string(3)?,
                sparsity: t.table_field(6)?.map(sparsity).transpose()?,
            });
        }
    }
    let n = tensors.len();
    let index = |v: i32, what: &str| -> Result<usize, TfliteError> {
        let i = to_usize(v, what)?;
        if i >= n {
            return Err(bad(format!("{what} {i} out of range ({n} tensors)")));
        }
        Ok(i)
    };
    let inputs = sg
        .i32_vec(1)?
        .into_iter()
        .map(|v| index(v, "graph input"))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = sg
        .i32_vec(2)?
        .into_iter()
        .map(|v| index(v, "graph output"))
        .collect::<Result<Vec<_>, _>>()?;

    let mut operators = Vec::new();
    if let Some(v) = sg.vector(3, 4)? {
        for i in 0..v.len {
            let t = v.table(i)?;
            // Operator: opcode_index, inputs, outputs, builtin_options_type,
            // builtin_options, custom_options.
            let oc = t.u32_or(0, 0)? as usize;
            let (code, custom) = opcodes
                .get(oc)
                .ok_or_else(|| bad(format!("operator {i} uses missing opcode {oc}")))?;
            let options = t.table_field(4)?;
            let custom_options = t.bytes(5)?;
            let kind = op_kind(*code, custom, options, custom_options)?;
            let op_inputs = t
                .i32_vec(1)?
                .into_iter()
                .map(|v| {
                    if v < 0 {
                        Ok(None)
                    } else {
                        index(v, "operator input").map(Some)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let op_outputs = t
                .i32_vec(2)?
                .into_iter()
                .map(|v| index(v, "operator output"))
                .collect::<Result<Vec<_>, _>>()?;
            operators.push(Operator {
                kind,
                inputs: op_inputs,
                outputs: op_outputs,
            });
        }
    }
    if buffers.is_empty() {
        buffers.push(Vec::new());
    }
    Ok(Graph {
        tensors,
        buffers,
        operators,
        inputs,
        outputs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(matches!(parse(b""), Err(TfliteError::Malformed(_))));
        assert!(matches!(parse(b"12345678"), Err(TfliteError::Malformed(_))));
        // A header that points past the end.
        let mut b = vec![0xff, 0xff, 0xff, 0x7f];
        b.extend_from_slice(b"TFL3");
        assert!(matches!(parse(&b), Err(TfliteError::Malformed(_))));
        // Deterministic pseudo-random garbage behind a valid identifier never panics.
        let mut state = 0x1234_5678u32;
        for len in [8usize, 16, 64, 300] {
            for _ in 0..200 {
                let mut v: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        (state & 0xff) as u8
                    })
                    .collect();
                v[4..8].copy_from_slice(b"TFL3");
                v[0] = (state % len as u32) as u8;
                v[1] = 0;
                v[2] = 0;
                v[3] = 0;
                let _ = parse(&v);
            }
        }
    }
}
