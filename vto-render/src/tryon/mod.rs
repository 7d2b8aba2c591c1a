//! Glasses placement, light estimation and scene building: from a [`Face`] and a
//! [`Product`] to a [`raster::Scene`](crate::raster::Scene).
//!
//! # Camera (the focal-length assumption)
//! Photos carry no reliable intrinsics, so the camera is a pinhole at the image centre with a
//! focal length of [`FOCAL_FACTOR`] × the longer image side (1.2 ≈ a 45° field of view
//! along that side, a phone's main camera or a portrait lens at arm's length). The head sits
//! at the depth where one centimetre at the face spans the head pose's `scale` pixels, so the
//! perspective projection agrees with MediaPipe's weak-perspective landmarks at the nose
//! bridge and only parts far in front of or behind it (the temples) get perspective.
//!
//! # Placement
//! The product's origin goes onto landmark 168 (the nose bridge between the eyes), 4 mm in
//! front of the skin along the head's forward axis, and turns with the head pose (yaw, pitch,
//! roll). Scale:
//! - **real units** when the model follows the conventions of `RENDERING.md` (metres, +Y up,
//!   front +Z, origin at the bridge; recognised by a 10–20 cm wide frame whose origin is
//!   centred and at its front): 1 m in the file is 100 cm on the canonical face;
//! - **auto-fit** otherwise: the front is scaled to [`AUTO_FIT_WIDTH`] × the face width
//!   (landmarks 234–454) and the bridge is taken at the front's horizontal centre, 15 % of its
//!   height above its middle. The result metadata says which, and why.
//!
//! # Occluder
//! A depth-only ellipsoid head built from the landmarks: as wide as the face at the ears
//! (234–454, +4 %), as tall as 1.24 × forehead–chin (10–152), its front 8 mm behind the nose
//! bridge, turned with the head. The frame's temples pass into it behind the hinges and are
//! rejected there (counted in [`RasterStats`]).
//!
//! # Light
//! Ambient and key light come from the face itself: linear luminance at the landmarks is fitted
//! as `a + b · n` (n: the normal of a head-sized sphere through the landmark, turned with the
//! pose); `a` gives the ambient level, `b` the key light's direction and strength, the face's
//! mean colour their tint (half-way to white, as skin colours its own reflection).

use image::RgbaImage;
use serde_json::json;

use crate::product::{AlphaMode, Product};
use crate::raster::{
    LensMode, Lighting, Mesh, RasterMaterial, RasterStats, RasterVertex, Scene, Shadow,
};
use crate::vision::head_pose::canonical_face;
use crate::vision::Face;

/// Focal length as a multiple of the longer image side (see the module docs).
pub const FOCAL_FACTOR: f32 = 1.2;
/// Auto-fit: frame width as a fraction of the face width (landmarks 234–454).
pub const AUTO_FIT_WIDTH: f32 = 0.88;
/// The bridge anchor sits this far (cm) in front of landmark 168.
pub const BRIDGE_OFFSET_CM: f32 = 0.4;
/// Near plane (cm).
const NEAR_CM: f32 = 1.0;
/// Most supersampled samples per render (48 MB of depth, 32 MB of ids); the supersampling
/// factor is lowered to stay within it.
pub const MAX_SAMPLES: u64 = 4 << 20;

/// Glasses or sunglasses: decides how lenses are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eyewear {
    /// Clear lenses with a faint reflection.
    Glasses,
    /// Tinted lenses: the lens material's tint, else a default grey gradient.
    Sunglasses,
}

impl Eyewear {
    /// `glasses` or `sunglasses`.
    pub fn name(self) -> &'static str {
        match self {
            Eyewear::Glasses => "glasses",
            Eyewear::Sunglasses => "sunglasses",
        }
    }
}

/// Rendering options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Supersampling per axis (1–4; 2 = 4 samples per pixel).
    pub supersampling: u32,
    /// Contact shadow strength (0 disables it).
    pub shadow_strength: f32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            supersampling: 2,
            shadow_strength: 0.35,
        }
    }
}

/// How the product was scaled.
#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// The model follows the asset conventions: real units.
    RealUnits,
    /// The model does not: auto-fit to the face width, with the reason.
    AutoFit(String),
}

/// Where things landed, in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Real units or auto-fit.
    pub fit: Fit,
    /// Asset units → centimetres.
    pub scale_to_cm: f32,
    /// The focal length used (pixels).
    pub focal_px: f32,
    /// The product's anchor (bridge) projected.
    pub anchor_px: [f32; 2],
    /// Landmark 168.
    pub landmark_168_px: [f32; 2],
    /// The lens boxing centres (middle of each lens's bounding box) projected, image left
    /// first, when the product has BLEND lenses.
    pub lens_centres_px: Option<[[f32; 2]; 2]>,
    /// Eye centres from the landmarks (image left first).
    pub eye_centres_px: [[f32; 2]; 2],
    /// Face width (landmarks 234–454), pixels.
    pub face_width_px: f32,
    /// The region that was rendered: x0, y0, width, height.
    pub roi: [u32; 4],
}

/// Why a try-on could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum TryOnError {
    /// The face has no head pose (degenerate landmarks).
    #[error("the face's head pose could not be estimated")]
    NoHeadPose,
    /// The product has no usable geometry.
    #[error("the 3D model has no usable geometry: {0}")]
    BadProduct(String),
    /// The rasterizer failed.
    #[error(transparent)]
    Raster(#[from] crate::raster::RasterError),
}

type V3 = [f32; 3];

fn mat_vec(r: &[[f32; 3]; 3], v: V3) -> V3 {
    [
        r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
        r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
        r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
    ]
}

fn mat_t_vec(r: &[[f32; 3]; 3], v: V3) -> V3 {
    [
        r[0][0] * v[0] + r[1][0] * v[1] + r[2][0] * v[2],
        r[0][1] * v[0] + r[1][1] * v[1] + r[2][1] * v[2],
        r[0][2] * v[0] + r[1][2] * v[1] + r[2][2] * v[2],
    ]
}

fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn norm(v: V3) -> V3 {
    crate::product::normalize_or(v, [0.0, 0.0, -1.0])
}

/// The camera and the head frame: maps canonical-face-model points (cm, model frame of
/// [`crate::vision::head_pose`]) to camera space and pixels.
#[derive(Debug, Clone)]
pub struct HeadCamera {
    rotation: [[f32; 3]; 3],
    scale: f32,
    /// Landmark 168 in the pose frame (pixels, y up, z towards the camera).
    anchor_pose: V3,
    /// The model-frame point that lands on the anchor.
    anchor_model: V3,
    focal: f32,
    centre: [f32; 2],
    /// The anchor in camera space (cm).
    anchor_cam: V3,
}

impl HeadCamera {
    /// Sets up the camera for `face` in a `width`×`height` photo.
    pub fn new(face: &Face, width: u32, height: u32) -> Result<Self, TryOnError> {
        let pose = face.head_pose.as_ref().ok_or(TryOnError::NoHeadPose)?;
        let l = face.landmarks.get(168).ok_or(TryOnError::NoHeadPose)?;
        if !(pose.scale > 0.0 && pose.scale.is_finite()) {
            return Err(TryOnError::NoHeadPose);
        }
        let anchor_pose = [l[0], -l[1], -l[2]];
        let t = pose.translation;
        let anchor_model = mat_t_vec(
            &pose.rotation,
            [
                (anchor_pose[0] - t[0]) / pose.scale,
                (anchor_pose[1] - t[1]) / pose.scale,
                (anchor_pose[2] - t[2]) / pose.scale,
            ],
        );
        let focal = FOCAL_FACTOR * width.max(height) as f32;
        let centre = [width as f32 / 2.0, height as f32 / 2.0];
        let z0 = focal / pose.scale;
        let anchor_cam = [
            (l[0] - centre[0]) * z0 / focal,
            (l[1] - centre[1]) * z0 / focal,
            z0,
        ];
        Ok(HeadCamera {
            rotation: pose.rotation,
            scale: pose.scale,
            anchor_pose,
            anchor_model,
            focal,
            centre,
            anchor_cam,
        })
    }

    /// A model-frame point (cm) in camera space (cm; x right, y down, z forward).
    pub fn to_camera(&self, m: V3) -> V3 {
        let d = [
            m[0] - self.anchor_model[0],
            m[1] - self.anchor_model[1],
            m[2] - self.anchor_model[2],
        ];
        let r = mat_vec(&self.rotation, d);
        [
            self.anchor_cam[0] + r[0],
            self.anchor_cam[1] - r[1],
            self.anchor_cam[2] - r[2],
        ]
    }

    /// A model-frame direction in camera space.
    pub fn dir_to_camera(&self, n: V3) -> V3 {
        let r = mat_vec(&self.rotation, n);
        [r[0], -r[1], -r[2]]
    }

    /// Projects a camera-space point to image pixels.
    pub fn project(&self, c: V3) -> [f32; 2] {
        [
            self.focal * c[0] / c[2] + self.centre[0],
            self.focal * c[1] / c[2] + self.centre[1],
        ]
    }

    /// The landmark 168 anchor in the model frame (cm).
    pub fn anchor_model(&self) -> V3 {
        self.anchor_model
    }

    /// Pixels per centimetre at the face.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The anchor in the pose frame.
    pub fn anchor_pose(&self) -> V3 {
        self.anchor_pose
    }

    /// The focal length in pixels.
    pub fn focal(&self) -> f32 {
        self.focal
    }
}

/// Decides real units vs auto-fit and returns (fit, asset units → cm, asset-frame anchor).
pub fn fit_product(product: &Product, face_width_cm: f32) -> (Fit, f32, V3) {
    let (lo, hi) = product.bounds();
    let width = hi[0] - lo[0];
    let centred = (lo[0] + hi[0]).abs() < 0.005;
    let origin_inside_y = lo[1] <= 0.0 && hi[1] >= 0.0;
    let front_near_origin = hi[2] >= -0.005 && hi[2] <= 0.03;
    if (0.10..=0.20).contains(&width) && centred && origin_inside_y && front_near_origin {
        return (Fit::RealUnits, 100.0, [0.0; 3]);
    }
    let reason = if !(0.10..=0.20).contains(&width) {
        format!("frame width {width:.4} units is not 0.10–0.20 m")
    } else {
        "origin is not at the bridge centre of the front".to_string()
    };
    // The front: the 20 % of the depth nearest +Z.
    let depth = hi[2] - lo[2];
    let zcut = hi[2] - 0.2 * depth.max(width * 0.1);
    let mut flo = [f32::MAX; 3];
    let mut fhi = [f32::MIN; 3];
    for p in product.primitives.iter().flat_map(|p| &p.positions) {
        if p[2] >= zcut {
            for k in 0..3 {
                flo[k] = flo[k].min(p[k]);
                fhi[k] = fhi[k].max(p[k]);
            }
        }
    }
    let fw = (fhi[0] - flo[0]).max(1e-9);
    let fh = fhi[1] - flo[1];
    let scale = AUTO_FIT_WIDTH * face_width_cm / fw;
    let anchor = [
        (flo[0] + fhi[0]) / 2.0,
        (flo[1] + fhi[1]) / 2.0 + 0.15 * fh,
        fhi[2] - 0.05 * fh,
    ];
    (Fit::AutoFit(reason), scale, anchor)
}

/// Light estimated from the face (see the module docs).
pub fn estimate_lighting(photo: &RgbaImage, face: &Face, cam: &HeadCamera) -> Lighting {
    let model = canonical_face();
    if model.len() < 468 {
        return Lighting {
            ambient: [0.35; 3],
            key_dir: norm([0.3, -0.6, -0.75]),
            key_color: [0.8; 3],
        };
    }
    let centre = head_centre(model);
    let lin = |v: u8| {
        let c = f32::from(v) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    // Normal equations of lum ≈ a + b·n over front-facing landmarks.
    let mut ata = [[0.0f64; 4]; 4];
    let mut atb = [0.0f64; 4];
    let mut mean = [0.0f64; 3];
    let mut count = 0.0f64;
    for (lm, m) in face.landmarks.iter().zip(model) {
        let n = cam.dir_to_camera(norm([m[0] - centre[0], m[1] - centre[1], m[2] - centre[2]]));
        if n[2] > -0.2 {
            continue;
        }
        let (x, y) = (lm[0].round() as i64, lm[1].round() as i64);
        let mut rgb = [0.0f32; 3];
        let mut k = 0.0;
        for dy in -1..=1 {
            for dx in -1..=1 {
                let (xx, yy) = (x + dx, y + dy);
                if xx < 0 || yy < 0 || xx >= photo.width() as i64 || yy >= photo.height() as i64 {
                    continue;
                }
                let p = photo.get_pixel(xx as u32, yy as u32).0;
                for c in 0..3 {
                    rgb[c] += lin(p[c]);
                }
                k += 1.0;
            }
        }
        if k == 0.0 {
            continue;
        }
        let rgb = rgb.map(|v| v / k);
        let lum = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
        let row = [1.0, f64::from(n[0]), f64::from(n[1]), f64::from(n[2])];
        for i in 0..4 {
            for j in 0..4 {
                ata[i][j] += row[i] * row[j];
            }
            atb[i] += row[i] * f64::from(lum);
        }
        for c in 0..3 {
            mean[c] += f64::from(rgb[c]);
        }
        count += 1.0;
    }
    let default_dir = norm([0.3, -0.6, -0.75]);
    if count < 20.0 {
        return Lighting {
            ambient: [0.35; 3],
            key_dir: default_dir,
            key_color: [0.8; 3],
        };
    }
    for row in ata.iter_mut() {
        row.iter_mut().for_each(|v| *v += 1e-6);
    }
    let sol = solve4(ata, atb).unwrap_or([0.3, 0.0, 0.0, 0.0]);
    let b = [sol[1] as f32, sol[2] as f32, sol[3] as f32];
    let b_len = (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]).sqrt();
    // The light comes from where the face is brightest; keep it in front of the face.
    let mut dir = if b_len > 1e-4 { norm(b) } else { default_dir };
    if dir[2] > -0.2 {
        dir = norm([dir[0], dir[1], -0.4]);
    }
    let mean = mean.map(|v| (v / count) as f32);
    let mean_lum = (0.2126 * mean[0] + 0.7152 * mean[1] + 0.0722 * mean[2]).max(1e-3);
    let tint = mean.map(|c| 0.5 + 0.5 * c / mean_lum);
    // Skin albedo taken as 0.45 (linear luminance).
    let ambient_level = ((sol[0] as f32 - b_len * 0.5) / 0.45).clamp(0.08, 1.5);
    let key_level = (b_len / 0.45).clamp(0.1, 2.0);
    Lighting {
        ambient: tint.map(|t| t * ambient_level),
        key_dir: dir,
        key_color: tint.map(|t| t * key_level),
    }
}

fn solve4(mut a: [[f64; 4]; 4], mut b: [f64; 4]) -> Option<[f64; 4]> {
    for c in 0..4 {
        let p = (c..4).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in 0..4 {
            if r != c {
                let f = a[r][c] / a[c][c];
                let pivot = a[c];
                for (x, p) in a[r].iter_mut().zip(pivot) {
                    *x -= f * p;
                }
                b[r] -= f * b[c];
            }
        }
    }
    Some(std::array::from_fn(|i| b[i] / a[i][i]))
}

/// A head-centre proxy in the model frame, from the template itself (so it does not depend
/// on where the template's origin is): between the face's side landmarks 234 and 454, at mid
/// height between forehead (10) and chin (152).
fn head_centre(model: &[[f32; 3]]) -> V3 {
    [
        (model[234][0] + model[454][0]) / 2.0,
        (model[10][1] + model[152][1]) / 2.0,
        (model[234][2] + model[454][2]) / 2.0,
    ]
}

/// The ellipsoid head occluder in the model frame (see the module docs): centre, semi-axes.
pub fn occluder_ellipsoid(face: &Face, cam: &HeadCamera) -> (V3, V3) {
    let lm = &face.landmarks;
    let s = cam.scale();
    let half_w = dist2(lm[234], lm[454]) / 2.0 / s;
    let height = dist2(lm[10], lm[152]) / s;
    let ax = 1.04 * half_w;
    let ay = 0.62 * height;
    let az = 0.95 * ax;
    let front = cam.anchor_model()[2] - 0.8;
    // Horizontally and vertically centred on the face template (middle of 234–454 and of
    // forehead–chin), in the model frame.
    let model = canonical_face();
    let (cx, cy) = if model.len() >= 468 {
        let c = head_centre(model);
        (c[0], c[1])
    } else {
        (0.0, 0.0)
    };
    ([cx, cy, front - az], [ax, ay, az])
}

fn occluder_mesh(face: &Face, cam: &HeadCamera, roi: [u32; 4], ss: f32) -> Mesh {
    let (c, r) = occluder_ellipsoid(face, cam);
    const LAT: usize = 16;
    const LON: usize = 32;
    let mut vertices = Vec::new();
    for i in 0..=LAT {
        let th = std::f32::consts::PI * i as f32 / LAT as f32;
        for j in 0..LON {
            let ph = std::f32::consts::TAU * j as f32 / LON as f32;
            let m = [
                c[0] + r[0] * th.sin() * ph.cos(),
                c[1] + r[1] * th.cos(),
                c[2] + r[2] * th.sin() * ph.sin(),
            ];
            vertices.push(vertex(cam, m, [0.0, 0.0, -1.0], [0.0; 2], 0.0, roi, ss));
        }
    }
    // Only the triangles that can hold the nearest depth inside the ROI: the ellipsoid is
    // convex, so its camera-facing half is enough, and triangles off the ROI do nothing.
    let centre_cam = cam.to_camera(c);
    let (w, h) = ((roi[2] as f32) * ss, (roi[3] as f32) * ss);
    let keep = |t: [u32; 3]| {
        let v = t.map(|i| vertices[i as usize]);
        let lo = [0, 1].map(|k| v[0].pos[k].min(v[1].pos[k]).min(v[2].pos[k]));
        let hi = [0, 1].map(|k| v[0].pos[k].max(v[1].pos[k]).max(v[2].pos[k]));
        if hi[0] < 0.0 || hi[1] < 0.0 || lo[0] > w || lo[1] > h {
            return false;
        }
        let mid: [f32; 3] =
            std::array::from_fn(|k| (v[0].view[k] + v[1].view[k] + v[2].view[k]) / 3.0);
        let outward: [f32; 3] = std::array::from_fn(|k| mid[k] - centre_cam[k]);
        // Facing the camera (at the origin) when the outward direction points back at it.
        outward[0] * mid[0] + outward[1] * mid[1] + outward[2] * mid[2] < 0.0
    };
    let mut triangles = Vec::new();
    for i in 0..LAT {
        for j in 0..LON {
            let j2 = (j + 1) % LON;
            let a = (i * LON + j) as u32;
            let b = (i * LON + j2) as u32;
            let cc = ((i + 1) * LON + j) as u32;
            let d = ((i + 1) * LON + j2) as u32;
            for t in [[a, cc, b], [b, cc, d]] {
                if keep(t) {
                    triangles.push([t[0], t[1], t[2], 0]);
                }
            }
        }
    }
    Mesh {
        vertices,
        triangles,
    }
}

fn vertex(
    cam: &HeadCamera,
    model: V3,
    normal_model: V3,
    uv: [f32; 2],
    aux: f32,
    roi: [u32; 4],
    ss: f32,
) -> RasterVertex {
    let c = cam.to_camera(model);
    let p = cam.project(c);
    let n = cam.dir_to_camera(normal_model);
    let z = c[2];
    RasterVertex {
        pos: [
            (p[0] - roi[0] as f32) * ss,
            (p[1] - roi[1] as f32) * ss,
            z,
            if z > 0.0 { 1.0 / z } else { 0.0 },
        ],
        view: [c[0], c[1], c[2], aux],
        normal: [n[0], n[1], n[2], 0.0],
        uv: [uv[0], uv[1], 0.0, 0.0],
    }
}

/// A scene ready for [`crate::raster::Rasterizer::render`], with the placement.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The scene.
    pub scene: Scene,
    /// Where things land.
    pub placement: Placement,
}

/// Places `product` on `face` in a `photo` and builds the scene.
pub fn prepare(
    photo: &RgbaImage,
    face: &Face,
    product: &Product,
    kind: Eyewear,
    options: &Options,
) -> Result<Prepared, TryOnError> {
    let (w, h) = (photo.width(), photo.height());
    let cam = HeadCamera::new(face, w, h)?;
    let lm = &face.landmarks;
    if lm.len() < 468 {
        return Err(TryOnError::NoHeadPose);
    }
    let face_width_px = dist2(lm[234], lm[454]);
    let (fit, k, origin) = fit_product(product, face_width_px / cam.scale());
    let (lo, hi) = product.bounds();
    let y_span = (hi[1] - lo[1]).max(1e-9);
    let anchor_model = cam.anchor_model();
    let to_model = |p: &[f32; 3]| -> V3 {
        [
            anchor_model[0] + k * (p[0] - origin[0]),
            anchor_model[1] + k * (p[1] - origin[1]),
            anchor_model[2] + BRIDGE_OFFSET_CM + k * (p[2] - origin[2]),
        ]
    };
    let ss = options.supersampling.clamp(1, 4);

    // Footprint (before the ROI is known) and lens centres.
    let mut lo_px = [f32::MAX; 2];
    let mut hi_px = [f32::MIN; 2];
    // Lens boxing centres: bounding box of each side's lens vertices (asset x < 0, ≥ 0),
    // min xyz then max xyz.
    let mut lens_box = [[f32::MAX, f32::MAX, f32::MAX, f32::MIN, f32::MIN, f32::MIN]; 2];
    for p in &product.primitives {
        let blend = product
            .materials
            .get(p.material)
            .is_some_and(|m| m.alpha_mode == AlphaMode::Blend);
        for q in &p.positions {
            let m = to_model(q);
            let c = cam.to_camera(m);
            if c[2] < NEAR_CM {
                continue;
            }
            let px = cam.project(c);
            for k in 0..2 {
                lo_px[k] = lo_px[k].min(px[k]);
                hi_px[k] = hi_px[k].max(px[k]);
            }
            if blend {
                let side = usize::from(q[0] - origin[0] >= 0.0);
                for k in 0..3 {
                    lens_box[side][k] = lens_box[side][k].min(m[k]);
                    lens_box[side][3 + k] = lens_box[side][3 + k].max(m[k]);
                }
            }
        }
    }
    if lo_px[0] > hi_px[0] {
        return Err(TryOnError::BadProduct(
            "no vertex in front of the camera".into(),
        ));
    }
    let lighting = estimate_lighting(photo, face, &cam);
    let s = cam.scale();
    let kxy = (lighting.key_dir[0].powi(2) + lighting.key_dir[1].powi(2)).sqrt();
    let shadow = Shadow {
        offset: if kxy > 1e-3 {
            [
                -lighting.key_dir[0] / kxy * 0.3 * s * kxy.min(1.0),
                -lighting.key_dir[1] / kxy * 0.3 * s * kxy.min(1.0),
            ]
        } else {
            [0.0, 0.0]
        },
        radius: (0.2 * s).clamp(1.0, 12.0),
        strength: options.shadow_strength,
    };
    let margin = shadow.reach() as f32 + 2.0;
    let x0 = (lo_px[0] - margin).floor().clamp(0.0, w as f32) as u32;
    let y0 = (lo_px[1] - margin).floor().clamp(0.0, h as f32) as u32;
    let x1 = (hi_px[0] + margin).ceil().clamp(0.0, w as f32) as u32;
    let y1 = (hi_px[1] + margin).ceil().clamp(0.0, h as f32) as u32;
    let roi = [x0, y0, x1.saturating_sub(x0), y1.saturating_sub(y0)];
    // Keep the supersampled buffers within a budget on huge photos: fewer samples per pixel
    // rather than a refusal.
    let ss = {
        let px = u64::from(roi[2]) * u64::from(roi[3]);
        let mut ss = ss;
        while ss > 1 && px * u64::from(ss * ss) > MAX_SAMPLES {
            ss -= 1;
        }
        ss
    };

    // Materials and textures.
    let mut texels = Vec::new();
    let mut offsets = Vec::new();
    for t in &product.textures {
        offsets.push(texels.len() as u32);
        texels.extend(
            t.rgba
                .chunks_exact(4)
                .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]])),
        );
    }
    let materials: Vec<RasterMaterial> = product
        .materials
        .iter()
        .map(|m| {
            let tex = m
                .base_color_texture
                .and_then(|i| product.textures.get(i).map(|t| (i, t)))
                .map_or([0; 4], |(i, t)| [offsets[i], t.width, t.height, 1]);
            RasterMaterial {
                base: m.base_color,
                pbr: [m.metallic, m.roughness, m.alpha_cutoff, 0.0],
                tex,
                flags: [
                    match m.alpha_mode {
                        AlphaMode::Opaque => 0,
                        AlphaMode::Mask => 1,
                        AlphaMode::Blend => 2,
                    },
                    u32::from(m.double_sided),
                    0,
                    0,
                ],
            }
        })
        .collect();
    let lens_mode = match kind {
        Eyewear::Glasses => LensMode::Clear,
        Eyewear::Sunglasses => {
            let tinted = product.materials.iter().any(|m| {
                let lum =
                    0.2126 * m.base_color[0] + 0.7152 * m.base_color[1] + 0.0722 * m.base_color[2];
                m.alpha_mode == AlphaMode::Blend && m.base_color[3] >= 0.3 && lum < 0.8
            });
            if tinted {
                LensMode::Material
            } else {
                LensMode::DefaultGradient
            }
        }
    };

    // Geometry.
    let mut mesh = Mesh::default();
    let ssf = ss as f32;
    for p in &product.primitives {
        let base = mesh.vertices.len() as u32;
        let mat = p.material.min(materials.len().saturating_sub(1)) as u32;
        for (i, q) in p.positions.iter().enumerate() {
            let n = p.normals.get(i).copied().unwrap_or([0.0, 0.0, 1.0]);
            let uv = p.uvs.get(i).copied().unwrap_or([0.0, 0.0]);
            let aux = (hi[1] - q[1]) / y_span;
            mesh.vertices
                .push(vertex(&cam, to_model(q), n, uv, aux, roi, ssf));
        }
        for t in p.indices.chunks_exact(3) {
            mesh.triangles
                .push([base + t[0], base + t[1], base + t[2], mat]);
        }
    }
    if materials.is_empty() || mesh.triangles.is_empty() {
        return Err(TryOnError::BadProduct("no triangles".into()));
    }
    let occluder = occluder_mesh(face, &cam, roi, ssf);

    let eye = |a: usize, b: usize| [(lm[a][0] + lm[b][0]) / 2.0, (lm[a][1] + lm[b][1]) / 2.0];
    let mut eyes = [eye(33, 133), eye(362, 263)];
    if eyes[0][0] > eyes[1][0] {
        eyes.swap(0, 1);
    }
    let lens_centres_px = if lens_box.iter().all(|b| b[0] <= b[3]) {
        let mut c = lens_box.map(|b| {
            cam.project(cam.to_camera([
                (b[0] + b[3]) / 2.0,
                (b[1] + b[4]) / 2.0,
                (b[2] + b[5]) / 2.0,
            ]))
        });
        if c[0][0] > c[1][0] {
            c.swap(0, 1);
        }
        Some(c)
    } else {
        None
    };
    let anchor_px = cam.project(cam.to_camera(to_model(&origin)));
    Ok(Prepared {
        scene: Scene {
            roi,
            ss,
            product: mesh,
            occluder,
            materials,
            texels,
            lighting,
            lens_mode,
            shadow,
            near: NEAR_CM,
        },
        placement: Placement {
            fit,
            scale_to_cm: k,
            focal_px: cam.focal(),
            anchor_px,
            landmark_168_px: [lm[168][0], lm[168][1]],
            lens_centres_px,
            eye_centres_px: eyes,
            face_width_px,
            roi,
        },
    })
}

/// Result metadata (JSON) for a placement, a render's counts, the face and the number of face
/// candidates the detectors found.
pub fn metadata(
    kind: Eyewear,
    prepared: &Prepared,
    stats: &RasterStats,
    face: &Face,
    faces_found: usize,
) -> serde_json::Value {
    let p = &prepared.placement;
    let s = &prepared.scene;
    let (fit, reason) = match &p.fit {
        Fit::RealUnits => ("real_units", None),
        Fit::AutoFit(r) => ("auto_fit", Some(r.clone())),
    };
    json!({
        "engine": "glasses-raster",
        "category": kind.name(),
        "fit": fit,
        "auto_fit_reason": reason,
        "scale_to_cm": p.scale_to_cm,
        "face_candidates": faces_found,
        "face_policy": "largest face (by detection box area) when several are found",
        "head_pose_deg": face.head_pose.as_ref().map(|h| json!({
            "yaw": h.yaw_pitch_roll_deg[0], "pitch": h.yaw_pitch_roll_deg[1], "roll": h.yaw_pitch_roll_deg[2],
        })),
        "focal_px": p.focal_px,
        "focal_assumption": format!("{FOCAL_FACTOR} × the longer image side"),
        "anchor_px": p.anchor_px,
        "landmark_168_px": p.landmark_168_px,
        "lens_centres_px": p.lens_centres_px,
        "eye_centres_px": p.eye_centres_px,
        "face_width_px": p.face_width_px,
        "roi": p.roi,
        "supersampling": s.ss * s.ss,
        "lens": match s.lens_mode {
            LensMode::Clear => "clear",
            LensMode::Material => "tinted_material",
            LensMode::DefaultGradient => "tinted_default_gradient",
        },
        "lighting": {
            "ambient": s.lighting.ambient,
            "key_dir": s.lighting.key_dir,
            "key_color": s.lighting.key_color,
        },
        "occluded_fragments": stats.occluded_fragments,
        "drawn_fragments": stats.drawn_fragments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product::sample::SampleFrame;

    #[test]
    fn samples_are_real_units_and_rescaled_copies_auto_fit() {
        let p = SampleFrame::RoundBlack.product();
        let (fit, k, o) = fit_product(&p, 15.0);
        assert_eq!(fit, Fit::RealUnits);
        assert_eq!(k, 100.0);
        assert_eq!(o, [0.0; 3]);
        let mut cm = p.clone();
        for prim in &mut cm.primitives {
            for v in &mut prim.positions {
                *v = [v[0] * 100.0 + 3.0, v[1] * 100.0 - 2.0, v[2] * 100.0];
            }
        }
        let (fit, k, o) = fit_product(&cm, 15.0);
        assert!(matches!(fit, Fit::AutoFit(_)));
        // The front is ~13 cm wide (in file units): scaled to 0.88 × 15 cm, so k ≈ 1.
        assert!((0.9..1.1).contains(&k), "{k}");
        // The bridge is estimated within 3 mm of the true one (3, -2, 0).
        assert!(
            (o[0] - 3.0).abs() < 0.05 && (o[1] + 2.0).abs() < 0.3,
            "{o:?}"
        );
    }

    #[test]
    fn solve4_solves() {
        let a = [
            [4.0, 1.0, 0.0, 0.0],
            [1.0, 3.0, 1.0, 0.0],
            [0.0, 1.0, 2.0, 0.5],
            [0.0, 0.0, 0.5, 1.0],
        ];
        let x = [1.0, -2.0, 0.5, 3.0];
        let b = std::array::from_fn(|i| (0..4).map(|j| a[i][j] * x[j]).sum());
        let got = solve4(a, b).unwrap();
        for i in 0..4 {
            assert!((got[i] - x[i]).abs() < 1e-9);
        }
    }
}
