#!/usr/bin/env python3
"""MediaPipe 0.10.14's own hand pipeline on one image: the reference for vto's hand vision.

Run with a venv that has mediapipe==0.10.14 and opencv (e.g. /work/venv-mp/bin/python):

    hand_reference.py IMAGE OUT.json

Writes {"image": name, "hands": [{"label", "score", "landmarks": [[x, y, z], ...]}]} with
x, y in pixels and z in MediaPipe's normalized units (static image mode, two hands at most).
The label is MediaPipe's, which assumes a mirrored (selfie) image: "Right" is the subject's
left hand in an ordinary photo. vto-render/tests/render/rings.rs compares against
vto-render/tests/data/drawn_hand_mediapipe.json made by this script from the drawn hand that
the test writes to its CARGO_TARGET_TMPDIR.
"""
import json
import os
import sys

import cv2
import mediapipe as mp


def main():
    image, out = sys.argv[1:3]
    bgr = cv2.imread(image)
    h, w = bgr.shape[:2]
    with mp.solutions.hands.Hands(static_image_mode=True, max_num_hands=2) as hands:
        r = hands.process(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    found = []
    for lms, cls in zip(r.multi_hand_landmarks or [], r.multi_handedness or []):
        c = cls.classification[0]
        found.append(
            {
                "label": c.label,
                "score": round(c.score, 4),
                "landmarks": [
                    [round(p.x * w, 3), round(p.y * h, 3), round(p.z, 5)] for p in lms.landmark
                ],
            }
        )
    with open(out, "w") as f:
        json.dump({"image": os.path.basename(image), "hands": found}, f, indent=1)
        f.write("\n")
    print(out, [(x["label"], x["score"]) for x in found])


if __name__ == "__main__":
    main()
