#!/usr/bin/env python3
"""MediaPipe 0.10.14's own pipelines on a photo: the numbers vto's vision tests compare with.

Run with a venv that has mediapipe==0.10.14:
    /work/venv-mp/bin/python scripts/mediapipe_reference.py PHOTO OUT.json

Writes: image size; FaceMesh (static image mode, up to 5 faces, no refinement) landmarks in
image pixels (x, y) with z in the same pixel scale; the face detectors' boxes (short range =
model_selection 0, full range = 1) in pixels; Pose (static, model_complexity 1 = full,
segmentation on) 33 keypoints in pixels with visibility and presence; person-mask coverage
(fraction of pixels > 0.5) of Pose's mask and of SelfieSegmentation's (model_selection 0).
Only numbers are written; the photo is not copied.
"""
import json
import sys

import mediapipe as mp
import numpy as np
from PIL import Image


def r(v, nd=3):
    return round(float(v), nd)


def main(photo, out):
    rgb = np.asarray(Image.open(photo).convert("RGB"))
    h, w = rgb.shape[:2]
    result = {"photo": photo.split("/")[-1], "width": w, "height": h,
              "mediapipe": mp.__version__}

    with mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=5,
                                         refine_landmarks=False) as fm:
        res = fm.process(rgb)
        faces = []
        for lm in res.multi_face_landmarks or []:
            pts = [[r(p.x * w), r(p.y * h), r(p.z * w)] for p in lm.landmark]
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            faces.append({"landmarks": pts,
                          "landmark_box": [r(min(xs)), r(min(ys)), r(max(xs)), r(max(ys))]})
        result["face_mesh"] = faces

    for sel, key in ((0, "face_detection_short_range"), (1, "face_detection_full_range")):
        with mp.solutions.face_detection.FaceDetection(model_selection=sel,
                                                       min_detection_confidence=0.5) as fd:
            res = fd.process(rgb)
            dets = []
            for d in res.detections or []:
                b = d.location_data.relative_bounding_box
                dets.append({
                    "score": r(d.score[0], 4),
                    "box": [r(b.xmin * w), r(b.ymin * h), r((b.xmin + b.width) * w),
                            r((b.ymin + b.height) * h)],
                    "keypoints": [[r(k.x * w), r(k.y * h)]
                                  for k in d.location_data.relative_keypoints],
                })
            result[key] = dets

    with mp.solutions.pose.Pose(static_image_mode=True, model_complexity=1,
                                enable_segmentation=True) as pose:
        res = pose.process(rgb)
        if res.pose_landmarks:
            result["pose"] = {
                "keypoints": [[r(p.x * w), r(p.y * h), r(p.z * w), r(p.visibility, 4),
                               r(p.presence, 4)] for p in res.pose_landmarks.landmark],
                "mask_coverage": r((res.segmentation_mask > 0.5).mean(), 4)
                if res.segmentation_mask is not None else None,
            }
        else:
            result["pose"] = None

    with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0) as ss:
        res = ss.process(rgb)
        result["selfie_mask_coverage"] = r((res.segmentation_mask > 0.5).mean(), 4)

    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
