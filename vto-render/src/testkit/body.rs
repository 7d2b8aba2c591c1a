//! The MakeHuman base mesh (MPFB2, CC0): the body faces, the default rig's joints and its
//! skinning weights, read from the files `scripts/fetch-models.sh --test-photos` extracts, and
//! linear blend skinning into a pose.
//!
//! Units: the OBJ is in decimetres, +Y up, +Z out of the front of the body, +X the person's
//! left; [`BaseBody`] converts to centimetres in the same axes.

use std::collections::HashMap;
use std::path::Path;

use glam::{Mat4, Quat, Vec3};

/// Why the body assets could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// A file is missing or unreadable.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// A file does not hold what it should.
    #[error("{0}: {1}")]
    Format(String, String),
}

/// What a part of the body is, from its dominant skinning bone and its rest height.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Part {
    /// The head and neck.
    Head,
    /// Chest, belly, back, shoulders (clavicles, scapulae, breasts).
    Torso,
    /// Pelvis and hips.
    Pelvis,
    /// Upper arm.
    UpperArm,
    /// Forearm.
    LowerArm,
    /// Hand and fingers.
    Hand,
    /// Thigh.
    UpperLeg,
    /// Shin.
    LowerLeg,
    /// Foot and toes.
    Foot,
}

/// The base mesh with its rig, at rest (the MakeHuman A-pose).
#[derive(Debug, Clone)]
pub struct BaseBody {
    /// Rest positions (cm) of every OBJ vertex (helpers included: some joints use them).
    pub rest: Vec<Vec3>,
    /// The body's triangles (helper geometry dropped).
    pub triangles: Vec<[u32; 3]>,
    /// The OBJ face (quad) each triangle comes from.
    pub faces: Vec<u32>,
    /// Bone names, parents before children.
    pub bones: Vec<String>,
    /// Parent bone index per bone.
    pub parents: Vec<Option<usize>>,
    /// Rest position (cm) of each bone's head.
    pub heads: Vec<Vec3>,
    /// Skinning weights per vertex: (bone, weight), normalised.
    pub weights: Vec<Vec<(u32, f32)>>,
    /// The body part of each vertex.
    pub parts: Vec<Part>,
    /// Per vertex: part of an eyeball (the only helper geometry kept).
    pub eyes: Vec<bool>,
}

fn read(path: &Path) -> Result<String, BodyError> {
    std::fs::read_to_string(path).map_err(|e| BodyError::Io(path.display().to_string(), e))
}

fn bad(path: &Path, why: impl Into<String>) -> BodyError {
    BodyError::Format(path.display().to_string(), why.into())
}

fn part_of(bone: &str) -> Part {
    let b = bone.trim_end_matches(".L").trim_end_matches(".R");
    if b.starts_with("upperarm") {
        Part::UpperArm
    } else if b.starts_with("lowerarm") {
        Part::LowerArm
    } else if b.starts_with("wrist") || b.starts_with("finger") || b.starts_with("metacarpal") {
        Part::Hand
    } else if b.starts_with("upperleg") {
        Part::UpperLeg
    } else if b.starts_with("lowerleg") {
        Part::LowerLeg
    } else if b.starts_with("foot") || b.starts_with("toe") {
        Part::Foot
    } else if b.starts_with("pelvis") || b == "root" || b == "spine05" {
        Part::Pelvis
    } else if b.starts_with("spine")
        || b.starts_with("clavicle")
        || b.starts_with("shoulder")
        || b.starts_with("breast")
    {
        Part::Torso
    } else {
        Part::Head
    }
}

impl BaseBody {
    /// Reads `base.obj`, `rig.default.json` and `weights.default.json` from `dir`.
    pub fn load(dir: &Path) -> Result<BaseBody, BodyError> {
        let obj_path = dir.join("base.obj");
        let obj = read(&obj_path)?;
        let mut rest = Vec::new();
        let mut triangles = Vec::new();
        let mut groups: HashMap<String, Vec<u32>> = HashMap::new();
        let mut group = String::new();
        let mut eye_vertices = Vec::new();
        let mut faces = Vec::new();
        let mut face_count = 0u32;
        for line in obj.lines() {
            let mut it = line.split_whitespace();
            match it.next() {
                Some("v") => {
                    let c: Vec<f32> = it.filter_map(|t| t.parse().ok()).collect();
                    if c.len() < 3 {
                        return Err(bad(&obj_path, format!("bad vertex line {line:?}")));
                    }
                    rest.push(Vec3::new(c[0], c[1], c[2]) * 10.0);
                }
                Some("g") => group = it.collect::<Vec<_>>().join(" "),
                Some("f") => {
                    let idx: Vec<u32> = it
                        .filter_map(|t| t.split('/').next()?.parse::<u32>().ok())
                        .filter(|&i| i >= 1)
                        .map(|i| i - 1)
                        .collect();
                    let eye = group == "helper-l-eye" || group == "helper-r-eye";
                    if eye {
                        eye_vertices.extend(idx.iter().copied());
                    }
                    if group == "body" || eye {
                        for k in 1..idx.len().saturating_sub(1) {
                            triangles.push([idx[0], idx[k], idx[k + 1]]);
                            faces.push(face_count);
                        }
                        face_count += 1;
                    } else if group.starts_with("joint-") {
                        groups.entry(group.clone()).or_default().extend(idx);
                    }
                }
                _ => {}
            }
        }
        let n = rest.len() as u32;
        if triangles.is_empty() || triangles.iter().flatten().any(|&i| i >= n) {
            return Err(bad(&obj_path, "no body group or a face index out of range"));
        }

        let rig_path = dir.join("rig.default.json");
        let rig: serde_json::Value =
            serde_json::from_str(&read(&rig_path)?).map_err(|e| bad(&rig_path, e.to_string()))?;
        let rig = rig
            .as_object()
            .ok_or_else(|| bad(&rig_path, "not an object"))?;
        let mean = |ids: &[u32]| -> Option<Vec3> {
            let pts: Vec<Vec3> = ids
                .iter()
                .filter_map(|&i| rest.get(i as usize))
                .copied()
                .collect();
            (!pts.is_empty()).then(|| pts.iter().sum::<Vec3>() / pts.len() as f32)
        };
        // Parents before children: repeatedly take bones whose parent is placed.
        let mut bones: Vec<String> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut parents = Vec::new();
        let mut heads = Vec::new();
        while bones.len() < rig.len() {
            let before = bones.len();
            let mut names: Vec<&String> = rig.keys().filter(|k| !index.contains_key(*k)).collect();
            names.sort();
            for name in names {
                let b = &rig[name];
                let parent = b
                    .get("parent")
                    .and_then(|p| p.as_str())
                    .filter(|p| !p.is_empty());
                let parent = match parent {
                    Some(p) => match index.get(p) {
                        Some(&i) => Some(i),
                        None => continue,
                    },
                    None => None,
                };
                let h = &b["head"];
                let ids: Vec<u32> = match h["strategy"].as_str() {
                    Some("CUBE") => h["cube_name"]
                        .as_str()
                        .and_then(|c| groups.get(c))
                        .cloned()
                        .unwrap_or_default(),
                    Some("VERTEX") => h["vertex_index"]
                        .as_u64()
                        .map(|i| vec![i as u32])
                        .unwrap_or_default(),
                    Some("MEAN") => h["vertex_indices"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_u64())
                                .map(|i| i as u32)
                                .collect()
                        })
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                let head =
                    mean(&ids).ok_or_else(|| bad(&rig_path, format!("bone {name}: no head")))?;
                index.insert(name.clone(), bones.len());
                bones.push(name.clone());
                parents.push(parent);
                heads.push(head);
            }
            if bones.len() == before {
                return Err(bad(&rig_path, "bones whose parent is missing"));
            }
        }

        let w_path = dir.join("weights.default.json");
        let w: serde_json::Value =
            serde_json::from_str(&read(&w_path)?).map_err(|e| bad(&w_path, e.to_string()))?;
        let w = w["weights"]
            .as_object()
            .ok_or_else(|| bad(&w_path, "no weights"))?;
        let mut weights: Vec<Vec<(u32, f32)>> = vec![Vec::new(); rest.len()];
        for (bone, list) in w {
            let Some(&b) = index.get(bone) else { continue };
            for e in list.as_array().into_iter().flatten() {
                let (Some(v), Some(x)) = (e[0].as_u64(), e[1].as_f64()) else {
                    continue;
                };
                if let Some(slot) = weights.get_mut(v as usize) {
                    slot.push((b as u32, x as f32));
                }
            }
        }
        let root = index.get("root").copied().unwrap_or(0) as u32;
        let mut parts = Vec::with_capacity(rest.len());
        for ws in &mut weights {
            let total: f32 = ws.iter().map(|w| w.1).sum();
            if total <= 1e-6 {
                *ws = vec![(root, 1.0)];
            } else {
                ws.iter_mut().for_each(|w| w.1 /= total);
            }
            let top = ws
                .iter()
                .fold((root, -1.0f32), |a, w| if w.1 > a.1 { *w } else { a });
            parts.push(part_of(&bones[top.0 as usize]));
        }
        let mut eyes = vec![false; rest.len()];
        eye_vertices.iter().for_each(|&i: &u32| {
            if let Some(e) = eyes.get_mut(i as usize) {
                *e = true;
            }
        });
        Ok(BaseBody {
            eyes,
            rest,
            triangles,
            faces,
            bones,
            parents,
            heads,
            weights,
            parts,
        })
    }

    /// The index of bone `name`.
    pub fn bone(&self, name: &str) -> Option<usize> {
        self.bones.iter().position(|b| b == name)
    }

    /// The rest position of bone `name`'s head (cm); the origin when there is no such bone.
    pub fn head(&self, name: &str) -> Vec3 {
        self.bone(name).map(|b| self.heads[b]).unwrap_or(Vec3::ZERO)
    }

    /// World transforms of every bone for local rotations `rot` (per bone, about its head, in
    /// the rest frame; identity for bones not listed).
    pub fn pose_matrices(&self, rot: &HashMap<usize, Quat>) -> Vec<Mat4> {
        let mut m: Vec<Mat4> = Vec::with_capacity(self.bones.len());
        for b in 0..self.bones.len() {
            let h = self.heads[b];
            let local = match rot.get(&b) {
                Some(q) => {
                    Mat4::from_translation(h) * Mat4::from_quat(*q) * Mat4::from_translation(-h)
                }
                None => Mat4::IDENTITY,
            };
            let parent = self.parents[b].map(|p| m[p]).unwrap_or(Mat4::IDENTITY);
            m.push(parent * local);
        }
        m
    }

    /// Linear blend skinning of every vertex with bone transforms `m`.
    pub fn skin(&self, m: &[Mat4]) -> Vec<Vec3> {
        self.rest
            .iter()
            .zip(&self.weights)
            .map(|(p, ws)| {
                ws.iter()
                    .map(|&(b, w)| m[b as usize].transform_point3(*p) * w)
                    .sum()
            })
            .collect()
    }
}
