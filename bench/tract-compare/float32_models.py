"""Rewrites MediaPipe .tflite models into graphs tract-tflite can read, for the tract comparison.

tract-tflite (0.23) has no DEQUANTIZE and no PRELU. MediaPipe stores its weights as float16
constants behind DEQUANTIZE ops, and the face mesh uses PRELU. This script
- folds every DEQUANTIZE of a float16 constant into a float32 constant (the op is removed), and
- rewrites PRELU(x, a) as ADD(MAXIMUM(x, 0), MUL(MINIMUM(x, 0), a)) (equal for every x),
and writes the result to <out dir>/<name>.tflite. Other operators are left as they are: a
model that still holds one tract lacks (DENSIFY, custom ops) fails to load, and the benchmark
says which.

Usage: python float32_models.py <models dir> <out dir>
Needs the LiteRT venv of scripts/bench-vision.sh (its ai_edge_litert ships the TFLite schema).
"""

import os
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as s

OP = s.BuiltinOperator


def code_of(model, op):
    c = model.operatorCodes[op.opcodeIndex]
    return max(c.builtinCode, c.deprecatedBuiltinCode)


def opcode(model, code):
    for i, c in enumerate(model.operatorCodes):
        if max(c.builtinCode, c.deprecatedBuiltinCode) == code and not c.customCode:
            return i
    c = s.OperatorCodeT()
    c.builtinCode = code
    c.deprecatedBuiltinCode = min(code, 127)
    c.version = 1
    model.operatorCodes.append(c)
    return len(model.operatorCodes) - 1


def new_buffer(model, data):
    b = s.BufferT()
    b.data = np.frombuffer(data, dtype=np.uint8).copy()
    model.buffers.append(b)
    return len(model.buffers) - 1


def new_tensor(model, g, like, name, buffer=0, shape=None):
    t = s.TensorT()
    t.shape = list(like.shape) if shape is None else shape
    t.type = s.TensorType.FLOAT32
    t.buffer = buffer
    t.name = name
    g.tensors.append(t)
    return len(g.tensors) - 1


def new_op(model, code, inputs, outputs):
    op = s.OperatorT()
    op.opcodeIndex = opcode(model, code)
    op.inputs = inputs
    op.outputs = outputs
    if code == OP.ADD:
        op.builtinOptionsType = s.BuiltinOptions.AddOptions
        op.builtinOptions = s.AddOptionsT()
    elif code == OP.MUL:
        op.builtinOptionsType = s.BuiltinOptions.MulOptions
        op.builtinOptions = s.MulOptionsT()
    return op


def rewrite(model):
    for g in model.subgraphs:
        ops = []
        for op in g.operators:
            code = code_of(model, op)
            if code == OP.DEQUANTIZE:
                src = g.tensors[op.inputs[0]]
                data = model.buffers[src.buffer].data
                if src.type == s.TensorType.FLOAT16 and data is not None and len(data) > 0:
                    raw = np.asarray(data, dtype=np.uint8).tobytes()
                    f32 = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
                    dst = g.tensors[op.outputs[0]]
                    dst.buffer = new_buffer(model, f32.tobytes())
                    continue
            if code == OP.PRELU:
                x, a = op.inputs
                y = op.outputs[0]
                like = g.tensors[y]
                tag = like.name
                zero = new_tensor(model, g, like, tag + b"/prelu_zero", new_buffer(model, np.zeros(1, np.float32).tobytes()), [1])
                pos = new_tensor(model, g, like, tag + b"/prelu_pos")
                neg = new_tensor(model, g, like, tag + b"/prelu_neg")
                scaled = new_tensor(model, g, like, tag + b"/prelu_scaled")
                ops.append(new_op(model, OP.MAXIMUM, [x, zero], [pos]))
                ops.append(new_op(model, OP.MINIMUM, [x, zero], [neg]))
                ops.append(new_op(model, OP.MUL, [neg, a], [scaled]))
                ops.append(new_op(model, OP.ADD, [pos, scaled], [y]))
                continue
            ops.append(op)
        g.operators = ops


def main():
    src_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(src_dir)):
        if not name.endswith(".tflite"):
            continue
        buf = open(os.path.join(src_dir, name), "rb").read()
        model = s.ModelT.InitFromPackedBuf(buf, 0)
        rewrite(model)
        b = flatbuffers.Builder(len(buf) * 3)
        b.Finish(model.Pack(b), file_identifier=b"TFL3")
        open(os.path.join(out_dir, name), "wb").write(b.Output())


if __name__ == "__main__":
    main()
