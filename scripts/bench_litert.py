#!/usr/bin/env python3
"""Per-inference time of LiteRT (XNNPACK, 2 threads) on MediaPipe's eight models.

Run: /work/venv-litert/bin/python scripts/bench_litert.py [MODELS_DIR]
Prints the median and minimum over 200 warm runs, in milliseconds, one model per line.
"""
import os
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

MODELS = [
    "face_detection_short_range",
    "face_detection_full_range_sparse",
    "face_landmark",
    "pose_detection",
    "pose_landmark_full",
    "selfie_segmentation",
    "palm_detection_full",
    "hand_landmark_full",
]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    models_dir = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("VTO_MODELS_DIR", os.path.join(root, "models"))
    )
    for name in MODELS:
        it = Interpreter(model_path=os.path.join(models_dir, name + ".tflite"), num_threads=2)
        it.allocate_tensors()
        d = it.get_input_details()[0]
        n = int(np.prod(d["shape"]))
        x = ((np.arange(n) % 255) / 127.5 - 1.0).astype(np.float32).reshape(d["shape"])
        for _ in range(20):
            it.set_tensor(d["index"], x)
            it.invoke()
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            it.set_tensor(d["index"], x)
            it.invoke()
            for o in it.get_output_details():
                it.get_tensor(o["index"])
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        print(f"{name:36s} median {times[len(times) // 2]:.3f} ms  min {times[0]:.3f} ms")


if __name__ == "__main__":
    main()
