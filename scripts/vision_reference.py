#!/usr/bin/env python3
"""LiteRT (ai-edge-litert) as a reference interpreter for vto's vision code.

Run with a venv that has ai-edge-litert and numpy (e.g. /work/venv-litert/bin/python).

    vision_reference.py info MODEL.tflite
        Prints the input and output tensors (name, shape) in the model's order.
    vision_reference.py run MODEL.tflite IN.f32 OUT_DIR
        Runs the model on a raw little-endian f32 NHWC input and writes each output as
        OUT_DIR/output_<i>.f32 (model order) - raw outputs for checking decoders; not committed.
    vision_reference.py golden MODELS_DIR PHOTO OUT.json
        Runs the three detectors on the letterboxed photo (zero border, [-1, 1], bilinear with
        pixel centres at integers, as MediaPipe's CPU path) and keeps the rows whose raw score
        is above -1 (position rounded to 1/32 pixel, value to an 8-bit level, as OpenCV's 8-bit
        warp): the committed goldens of vto's decoding test.
    vision_reference.py serve MODEL.tflite
        A pipe server for tests: reads requests on stdin, each `u32 n_inputs` then per input
        `u32 n_values` + n_values f32; answers `u32 n_outputs` then per output `u32 n` + n f32,
        outputs in the model's order. All little-endian. Ends at EOF.

This is a stand-in until vto's own wgpu TFLite executor is wired in; it is never part of the
product path.
"""
import struct
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def load(path):
    it = Interpreter(model_path=path, num_threads=2)
    it.allocate_tensors()
    return it


def run(it, inputs):
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], np.asarray(x, dtype=np.float32).reshape(d["shape"]))
    it.invoke()
    return [it.get_tensor(d["index"]).astype(np.float32).ravel() for d in it.get_output_details()]


def read_exact(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve(path):
    it = load(path)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = read_exact(inp, 4)
        if head is None:
            return
        (n,) = struct.unpack("<I", head)
        inputs = []
        for _ in range(n):
            (k,) = struct.unpack("<I", read_exact(inp, 4))
            inputs.append(np.frombuffer(read_exact(inp, 4 * k), dtype="<f4"))
        outs = run(it, inputs)
        out.write(struct.pack("<I", len(outs)))
        for o in outs:
            out.write(struct.pack("<I", o.size))
            out.write(o.astype("<f4").tobytes())
        out.flush()


def letterbox_tensor(rgb, size):
    """The letterboxed tensor: tensor pixel (x, y) samples the image at c + (x/size - 0.5) * S."""
    h, w = rgb.shape[:2]
    s = float(max(w, h))
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    sx = np.round((w / 2.0 + (xs / size - 0.5) * s) * 32.0) / 32.0  # OpenCV: 1/32 pixel
    sy = np.round((h / 2.0 + (ys / size - 0.5) * s) * 32.0) / 32.0
    x0, y0 = np.floor(sx), np.floor(sy)
    fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
    img = rgb.astype(np.float32)

    def tex(x, y):
        inside = (x >= 0) & (y >= 0) & (x < w) & (y < h)
        v = img[np.clip(y, 0, h - 1).astype(int), np.clip(x, 0, w - 1).astype(int)]
        return v * inside[..., None]

    top = tex(x0, y0) * (1 - fx) + tex(x0 + 1, y0) * fx
    bot = tex(x0, y0 + 1) * (1 - fx) + tex(x0 + 1, y0 + 1) * fx
    v = np.round(top * (1 - fy) + bot * fy)  # OpenCV's 8-bit warp rounds to a level
    return (v * (2.0 / 255.0) - 1.0).astype(np.float32)


def golden(models, photo, out):
    import json
    from PIL import Image
    rgb = np.asarray(Image.open(photo).convert("RGB"))
    doc = {}
    for key, name, size in (
        ("face_detection_short_range", "face_detection_short_range.tflite", 128),
        ("face_detection_full_range", "face_detection_full_range_sparse.tflite", 192),
        ("pose_detection", "pose_detection.tflite", 224),
    ):
        it = load(f"{models}/{name}")
        outs = run(it, [letterbox_tensor(rgb, size)])
        regs, scores = sorted(outs, key=lambda o: -o.size)
        n = scores.size
        coords = regs.size // n
        regs = regs.reshape(n, coords)
        rows = [[int(i), round(float(scores[i]), 5)] + [round(float(v), 4) for v in regs[i]]
                for i in np.nonzero(scores > -1.0)[0]]
        doc[key] = {"num_anchors": n, "num_coords": coords, "rows": rows}
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "info":
        it = load(path)
        for d in it.get_input_details():
            print("input", d["name"], list(d["shape"]))
        for d in it.get_output_details():
            print("output", d["name"], list(d["shape"]))
    elif cmd == "run":
        it = load(path)
        x = np.fromfile(sys.argv[3], dtype="<f4")
        for i, o in enumerate(run(it, [x])):
            o.astype("<f4").tofile(f"{sys.argv[4]}/output_{i}.f32")
    elif cmd == "golden":
        golden(path, sys.argv[3], sys.argv[4])
    elif cmd == "serve":
        serve(path)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
