//! A subject: the base mesh posed, dressed and photographed in a room (wall and floor, a
//! contact shadow, key and fill light) with its ground truth (joints and feet in pixels, the
//! person's pixels).

use glam::{Mat4, Quat, Vec2, Vec3};
use image::{Rgba, RgbaImage};

use super::appearance::{triangle_materials, vertex_materials, Appearance, Mat};
use super::body::{BaseBody, Part};
use super::pose::{rotations, Pose};
use crate::raster::{
    Lighting, Mesh, RasterError, RasterMaterial, RasterVertex, Rasterizer, Scene, Shadow,
    Transparency,
};

/// A body shape: overall height and girth relative to the base mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Height factor (the base mesh is about 170 cm tall).
    pub height: f32,
    /// Girth factor across and front to back.
    pub girth: f32,
}

/// Everything that defines one subject photo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubjectSpec {
    /// Pose and view.
    pub pose: Pose,
    /// Body shape.
    pub shape: Shape,
    /// Skin, clothes, hair.
    pub look: Appearance,
    /// Photo width, height (pixels).
    pub size: (u32, u32),
    /// Varies the room's colours.
    pub room: u32,
}

/// Ground-truth keypoints in MediaPipe pose order (33), pixels; `None` where the mesh gives
/// no point (ears, mouth corners, hand points).
pub type Keypoints = [Option<Vec2>; 33];

/// A rendered subject and its ground truth.
#[derive(Debug, Clone)]
pub struct Subject {
    /// What it was made from.
    pub spec: SubjectSpec,
    /// The photo.
    pub image: RgbaImage,
    /// Ground-truth keypoints (see [`Keypoints`]).
    pub keypoints: Keypoints,
    /// Per pixel: the body covers it.
    pub mask: Vec<bool>,
    /// Pixels from the top of the head to the floor under the feet.
    pub height_px: f32,
    /// Per foot (left, right): every pixel the foot (shoe) covers.
    pub feet_px: [Vec<Vec2>; 2],
    /// Per foot (left, right): the heel vertex's height above the floor (cm); a foot pushing
    /// off has its heel raised.
    pub heel_height_cm: [f32; 2],
    /// Per arm (the side of the feet's order): every pixel whose visible surface is the upper
    /// arm or the forearm (not the hand), from the id pass.
    pub arms_px: [Vec<Vec2>; 2],
}

impl Subject {
    /// Whether pixel (x, y) shows the body.
    pub fn is_body(&self, x: u32, y: u32) -> bool {
        x < self.image.width()
            && y < self.image.height()
            && self.mask[(y * self.image.width() + x) as usize]
    }

    /// Keypoint `i` of the ground truth.
    pub fn point(&self, i: usize) -> Option<Vec2> {
        self.keypoints.get(i).copied().flatten()
    }
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Deterministic value noise in [0, 1).
pub(super) fn hash(x: i32, y: i32, seed: u32) -> f32 {
    let mut h = (x as u32).wrapping_mul(0x8da6_b343)
        ^ (y as u32).wrapping_mul(0xd816_3841)
        ^ seed.wrapping_mul(0xcb1a_b31f);
    h ^= h >> 13;
    h = h.wrapping_mul(0x5bd1_e995);
    h ^= h >> 15;
    (h & 0xffff) as f32 / 65536.0
}

/// A pinhole camera at `eye` with `focal` pixels; `right`, `down`, `forward` its axes in the
/// world (x left of the person = image right on a frontal view, y up, z towards the camera).
pub(super) struct Camera {
    eye: Vec3,
    focal: f32,
    centre: Vec2,
    right: Vec3,
    down: Vec3,
    forward: Vec3,
}

impl Camera {
    /// Looking along -Z (world), level.
    fn frontal(eye: Vec3, focal: f32, centre: Vec2) -> Self {
        Camera {
            eye,
            focal,
            centre,
            right: Vec3::X,
            down: Vec3::NEG_Y,
            forward: Vec3::NEG_Z,
        }
    }

    /// At `eye` looking at `target`, world up kept up.
    pub(super) fn look_at(eye: Vec3, target: Vec3, focal: f32, centre: Vec2) -> Self {
        let forward = (target - eye).normalize_or(Vec3::NEG_Z);
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let down = forward.cross(right);
        Camera {
            eye,
            focal,
            centre,
            right,
            down,
            forward,
        }
    }

    /// World → camera space (cm; x right, y down, z forward).
    fn to_camera(&self, p: Vec3) -> Vec3 {
        let d = p - self.eye;
        Vec3::new(d.dot(self.right), d.dot(self.down), d.dot(self.forward))
    }
    fn dir_to_camera(&self, n: Vec3) -> Vec3 {
        Vec3::new(n.dot(self.right), n.dot(self.down), n.dot(self.forward))
    }
    pub(super) fn project(&self, p: Vec3) -> Vec2 {
        let c = self.to_camera(p);
        Vec2::new(c.x / c.z, c.y / c.z) * self.focal + self.centre
    }
    /// World direction of the ray through pixel `px`.
    fn ray(&self, px: Vec2) -> Vec3 {
        let d = (px - self.centre) / self.focal;
        self.right * d.x + self.down * d.y + self.forward
    }
}

/// The posed body in world space (cm, floor at y = 0, pelvis above the origin).
pub(super) struct Posed {
    pub(super) positions: Vec<Vec3>,
    pub(super) bones: Vec<Mat4>,
    pub(super) place: Mat4,
}

pub(super) fn pose_body(body: &BaseBody, spec: &SubjectSpec) -> Posed {
    let bones = body.pose_matrices(&rotations(body, spec.pose));
    let skinned = body.skin(&bones);
    let used: Vec<bool> = {
        let mut u = vec![false; skinned.len()];
        body.triangles
            .iter()
            .flatten()
            .for_each(|&i| u[i as usize] = true);
        u
    };
    let s = spec.shape;
    let scale = Mat4::from_scale(Vec3::new(s.girth * s.height, s.height, s.girth * s.height));
    let turn = Mat4::from_quat(Quat::from_rotation_y(spec.pose.yaw()));
    let pelvis = bones[body.bone("root").unwrap_or(0)]
        .transform_point3(body.head("upperleg01.L").with_x(0.0));
    let m = turn * scale * Mat4::from_translation(-pelvis);
    let floor = skinned
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(p, _)| m.transform_point3(*p).y)
        .fold(f32::MAX, f32::min);
    let place = Mat4::from_translation(Vec3::new(0.0, -floor, 0.0)) * m;
    Posed {
        positions: skinned.iter().map(|p| place.transform_point3(*p)).collect(),
        bones,
        place,
    }
}

fn normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut n = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let f = (b - a).cross(c - a);
        for &i in t {
            n[i as usize] += f;
        }
    }
    n.iter().map(|v| v.normalize_or(Vec3::Y)).collect()
}

/// The feet's heel (back-bottom) and toe-tip vertices, left then right.
fn foot_vertices(body: &BaseBody) -> [(usize, usize); 2] {
    let ankle_y = body.head("foot.L").y;
    // Only vertices the body's faces use (the helper tights also carry foot weights).
    let mut used = vec![false; body.rest.len()];
    body.triangles
        .iter()
        .flatten()
        .for_each(|&i| used[i as usize] = true);
    [1.0f32, -1.0].map(|side| {
        let foot: Vec<usize> = (0..body.rest.len())
            .filter(|&i| used[i] && body.parts[i] == Part::Foot && body.rest[i].x * side > 0.0)
            .collect();
        let heel = foot
            .iter()
            .copied()
            .min_by(|&a, &b| {
                let k = |i: usize| body.rest[i].z + 0.5 * (body.rest[i].y - ankle_y + 8.0).abs();
                k(a).total_cmp(&k(b))
            })
            .unwrap_or(0);
        let toe = foot
            .iter()
            .copied()
            .max_by(|&a, &b| body.rest[a].z.total_cmp(&body.rest[b].z))
            .unwrap_or(0);
        (heel, toe)
    })
}

/// Turns painted feet into shoes: smooths the shoe vertices (the toes merge into one toe
/// box) and puffs them out by a few millimetres, keeping the soles on the floor.
fn shoe_shape(positions: &mut [Vec3], triangles: &[[u32; 3]], mats: &[Mat]) {
    let shoe = |i: u32| mats[i as usize] == Mat::Shoes;
    let mut nbrs: Vec<Vec<u32>> = vec![Vec::new(); positions.len()];
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if shoe(a) {
                nbrs[a as usize].push(b);
            }
            if shoe(b) {
                nbrs[b as usize].push(a);
            }
        }
    }
    for _ in 0..8 {
        let src = positions.to_vec();
        for (i, n) in nbrs.iter().enumerate() {
            if n.is_empty() {
                continue;
            }
            let mean = n.iter().map(|&j| src[j as usize]).sum::<Vec3>() / n.len() as f32;
            positions[i] = src[i] * 0.4 + mean * 0.6;
        }
    }
    let nrm = normals(positions, triangles);
    for (i, n) in nbrs.iter().enumerate() {
        if !n.is_empty() {
            let p = positions[i] + nrm[i] * 0.6;
            positions[i] = Vec3::new(p.x, p.y.max(0.0), p.z);
        }
    }
}

/// Ground truth in world space.
fn ground_truth(body: &BaseBody, posed: &Posed) -> [Option<Vec3>; 33] {
    let joint = |name: &str| -> Option<Vec3> {
        let b = body.bone(name)?;
        Some(
            posed
                .place
                .transform_point3(posed.bones[b].transform_point3(body.heads[b])),
        )
    };
    let mut k: [Option<Vec3>; 33] = [None; 33];
    let nose = (0..body.rest.len())
        .filter(|&i| body.parts[i] == Part::Head && !body.eyes[i] && body.rest[i].z > 0.0)
        .max_by(|&a, &b| body.rest[a].z.total_cmp(&body.rest[b].z));
    k[0] = nose.map(|i| posed.positions[i]);
    k[2] = joint("eye.L");
    k[5] = joint("eye.R");
    for (i, name) in [
        (11, "upperarm01"),
        (13, "lowerarm01"),
        (15, "wrist"),
        (23, "upperleg01"),
        (25, "lowerleg01"),
        (27, "foot"),
    ] {
        k[i] = joint(&format!("{name}.L"));
        k[i + 1] = joint(&format!("{name}.R"));
    }
    let feet = foot_vertices(body);
    for (s, (heel, toe)) in feet.iter().enumerate() {
        k[29 + s] = Some(posed.positions[*heel]);
        k[31 + s] = Some(posed.positions[*toe]);
    }
    k
}

/// The room behind the person: a wall and a floor, lit from the upper left, with the body's
/// soft contact shadow on the floor.
fn room(spec: &SubjectSpec, cam: &Camera, posed: &Posed) -> RgbaImage {
    let (w, h) = spec.size;
    const WALL_Z: f32 = -160.0;
    const CELL: f32 = 2.0;
    const GRID: usize = 160;
    // Occlusion of the floor: every vertex near the floor darkens the cells below it.
    let mut occ = vec![0.0f32; GRID * GRID];
    for p in &posed.positions {
        let weight = 0.06 * (-p.y / 8.0).exp();
        if weight < 0.02 {
            continue;
        }
        let gx = (p.x / CELL + GRID as f32 / 2.0) as i32;
        let gz = (p.z / CELL + GRID as f32 / 2.0) as i32;
        if (0..GRID as i32).contains(&gx) && (0..GRID as i32).contains(&gz) {
            occ[gz as usize * GRID + gx as usize] += weight;
        }
    }
    // Two box blurs ≈ a soft penumbra.
    for _ in 0..4 {
        let src = occ.clone();
        for z in 0..GRID {
            for x in 0..GRID {
                let mut s = 0.0;
                let mut n = 0.0;
                for dz in -2i32..=2 {
                    for dx in -2i32..=2 {
                        let (xx, zz) = (x as i32 + dx, z as i32 + dz);
                        if (0..GRID as i32).contains(&xx) && (0..GRID as i32).contains(&zz) {
                            s += src[zz as usize * GRID + xx as usize];
                            n += 1.0;
                        }
                    }
                }
                occ[z * GRID + x] = s / n;
            }
        }
    }
    let shadow_at = |x: f32, z: f32| -> f32 {
        let gx = (x / CELL + GRID as f32 / 2.0) as i32;
        let gz = (z / CELL + GRID as f32 / 2.0) as i32;
        if (0..GRID as i32).contains(&gx) && (0..GRID as i32).contains(&gz) {
            (occ[gz as usize * GRID + gx as usize]).min(0.5)
        } else {
            0.0
        }
    };
    let seed = spec.room;
    let walls = [
        [206, 200, 190],
        [188, 196, 200],
        [214, 206, 196],
        [196, 190, 200],
    ];
    let floors = [
        [150, 120, 92],
        [128, 126, 122],
        [168, 142, 110],
        [110, 98, 90],
    ];
    let wall = walls[seed as usize % walls.len()].map(|c: u8| c as f32);
    let floor = floors[seed as usize % floors.len()].map(|c: u8| c as f32);
    RgbaImage::from_fn(w, h, |x, y| {
        let d = cam.ray(Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
        let t_wall = (WALL_Z - cam.eye.z) / d.z;
        let hit_wall = cam.eye + d * t_wall;
        let (c, light) = if hit_wall.y >= 0.0 || d.y >= 0.0 {
            // Wall: light falls off away from the upper left; a skirting board at the bottom.
            let n = hash(x as i32 / 3, y as i32 / 3, seed) * 0.025;
            let l = 1.0
                - 0.12 * ((hit_wall.x + 120.0) / 300.0).clamp(0.0, 1.0)
                - 0.1 * (1.0 - (hit_wall.y / 220.0).clamp(0.0, 1.0))
                + n;
            if hit_wall.y < 9.0 {
                ([236.0, 234.0, 228.0], l * 0.92)
            } else {
                (wall, l)
            }
        } else {
            let t = -cam.eye.y / d.y;
            let p = cam.eye + d * t;
            // Boards 14 cm wide along x, with grain and seams.
            let board = (p.x / 14.0).floor() as i32;
            let seam = ((p.x / 14.0).rem_euclid(1.0) < 0.02) as i32 as f32;
            let grain = hash(board, (p.z / 3.0).floor() as i32, seed + 7) * 0.06
                + hash(board, 0, seed + 3) * 0.08;
            let dist = ((p.z - WALL_Z) / 400.0).clamp(0.0, 1.0);
            let l = (0.9 + grain - 0.25 * seam + 0.08 * dist) * (1.0 - shadow_at(p.x, p.z));
            (floor, l)
        };
        let px = c.map(|v| (v * light).clamp(0.0, 255.0) as u8);
        Rgba([px[0], px[1], px[2], 255])
    })
}

/// The posed body (world `positions`) seen by `cam` as one product mesh over a `size` photo.
pub(super) fn body_scene(
    body: &BaseBody,
    look: &Appearance,
    positions: &[Vec3],
    cam: &Camera,
    (w, h): (u32, u32),
    shadow: Shadow,
) -> Scene {
    let nrm = normals(positions, &body.triangles);
    let ss = 2u32;
    let vertices: Vec<RasterVertex> = positions
        .iter()
        .zip(&nrm)
        .map(|(p, n)| {
            let c = cam.to_camera(*p);
            let q = cam.project(*p);
            let nc = cam.dir_to_camera(*n);
            RasterVertex {
                pos: [q.x * ss as f32, q.y * ss as f32, c.z, 1.0 / c.z],
                view: [c.x, c.y, c.z, 0.0],
                normal: [nc.x, nc.y, nc.z, 0.0],
                uv: [0.0; 4],
                color: [1.0; 4],
            }
        })
        .collect();
    let tri_mats = triangle_materials(body, look);
    let triangles: Vec<[u32; 4]> = body
        .triangles
        .iter()
        .zip(&tri_mats)
        .map(|(t, m)| [t[0], t[1], t[2], *m as u32])
        .collect();
    let materials: Vec<RasterMaterial> = look
        .palette()
        .iter()
        .map(|(c, rough)| RasterMaterial {
            base: [
                srgb_to_linear(c[0]),
                srgb_to_linear(c[1]),
                srgb_to_linear(c[2]),
                1.0,
            ],
            pbr: [0.0, *rough, 0.5, 0.0],
            tex: [0; 4],
            flags: [0, 1, 0, 0],
            ..bytemuck::Zeroable::zeroed()
        })
        .collect();
    Scene {
        roi: [0, 0, w, h],
        ss,
        product: Mesh {
            vertices,
            triangles,
        },
        occluders: Vec::new(),
        materials,
        texels: vec![u32::MAX],
        lighting: Lighting {
            ambient: [0.42, 0.41, 0.40],
            key_dir: Vec3::new(-0.45, -0.55, -0.7).normalize().to_array(),
            key_color: [0.78, 0.76, 0.72],
        },
        transparency: Transparency::Clear,
        shadow,
        near: 1.0,
    }
}

/// Renders `spec` with `raster` (the body as the product mesh, no occluders).
pub fn render(
    body: &BaseBody,
    spec: &SubjectSpec,
    raster: &Rasterizer,
) -> Result<Subject, RasterError> {
    let (w, h) = spec.size;
    let posed = pose_body(body, spec);
    let top = body
        .triangles
        .iter()
        .flatten()
        .map(|&i| posed.positions[i as usize].y)
        .fold(f32::MIN, f32::max);
    // A 50 mm-like lens 420 cm away, the body filling about 84% of the frame's height.
    let distance = 420.0;
    let focal = 0.84 * h as f32 * distance / (top * 1.04);
    let cam = Camera::frontal(
        Vec3::new(0.0, top * 0.52, distance),
        focal,
        Vec2::new(w as f32 / 2.0, h as f32 / 2.0),
    );
    let background = room(spec, &cam, &posed);

    let mats = vertex_materials(body, &spec.look);
    let mut posed = posed;
    shoe_shape(&mut posed.positions, &body.triangles, &mats);
    // Heel and toe from the shoes as drawn.
    let gt_world = ground_truth(body, &posed);
    let shadow = Shadow {
        offset: [18.0, 4.0],
        radius: 12.0,
        strength: 0.18,
    };
    let scene = body_scene(body, &spec.look, &posed.positions, &cam, spec.size, shadow);
    let ss = scene.ss;
    let (image, _) = raster.render(&background, &scene)?;
    let (ids, _) = raster.ids(&scene)?;
    let sw = (w * ss) as usize;
    let mut mask = vec![false; (w * h) as usize];
    let mut arm_side = vec![0u8; (w * h) as usize];
    for (i, id) in ids[..sw * (h * ss) as usize].iter().enumerate() {
        if *id != u32::MAX {
            let (x, y) = ((i % sw) as u32 / ss, (i / sw) as u32 / ss);
            mask[(y * w + x) as usize] = true;
            let v = body.triangles.get(*id as usize).map(|t| t[0] as usize);
            if let Some(v) = v.filter(|&v| matches!(body.parts[v], Part::UpperArm | Part::LowerArm))
            {
                arm_side[(y * w + x) as usize] = if body.rest[v].x > 0.0 { 1 } else { 2 };
            }
        }
    }
    let mut arms_px: [Vec<Vec2>; 2] = [Vec::new(), Vec::new()];
    for (i, &a) in arm_side.iter().enumerate() {
        if a > 0 {
            let p = Vec2::new((i as u32 % w) as f32, (i as u32 / w) as f32);
            arms_px[usize::from(a - 1)].push(p);
        }
    }
    let mut feet_px: [Vec<Vec2>; 2] = [Vec::new(), Vec::new()];
    for (i, p) in posed.positions.iter().enumerate() {
        if body.parts[i] == Part::Foot && mats[i] == Mat::Shoes {
            let side = if body.rest[i].x > 0.0 { 0 } else { 1 };
            feet_px[side].push(cam.project(*p));
        }
    }
    let keypoints = gt_world.map(|p| p.map(|p| cam.project(p)));
    let heel_height_cm = [29, 30].map(|i| gt_world[i].map_or(0.0, |p| p.y));
    let height_px =
        cam.project(Vec3::new(0.0, 0.0, 0.0)).y - cam.project(Vec3::new(0.0, top, 0.0)).y;
    Ok(Subject {
        spec: *spec,
        image,
        keypoints,
        mask,
        height_px,
        feet_px,
        heel_height_cm,
        arms_px,
    })
}
