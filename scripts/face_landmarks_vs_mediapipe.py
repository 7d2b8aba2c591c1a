#!/usr/bin/env python3
"""vto's face landmarks against MediaPipe 0.10.14's on real photos, face by face.

    /work/venv-mp/bin/python scripts/face_landmarks_vs_mediapipe.py [--vto target/release/vto]
        [--tracking] [--json OUT.json] [PHOTO_OR_DIR ...]   (default ../shared/testdata/people)

The reference is MediaPipe's static-image FaceMesh (up to 8 faces, no refinement) on the photo
as vto sees it (EXIF orientation applied); for every face the full-range detector
(FaceDetection model_selection=1) finds that FaceMesh missed, FaceMesh runs again on a square
crop of 3x the detection box upscaled to 512 px (as `face_cases_reference.py` does): MediaPipe's
best landmarks for that face. vto's landmarks come from `vto --json inspect PHOTO`.

With `--tracking` the reference is FaceMesh in tracking mode instead (`static_image_mode=False`,
as many faces as the static pass found, the photo fed three times): from the second pass on,
MediaPipe frames each face by the region its previous landmarks give, not by the detector's
box. Small faces (the short-range detector's box of a 50 px face is 1.4-1.8x the face) differ
between the two by up to 14 % of the face width; vto's second mesh pass
(`REFINE_FROM_PX`..`REFINE_BELOW_PX` in vto-render/src/vision/face.rs) is this tracking pass.

Each MediaPipe face is matched to the vto face whose landmark centre is nearest (within half a
face width). The error of a face is the mean distance over the 468 landmarks divided by the
reference face's width (landmarks 234 to 454), in %. Prints one line per face (photo, face
width in px, vto's detector, error) and the faces vto missed; the photos are not copied.
Needs a venv with mediapipe==0.10.14 and Pillow:
    python3 -m venv /work/venv-mp && /work/venv-mp/bin/pip install mediapipe==0.10.14 pillow
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import mediapipe as mp
import numpy as np
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))


TRACKING_PASSES = 3


def face_mesh(tracking, faces):
    return mp.solutions.face_mesh.FaceMesh(static_image_mode=not tracking, max_num_faces=faces,
                                           refine_landmarks=False,
                                           min_detection_confidence=0.5,
                                           min_tracking_confidence=0.5)


def mesh(rgb, tracking, faces):
    """FaceMesh's landmarks (normalized) on `rgb`: one static pass, or TRACKING_PASSES passes
    of the tracking graph on the same image."""
    with face_mesh(tracking, faces) as fm:
        for _ in range(TRACKING_PASSES if tracking else 1):
            res = fm.process(rgb)
        return res.multi_face_landmarks or []


def reference_faces(rgb, tracking=False):
    h, w = rgb.shape[:2]
    faces = [np.array([[p.x * w, p.y * h] for p in lm.landmark])
             for lm in mesh(rgb, False, 8)]
    if tracking and faces:
        # As many faces as the static pass found: with fewer tracked than allowed, the graph
        # runs the detector on every pass and its regions replace the landmarks' ones.
        faces = [np.array([[p.x * w, p.y * h] for p in lm.landmark])
                 for lm in mesh(rgb, True, len(faces))]
    with mp.solutions.face_detection.FaceDetection(model_selection=1,
                                                   min_detection_confidence=0.5) as fd:
        dets = fd.process(rgb).detections or []
    for d in dets:
        b = d.location_data.relative_bounding_box
        cx, cy = (b.xmin + b.width / 2) * w, (b.ymin + b.height / 2) * h
        if any(f[:, 0].min() < cx < f[:, 0].max() and f[:, 1].min() < cy < f[:, 1].max()
               for f in faces):
            continue
        side = 3 * max(b.width * w, b.height * h)
        x0, y0 = cx - side / 2, cy - side / 2
        crop = Image.fromarray(rgb).transform(
            (512, 512), Image.Transform.EXTENT, (x0, y0, x0 + side, y0 + side),
            Image.Resampling.BICUBIC, fillcolor=(96, 100, 106))
        for lm in mesh(np.asarray(crop), tracking, 1 if tracking else 8):
            faces.append(np.array([[x0 + p.x * side, y0 + p.y * side] for p in lm.landmark]))
    return faces


def width(f):
    return float(np.linalg.norm(f[234] - f[454]))


def vto_faces(vto, photo):
    out = subprocess.run([vto, "--json", "inspect", photo], capture_output=True, text=True,
                         env={**os.environ, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR",
                                                                              "/tmp")})
    if out.returncode != 0:
        raise RuntimeError(f"vto inspect {photo}: {out.stderr.strip()}")
    report = json.loads(out.stdout)
    report = report.get("report", report)
    return [(np.array([p[:2] for p in f["landmarks"]]), f.get("detector", "?"))
            for f in report.get("faces", []) if f.get("landmarks")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vto", default=os.path.join(HERE, "..", "target", "release", "vto"))
    ap.add_argument("--json")
    ap.add_argument("--tracking", action="store_true",
                    help="compare with FaceMesh's tracking answer (region from its own "
                    "landmarks) instead of its static one")
    ap.add_argument("--ref-cache", help="MediaPipe's landmarks per photo are kept in this JSON "
                    "file and reused (MediaPipe takes most of the run's time; one file per mode)")
    ap.add_argument("--ref-only", action="store_true",
                    help="only compute (and cache) MediaPipe's landmarks")
    ap.add_argument("paths", nargs="*",
                    default=[os.path.join(HERE, "..", "..", "shared", "testdata", "people")])
    a = ap.parse_args()
    photos = []
    for p in a.paths:
        if os.path.isdir(p):
            photos += sorted(q for q in glob.glob(os.path.join(p, "*"))
                             if q.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
        else:
            photos.append(p)
    rows, errors = [], []
    cache = {}
    if a.ref_cache and os.path.exists(a.ref_cache):
        with open(a.ref_cache) as fh:
            cache = json.load(fh)
    for photo in photos:
        key = os.path.basename(photo)
        if key not in cache:
            rgb = np.asarray(ImageOps.exif_transpose(Image.open(photo)).convert("RGB"))
            cache[key] = [f.round(2).tolist() for f in reference_faces(rgb, a.tracking)]
        ref = [np.array(f) for f in cache[key]]
        if a.ref_only:
            print(f"{key}: {len(ref)} MediaPipe face(s)")
            continue
        ours = vto_faces(a.vto, photo)
        name = os.path.basename(photo)
        for f in ref:
            fw = width(f)
            c = f.mean(axis=0)
            best = min(ours, key=lambda o: np.linalg.norm(o[0].mean(axis=0) - c), default=None)
            if best is None or np.linalg.norm(best[0].mean(axis=0) - c) > fw / 2:
                rows.append({"photo": name, "face_px": round(fw, 1), "detector": None,
                             "error_pct": None})
                print(f"{name:64s} {fw:7.1f} px  MISSED by vto")
                continue
            err = float(np.linalg.norm(best[0] - f, axis=1).mean()) / fw * 100
            errors.append(err)
            rows.append({"photo": name, "face_px": round(fw, 1), "detector": best[1],
                         "error_pct": round(err, 2)})
            print(f"{name:64s} {fw:7.1f} px  {best[1]:11s} {err:6.2f} %")
    if errors:
        e = np.array(errors)
        print(f"faces {len(rows)}, matched {len(e)}: median {np.median(e):.2f} %, "
              f"max {e.max():.2f} %, over 5 %: {(e > 5).sum()}")
    if a.ref_cache:
        with open(a.ref_cache, "w") as fh:
            json.dump(cache, fh)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
