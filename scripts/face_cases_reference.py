#!/usr/bin/env python3
"""MediaPipe 0.10.14's FaceMesh landmarks on vto's face test cases (small, turned and several
faces): the reference `vto-render/tests/faces.rs` measures landmark error against.

    cargo run -p vto-render --example face_cases -- target/face-cases
    /work/venv-mp/bin/python scripts/face_cases_reference.py target/face-cases \
        vto-render/tests/data/vision/face_cases_mediapipe.json

Static-image FaceMesh (as vto serves single photos), up to 5 faces, no refinement; landmarks
in image pixels, rounded to 0.01 px. Only numbers are written; no photo is copied.
"""
import glob
import json
import os
import sys

import mediapipe as mp
import numpy as np
from PIL import Image


def main(cases, out):
    result = {"mediapipe": mp.__version__, "cases": {}}
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=5,
                                         refine_landmarks=False,
                                         min_detection_confidence=0.5) as fm:
        for path in sorted(glob.glob(os.path.join(cases, "*.png"))):
            rgb = np.asarray(Image.open(path).convert("RGB"))
            h, w = rgb.shape[:2]
            res = fm.process(rgb)
            faces = [[[round(p.x * w, 2), round(p.y * h, 2)] for p in lm.landmark]
                     for lm in res.multi_face_landmarks or []]
            name = os.path.splitext(os.path.basename(path))[0]
            result["cases"][name] = {"width": w, "height": h, "faces": faces}
            print(f"{name}: {len(faces)} face(s)")
    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
