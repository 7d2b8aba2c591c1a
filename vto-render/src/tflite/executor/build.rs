//! Building the wgpu executor: one pipeline per kernel, constants uploaded once, and one
//! dispatch (parameters and bind group) per step of the plan.

use super::*;

/// What [`Executor::new`] accumulates while it walks the plan.
pub(super) struct Builder<'a> {
    pub(super) device: &'a wgpu::Device,
    pub(super) pipelines: Vec<wgpu::ComputePipeline>,
    pub(super) pipeline_index: HashMap<&'static str, usize>,
    pub(super) dispatches: Vec<Dispatch>,
    pub(super) pool: Vec<wgpu::Buffer>,
    pub(super) slot: HashMap<usize, usize>,
    pub(super) const_buffers: HashMap<usize, wgpu::Buffer>,
    pub(super) plan: &'a Plan,
}

impl Builder<'_> {
    pub(super) fn pipeline(&mut self, name: &'static str) -> usize {
        if let Some(&i) = self.pipeline_index.get(name) {
            return i;
        }
        // Every name passed here is a `tflite/` kernel of the shader table.
        let p = crate::gpu::pipeline(self.device, &format!("tflite/{name}"));
        self.pipelines.push(p);
        self.pipeline_index.insert(name, self.pipelines.len() - 1);
        self.pipelines.len() - 1
    }

    pub(super) fn upload(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        let bytes: &[u8] = if data.is_empty() {
            &[0u8; 16]
        } else {
            f32_bytes(data)
        };
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
    }

    /// Uploads constant tensor `t` (once) if the dispatch binds it directly.
    pub(super) fn ensure_const(&mut self, t: usize) {
        if let Some(c) = self.plan.consts.get(&t) {
            if !self.const_buffers.contains_key(&t) {
                let b = self.upload("tflite constant", c);
                self.const_buffers.insert(t, b);
            }
        }
    }

    pub(super) fn dispatch(
        &mut self,
        kernel: &'static str,
        params: &[u8],
        binds: Vec<Bind>,
        groups: (u32, u32, u32),
    ) {
        let pipeline = self.pipeline(kernel);
        let uniform = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(kernel),
                contents: params,
                usage: wgpu::BufferUsages::UNIFORM,
            });
        // Constants used by this dispatch must exist before borrowing bindings.
        for b in &binds {
            if let Bind::Tensor(t) = b {
                self.ensure_const(*t);
            }
        }
        let layout = self.pipelines[pipeline].get_bind_group_layout(0);
        let size_of = |t: usize| wgpu::BufferSize::new((self.plan.numel(t).max(1) * 4) as u64);
        let buf_of = |t: usize| -> &wgpu::Buffer {
            match self.const_buffers.get(&t) {
                Some(b) => b,
                None => &self.pool[self.slot[&t]],
            }
        };
        // Binding 0 is the uniform, then the binds in order (the output last).
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: uniform.as_entire_binding(),
        }];
        for (k, b) in binds.iter().enumerate() {
            let (buffer, size) = match b {
                Bind::Tensor(t) => (buf_of(*t), size_of(*t)),
                Bind::Buffer(buf) => (buf, None),
            };
            entries.push(wgpu::BindGroupEntry {
                binding: k as u32 + 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: 0,
                    size,
                }),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel),
            layout: &layout,
            entries: &entries,
        });
        let out_elems = match binds.last() {
            Some(Bind::Tensor(t)) => self.plan.numel(*t),
            _ => 0,
        };
        self.dispatches.push(Dispatch {
            label: format!("{kernel} -> {out_elems} values"),
            pipeline,
            bind_group,
            groups,
        });
    }

    pub(super) fn conv_params(
        g: &Geo,
        epi: &Epilogue,
        extra: usize,
    ) -> Result<ConvParams, TfliteError> {
        let u = |v: usize| to_u32(v, "dimension");
        Ok(ConvParams {
            in_h: u(g.in_h)?,
            in_w: u(g.in_w)?,
            in_c: u(g.in_c)?,
            out_h: u(g.out_h)?,
            out_w: u(g.out_w)?,
            out_c: u(g.out_c)?,
            k_h: u(g.k_h)?,
            k_w: u(g.k_w)?,
            stride_h: u(g.stride_h)?,
            stride_w: u(g.stride_w)?,
            dil_h: u(g.dil_h)?,
            dil_w: u(g.dil_w)?,
            pad_top: u(g.pad_top)?,
            pad_left: u(g.pad_left)?,
            act: epi.act1.code(),
            oc4: u(g.out_c.div_ceil(4))?,
            extra: u(extra)?,
            act2: epi.act2.code(),
            res_c: u(epi.residual.map_or(0, |r| r.1))?,
            _pad: 0,
        })
    }

    /// Bindings of conv2d.wgsl / depthwise.wgsl: x, weights, bias, residual, alpha, y.
    pub(super) fn conv_binds(
        &self,
        x: usize,
        weights: wgpu::Buffer,
        bias: wgpu::Buffer,
        epi: &Epilogue,
        out_c: usize,
        y: usize,
    ) -> Result<Vec<Bind>, TfliteError> {
        let alpha = match epi.alpha {
            Some(a) => {
                let v = self.plan.consts.get(&a).ok_or_else(|| {
                    TfliteError::Unsupported("PRELU slopes computed at run time".into())
                })?;
                pack_bias(Some(v), out_c)
            }
            None => vec![0.0; 16],
        };
        let alpha = self.upload("prelu alpha", &alpha);
        let residual = match epi.residual {
            Some((r, _)) => Bind::Tensor(r),
            None => Bind::Buffer(bias.clone()),
        };
        Ok(vec![
            Bind::Tensor(x),
            Bind::Buffer(weights),
            Bind::Buffer(bias),
            residual,
            Bind::Buffer(alpha),
            Bind::Tensor(y),
        ])
    }

    pub(super) fn step(&mut self, step: &Step) -> Result<(), TfliteError> {
        let plan = self.plan;
        let c = |t: usize| -> Result<&[f32], TfliteError> {
            plan.consts.get(&t).map(Vec::as_slice).ok_or_else(|| {
                TfliteError::Unsupported("convolution weights computed at run time".into())
            })
        };
        match step {
            Step::Conv {
                x,
                w,
                b,
                y,
                geo,
                epi,
            } => {
                // Wide layers use 16-channel blocks (fewer loads per multiply-add), narrow ones 8.
                let (kernel, block) = if geo.out_c >= 32 {
                    ("conv2d_wide", 16)
                } else {
                    ("conv2d", 8)
                };
                let packed = pack_conv_weights(c(*w)?, geo, block);
                let weights = self.upload("conv weights", &packed);
                let bias = b.map(c).transpose()?;
                let bias = self.upload("conv bias", &pack_bias(bias, geo.out_c));
                let groups_w = geo.out_w.div_ceil(8);
                let mut p = Self::conv_params(geo, epi, groups_w)?;
                // The kernels work on blocks of `block` output channels (`oc8` in WGSL).
                p.oc4 = to_u32(geo.out_c.div_ceil(block), "channels")?;
                let groups = groups_1d(geo.out_h * groups_w * geo.out_c.div_ceil(block))?;
                let binds = self.conv_binds(*x, weights, bias, epi, geo.out_c, *y)?;
                self.dispatch(kernel, bytemuck::bytes_of(&p), binds, groups);
            }
            Step::Depthwise {
                x,
                w,
                b,
                y,
                geo,
                mult,
                epi,
            } => {
                let weights = self.upload("dw weights", &pack_depthwise_weights(c(*w)?, geo));
                let bias = b.map(c).transpose()?;
                let bias = self.upload("dw bias", &pack_bias(bias, geo.out_c));
                let p = Self::conv_params(geo, epi, *mult)?;
                // depthwise.wgsl: one invocation per 4 output pixels of a row.
                let items = geo.out_h * geo.out_w.div_ceil(4) * geo.out_c.div_ceil(4);
                let groups = groups_1d(items)?;
                let binds = self.conv_binds(*x, weights, bias, epi, geo.out_c, *y)?;
                self.dispatch("depthwise", bytemuck::bytes_of(&p), binds, groups);
            }
            Step::TransposeConv { x, w, b, y, geo } => {
                let weights = self.upload("tconv weights", &pack_conv_weights(c(*w)?, geo, 4));
                let bias = b.map(c).transpose()?;
                let bias = self.upload("tconv bias", &pack_bias(bias, geo.out_c));
                let u = |v: usize| to_u32(v, "dimension");
                let p = TransposeConvParams {
                    in_h: u(geo.in_h)?,
                    in_w: u(geo.in_w)?,
                    in_c: u(geo.in_c)?,
                    out_h: u(geo.out_h)?,
                    out_w: u(geo.out_w)?,
                    out_c: u(geo.out_c)?,
                    k_h: u(geo.k_h)?,
                    k_w: u(geo.k_w)?,
                    stride_h: u(geo.stride_h)?,
                    stride_w: u(geo.stride_w)?,
                    pad_top: u(geo.pad_top)?,
                    pad_left: u(geo.pad_left)?,
                    oc4: u(geo.out_c.div_ceil(4))?,
                    _pad: [0; 3],
                };
                let groups = (
                    u((geo.out_h * geo.out_w).div_ceil(WORKGROUP as usize))?,
                    p.oc4,
                    1,
                );
                if groups.0 > MAX_GROUPS {
                    return Err(TfliteError::Unsupported("transpose conv too large".into()));
                }
                self.dispatch(
                    "transpose_conv",
                    bytemuck::bytes_of(&p),
                    vec![
                        Bind::Tensor(*x),
                        Bind::Buffer(weights),
                        Bind::Buffer(bias),
                        Bind::Tensor(*y),
                    ],
                    groups,
                );
            }
            Step::Binary {
                op,
                a,
                b,
                y,
                a_shape,
                b_shape,
                out_shape,
                act,
            } => {
                let strides = |s: &[usize; 4]| -> Result<[u32; 4], TfliteError> {
                    let mut st = [0u32; 4];
                    let mut acc = 1usize;
                    for d in (0..4).rev() {
                        st[d] = if s[d] == 1 { 0 } else { to_u32(acc, "stride")? };
                        acc *= s[d];
                    }
                    Ok(st)
                };
                let total = plan.numel(*y);
                let p = BinaryParams {
                    out_shape: out_shape.map(|v| v as u32),
                    a_str: strides(a_shape)?,
                    b_str: strides(b_shape)?,
                    op: op.code(),
                    act: act.gpu_code(),
                    total: to_u32(total, "size")?,
                    same: u32::from(a_shape == out_shape && b_shape == out_shape),
                };
                self.dispatch(
                    "binary",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*a), Bind::Tensor(*b), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
            Step::Unary { op, x, y } => {
                let total = plan.numel(*y);
                let p = UnaryParams {
                    op: op.code(),
                    total: to_u32(total, "size")?,
                    _pad: [0; 2],
                };
                self.dispatch(
                    "unary",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*x), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
            Step::Pad {
                x,
                y,
                in_shape,
                out_shape,
                before,
            } => {
                let total = plan.numel(*y);
                let p = PadParams {
                    in_shape: in_shape.map(|v| v as u32),
                    out_shape: out_shape.map(|v| v as u32),
                    before: before.map(|v| v as u32),
                    total: to_u32(total, "size")?,
                    _pad: [0; 3],
                };
                self.dispatch(
                    "pad",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*x), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
            Step::Pool {
                max,
                x,
                y,
                geo,
                act,
            } => {
                let total = plan.numel(*y);
                let u = |v: usize| to_u32(v, "dimension");
                let p = PoolParams {
                    in_h: u(geo.in_h)?,
                    in_w: u(geo.in_w)?,
                    c: u(geo.in_c)?,
                    out_h: u(geo.out_h)?,
                    out_w: u(geo.out_w)?,
                    k_h: u(geo.k_h)?,
                    k_w: u(geo.k_w)?,
                    stride_h: u(geo.stride_h)?,
                    stride_w: u(geo.stride_w)?,
                    pad_top: u(geo.pad_top)?,
                    pad_left: u(geo.pad_left)?,
                    is_max: u32::from(*max),
                    act: act.gpu_code(),
                    total: u(total)?,
                    _pad: [0; 2],
                };
                self.dispatch(
                    "pool",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*x), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
            Step::Reshape { .. } => {}
            Step::Concat {
                parts,
                y,
                outer,
                inner,
                out_axis,
                act,
            } => {
                let mut offset = 0;
                for &(t, len) in parts {
                    let total = outer * len * inner;
                    let p = ConcatParams {
                        len: to_u32(len, "size")?,
                        inner: to_u32(*inner, "size")?,
                        out_axis: to_u32(*out_axis, "size")?,
                        offset: to_u32(offset, "size")?,
                        act: act.gpu_code(),
                        total: to_u32(total, "size")?,
                        _pad: [0; 2],
                    };
                    self.dispatch(
                        "concat",
                        bytemuck::bytes_of(&p),
                        vec![Bind::Tensor(t), Bind::Tensor(*y)],
                        groups_1d(total)?,
                    );
                    offset += len;
                }
            }
            Step::Resize {
                x,
                y,
                geo,
                align_corners,
                half_pixel_centers,
            } => {
                let scale = |i: usize, o: usize| {
                    if *align_corners && o > 1 {
                        (i as f32 - 1.0) / (o as f32 - 1.0)
                    } else {
                        i as f32 / o as f32
                    }
                };
                let total = plan.numel(*y);
                let u = |v: usize| to_u32(v, "dimension");
                let p = ResizeParams {
                    in_h: u(geo.in_h)?,
                    in_w: u(geo.in_w)?,
                    c: u(geo.in_c)?,
                    out_h: u(geo.out_h)?,
                    out_w: u(geo.out_w)?,
                    half_pixel: u32::from(*half_pixel_centers),
                    total: u(total)?,
                    _pad0: 0,
                    scale_y: scale(geo.in_h, geo.out_h),
                    scale_x: scale(geo.in_w, geo.out_w),
                    _pad1: [0.0; 2],
                };
                self.dispatch(
                    "resize_bilinear",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*x), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
            Step::DepthToSpace { x, y, geo, block } => {
                let total = plan.numel(*y);
                let u = |v: usize| to_u32(v, "dimension");
                let p = DepthToSpaceParams {
                    in_w: u(geo.in_w)?,
                    in_c: u(geo.in_c)?,
                    out_w: u(geo.out_w)?,
                    out_c: u(geo.out_c)?,
                    block: u(*block)?,
                    total: u(total)?,
                    _pad: [0; 2],
                };
                self.dispatch(
                    "depth_to_space",
                    bytemuck::bytes_of(&p),
                    vec![Bind::Tensor(*x), Bind::Tensor(*y)],
                    groups_1d(total)?,
                );
            }
        }
        Ok(())
    }
}
