#!/usr/bin/env python3
"""MediaPipe 0.10.14's FaceMesh landmarks on vto's face test cases (small, turned and several
faces): the reference `vto-render/tests/render/faces.rs` measures landmark error against.

    cargo run -p vto-render --example face_cases -- target/face-cases \
        ../shared/testdata/people target/small-real-faces
    /work/venv-mp/bin/python scripts/face_cases_reference.py target/face-cases \
        vto-render/tests/data/vision/face_cases_mediapipe.json
    /work/venv-mp/bin/python scripts/face_cases_reference.py target/small-real-faces \
        vto-render/tests/data/vision/small_real_faces_mediapipe.json

(the second set, small turned faces made from the real people photos, is written only when
the people directory is given). With `--tracking` first (`face_cases_reference.py --tracking
CASES OUT`), FaceMesh's tracking answer instead (the photo fed three times, regions from its
own landmarks; `face_landmarks_vs_mediapipe.py --tracking`): `*_mediapipe_tracking.json`, the
reference for the faces vto gives its second mesh pass.

Static-image FaceMesh (as vto serves single photos), up to 5 faces, no refinement; landmarks
in image pixels, rounded to 0.01 px. FaceMesh's own detector (short range) misses faces under
~100 px; for every face the full-range detector (FaceDetection model_selection=1) finds that
FaceMesh did not, FaceMesh runs on a square crop of 3x the detection box upscaled to 512 px,
and its landmarks are mapped back: MediaPipe's best landmarks for that face. Only numbers are
written; no photo is copied.
"""
import glob
import json
import os
import sys

import mediapipe as mp
import numpy as np
from PIL import Image


def main_tracking(cases, out):
    """FaceMesh's tracking answer per case (`face_landmarks_vs_mediapipe.py --tracking`): the
    reference for the faces vto gives its second mesh pass."""
    from face_landmarks_vs_mediapipe import reference_faces
    result = {"mediapipe": mp.__version__, "mode": "tracking", "cases": {}}
    for path in sorted(glob.glob(os.path.join(cases, "*.png"))):
        rgb = np.asarray(Image.open(path).convert("RGB"))
        h, w = rgb.shape[:2]
        faces = [f.round(2).tolist() for f in reference_faces(rgb, tracking=True)]
        name = os.path.splitext(os.path.basename(path))[0]
        result["cases"][name] = {"width": w, "height": h, "faces": faces}
        print(f"{name}: {len(faces)} face(s)")
    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))


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
            with mp.solutions.face_detection.FaceDetection(model_selection=1,
                                                           min_detection_confidence=0.5) as fd:
                dets = fd.process(rgb).detections or []
            for d in dets:
                b = d.location_data.relative_bounding_box
                cx, cy = (b.xmin + b.width / 2) * w, (b.ymin + b.height / 2) * h
                if any(min(p[0] for p in f) < cx < max(p[0] for p in f)
                       and min(p[1] for p in f) < cy < max(p[1] for p in f) for f in faces):
                    continue
                side = 3 * max(b.width * w, b.height * h)
                x0, y0 = cx - side / 2, cy - side / 2
                crop = Image.fromarray(rgb).transform(
                    (512, 512), Image.Transform.EXTENT, (x0, y0, x0 + side, y0 + side),
                    Image.Resampling.BICUBIC, fillcolor=(96, 100, 106))
                r2 = fm.process(np.asarray(crop))
                for lm in r2.multi_face_landmarks or []:
                    faces.append([[round(x0 + p.x * side, 2), round(y0 + p.y * side, 2)]
                                  for p in lm.landmark])
            name = os.path.splitext(os.path.basename(path))[0]
            result["cases"][name] = {"width": w, "height": h, "faces": faces}
            print(f"{name}: {len(faces)} face(s)")
    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))


if __name__ == "__main__":
    if sys.argv[1] == "--tracking":
        main_tracking(*sys.argv[2:4])
    else:
        main(*sys.argv[1:3])
