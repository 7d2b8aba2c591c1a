#!/usr/bin/env python3
"""Writes the generated part of the fuzz seed corpora (fuzz/seeds/TARGET/); the copied real
files beside them are listed in fuzz/seeds/SOURCES.md. Run once by a developer; its output
is checked in, so neither CI nor scripts/fuzz.sh needs it. Needs Pillow (images are
derived from two CC0 photos, downscaled).

    python3 fuzz/seeds/make_seeds.py PERSON_JPEG CAMERA_PNG
"""
import base64
import io
import json
import struct
import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent


def put(target, name, data):
    d = HERE / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / name).write_bytes(data)


def images(person_path, camera_path):
    person = Image.open(person_path).convert("RGB")
    person.thumbnail((40, 64))
    camera = Image.open(camera_path).convert("L")
    camera.thumbnail((32, 32))
    out = {}

    def save(name, img, fmt, **kw):
        b = io.BytesIO()
        img.save(b, fmt, **kw)
        out[name] = b.getvalue()

    save("person.jpg", person, "JPEG", quality=80)
    save("person_progressive.jpg", person, "JPEG", quality=70, progressive=True)
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    save("person_exif_orientation6.jpg", person, "JPEG", quality=75, exif=exif.tobytes())
    save("camera_gray.jpg", camera, "JPEG", quality=60)
    save("person.png", person, "PNG")
    save("person_exif_orientation8.png", person, "PNG", exif=_exif(8))
    save("camera_gray16.png", camera.convert("I;16"), "PNG")
    save("person_palette_alpha.png", person.convert("RGBA").quantize(16), "PNG")
    save("person_lossy.webp", person, "WEBP", quality=60)
    save("person_lossless_alpha.webp", person.convert("RGBA"), "WEBP", lossless=True)
    save("person.gif", person.convert("P"), "GIF")  # refused: not an accepted format
    return out


def _exif(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def glb(doc, bin_chunk):
    js = json.dumps(doc, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    bin_chunk += b"\0" * (-len(bin_chunk) % 4)
    body = struct.pack("<II", len(js), 0x4E4F534A) + js
    if bin_chunk:
        body += struct.pack("<II", len(bin_chunk), 0x004E4942) + bin_chunk
    return struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body


def f32(*v):
    return struct.pack(f"<{len(v)}f", *v)


def models(png_tex):
    # A textured quad (two triangles) in a two-level node tree, with extras.vto.
    pos = f32(-0.05, 0, 0, 0.05, 0, 0, 0.05, 0.03, 0, -0.05, 0.03, 0)
    nrm = f32(*([0, 0, 1] * 4))
    uv = f32(0, 1, 1, 1, 1, 0, 0, 0)
    idx = struct.pack("<6H", 0, 1, 2, 0, 2, 3) + b"\0\0"
    tex = png_tex + b"\0" * (-len(png_tex) % 4)
    bin_ = pos + nrm + uv + idx + tex
    o = [0, len(pos), len(pos) + len(nrm), len(pos) + len(nrm) + len(uv)]
    o.append(o[3] + len(idx))
    doc = {
        "asset": {"version": "2.0", "extras": {"vto": {"kind": "glasses", "width_mm": 140}}},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"children": [1], "rotation": [0, 0.7071068, 0, 0.7071068], "scale": [1, 1, 1]},
            {"mesh": 0, "translation": [0, 0.01, 0], "extras": {"vto": {"part": "frame"}}},
        ],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2},
            "indices": 3, "material": 0, "mode": 4}]}],
        "materials": [{
            "pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0.2,
                                     "roughnessFactor": 0.5,
                                     "baseColorTexture": {"index": 0, "texCoord": 0,
                                                          "extensions": {"KHR_texture_transform": {
                                                              "offset": [0.1, 0], "scale": [2, 2]}}}},
            "alphaMode": "MASK", "alphaCutoff": 0.4, "doubleSided": True}],
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 33648}],
        "images": [{"bufferView": 4, "mimeType": "image/png"}],
        "extensionsUsed": ["KHR_texture_transform"],
        "buffers": [{"byteLength": len(bin_)}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": o[0], "byteLength": len(pos), "target": 34962},
            {"buffer": 0, "byteOffset": o[1], "byteLength": len(nrm), "target": 34962},
            {"buffer": 0, "byteOffset": o[2], "byteLength": len(uv), "target": 34962},
            {"buffer": 0, "byteOffset": o[3], "byteLength": 12, "target": 34963},
            {"buffer": 0, "byteOffset": o[4], "byteLength": len(png_tex)},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
             "min": [-0.05, 0, 0], "max": [0.05, 0.03, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 3, "componentType": 5123, "count": 6, "type": "SCALAR"},
        ],
    }
    put("gltf", "textured_quad.glb", glb(doc, bin_))

    # The same quad with its texture as KTX2 / Basis Universal UASTC + Zstandard only
    # (KHR_texture_basisu, required): the fixture of vto-render's KTX2 tests.
    ktx2 = (HERE.parent.parent / "vto-render/tests/data/ktx2/uastc_zstd.ktx2").read_bytes()
    kbin = pos + nrm + uv + idx + ktx2 + b"\0" * (-len(ktx2) % 4)
    kdoc = json.loads(json.dumps(doc))
    kdoc["textures"] = [{"sampler": 0, "extensions": {"KHR_texture_basisu": {"source": 0}}}]
    kdoc["images"] = [{"bufferView": 4, "mimeType": "image/ktx2"}]
    kdoc["extensionsUsed"] = ["KHR_texture_transform", "KHR_texture_basisu"]
    kdoc["extensionsRequired"] = ["KHR_texture_basisu"]
    kdoc["buffers"] = [{"byteLength": len(kbin)}]
    kdoc["bufferViews"][4]["byteLength"] = len(ktx2)
    put("gltf", "textured_quad_ktx2.glb", glb(kdoc, kbin))

    # The same geometry as glTF JSON with a data: URI buffer, unindexed, a BLEND material
    # with transmission, and a matrix node.
    tri = f32(0, 0, 0, 0.1, 0, 0, 0, 0.1, 0)
    doc2 = {
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "matrix": [1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
        "materials": [{"alphaMode": "BLEND",
                       "pbrMetallicRoughness": {"baseColorFactor": [0.2, 0.2, 0.2, 0.5]},
                       "extensions": {"KHR_materials_transmission": {"transmissionFactor": 0.9}}}],
        "extensionsUsed": ["KHR_materials_transmission"],
        "buffers": [{"byteLength": len(tri), "uri": "data:application/octet-stream;base64,"
                     + base64.b64encode(tri).decode()}],
        "bufferViews": [{"buffer": 0, "byteLength": len(tri)}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [0.1, 0.1, 0]}],
    }
    put("gltf", "triangle_data_uri.gltf", json.dumps(doc2, indent=1))

    # Quantized positions (KHR_mesh_quantization, normalized shorts, strided) and a sparse
    # accessor that moves one vertex; u8 indices; a second, unused scene.
    qpos = struct.pack("<4h", 0, 0, 0, 0) + struct.pack("<4h", 32767, 0, 0, 0) + \
        struct.pack("<4h", 0, 32767, 0, 0) + struct.pack("<4h", 0, 0, 32767, 0)
    qidx = bytes([0, 1, 2, 0, 2, 3, 0, 0])
    sp_idx = struct.pack("<H", 3) + b"\0\0"
    sp_val = struct.pack("<3h", 100, 100, 100) + b"\0\0"
    bin3 = qpos + qidx + sp_idx + sp_val
    doc3 = {
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}, {"nodes": []}],
        "nodes": [{"mesh": 0, "scale": [0.1, 0.1, 0.1]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "extensionsUsed": ["KHR_mesh_quantization"],
        "extensionsRequired": ["KHR_mesh_quantization"],
        "buffers": [{"byteLength": len(bin3)}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 32, "byteStride": 8},
            {"buffer": 0, "byteOffset": 32, "byteLength": 6},
            {"buffer": 0, "byteOffset": 40, "byteLength": 2},
            {"buffer": 0, "byteOffset": 44, "byteLength": 6},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5122, "normalized": True, "count": 4,
             "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 1],
             "sparse": {"count": 1, "indices": {"bufferView": 2, "componentType": 5123},
                        "values": {"bufferView": 3}}},
            {"bufferView": 1, "componentType": 5121, "count": 6, "type": "SCALAR"},
        ],
    }
    put("gltf", "quantized_sparse.glb", glb(doc3, bin3))

    put("obj", "quad_normals_uvs.obj", """# a quad with normals and UVs
mtllib quad.mtl
o quad
v -0.05 0 0
v 0.05 0 0
v 0.05 0.03 0
v -0.05 0.03 0 1.0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vn 0 0 1
g front
usemtl frame
s 1
f 1/1/1 2/2/1 3/3/1 4/4/1
""")
    put("obj", "negative_indices.obj", """v 0 0 0
v 1 0 0
v 0 1 0
f -3 -2 -1
v 0 0 1
f 1//1 2//1 -1//1
l 1 2
p 3
""")
    put("obj", "tetra_crlf.obj", "v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nv 0 0 1\r\n"
        "f 1 3 2\r\nf 1 2 4\r\nf 1 4 3\r\nf 2 3 4\r\n")


def requests(png):
    d = "data:image/png;base64," + base64.b64encode(png).decode()
    bodies = {
        "glasses_urls.json": {"category": "glasses",
                              "person_image": "https://shop.example/p/person.jpg",
                              "product_model": "https://shop.example/m/frames.glb"},
        "dress_async_webhook.json": {"category": "dress",
                                     "person_image": "https://shop.example/a.jpg?x=1#f",
                                     "product_image": "http://shop.example:8080/dress.png",
                                     "webhook_url": "https://hooks.example/vto"},
        "data_urls.json": {"category": "shirt", "person_image": d, "product_image": d},
        "wrong_types.json": {"category": 7, "person_image": None, "product_model": ["x"],
                             "product_image": {"url": "x"}, "webhook_url": True},
        "unknown_fields.json": {"category": "hats", "person_image": "ftp://x/y",
                                "product_model": "data:,hello", "extra": {"a": [1, 2, {}]}},
    }
    for name, body in bodies.items():
        put("request", name, json.dumps(body))
    put("request", "escapes.json", '{"category":"sh\\u006fes","person_image":"https://\\u00e9.example/\\ud83d\\ude00"}')
    urls = {
        "png_base64.txt": d,
        "plain_percent.txt": "data:image/jpeg,%FF%D8%FF%E0hello%20world",
        "params.txt": "data:model/gltf-binary;name=x.glb;charset=utf-8;base64,Z2xURgIAAAA=",
        "empty.txt": "data:,",
        "https.txt": "https://user:pw@shop.example:443/a/b.jpg?q=%20#frag",
        "ipv6.txt": "http://[::1]:8080/x.png",
    }
    for name, u in urls.items():
        put("data_url", name, u)


def replies(imgs):
    put("render_reply", "result.png", imgs["person.png"])
    put("render_reply", "result.jpg", imgs["person.jpg"])
    put("render_reply", "result.webp", imgs["person_lossy.webp"])
    put("render_reply", "error.json",
        '{"error":{"code":"no_person","message":"no person detected in the photo"}}')
    put("render_reply", "error_no_code.json", '{"error":{"message":"bad\\u0007 input\\n"}}')
    put("render_reply", "html.txt", "<html><body>502 Bad Gateway</body></html>")


def main():
    imgs = images(sys.argv[1], sys.argv[2])
    for name, data in imgs.items():
        put("photo", name, data)
    models(imgs["camera_gray16.png"])
    requests(imgs["person_palette_alpha.png"])
    replies(imgs)


if __name__ == "__main__":
    main()
