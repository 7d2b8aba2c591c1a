//! Finding the wearer's own glasses: rims around each eye, the bridge, the temples, the tint.
//!
//! Everything is measured in the face's frame: `x` along the line from the image-left eye to
//! the image-right eye, `y` perpendicular to it (down the face), lengths in units of the
//! distance between the eye centres (`ipd`), so a 60-pixel face and a 600-pixel face are
//! judged alike.
//!
//! # Rims
//! Around each eye, [`RAYS`] rays leave the eye's centre; along each, from just outside the
//! eye's own contour to where a lens could still end, the smoothed luminance is scanned for a
//! thin line or an edge (a rim is a dark, light or coloured band a few pixels wide:
//! `|L(r) − (L(r−d) + L(r+d)) / 2|` at three widths `d`). A closed contour through one radius
//! per ray is chosen by dynamic programming (strongest response, smooth radius). A real rim
//! answers strongly *beside* the eye (outer side) and *below* it, where bare skin is smooth;
//! bare skin answers there only with weak lines (the brows, above the eye, answer either way
//! and are not counted).
//!
//! # Bridge
//! Between the eyes, a frame crosses the nose with a bar: in columns across the midline a
//! line at the same height answers in every column. Bare skin gives no such line.
//!
//! # Temples
//! From each rim's outermost upper point a line is followed outward, column by column, toward
//! the face's side (landmarks 234 / 454).
//!
//! # Confidence
//! [`Features::confidence`]: the median rim strength beside the eyes (outer side), the
//! bridge's strength and the median rim strength below the eyes, each ramped between what
//! faces without and with glasses gave on the real portraits of `../shared/testdata/people`
//! and weighted 0.45, 0.35, 0.2 (see `docs/own-eyewear.md`). Faces whose eyes are less than
//! [`MIN_IPD_PX`] apart get 0.
//!
//! # Tint
//! Lenses are dark when both the eyes' whites (their brightest tenth) and the lens area are
//! below [`TINT_RATIO`] of the cheeks' luminance: the whole inside of the rims joins the mask.

use image::RgbaImage;

/// Rays per eye.
pub const RAYS: usize = 72;
/// Radius samples per ray.
const BINS: usize = 48;
/// Lenses are dark when the eyes' whites and the lens area are both below this fraction of
/// the cheeks' luminance.
pub const TINT_RATIO: f32 = 0.5;

/// The eye contours (MediaPipe face mesh), subject's right eye first.
pub const EYE_CONTOURS: [[usize; 16]; 2] = [
    [
        33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246,
    ],
    [
        263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466,
    ],
];
/// Each eye's corners (outer, inner) and lids (upper, lower), subject's right eye first.
const EYE_CORNERS: [[usize; 4]; 2] = [[33, 133, 159, 145], [263, 362, 386, 374]];
/// Cheek landmarks below the eyes where the skin's luminance is sampled.
pub const CHEEKS: [usize; 4] = [205, 425, 187, 411];
/// The brows (MediaPipe face mesh), each a closed outline, subject's right first.
pub const BROWS: [[usize; 10]; 2] = [
    [70, 63, 105, 66, 107, 55, 65, 52, 53, 46],
    [300, 293, 334, 296, 336, 285, 295, 282, 283, 276],
];
/// The face's sides at eye height (subject's right first): where temples leave the face.
const FACE_SIDES: [usize; 2] = [234, 454];
/// MediaPipe's face-oval landmarks, in order around the face.
pub const FACE_OVAL: [usize; 36] = [
    10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152,
    148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,
];

/// A 2D point in image pixels.
pub type P2 = [f32; 2];

fn add(a: P2, b: P2) -> P2 {
    [a[0] + b[0], a[1] + b[1]]
}
fn sub(a: P2, b: P2) -> P2 {
    [a[0] - b[0], a[1] - b[1]]
}
fn mul(a: P2, k: f32) -> P2 {
    [a[0] * k, a[1] * k]
}
fn len(a: P2) -> f32 {
    (a[0] * a[0] + a[1] * a[1]).sqrt()
}

/// The face's frame: origin between the eyes, axes and unit length (the eyes' distance).
#[derive(Debug, Clone, PartialEq)]
pub struct FaceFrame {
    /// The midpoint of the eye centres (pixels).
    pub mid: P2,
    /// Unit vector from the image-left eye to the image-right eye.
    pub x: P2,
    /// Unit vector down the face.
    pub y: P2,
    /// The distance between the eye centres (pixels).
    pub ipd: f32,
    /// The eye centres, image-left first.
    pub eyes: [P2; 2],
    /// Each eye's contour (image-left eye first).
    pub contours: [Vec<P2>; 2],
    /// Each eye's half width and half height (pixels), image-left first.
    pub eye_axes: [P2; 2],
    /// Which landmark eye (0: subject's right) is image-left.
    pub left_is_subject_right: bool,
}

impl FaceFrame {
    /// The frame of a face's 468 landmarks; `None` with fewer landmarks or eyes on one spot.
    pub fn new(lm: &[[f32; 3]]) -> Option<FaceFrame> {
        if lm.len() < 468 {
            return None;
        }
        let p = |i: usize| [lm[i][0], lm[i][1]];
        let centre = |e: usize| {
            let s = EYE_CONTOURS[e]
                .iter()
                .fold([0.0, 0.0], |a, &i| add(a, p(i)));
            mul(s, 1.0 / 16.0)
        };
        let c = [centre(0), centre(1)];
        let left_is_subject_right = c[0][0] <= c[1][0];
        let order = if left_is_subject_right {
            [0, 1]
        } else {
            [1, 0]
        };
        let eyes = order.map(|e| c[e]);
        let d = sub(eyes[1], eyes[0]);
        let ipd = len(d);
        if !ipd.is_finite() || ipd < 4.0 {
            return None;
        }
        let x = mul(d, 1.0 / ipd);
        let y = [-x[1], x[0]];
        let axes = order.map(|e| {
            let k = EYE_CORNERS[e];
            [
                len(sub(p(k[0]), p(k[1]))) / 2.0,
                (len(sub(p(k[2]), p(k[3]))) / 2.0).max(0.04 * ipd),
            ]
        });
        Some(FaceFrame {
            mid: mul(add(eyes[0], eyes[1]), 0.5),
            x,
            y,
            ipd,
            eyes,
            contours: order.map(|e| EYE_CONTOURS[e].iter().map(|&i| p(i)).collect()),
            eye_axes: axes,
            left_is_subject_right,
        })
    }

    /// Face-frame coordinates (units of ipd) → image pixels.
    pub fn to_image(&self, u: f32, v: f32) -> P2 {
        add(
            self.mid,
            add(mul(self.x, u * self.ipd), mul(self.y, v * self.ipd)),
        )
    }

    /// Image pixels → face-frame coordinates (units of ipd).
    pub fn to_face(&self, p: P2) -> P2 {
        let d = sub(p, self.mid);
        [
            (d[0] * self.x[0] + d[1] * self.x[1]) / self.ipd,
            (d[0] * self.y[0] + d[1] * self.y[1]) / self.ipd,
        ]
    }

    /// The unit direction of angle `theta` in the face frame (0: image-right, π/2: down).
    fn dir(&self, theta: f32) -> P2 {
        let (s, c) = theta.sin_cos();
        add(mul(self.x, c), mul(self.y, s))
    }
}

/// A smoothed luminance crop of the photo, sampled bilinearly in image coordinates.
pub struct Luma32 {
    x0: i64,
    y0: i64,
    w: usize,
    h: usize,
    v: Vec<f32>,
}

impl Luma32 {
    /// The luminance of `photo` inside the box (clamped to the photo), blurred `passes` times
    /// with a 3×3 binomial kernel.
    pub fn new(photo: &RgbaImage, lo: P2, hi: P2, passes: usize) -> Luma32 {
        let (pw, ph) = (photo.width() as i64, photo.height() as i64);
        let x0 = (lo[0].floor() as i64).clamp(0, pw - 1);
        let y0 = (lo[1].floor() as i64).clamp(0, ph - 1);
        let x1 = (hi[0].ceil() as i64 + 1).clamp(x0 + 1, pw);
        let y1 = (hi[1].ceil() as i64 + 1).clamp(y0 + 1, ph);
        let (w, h) = ((x1 - x0) as usize, (y1 - y0) as usize);
        let mut v = Vec::with_capacity(w * h);
        for y in y0..y1 {
            for x in x0..x1 {
                let p = photo.get_pixel(x as u32, y as u32).0;
                v.push(0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]));
            }
        }
        let mut out = Luma32 { x0, y0, w, h, v };
        for _ in 0..passes {
            out.blur();
        }
        out
    }

    fn blur(&mut self) {
        let (w, h) = (self.w, self.h);
        let mut t = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let a = self.v[y * w + x.saturating_sub(1)];
                let b = self.v[y * w + x];
                let c = self.v[y * w + (x + 1).min(w - 1)];
                t[y * w + x] = 0.25 * a + 0.5 * b + 0.25 * c;
            }
        }
        for y in 0..h {
            for x in 0..w {
                let a = t[y.saturating_sub(1) * w + x];
                let b = t[y * w + x];
                let c = t[(y + 1).min(h - 1) * w + x];
                self.v[y * w + x] = 0.25 * a + 0.5 * b + 0.25 * c;
            }
        }
    }

    /// The luminance at image point `p` (bilinear, clamped to the crop).
    pub fn at(&self, p: P2) -> f32 {
        let fx = (p[0] - self.x0 as f32).clamp(0.0, (self.w - 1) as f32);
        let fy = (p[1] - self.y0 as f32).clamp(0.0, (self.h - 1) as f32);
        let (ix, iy) = (fx.floor() as usize, fy.floor() as usize);
        let (jx, jy) = ((ix + 1).min(self.w - 1), (iy + 1).min(self.h - 1));
        let (tx, ty) = (fx - ix as f32, fy - iy as f32);
        let r0 = self.v[iy * self.w + ix] * (1.0 - tx) + self.v[iy * self.w + jx] * tx;
        let r1 = self.v[jy * self.w + ix] * (1.0 - tx) + self.v[jy * self.w + jx] * tx;
        r0 * (1.0 - ty) + r1 * ty
    }
}

/// The line-or-edge response at `p` across direction `u` (unit): the strongest of
/// `|L(p) − (L(p − d u) + L(p + d u)) / 2|` over the widths `ds`, and the width that gave it.
fn line_response(l: &Luma32, p: P2, u: P2, ds: &[f32]) -> (f32, f32) {
    let c = l.at(p);
    let mut best = (0.0f32, ds[0]);
    for &d in ds {
        let a = l.at(sub(p, mul(u, d)));
        let b = l.at(add(p, mul(u, d)));
        let r = (c - 0.5 * (a + b)).abs();
        if r > best.0 {
            best = (r, d);
        }
    }
    best
}

/// One eye's rim: the chosen radius per ray and how rim-like each ray is.
#[derive(Debug, Clone, PartialEq)]
pub struct Rim {
    /// The contour, one image point per ray (ray `k` at angle `2πk / RAYS`).
    pub points: Vec<P2>,
    /// Per ray: the response on the contour.
    pub strength: Vec<f32>,
    /// Per ray: the median response along the ray (the skin's own texture).
    pub background: Vec<f32>,
    /// Per ray: the line width that answered best (pixels).
    pub width: Vec<f32>,
}

/// Where a ray's scan starts and ends (units of ipd from the eye centre).
fn ray_span(frame: &FaceFrame, eye: usize, theta: f32) -> (f32, f32) {
    let (s, c) = theta.sin_cos();
    let [a, b] = frame.eye_axes[eye];
    let r_eye = 1.0 / ((c / a).powi(2) + (s / b).powi(2)).sqrt() / frame.ipd;
    let r0 = r_eye + 0.09;
    // A lens ends within an ellipse 0.68 wide and 0.58 high around the eye, and never
    // past the face's midline.
    let mut r1 = 1.0 / ((c / 0.68).powi(2) + (s / 0.58).powi(2)).sqrt();
    let inward = if eye == 0 { c } else { -c };
    if inward > 0.05 {
        r1 = r1.min(0.46 / inward);
    }
    (r0, r1.max(r0 + 0.05))
}

/// Finds the strongest smooth closed contour around eye `eye` (0: image-left).
pub fn find_rim(l: &Luma32, frame: &FaceFrame, eye: usize) -> Rim {
    let ds = line_widths(frame.ipd);
    let mut energy = vec![[0.0f32; BINS]; RAYS];
    let mut widths = vec![[0.0f32; BINS]; RAYS];
    let mut background = vec![0.0f32; RAYS];
    for k in 0..RAYS {
        let theta = std::f32::consts::TAU * k as f32 / RAYS as f32;
        let u = frame.dir(theta);
        let (r0, r1) = ray_span(frame, eye, theta);
        for i in 0..BINS {
            let r = (r0 + (r1 - r0) * i as f32 / (BINS - 1) as f32) * frame.ipd;
            let p = add(frame.eyes[eye], mul(u, r));
            let (e, d) = line_response(l, p, u, &ds);
            energy[k][i] = e;
            widths[k][i] = d;
        }
        let mut sorted = energy[k];
        sorted.sort_by(f32::total_cmp);
        background[k] = sorted[BINS / 2];
    }
    let path = closed_path(&energy);
    let mut points = Vec::with_capacity(RAYS);
    let mut strength = Vec::with_capacity(RAYS);
    let mut width = Vec::with_capacity(RAYS);
    for (k, &i) in path.iter().enumerate() {
        let theta = std::f32::consts::TAU * k as f32 / RAYS as f32;
        let (r0, r1) = ray_span(frame, eye, theta);
        let r = (r0 + (r1 - r0) * i as f32 / (BINS - 1) as f32) * frame.ipd;
        points.push(add(frame.eyes[eye], mul(frame.dir(theta), r)));
        strength.push(energy[k][i]);
        width.push(widths[k][i]);
    }
    Rim {
        points,
        strength,
        background,
        width,
    }
}

/// The line widths scanned (pixels) for eyes `ipd` pixels apart.
fn line_widths(ipd: f32) -> [f32; 3] {
    [
        (0.012 * ipd).max(1.5),
        (0.025 * ipd).max(2.5),
        (0.045 * ipd).max(3.5),
    ]
}

/// The best radius bin per ray: maximum total energy, the radius changing by at most 2 bins
/// a ray and paying for each bin it changes; closed by running one and a half turns and
/// keeping the middle turn.
fn closed_path(energy: &[[f32; BINS]]) -> Vec<usize> {
    let n = energy.len();
    let mean = energy.iter().flatten().sum::<f32>() / (n * BINS) as f32;
    let penalty = 0.35 * mean.max(0.5);
    let steps = n + n / 2;
    let mut score = vec![[0.0f32; BINS]; steps];
    let mut back = vec![[0usize; BINS]; steps];
    score[0] = energy[0];
    for s in 1..steps {
        let e = &energy[s % n];
        let prev = score[s - 1];
        for i in 0..BINS {
            let lo = i.saturating_sub(2);
            let mut best = (f32::MIN, i);
            for (j, &p) in prev.iter().enumerate().take(i + 3).skip(lo) {
                let v = p - penalty * i.abs_diff(j) as f32;
                if v > best.0 {
                    best = (v, j);
                }
            }
            score[s][i] = best.0 + e[i];
            back[s][i] = best.1;
        }
    }
    let mut i = (0..BINS)
        .max_by(|&a, &b| score[steps - 1][a].total_cmp(&score[steps - 1][b]))
        .unwrap_or(0);
    let mut chosen = vec![0usize; steps];
    for s in (0..steps).rev() {
        chosen[s] = i;
        i = back[s][i];
    }
    let mut path = vec![0usize; n];
    for s in n / 4..n / 4 + n {
        path[s % n] = chosen[s];
    }
    path
}

/// The bar across the nose: its height (face-frame `v`), strength and width (pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bridge {
    /// Face-frame `v` (units of ipd) of the bar's centre.
    pub v: f32,
    /// The median over the columns of the response at that height.
    pub strength: f32,
    /// The share of columns whose strongest line is within a few pixels of that height.
    pub agreement: f32,
    /// The line width that answered best (pixels).
    pub width: f32,
    /// The skin's own response there (median over the scanned heights).
    pub background: f32,
}

/// Looks for a bar across the nose between the eyes.
pub fn find_bridge(l: &Luma32, frame: &FaceFrame) -> Bridge {
    let ds = line_widths(frame.ipd);
    const COLS: usize = 9;
    const ROWS: usize = 40;
    let (v0, v1) = (-0.3f32, 0.12f32);
    let mut resp = vec![[0.0f32; ROWS]; COLS];
    let mut wid = vec![[0.0f32; ROWS]; COLS];
    for (c, col) in resp.iter_mut().enumerate() {
        let u = -0.1 + 0.2 * c as f32 / (COLS - 1) as f32;
        for (r, cell) in col.iter_mut().enumerate() {
            let v = v0 + (v1 - v0) * r as f32 / (ROWS - 1) as f32;
            let (e, d) = line_response(l, frame.to_image(u, v), frame.y, &ds);
            *cell = e;
            wid[c][r] = d;
        }
    }
    // The height whose median response across the columns is highest.
    let median_at = |r: usize| {
        let mut col: Vec<f32> = resp.iter().map(|c| c[r]).collect();
        col.sort_by(f32::total_cmp);
        col[COLS / 2]
    };
    let best = (0..ROWS)
        .max_by(|&a, &b| median_at(a).total_cmp(&median_at(b)))
        .unwrap_or(0);
    let agree = resp
        .iter()
        .filter(|c| {
            let m = (0..ROWS)
                .max_by(|&a, &b| c[a].total_cmp(&c[b]))
                .unwrap_or(0);
            m.abs_diff(best) <= 2
        })
        .count();
    let mut all: Vec<f32> = resp.iter().flatten().copied().collect();
    all.sort_by(f32::total_cmp);
    let mut ws: Vec<f32> = wid.iter().map(|c| c[best]).collect();
    ws.sort_by(f32::total_cmp);
    Bridge {
        v: v0 + (v1 - v0) * best as f32 / (ROWS - 1) as f32,
        strength: median_at(best),
        agreement: agree as f32 / COLS as f32,
        width: ws[COLS / 2],
        background: all[all.len() / 2],
    }
}

/// What detection measured (every number the confidence is made of, for the metadata and
/// the calibration). Strengths are line responses in grey levels (0–255 luminance).
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// The distance between the eye centres (pixels).
    pub ipd: f32,
    /// The median rim strength below the eyes (rays 55°–125° from the eye line).
    pub below: f32,
    /// The median rim strength beside the eyes, outer side (within 35° of the eye line).
    pub outer: f32,
    /// The median rim strength beside the eyes, nose side.
    pub inner: f32,
    /// The bridge bar's strength (median over the columns across the nose).
    pub bridge: f32,
    /// The share of columns across the nose whose strongest line is at the bar's height.
    pub bridge_agreement: f32,
    /// The lens area's median luminance over the cheeks'.
    pub lens_ratio: f32,
    /// The eyes' brightest tenth (the whites) over the cheeks' luminance.
    pub white_ratio: f32,
}

/// Below this distance between the eye centres (pixels) a face is too small to judge: its
/// rims are a pixel or two wide and JPEG noise answers as strongly (confidence 0).
pub const MIN_IPD_PX: f32 = 40.0;

impl Features {
    /// The confidence (0–1) that the face wears glasses: the outer rims (bare skin beside the
    /// eyes is smooth; only a profile's face edge comes near), the bridge and the lower rims,
    /// each ramped between what bare faces and glasses gave on the real portraits. Dark
    /// lenses alone do not count (a shadowed eye socket is dark too).
    pub fn confidence(&self) -> f32 {
        if self.ipd < MIN_IPD_PX {
            return 0.0;
        }
        let ramp = |x: f32, lo: f32, hi: f32| ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
        0.45 * ramp(self.outer, 25.0, 40.0)
            + 0.35 * ramp(self.bridge, 30.0, 55.0)
            + 0.2 * ramp(self.below, 25.0, 45.0)
    }

    /// Whether the lenses are dark: the eyes' whites and the lens area both well below the
    /// cheeks' luminance.
    pub fn tinted(&self) -> bool {
        self.white_ratio < TINT_RATIO && self.lens_ratio < TINT_RATIO
    }
}

fn median(v: &mut [f32]) -> f32 {
    v.sort_by(f32::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Everything detection found on one face.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The face frame.
    pub frame: FaceFrame,
    /// Each eye's rim, image-left first.
    pub rims: [Rim; 2],
    /// The bar across the nose.
    pub bridge: Bridge,
    /// The measurements.
    pub features: Features,
    /// The confidence (0–1).
    pub confidence: f32,
    /// Whether the lenses are tinted (sunglasses).
    pub tinted: bool,
    /// The temples traced from each rim's outer top toward the ear (image-left eye first;
    /// empty where none was seen), with their line width (pixels).
    pub temples: [(Vec<P2>, f32); 2],
}

/// Measures the eye region of `photo` for worn glasses; `None` when the landmarks cannot give
/// a face frame.
pub fn detect(photo: &RgbaImage, lm: &[[f32; 3]]) -> Option<Found> {
    let frame = FaceFrame::new(lm)?;
    let corners = [
        frame.to_image(-1.5, -0.8),
        frame.to_image(1.5, -0.8),
        frame.to_image(-1.5, 0.8),
        frame.to_image(1.5, 0.8),
    ];
    let lo = corners.iter().fold([f32::MAX, f32::MAX], |a, p| {
        [a[0].min(p[0]), a[1].min(p[1])]
    });
    let hi = corners.iter().fold([f32::MIN, f32::MIN], |a, p| {
        [a[0].max(p[0]), a[1].max(p[1])]
    });
    let passes = if frame.ipd > 160.0 { 2 } else { 1 };
    let l = Luma32::new(photo, lo, hi, passes);
    let rims = [find_rim(&l, &frame, 0), find_rim(&l, &frame, 1)];
    let bridge = find_bridge(&l, &frame);
    let deg = |t: f32| t.to_degrees();
    // Outward from the image-left eye is angle 180°, from the image-right eye 0°.
    let side = |eye: usize, t: f32, outer: bool| {
        let a = deg(t);
        let toward_right = !(90.0..=270.0).contains(&a);
        let near = (a.min(360.0 - a) <= 35.0) || ((a - 180.0).abs() <= 35.0);
        near && ((eye == 1) == toward_right) == outer
    };
    let region = |pick: &dyn Fn(usize, f32) -> bool| {
        let mut v = Vec::new();
        for (eye, rim) in rims.iter().enumerate() {
            for k in 0..RAYS {
                let theta = std::f32::consts::TAU * k as f32 / RAYS as f32;
                if pick(eye, theta) {
                    v.push(rim.strength[k]);
                }
            }
        }
        median(&mut v)
    };
    let below = region(&|_, t| (55.0..=125.0).contains(&deg(t)));
    let outer = region(&|e, t| side(e, t, true));
    let inner = region(&|e, t| side(e, t, false));
    // The eyes' brightest tenth (the whites) and the lens area around them, against the
    // cheeks: dark lenses hide both.
    let cheek = CHEEKS
        .iter()
        .map(|&i| l.at([lm[i][0], lm[i][1]]))
        .sum::<f32>()
        / CHEEKS.len() as f32;
    let mut whites = Vec::new();
    let mut lens = Vec::new();
    for (eye, rim) in rims.iter().enumerate() {
        let c = frame.eyes[eye];
        let poly = &frame.contours[eye];
        let r = frame.eye_axes[eye][0];
        let n = 24;
        for j in 0..=n {
            for i in 0..=n {
                let d = [
                    r * (2.0 * i as f32 / n as f32 - 1.0),
                    r * (2.0 * j as f32 / n as f32 - 1.0),
                ];
                let p = add(c, d);
                if inside(poly, p) {
                    whites.push(l.at(p));
                }
            }
        }
        for p in &rim.points {
            for t in [0.6f32, 0.8] {
                lens.push(l.at(add(c, mul(sub(*p, c), t))));
            }
        }
    }
    whites.sort_by(f32::total_cmp);
    let white = whites.get(whites.len() * 9 / 10).copied().unwrap_or(0.0);
    let features = Features {
        ipd: frame.ipd,
        below,
        outer,
        inner,
        bridge: bridge.strength,
        bridge_agreement: bridge.agreement,
        lens_ratio: median(&mut lens) / cheek.max(1.0),
        white_ratio: white / cheek.max(1.0),
    };
    let confidence = features.confidence();
    let sides = face_sides(&frame, lm);
    let temples = [0, 1].map(|e| trace_temple(&l, &frame, &rims[e], e, sides[e], outer));
    Some(Found {
        temples,
        tinted: features.tinted(),
        frame,
        rims,
        bridge,
        features,
        confidence,
    })
}

/// Follows a temple from the outer top of `rim` (eye `eye`, 0: image-left) outward along the
/// face toward `side` (the face's edge on that side): a line across the face's `y` axis,
/// tracked column by column, at least a third as strong as the rims beside the eyes
/// (`outer`). Returns the points (empty when none) and the line width.
fn trace_temple(
    l: &Luma32,
    frame: &FaceFrame,
    rim: &Rim,
    eye: usize,
    side: P2,
    outer: f32,
) -> (Vec<P2>, f32) {
    let ds = line_widths(frame.ipd);
    let out = if eye == 0 { -1.0 } else { 1.0 };
    let ev = frame.to_face(frame.eyes[eye])[1];
    // The hinge: the rim point furthest out in the upper half.
    let Some(start) = rim
        .points
        .iter()
        .map(|p| frame.to_face(*p))
        .filter(|q| q[1] <= ev)
        .max_by(|a, b| (a[0] * out).total_cmp(&(b[0] * out)))
    else {
        return (Vec::new(), 0.0);
    };
    let end_u = frame.to_face(side)[0] * out + 0.05;
    let step = (1.5 / frame.ipd).max(0.01);
    let threshold = (outer / 3.0).max(15.0);
    let (mut u, mut v) = (start[0], start[1]);
    let (mut points, mut widths, mut misses) = (Vec::new(), Vec::new(), 0);
    while u * out < end_u && (u - start[0]).abs() < 0.6 && misses < 3 {
        u += out * step;
        let mut best = (0.0f32, v, 0.0f32);
        for j in -3..=3 {
            let vv = v + j as f32 * step * 0.5;
            let (e, d) = line_response(l, frame.to_image(u, vv), frame.y, &ds);
            if e > best.0 {
                best = (e, vv, d);
            }
        }
        if best.0 >= threshold {
            v = best.1;
            points.push(frame.to_image(u, v));
            widths.push(best.2);
            misses = 0;
        } else {
            misses += 1;
        }
    }
    if points.len() < 3 {
        return (Vec::new(), 0.0);
    }
    (points, median(&mut widths))
}

/// Whether `p` is inside the polygon `poly` (even-odd rule).
pub fn inside(poly: &[P2], p: P2) -> bool {
    let mut c = false;
    let mut j = poly.len().wrapping_sub(1);
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[j]);
        if (a[1] > p[1]) != (b[1] > p[1])
            && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0]
        {
            c = !c;
        }
        j = i;
    }
    c
}

/// The distance from `p` to the segment `a`–`b`.
pub fn seg_dist(p: P2, a: P2, b: P2) -> f32 {
    let ab = sub(b, a);
    let t = ((sub(p, a)[0] * ab[0] + sub(p, a)[1] * ab[1])
        / (ab[0] * ab[0] + ab[1] * ab[1]).max(1e-6))
    .clamp(0.0, 1.0);
    len(sub(p, add(a, mul(ab, t))))
}

/// The face's sides at eye height (image-left first), from landmarks 234 and 454.
pub fn face_sides(frame: &FaceFrame, lm: &[[f32; 3]]) -> [P2; 2] {
    let s = FACE_SIDES.map(|i| [lm[i][0], lm[i][1]]);
    if frame.left_is_subject_right {
        s
    } else {
        [s[1], s[0]]
    }
}
