//! What a model file says about itself: [`ProductMeta`], parsed once at load time from the
//! glTF `extras` (`{"vto": {...}}`) and the node and mesh names; every category reads this
//! struct, none reads the file's JSON again.
//!
//! # Scope: where `extras.vto` is read, and which wins
//! The `vto` object of the `extras` of, in this order,
//! 1. the asset (`asset.extras`),
//! 2. every scene, in index order,
//! 3. every node (root or child, in any scene or none), in index order,
//! 4. every mesh, in index order.
//!
//! For each key the **first** object in that order that holds a usable value wins: a typed
//! field takes the first value of its type (a `kind` that is not a string, a `foot` that is
//! neither `"left"` nor `"right"`, a `length_cm` that is not a number are passed over, and a
//! later object's value is taken); a key that is not typed keeps the first value found,
//! whatever it is, in [`ProductMeta::other`]. So a product that states its kind on the asset
//! and again on a node is the asset's kind; a foot stated only on a child node is seen.
//! OBJ files have no extras: only [`ProductMeta::names`] (their `o` and `g` lines).

use serde_json::{Map, Value};

/// Which foot a shoe is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foot {
    /// The left foot.
    Left,
    /// The right foot.
    Right,
}

impl Foot {
    /// `"left"` or `"right"` (the form in the extras and in the metadata).
    pub fn as_str(self) -> &'static str {
        match self {
            Foot::Left => "left",
            Foot::Right => "right",
        }
    }

    /// The foot an extras value names (exactly `"left"` or `"right"`).
    pub fn from_extras(value: &Value) -> Option<Foot> {
        match value.as_str()? {
            "left" => Some(Foot::Left),
            "right" => Some(Foot::Right),
            _ => None,
        }
    }
}

/// What a model file says about itself (see the [module docs](self) for where it is read and
/// which value wins).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProductMeta {
    /// The declared kind, `extras.vto.kind`, trimmed and lower-cased (hats: `cap`,
    /// `brimmed`, `beanie`…; jewelry: `stud`, `necklace`, `ring`…). Each category maps the
    /// word to its own kinds and falls back to [`names`](Self::names), then the shape.
    pub kind: Option<String>,
    /// The foot a shoe is made for, `extras.vto.foot` (`"left"` | `"right"`).
    pub foot: Option<Foot>,
    /// A necklace's stated chain length in centimetres, `extras.vto.length_cm`, as written
    /// (the necklace decides which lengths it believes).
    pub length_cm: Option<f32>,
    /// Node and mesh names, in file order (nodes first); OBJ: its `o` and `g` names.
    pub names: Vec<String>,
    /// Every other key of `extras.vto`, raw (the first value found of each).
    pub other: Map<String, Value>,
    /// The parts of the file, one per mesh instance (glTF: the node that places a mesh, in
    /// scene order), that [`Primitive::part`](super::Primitive::part) indexes; empty for OBJ
    /// files and built products (one part). [`pick`](super::pick) drops props by part.
    pub parts: Vec<Part>,
    /// What the loader converted or left out, one sentence each (a material extension that
    /// is not rendered, emission on a lens, a `COLOR_0` of a type glTF does not allow…): the
    /// file loaded, but not all of it shows.
    pub notes: Vec<String>,
}

/// One part of a model file: a node that instances a mesh.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Part {
    /// The node's name, else its mesh's name, else `node N`.
    pub name: String,
    /// The names of the nodes above it, root first (unnamed nodes as `node N`).
    pub path: Vec<String>,
}

/// The keys of `extras.vto` that [`ProductMeta`] types.
const TYPED: [&str; 3] = ["kind", "foot", "length_cm"];

impl ProductMeta {
    /// Reads the meta of a glTF document (its JSON).
    pub(crate) fn from_gltf(json: &Value) -> ProductMeta {
        let mut holders = vec![&json["asset"]];
        for key in ["scenes", "nodes", "meshes"] {
            holders.extend(json[key].as_array().into_iter().flatten());
        }
        let mut meta = ProductMeta::from_vto_objects(holders.iter().map(|h| &h["extras"]["vto"]));
        meta.names = ["nodes", "meshes"]
            .iter()
            .filter_map(|k| json[*k].as_array())
            .flatten()
            .filter_map(|o| o["name"].as_str().map(str::to_string))
            .collect();
        meta
    }

    /// Merges `vto` objects given in scope order (the first usable value of each key wins;
    /// values that are not objects are skipped). [`names`](Self::names) is left empty.
    pub fn from_vto_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> ProductMeta {
        let mut meta = ProductMeta::default();
        for object in objects.into_iter().filter_map(Value::as_object) {
            if meta.kind.is_none() {
                meta.kind = object
                    .get("kind")
                    .and_then(Value::as_str)
                    .map(|k| k.trim().to_ascii_lowercase());
            }
            if meta.foot.is_none() {
                meta.foot = object.get("foot").and_then(Foot::from_extras);
            }
            if meta.length_cm.is_none() {
                meta.length_cm = object
                    .get("length_cm")
                    .and_then(Value::as_f64)
                    .map(|l| l as f32);
            }
            for (key, value) in object {
                if !TYPED.contains(&key.as_str()) && !meta.other.contains_key(key) {
                    meta.other.insert(key.clone(), value.clone());
                }
            }
        }
        meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_asset_wins_over_scenes_nodes_and_meshes() {
        let doc = json!({
            "asset": {"version": "2.0", "extras": {"vto": {"kind": " Cap "}}},
            "scenes": [{"nodes": [0], "extras": {"vto": {"kind": "beanie", "foot": "left"}}}],
            "nodes": [{"name": "root", "children": [1]}, {"name": "child", "mesh": 0,
                       "extras": {"vto": {"foot": "right", "length_cm": 50}}}],
            "meshes": [{"name": "body", "extras": {"vto": {"length_cm": 60, "colour": "red"}}}],
        });
        let meta = ProductMeta::from_gltf(&doc);
        assert_eq!(meta.kind.as_deref(), Some("cap"));
        assert_eq!(meta.foot, Some(Foot::Left));
        assert_eq!(meta.length_cm, Some(50.0));
        assert_eq!(meta.names, ["root", "child", "body"]);
        assert_eq!(meta.other.get("colour"), Some(&json!("red")));
        assert!(!meta.other.contains_key("kind"));
    }

    #[test]
    fn a_child_nodes_foot_and_length_are_seen() {
        let doc = json!({
            "scenes": [{"nodes": [0]}],
            "nodes": [{"children": [1]}, {"extras": {"vto": {"foot": "right", "length_cm": 42.5}}}],
        });
        let meta = ProductMeta::from_gltf(&doc);
        assert_eq!(meta.foot, Some(Foot::Right));
        assert_eq!(meta.length_cm, Some(42.5));
    }

    #[test]
    fn unusable_values_are_passed_over() {
        let meta = ProductMeta::from_vto_objects(&[
            json!("not an object"),
            json!({"kind": 3, "foot": "both", "length_cm": "long"}),
            json!({"kind": "Ring", "foot": "left", "length_cm": 45}),
        ]);
        assert_eq!(meta.kind.as_deref(), Some("ring"));
        assert_eq!(meta.foot, Some(Foot::Left));
        assert_eq!(meta.length_cm, Some(45.0));
    }
}
