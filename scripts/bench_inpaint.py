#!/usr/bin/env python3
"""Holes where the truth is known, OpenCV's inpainting as the anchor, and the scores.

Used by scripts/bench-inpaint.sh; needs numpy, pillow and opencv-python-headless.

  bench_inpaint.py holes PHOTO_DIR CASE_DIR [--seed N]
      For every photo: the photo as the truth (EXIF orientation applied, RGB; a photo whose
      shorter side is at least 1024 px is cut to its central 1024x1024, never resampled),
      and three masks with ~5 % of the area each: boxes, strokes, blobs (fixed seed).
      Writes CASE_DIR/<n>.png and CASE_DIR/<n>-<kind>-mask.png.

  bench_inpaint.py score CASE_DIR OURS_TIMES [--base BASE_TIMES]
      Fills every case with cv2.inpaint (Telea, Navier-Stokes; radius 3), reads our fills
      (CASE_DIR/<n>-<kind>-ours.png) and our times (lines "<case> <ms>"), and prints mean
      PSNR and SSIM inside the holes and the times, per hole kind and overall. With --base,
      also another build's fills (<n>-<kind>-base.png) and times, as "vto fill (baseline)".
"""

import argparse
import math
import os
import sys
import time

import cv2
import numpy as np
from PIL import Image, ImageOps

KINDS = ("boxes", "strokes", "blobs")
COVER = 0.05
RADIUS = 3


def load_truth(path):
    im = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    w, h = im.size
    if min(w, h) >= 1024:
        x0, y0 = (w - 1024) // 2, (h - 1024) // 2
        im = im.crop((x0, y0, x0 + 1024, y0 + 1024))
    return np.asarray(im)


def make_mask(kind, w, h, rng):
    m = np.zeros((h, w), np.uint8)
    side = min(w, h)
    while (m > 0).mean() < COVER:
        if kind == "boxes":
            bw = int(rng.uniform(0.06, 0.16) * side)
            bh = int(rng.uniform(0.06, 0.16) * side)
            x, y = int(rng.integers(0, w - bw)), int(rng.integers(0, h - bh))
            m[y : y + bh, x : x + bw] = 255
        elif kind == "strokes":
            thick = max(5, int(rng.uniform(0.01, 0.03) * side))
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            angle = rng.uniform(0, 2 * math.pi)
            for _ in range(int(rng.integers(3, 8))):
                angle += rng.uniform(-1.2, 1.2)
                step = rng.uniform(0.05, 0.15) * side
                nx = float(np.clip(x + step * math.cos(angle), 0, w - 1))
                ny = float(np.clip(y + step * math.sin(angle), 0, h - 1))
                cv2.line(m, (int(x), int(y)), (int(nx), int(ny)), 255, thick, cv2.LINE_8)
                x, y = nx, ny
        else:
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            for _ in range(int(rng.integers(2, 4))):
                ax = int(rng.uniform(0.02, 0.07) * side) + 2
                ay = int(rng.uniform(0.02, 0.07) * side) + 2
                ox, oy = rng.normal(0, 0.03 * side, 2)
                cv2.ellipse(
                    m,
                    (int(cx + ox), int(cy + oy)),
                    (ax, ay),
                    float(rng.uniform(0, 180)),
                    0,
                    360,
                    255,
                    -1,
                )
    return m


def holes(args):
    os.makedirs(args.cases, exist_ok=True)
    photos = sorted(
        f
        for f in os.listdir(args.photos)
        if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp"))
    )
    if not photos:
        sys.exit(f"no photos in {args.photos}")
    for i, name in enumerate(photos):
        truth = load_truth(os.path.join(args.photos, name))
        stem = f"{i:02d}"
        Image.fromarray(truth).save(os.path.join(args.cases, f"{stem}.png"))
        h, w = truth.shape[:2]
        for k, kind in enumerate(KINDS):
            rng = np.random.default_rng([args.seed, i, k])
            mask = make_mask(kind, w, h, rng)
            Image.fromarray(mask).save(os.path.join(args.cases, f"{stem}-{kind}-mask.png"))
    print(f"{len(photos)} photos x {len(KINDS)} hole kinds in {args.cases}", file=sys.stderr)


def ssim_map(a, b):
    """SSIM (Wang et al. 2004: 11x11 Gaussian, sigma 1.5, K1 0.01, K2 0.03) per pixel, mean
    over the RGB channels."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    out = np.zeros(a.shape[:2])
    for ch in range(3):
        x = a[..., ch].astype(np.float64)
        y = b[..., ch].astype(np.float64)
        blur = lambda z: cv2.GaussianBlur(z, (11, 11), 1.5)
        mx, my = blur(x), blur(y)
        sxx = blur(x * x) - mx * mx
        syy = blur(y * y) - my * my
        sxy = blur(x * y) - mx * my
        out += ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return out / 3


def scores(truth, filled, hole):
    d = truth[hole].astype(np.float64) - filled[hole].astype(np.float64)
    mse = max((d * d).mean(), 1e-9)
    return 10 * math.log10(255 * 255 / mse), ssim_map(truth, filled)[hole].mean()


def score(args):
    def read_times(path):
        out = {}
        for line in open(path):
            f = line.split()
            if len(f) == 2:
                out[f[0]] = float(f[1])
        return out

    ours_ms = read_times(args.times)
    base_ms = read_times(args.base) if args.base else {}
    rows = {}  # (method, kind) -> list of (psnr, ssim, ms, megapixels)
    outside_changed = 0
    for case in sorted(ours_ms):
        stem, kind = case.split("-")[:2]
        truth = np.asarray(Image.open(os.path.join(args.cases, f"{stem}.png")).convert("RGB"))
        mask = np.asarray(Image.open(os.path.join(args.cases, f"{case}-mask.png")).convert("L"))
        hole = mask >= 128
        mp = truth.shape[0] * truth.shape[1] / 1e6
        ours = np.asarray(Image.open(os.path.join(args.cases, f"{case}-ours.png")).convert("RGB"))
        outside_changed += int((ours[~hole] != truth[~hole]).any())
        results = {"ours": (ours, ours_ms[case])}
        if case in base_ms:
            base = np.asarray(
                Image.open(os.path.join(args.cases, f"{case}-base.png")).convert("RGB")
            )
            outside_changed += int((base[~hole] != truth[~hole]).any())
            results["base"] = (base, base_ms[case])
        bgr = np.ascontiguousarray(truth[..., ::-1])
        m8 = hole.astype(np.uint8) * 255
        for method, flag in (("telea", cv2.INPAINT_TELEA), ("ns", cv2.INPAINT_NS)):
            t0 = time.perf_counter()
            out = cv2.inpaint(bgr, m8, RADIUS, flag)
            ms = (time.perf_counter() - t0) * 1000
            results[method] = (np.ascontiguousarray(out[..., ::-1]), ms)
        for method, (img, ms) in results.items():
            p, s = scores(truth, img, hole)
            rows.setdefault((method, kind), []).append((p, s, ms, mp))
            rows.setdefault((method, "all"), []).append((p, s, ms, mp))
            if mp > 1.0:
                rows.setdefault((method, "1024²"), []).append((p, s, ms, mp))
    names = {"base": "vto fill (baseline)", "ours": "vto fill", "telea": "cv2 Telea", "ns": "cv2 Navier-Stokes"}
    n_all = len(rows[("ours", "all")])
    print(f"{n_all} fills; holes ~{COVER:.0%} of each photo; cv2.inpaint radius {RADIUS}")
    print(f"our fills with a pixel changed outside the hole: {outside_changed}\n")
    print("| holes | method | PSNR in holes (dB) | SSIM in holes | ms per fill | ms per MP |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS + ("all", "1024²"):
        for method in ("base", "ours", "telea", "ns"):
            r = rows.get((method, kind))
            if not r:
                continue
            a = np.array(r)
            print(
                f"| {kind} ({len(r)}) | {names[method]} | {a[:, 0].mean():.2f} | {a[:, 1].mean():.4f} "
                f"| {a[:, 2].mean():.1f} (max {a[:, 2].max():.1f}) | {(a[:, 2] / a[:, 3]).mean():.1f} |"
            )


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("holes")
    h.add_argument("photos")
    h.add_argument("cases")
    h.add_argument("--seed", type=int, default=31)
    s = sub.add_parser("score")
    s.add_argument("cases")
    s.add_argument("times")
    s.add_argument("--base")
    args = ap.parse_args()
    holes(args) if args.cmd == "holes" else score(args)


if __name__ == "__main__":
    main()
