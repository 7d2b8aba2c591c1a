#!/usr/bin/env python3
"""Golden outputs of MediaPipe's eight TFLite models, computed with LiteRT.

Run with the LiteRT venv:  /work/venv-litert/bin/python scripts/make_goldens.py [MODELS_DIR]
(MODELS_DIR defaults to $VTO_MODELS_DIR, then <repo>/models.)

For each model it builds a deterministic synthetic input (no third-party image is involved),
runs LiteRT and writes vto-render/tests/data/golden/<model>.json with the generator
parameters, and per output: its shape, sum, sum of |x|, and either all values (small
outputs) or a strided sample (~2000 values). vto-render/tests/render/tflite_golden.rs regenerates
the same input in Rust and compares.

Input generator (mirrored exactly in the Rust test), for element i = ((y * W) + x) * C + c:
    h      = hash32(i, seed)                      (integer hash below, all mod 2^32)
    smooth = 0.5 + 0.35 * sin(2*pi*(fx * x / W + fy * y / H) + 1.3 * c)
    noise  = (h / 2^32 - 0.5) * 0.3
    v      = clamp(smooth + noise, 0, 1)          (computed in float64)
    input  = float32(lo + (hi - lo) * v)
"""
import json
import math
import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "vto-render", "tests", "data", "golden")

# name -> input value range used by MediaPipe's graphs for that model.
MODELS = {
    "face_detection_short_range": (-1.0, 1.0),
    "face_detection_full_range_sparse": (-1.0, 1.0),
    "face_landmark": (0.0, 1.0),
    "pose_detection": (-1.0, 1.0),
    "pose_landmark_full": (0.0, 1.0),
    "selfie_segmentation": (0.0, 1.0),
    "palm_detection_full": (0.0, 1.0),
    "hand_landmark_full": (0.0, 1.0),
}
SEED = 20241121
FX, FY = 1.7, 2.3
FULL_LIMIT = 5000
SAMPLES = 2000
M32 = 0xFFFFFFFF


def hash32(i, seed):
    h = (i * 2654435761 + seed) & M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    h ^= h >> 16
    return h


def make_input(shape, lo, hi, seed=SEED):
    _, hh, ww, cc = shape
    out = np.empty(hh * ww * cc, dtype=np.float32)
    i = 0
    for y in range(hh):
        for x in range(ww):
            for c in range(cc):
                smooth = 0.5 + 0.35 * math.sin(
                    2.0 * math.pi * (FX * x / ww + FY * y / hh) + 1.3 * c
                )
                noise = (hash32(i, seed) / 4294967296.0 - 0.5) * 0.3
                v = min(max(smooth + noise, 0.0), 1.0)
                out[i] = np.float32(lo + (hi - lo) * v)
                i += 1
    return out.reshape(shape)


def summarize(arr):
    flat = arr.astype(np.float64).ravel()
    n = flat.size
    entry = {
        "shape": list(arr.shape),
        "sum": float(flat.sum()),
        "abs_sum": float(np.abs(flat).sum()),
    }
    if n <= FULL_LIMIT:
        entry["stride"] = 1
        entry["values"] = [float(v) for v in arr.ravel()]
    else:
        stride = -(-n // SAMPLES)
        entry["stride"] = stride
        entry["values"] = [float(v) for v in arr.ravel()[::stride]]
    return entry


def main():
    only = set(sys.argv[2:])  # optional model names: regenerate just those
    models_dir = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("VTO_MODELS_DIR", os.path.join(ROOT, "models"))
    )
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, (lo, hi) in MODELS.items():
        if only and name not in only:
            continue
        path = os.path.join(models_dir, name + ".tflite")
        it = Interpreter(model_path=path, num_threads=2)
        it.allocate_tensors()
        (inp,) = it.get_input_details()
        x = make_input(list(inp["shape"]), lo, hi)
        it.set_tensor(inp["index"], x)
        it.invoke()
        outputs = []
        for o in it.get_output_details():
            e = summarize(it.get_tensor(o["index"]))
            e["name"] = o["name"]
            outputs.append(e)
        doc = {
            "model": name,
            "generator": {
                "seed": SEED,
                "fx": FX,
                "fy": FY,
                "lo": lo,
                "hi": hi,
                "shape": [int(v) for v in inp["shape"]],
            },
            "reference": "ai-edge-litert (XNNPACK, 2 threads)",
            "outputs": outputs,
        }
        with open(os.path.join(OUT_DIR, name + ".json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print(name, [(o["name"], o["shape"], round(o["sum"], 4)) for o in outputs])


if __name__ == "__main__":
    main()
