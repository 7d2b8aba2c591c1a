#!/usr/bin/env python3
"""Builds vto's rigid face template (468 points, centimetres) from MediaPipe 0.10.14's own face
mesh of a frontal photo, as written by scripts/mediapipe_reference.py.

    python3 scripts/make_face_template.py vto-render/tests/data/vision/astronaut_mediapipe.json \
        vto-render/data/face_template.json

The template's frame is defined by the landmarks themselves, so it is the same for any face:
+X from the right eye's outer corner (33) to the left eye's outer corner (263), i.e. image right
for a frontal face; +Y from the chin (152) towards the top of the forehead (10), made orthogonal
to X; +Z = X × Y, out of the face towards the viewer; origin at the centroid of the 468 points.
Scale: the outer eye corners are set 8.9 cm apart (adult biocular width, an anthropometric
average). Only these derived numbers are written.
"""
import json
import math
import sys


def sub(a, b):
    return [a[i] - b[i] for i in range(3)]


def dot(a, b):
    return sum(a[i] * b[i] for i in range(3))


def norm(a):
    n = math.sqrt(dot(a, a))
    return [v / n for v in a]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


BIOCULAR_CM = 8.9


def main(ref_path, out_path):
    ref = json.load(open(ref_path))
    lm = ref["face_mesh"][0]["landmarks"]
    if len(lm) != 468:
        sys.exit(f"expected 468 landmarks, found {len(lm)}")
    # image pixels (x right, y down, z away from the camera) -> right-handed, y up, z to camera
    p = [[x, -y, -z] for x, y, z in lm]
    c = [sum(q[i] for q in p) / len(p) for i in range(3)]
    ex = norm(sub(p[263], p[33]))
    up = sub(p[10], p[152])
    ey = norm([up[i] - dot(up, ex) * ex[i] for i in range(3)])
    ez = cross(ex, ey)
    scale = BIOCULAR_CM / math.sqrt(dot(sub(p[263], p[33]), sub(p[263], p[33])))
    verts = []
    for q in p:
        d = sub(q, c)
        verts.append([round(scale * dot(d, e), 5) for e in (ex, ey, ez)])
    doc = {
        "source": "MediaPipe 0.10.14 face mesh of skimage's astronaut.png "
                  "(scripts/mediapipe_reference.py), re-framed by scripts/make_face_template.py",
        "units": "cm",
        "frame": "+X image right for a frontal face (33 -> 263), +Y up (152 -> 10), "
                 "+Z towards the viewer; origin at the landmarks' centroid",
        "biocular_width_cm": BIOCULAR_CM,
        "vertices": verts,
    }
    with open(out_path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
