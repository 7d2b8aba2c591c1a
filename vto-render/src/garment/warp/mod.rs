//! Part warps: a map per garment part from body pixels to garment pixels — a thin-plate
//! spline ([`PartWarp::solve`]) or, for a part that follows a limb by segments (a sleeve down
//! a bent arm), a bent tube ([`tube`]) — evaluated on a coarse grid ([`WarpGrid`], every
//! [`GRID_STEP`] pixels over the parts' rectangle) and interpolated per output pixel by the
//! WGSL kernel `garment/warp` ([`Warper`]), which samples the garment bilinearly (only texels
//! of the part's label, so parts keep clean edges where they overlap) and layers the parts front to
//! back. [`cpu_warp`] is the kernel's CPU reference.
//!
//! Every warp is one-to-one: the grid's cells are checked for the sign of their Jacobian and
//! a fold is taken out by a harmonic fill before the kernel sees the nodes ([`fold`]); the
//! tube cannot fold by construction.
//!
//! A [`Part`] is generic: a garment label and matching control points on the garment and on
//! the body, plus the body region it may cover. Upper-body garments have a torso and two
//! sleeves; trousers would have two legs and a waistband, each a part the same way.
//!
//! Small holes the warp leaves inside the garment (a flat-lay's armpit notch swung down with
//! the sleeve) are closed by [`holes`].

pub mod fold;
pub mod holes;
pub mod tube;

use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};
use glam::Vec2;

use crate::garment::cutout::GarmentImage;
use crate::garment::error::GarmentError;
use crate::gpu::GpuContext;
pub use fold::Folds;
pub use tube::Tube;

/// Control points per part at most (the spline's solve is a dense system of this order).
pub const MAX_POINTS: usize = 32;
/// Parts per garment at most.
pub const MAX_PARTS: usize = 8;
/// Smoothing of the spline (in normalised body units): a little slack keeps it from folding
/// when control points crowd.
const LAMBDA: f64 = 1e-4;

/// One garment part to warp.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The garment label it takes its pixels from ([`crate::garment::label`]).
    pub label: u8,
    /// Control points on the garment (garment pixels).
    pub garment: Vec<Vec2>,
    /// The same points on the body (photo pixels).
    pub body: Vec<Vec2>,
    /// The photo region it may cover: `[x0, y0, x1, y1]` pixels.
    pub region: [f32; 4],
    /// When set, the part follows a limb by segments with this map instead of a spline
    /// through the control points (which then only bound its region and checks).
    pub tube: Option<Tube>,
}

impl Part {
    /// The bounding box of the body points grown by `margin` pixels.
    pub fn region_around(points: &[Vec2], margin: f32) -> [f32; 4] {
        let mut r = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in points {
            r = [r[0].min(p.x), r[1].min(p.y), r[2].max(p.x), r[3].max(p.y)];
        }
        [r[0] - margin, r[1] - margin, r[2] + margin, r[3] + margin]
    }
}

/// A solved part: its map from photo pixels to garment pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct PartWarp {
    /// The garment label.
    pub label: u8,
    /// Photo region it may cover.
    pub region: [f32; 4],
    /// The map.
    pub map: PartMap,
}

/// A part's map from photo pixels to garment pixels.
#[derive(Debug, Clone, PartialEq)]
pub enum PartMap {
    /// A thin-plate spline through the control points.
    Spline(Spline),
    /// A bent tube along a body chain ([`tube`]).
    Tube(Tube),
}

/// A thin-plate spline from normalised photo coordinates to garment pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Spline {
    /// Spline centres (body pixels × `inv_norm`).
    pub centres: Vec<Vec2>,
    /// Spline weights (garment pixels), one per centre.
    pub weights: Vec<Vec2>,
    /// Affine term: `u = a[0] + a[1] x + a[2] y`, `v = a[3] + a[4] x + a[5] y`.
    pub affine: [f32; 6],
    /// 1 / the normalising length (the photo's longer side).
    pub inv_norm: f32,
}

/// The spline's radial basis `r² ln r²`.
fn basis(d2: f64) -> f64 {
    if d2 <= 1e-12 {
        0.0
    } else {
        d2 * d2.ln()
    }
}

/// Solves `a x = b` in place by Gaussian elimination with partial pivoting.
fn solve_linear(mut a: Vec<Vec<f64>>, mut b: Vec<[f64; 2]>) -> Option<Vec<[f64; 2]>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            if f == 0.0 {
                continue;
            }
            let pivot_row = a[col].clone();
            for (k, v) in a[row].iter_mut().enumerate().skip(col) {
                *v -= f * pivot_row[k];
            }
            b[row][0] -= f * b[col][0];
            b[row][1] -= f * b[col][1];
        }
    }
    let mut x = vec![[0.0; 2]; n];
    for row in (0..n).rev() {
        let mut s = b[row];
        for k in row + 1..n {
            s[0] -= a[row][k] * x[k][0];
            s[1] -= a[row][k] * x[k][1];
        }
        x[row] = [s[0] / a[row][row], s[1] / a[row][row]];
    }
    x.iter()
        .all(|v| v[0].is_finite() && v[1].is_finite())
        .then_some(x)
}

impl PartWarp {
    /// Solves the spline taking `part.body` (photo pixels, normalised by `norm`) to
    /// `part.garment`; a part with a [`Part::tube`] takes the tube as it is.
    pub fn solve(part: &Part, norm: f32) -> Result<PartWarp, GarmentError> {
        if let Some(tube) = &part.tube {
            if tube.joints.len() < 2 || tube.stations.is_empty() {
                return Err(GarmentError::ControlPoints {
                    label: part.label,
                    body: tube.joints.len(),
                    garment: tube.stations.len(),
                    max: MAX_POINTS,
                });
            }
            return Ok(PartWarp {
                label: part.label,
                region: part.region,
                map: PartMap::Tube(tube.clone()),
            });
        }
        let n = part.body.len();
        if n != part.garment.len() || !(3..=MAX_POINTS).contains(&n) {
            return Err(GarmentError::ControlPoints {
                label: part.label,
                body: n,
                garment: part.garment.len(),
                max: MAX_POINTS,
            });
        }
        let inv_norm = 1.0 / norm.max(1.0);
        let c: Vec<Vec2> = part.body.iter().map(|p| *p * inv_norm).collect();
        let m = n + 3;
        let mut a = vec![vec![0.0f64; m]; m];
        let mut b = vec![[0.0f64; 2]; m];
        for i in 0..n {
            for j in 0..n {
                let d = c[i] - c[j];
                a[i][j] = basis(f64::from(d.length_squared()));
            }
            a[i][i] += LAMBDA;
            let p = [1.0, f64::from(c[i].x), f64::from(c[i].y)];
            for k in 0..3 {
                a[i][n + k] = p[k];
                a[n + k][i] = p[k];
            }
            b[i] = [f64::from(part.garment[i].x), f64::from(part.garment[i].y)];
        }
        let x = solve_linear(a, b).ok_or(GarmentError::Collinear { label: part.label })?;
        Ok(PartWarp {
            label: part.label,
            region: part.region,
            map: PartMap::Spline(Spline {
                centres: c,
                weights: x[..n]
                    .iter()
                    .map(|w| Vec2::new(w[0] as f32, w[1] as f32))
                    .collect(),
                affine: [
                    x[n][0] as f32,
                    x[n + 1][0] as f32,
                    x[n + 2][0] as f32,
                    x[n][1] as f32,
                    x[n + 1][1] as f32,
                    x[n + 2][1] as f32,
                ],
                inv_norm,
            }),
        })
    }

    /// The garment pixel the photo pixel `p` takes (before the grid's interpolation).
    pub fn eval(&self, p: Vec2) -> Vec2 {
        match &self.map {
            PartMap::Spline(s) => s.eval(p),
            PartMap::Tube(t) => t.eval(p),
        }
    }
}

impl Spline {
    /// The garment pixel the photo pixel `p` takes.
    pub fn eval(&self, p: Vec2) -> Vec2 {
        let q = p * self.inv_norm;
        let a = &self.affine;
        let mut u = a[0] + a[1] * q.x + a[2] * q.y;
        let mut v = a[3] + a[4] * q.x + a[5] * q.y;
        for (c, w) in self.centres.iter().zip(&self.weights) {
            let d2 = (q - *c).length_squared();
            let k = if d2 > 1e-12 { d2 * d2.ln() } else { 0.0 };
            u += w.x * k;
            v += w.y * k;
        }
        Vec2::new(u, v)
    }
}

/// Pixels between the nodes of the grid the splines are evaluated on (the kernel
/// interpolates bilinearly between them; a spline bends over tens of pixels, so the
/// interpolation stays within a quarter pixel of the exact map — 0.16 px for the strongly
/// bent torso of the unit test).
pub const GRID_STEP: u32 = 8;

/// The grid the parts' splines are evaluated on: the parts' regions' bounding rectangle
/// (clipped to the photo) with nodes every [`GRID_STEP`] pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpGrid {
    /// The rectangle's top-left photo pixel.
    pub origin: (u32, u32),
    /// The rectangle's size in pixels (0 when no part reaches the photo).
    pub size: (u32, u32),
    /// Nodes per row and per column (each at least 2).
    pub nodes: (u32, u32),
}

impl WarpGrid {
    /// The grid over `parts` on a `width`×`height` photo.
    pub fn new(parts: &[PartWarp], (width, height): (u32, u32)) -> WarpGrid {
        let mut r = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in parts {
            r = [
                r[0].min(p.region[0]),
                r[1].min(p.region[1]),
                r[2].max(p.region[2]),
                r[3].max(p.region[3]),
            ];
        }
        let x0 = r[0].max(0.0).floor();
        let y0 = r[1].max(0.0).floor();
        let x1 = r[2].min(width as f32 - 1.0).ceil();
        let y1 = r[3].min(height as f32 - 1.0).ceil();
        let (w, h) = if parts.is_empty() || x1 < x0 || y1 < y0 {
            (0, 0)
        } else {
            ((x1 - x0) as u32 + 1, (y1 - y0) as u32 + 1)
        };
        let nodes = |n: u32| n.saturating_sub(1).div_ceil(GRID_STEP).max(1) + 1;
        WarpGrid {
            origin: (x0 as u32, y0 as u32),
            size: (w, h),
            nodes: (nodes(w), nodes(h)),
        }
    }

    /// Nodes per part.
    pub fn len(&self) -> usize {
        (self.nodes.0 * self.nodes.1) as usize
    }

    /// Whether the rectangle is empty.
    pub fn is_empty(&self) -> bool {
        self.size.0 == 0 || self.size.1 == 0
    }

    /// Every part's map at every node (part after part, row-major), with the folds taken
    /// out over each part's region ([`fold::unfold`]).
    pub fn evaluate(&self, parts: &[PartWarp]) -> Vec<Vec2> {
        self.evaluate_checked(parts).0
    }

    /// [`Self::evaluate`], with each part's folds before and after they were taken out.
    pub fn evaluate_checked(&self, parts: &[PartWarp]) -> (Vec<Vec2>, Vec<(Folds, Folds)>) {
        let mut out = self.evaluate_raw(parts);
        let n = self.len();
        let mut report = Vec::with_capacity(parts.len());
        for (k, part) in parts.iter().enumerate() {
            let cells = self.cells_in(part.region);
            let nodes = &mut out[k * n..(k + 1) * n];
            report.push(fold::unfold(nodes, self.node_dims(), cells));
        }
        (out, report)
    }

    /// Every part's map at every node as it is (folds and all).
    pub fn evaluate_raw(&self, parts: &[PartWarp]) -> Vec<Vec2> {
        let (nx, ny) = self.nodes;
        let o = Vec2::new(self.origin.0 as f32, self.origin.1 as f32);
        let mut out = Vec::with_capacity(self.len() * parts.len());
        for part in parts {
            for j in 0..ny {
                for i in 0..nx {
                    let p = o + Vec2::new((i * GRID_STEP) as f32, (j * GRID_STEP) as f32);
                    out.push(part.eval(p));
                }
            }
        }
        out
    }

    /// Nodes per row and per column.
    pub fn node_dims(&self) -> (usize, usize) {
        (self.nodes.0 as usize, self.nodes.1 as usize)
    }

    /// Whether grid cell `(i, j)` lies inside `region` (a photo rectangle `[x0, y0, x1, y1]`)
    /// with its centre: the cells a part's folds are checked over.
    pub fn cells_in(&self, region: [f32; 4]) -> impl Fn(usize, usize) -> bool {
        let o = Vec2::new(self.origin.0 as f32, self.origin.1 as f32);
        move |i: usize, j: usize| {
            let c = o + Vec2::new(
                (i as f32 + 0.5) * GRID_STEP as f32,
                (j as f32 + 0.5) * GRID_STEP as f32,
            );
            c.x >= region[0] && c.y >= region[1] && c.x <= region[2] && c.y <= region[3]
        }
    }

    /// The garment pixel of rectangle pixel `local` from the nodes of one part (`nodes`,
    /// [`Self::len`] of them): the kernel's bilinear interpolation.
    pub fn lookup(&self, nodes: &[Vec2], local: Vec2) -> Vec2 {
        let (nx, ny) = self.nodes;
        let g = local / GRID_STEP as f32;
        let c = g
            .floor()
            .min(Vec2::new((nx - 2) as f32, (ny - 2) as f32))
            .max(Vec2::ZERO);
        let f = g - c;
        let i = (c.y as u32 * nx + c.x as u32) as usize;
        let n = nx as usize;
        let top = nodes[i].lerp(nodes[i + 1], f.x);
        let bottom = nodes[i + n].lerp(nodes[i + n + 1], f.x);
        top.lerp(bottom, f.y)
    }
}

/// Mirrors `WarpParams` in `shaders/garment/warp.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct GarmentWarpParams {
    /// Rectangle width.
    pub width: u32,
    /// Rectangle height.
    pub height: u32,
    /// Garment width.
    pub garment_w: u32,
    /// Garment height.
    pub garment_h: u32,
    /// Parts in the table.
    pub parts: u32,
    /// The rectangle's left column on the photo.
    pub ox: u32,
    /// The rectangle's top row on the photo.
    pub oy: u32,
    /// Pixels between grid nodes.
    pub step: u32,
    /// Grid nodes per row.
    pub nx: u32,
    /// Grid nodes per column.
    pub ny: u32,
    /// Padding to 48 bytes.
    pub pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<GarmentWarpParams>() == 48);

/// The warped garment over the photo's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpOutput {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// Premultiplied RGBA8 per pixel (alpha = coverage).
    pub rgba: Vec<[u8; 4]>,
    /// The front-most part's label per pixel (0 where no part covers it).
    pub top: Vec<u8>,
}

impl WarpOutput {
    /// A full-size output from the rectangle `grid` computed (`rgba` and `top` over it).
    fn from_rect(
        (width, height): (u32, u32),
        grid: &WarpGrid,
        rgba: impl Fn(usize) -> [u8; 4],
        top: impl Fn(usize) -> u8,
    ) -> WarpOutput {
        let n = (width as usize) * (height as usize);
        let mut out = WarpOutput {
            width,
            height,
            rgba: vec![[0; 4]; n],
            top: vec![0; n],
        };
        let (rw, rh) = (grid.size.0 as usize, grid.size.1 as usize);
        let (ox, oy) = (grid.origin.0 as usize, grid.origin.1 as usize);
        for y in 0..rh {
            for x in 0..rw {
                let (src, dst) = (y * rw + x, (oy + y) * width as usize + ox + x);
                out.rgba[dst] = rgba(src);
                out.top[dst] = top(src);
            }
        }
        out
    }
}

/// The `garment/warp` kernel on one device.
#[derive(Debug)]
pub struct Warper {
    ctx: Arc<GpuContext>,
    pipeline: wgpu::ComputePipeline,
}

/// The kernel's part table: 8 floats per part (see the kernel's header).
fn part_table(parts: &[PartWarp], grid: &WarpGrid) -> Vec<f32> {
    let mut table = vec![0.0f32; 8 * parts.len().max(1)];
    for (i, p) in parts.iter().enumerate() {
        table[8 * i] = f32::from(p.label);
        table[8 * i + 1] = (i * grid.len()) as f32;
        table[8 * i + 4..8 * i + 8].copy_from_slice(&p.region);
    }
    table
}

impl Warper {
    /// The warper of `ctx`, compiled once per device and reused.
    pub fn for_context(ctx: &Arc<GpuContext>) -> Arc<Warper> {
        static CACHE: Mutex<Vec<Arc<Warper>>> = Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = cache.iter().find(|w| Arc::ptr_eq(&w.ctx, ctx)) {
            return w.clone();
        }
        let w = Arc::new(Warper {
            pipeline: ctx.pipeline("garment/warp"),
            ctx: ctx.clone(),
        });
        cache.push(w.clone());
        w
    }

    /// Warps `garment` onto a `width`×`height` photo grid with `parts` (front first).
    pub fn warp(
        &self,
        garment: &GarmentImage,
        parts: &[PartWarp],
        size: (u32, u32),
    ) -> Result<WarpOutput, GarmentError> {
        self.warp_checked(garment, parts, size).map(|(out, _)| out)
    }

    /// [`Self::warp`], with each part's folds before and after they were taken out
    /// ([`WarpGrid::evaluate_checked`]).
    pub fn warp_checked(
        &self,
        garment: &GarmentImage,
        parts: &[PartWarp],
        size: (u32, u32),
    ) -> Result<(WarpOutput, Vec<(Folds, Folds)>), GarmentError> {
        self.warp_texture_checked(
            (garment.width, garment.height),
            &garment.rgba,
            &garment.labels,
            parts,
            size,
        )
    }

    /// [`Self::warp`] for any garment texture: `(gw, gh)` pixels of premultiplied `rgba`
    /// with part `labels`. One upload, one dispatch over the parts' rectangle, one readback.
    pub fn warp_texture(
        &self,
        size_g: (u32, u32),
        rgba: &[[u8; 4]],
        labels: &[u8],
        parts: &[PartWarp],
        size: (u32, u32),
    ) -> Result<WarpOutput, GarmentError> {
        self.warp_texture_checked(size_g, rgba, labels, parts, size)
            .map(|(out, _)| out)
    }

    /// [`Self::warp_texture`] with the folds of [`Self::warp_checked`].
    pub fn warp_texture_checked(
        &self,
        (gw, gh): (u32, u32),
        rgba: &[[u8; 4]],
        labels: &[u8],
        parts: &[PartWarp],
        (width, height): (u32, u32),
    ) -> Result<(WarpOutput, Vec<(Folds, Folds)>), GarmentError> {
        let n_tex = (gw as usize) * (gh as usize);
        if rgba.len() != n_tex || labels.len() != n_tex {
            return Err(GarmentError::TextureSize {
                width: gw,
                height: gh,
                texels: rgba.len(),
                labels: labels.len(),
            });
        }
        if parts.len() > MAX_PARTS {
            return Err(GarmentError::TooManyParts {
                parts: parts.len(),
                max: MAX_PARTS,
            });
        }
        let grid = WarpGrid::new(parts, (width, height));
        if grid.is_empty() {
            return Ok((
                WarpOutput::from_rect((width, height), &grid, |_| [0; 4], |_| 0),
                Vec::new(),
            ));
        }
        let ctx = &*self.ctx;
        let (rw, rh) = grid.size;
        let params = GarmentWarpParams {
            width: rw,
            height: rh,
            garment_w: gw,
            garment_h: gh,
            parts: parts.len() as u32,
            ox: grid.origin.0,
            oy: grid.origin.1,
            step: GRID_STEP,
            nx: grid.nodes.0,
            ny: grid.nodes.1,
            pad: [0; 2],
        };
        // RGBA8 bytes are the kernel's little-endian words as they are.
        let texels: &[u8] = bytemuck::cast_slice(rgba);
        let mut packed = vec![0u32; n_tex.div_ceil(4)];
        for (i, &l) in labels.iter().enumerate() {
            packed[i / 4] |= u32::from(l) << (8 * (i % 4));
        }
        let (nodes, folds) = grid.evaluate_checked(parts);
        let nodes: Vec<[f32; 2]> = nodes.iter().map(|v| v.to_array()).collect();
        let u = ctx.uniform("garment warp params", bytemuck::bytes_of(&params));
        let table = ctx.storage_init(
            "garment parts",
            bytemuck::cast_slice(&part_table(parts, &grid)),
        );
        let tex = ctx.storage_init("garment texels", texels);
        let lab = ctx.storage_init("garment labels", bytemuck::cast_slice(&packed));
        let nodes = ctx.storage_init("garment warp grid", bytemuck::cast_slice(&nodes));
        let n = u64::from(rw) * u64::from(rh);
        let size = n * 2 * 4;
        let out = ctx.storage("garment warped", size);
        let bind = ctx.bind(&self.pipeline, &[&u, &table, &tex, &lab, &nodes, &out]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        GpuContext::dispatch(
            &mut enc,
            &self.pipeline,
            &bind,
            (rw.div_ceil(8), rh.div_ceil(8), 1),
        );
        let staging = ctx.staging("garment warped staging", size);
        enc.copy_buffer_to_buffer(&out, 0, &staging, 0, size);
        let bytes = ctx
            .submit_and_read(enc, &staging, size)
            .map_err(GarmentError::Gpu)?;
        let words: &[u32] = bytemuck::cast_slice(&bytes);
        let n = n as usize;
        Ok((
            WarpOutput::from_rect(
                (width, height),
                &grid,
                |i| words[i].to_le_bytes(),
                |i| words[n + i] as u8,
            ),
            folds,
        ))
    }
}

/// The CPU reference of the `garment/warp` kernel (the tests' oracle): the same grid, the
/// same interpolation, the same sampling and layering.
pub fn cpu_warp(
    garment: &GarmentImage,
    parts: &[PartWarp],
    (width, height): (u32, u32),
) -> WarpOutput {
    let (gw, gh) = (garment.width as i32, garment.height as i32);
    let texel = |x: i32, y: i32, l: u8| -> [f32; 4] {
        if x < 0 || y < 0 || x >= gw || y >= gh {
            return [0.0; 4];
        }
        let i = (y * gw + x) as usize;
        if garment.labels[i] != l {
            return [0.0; 4];
        }
        garment.rgba[i].map(|v| f32::from(v) / 255.0)
    };
    let grid = WarpGrid::new(parts, (width, height));
    let nodes = grid.evaluate(parts);
    let (rw, rh) = grid.size;
    let o = Vec2::new(grid.origin.0 as f32, grid.origin.1 as f32);
    let mut rgba = Vec::with_capacity((rw * rh) as usize);
    let mut top = Vec::with_capacity((rw * rh) as usize);
    for y in 0..rh {
        for x in 0..rw {
            let local = Vec2::new(x as f32, y as f32);
            let p = local + o;
            let mut acc = [0.0f32; 4];
            let mut front = 0u8;
            for (k, part) in parts.iter().enumerate() {
                let r = part.region;
                if p.x < r[0] || p.y < r[1] || p.x > r[2] || p.y > r[3] {
                    continue;
                }
                let uv = grid.lookup(&nodes[k * grid.len()..(k + 1) * grid.len()], local);
                let (x0, y0) = (uv.x.floor(), uv.y.floor());
                let (fx, fy) = (uv.x - x0, uv.y - y0);
                let (ix, iy) = (x0 as i32, y0 as i32);
                let t00 = texel(ix, iy, part.label);
                let t10 = texel(ix + 1, iy, part.label);
                let t01 = texel(ix, iy + 1, part.label);
                let t11 = texel(ix + 1, iy + 1, part.label);
                let mut s = [0.0f32; 4];
                for c in 0..4 {
                    let a = t00[c] + (t10[c] - t00[c]) * fx;
                    let b = t01[c] + (t11[c] - t01[c]) * fx;
                    s[c] = a + (b - a) * fy;
                }
                if s[3] > 0.0 {
                    if front == 0 {
                        front = part.label;
                    }
                    let k = 1.0 - acc[3];
                    for c in 0..4 {
                        acc[c] += k * s[c];
                    }
                }
            }
            rgba.push(acc.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8));
            top.push(front);
        }
    }
    WarpOutput::from_rect((width, height), &grid, |i| rgba[i], |i| top[i])
}

#[cfg(test)]
mod tests;
