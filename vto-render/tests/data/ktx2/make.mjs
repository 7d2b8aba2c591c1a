// Makes the KTX2 fixtures of `vto-render/src/product/ktx2.rs`'s tests: one 20 × 12 picture
// (four flat quadrants: red, green, blue, and white at half alpha; not a multiple of the
// 4 × 4 block in height) encoded as Basis Universal ETC1S (with mipmaps), UASTC, and UASTC
// with Zstandard supercompression, by the `ktx2-encoder` npm package (basis_universal's
// encoder as WebAssembly, MIT).
//   npm install ktx2-encoder && node make.mjs   (in this directory)
import { encodeToKTX2 } from "ktx2-encoder";
import fs from "fs";

const [w, h] = [20, 12];
const data = new Uint8Array(w * h * 4);
for (let y = 0; y < h; y++) {
  for (let x = 0; x < w; x++) {
    const q = (y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1);
    const px = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 128]][q];
    data.set(px, (y * w + x) * 4);
  }
}
const imageDecoder = async () => ({ width: w, height: h, data });
for (const [name, opts] of [
  ["etc1s_mips.ktx2", { isUASTC: false, qualityLevel: 255, generateMipmap: true }],
  ["uastc.ktx2", { isUASTC: true, needSupercompression: false }],
  ["uastc_zstd.ktx2", { isUASTC: true, needSupercompression: true }],
]) {
  const out = await encodeToKTX2(new Uint8Array(1), {
    ...opts,
    isKTX2File: true,
    isPerceptual: true,
    isSetKTX2SRGBTransferFunc: true,
    imageDecoder,
  });
  fs.writeFileSync(new URL(name, import.meta.url), out);
}
