#!/usr/bin/python3
"""PyTorch side of scripts/bench.sh: the shared inputs, the reference outputs, the ONNX models
and PyTorch's own timing, for each benchmark configuration.

Run (bench.sh does this):
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/bench/torch_bench.py --out build/bench/data \
      --configs 5,8,2 64,128,4 --budget 2.0 --min-reps 5 --max-reps 200 [--no-onnx]

For each configuration (n tokens, d = d_model, h = num_heads) it writes, into OUT/n{n}_d{d}_h{h}/:
  x.f32                (n, d)    the input (self-attention: query = key = value = x)
  in_proj_weight.f32   (3d, d)   nn.MultiheadAttention's parameters (PyTorch layout)
  in_proj_bias.f32     (3d)
  out_proj_weight.f32  (d, d)
  out_proj_bias.f32    (d)
  torch_output.f32     (n, d)    PyTorch's output (float32, one thread): the reference
  torch_weights.f32    (h, n, n) PyTorch's per-head weights (average_attn_weights=False)
  mha.onnx             the same module exported by torch.onnx.export (opset 17), input "x"
                       (1, n, d), outputs "output" (1, n, d) and "attn_weights" (1, h, n, n)
  mha_minimal.onnx     the same module as the smallest graph written by hand with the ONNX library
                       (minimal_graph below): same weights, input and outputs
  meta.json            shapes, seed, versions
and prints one JSON line per configuration with PyTorch's timing:
  {"system": "pytorch", "n":..., "d":..., "h":..., "median_ms":..., "min_ms":..., "reps":...}

Every .f32 file is raw little-endian float32, row-major. The inputs are seeded (torch.manual_seed
of a seed made from n, d, h), so every run feeds the same numbers to every system.
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

ONNX_OPSET = 17  # the newest torch 1.13 exports; onnxruntime-web 1.17 runs opsets 7..20


class SelfAttention(nn.Module):
    """nn.MultiheadAttention as a user of per-head weights calls it (batch 1, batch_first)."""

    def __init__(self, d, h):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, h, batch_first=True)

    def forward(self, x):  # x (1, n, d) -> output (1, n, d), attn_weights (1, h, n, n)
        return self.mha(x, x, x, need_weights=True, average_attn_weights=False)


def make_case(n, d, h):
    torch.manual_seed(1000003 * n + 1009 * d + h)
    model = SelfAttention(d, h).eval()
    with torch.no_grad():
        # Default init leaves both biases at 0; random biases make them count in the comparison.
        model.mha.in_proj_bias.normal_(0.0, 0.1)
        model.mha.out_proj.bias.normal_(0.0, 0.1)
    x = torch.randn(1, n, d)
    return model, x


def minimal_graph(model, n, d, h):
    """nn.MultiheadAttention self-attention (batch 1) as the fewest ONNX nodes, opset ONNX_OPSET.

    torch.onnx.export writes the module as PyTorch's Python code runs it (reshapes and transposes
    around each product, the scale applied after the head split); this is the same arithmetic
    in the fewest nodes, so that ONNX Runtime is timed on the faster of the two graphs (which one
    depends on the size and the machine: docs/benchmarks.md).

    Here: x (1, n, d) -> MatMul + Add with in_proj_weightᵀ (d, 3d) -> Split into Q, K, V
    (1, n, d) -> Q * 1/sqrt(d_head) -> Reshape (1, n, h, d_head) and Transpose to
    (1, h, n, d_head) (K to (1, h, d_head, n)) -> MatMul -> Softmax (last axis: "attn_weights",
    (1, h, n, n)) -> MatMul V -> Transpose, Reshape (1, n, d) -> MatMul + Add with
    out_proj_weightᵀ -> "output" (1, n, d). Returns the onnx.ModelProto, checked.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    dh = d // h
    mha = model.mha

    def init(name, t):
        return numpy_helper.from_array(np.ascontiguousarray(t, dtype=np.float32), name)

    def shape(name, dims):
        return numpy_helper.from_array(np.array(dims, dtype=np.int64), name)

    initializers = [
        init("in_proj_weight_t", mha.in_proj_weight.detach().numpy().T),
        init("in_proj_bias", mha.in_proj_bias.detach().numpy()),
        init("out_proj_weight_t", mha.out_proj.weight.detach().numpy().T),
        init("out_proj_bias", mha.out_proj.bias.detach().numpy()),
        init("scale", np.array(1.0 / np.sqrt(dh), dtype=np.float32)),
        shape("heads_shape", [1, n, h, dh]),
        shape("model_shape", [1, n, d]),
    ]
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "in_proj_weight_t"], ["qkv_mm"]),
        node("Add", ["qkv_mm", "in_proj_bias"], ["qkv"]),
        node("Split", ["qkv"], ["q", "k", "v"], axis=2),
        node("Mul", ["q", "scale"], ["q_scaled"]),
        node("Reshape", ["q_scaled", "heads_shape"], ["q_4d"]),
        node("Reshape", ["k", "heads_shape"], ["k_4d"]),
        node("Reshape", ["v", "heads_shape"], ["v_4d"]),
        node("Transpose", ["q_4d"], ["q_h"], perm=[0, 2, 1, 3]),  # (1, h, n, d_head)
        node("Transpose", ["k_4d"], ["k_t"], perm=[0, 2, 3, 1]),  # (1, h, d_head, n)
        node("Transpose", ["v_4d"], ["v_h"], perm=[0, 2, 1, 3]),  # (1, h, n, d_head)
        node("MatMul", ["q_h", "k_t"], ["scores"]),
        node("Softmax", ["scores"], ["attn_weights"], axis=-1),
        node("MatMul", ["attn_weights", "v_h"], ["heads"]),
        node("Transpose", ["heads"], ["heads_t"], perm=[0, 2, 1, 3]),  # (1, n, h, d_head)
        node("Reshape", ["heads_t", "model_shape"], ["concat"]),
        node("MatMul", ["concat", "out_proj_weight_t"], ["out_mm"]),
        node("Add", ["out_mm", "out_proj_bias"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mha_minimal",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n, d])],
        [
            helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, n, d]),
            helper.make_tensor_value_info("attn_weights", TensorProto.FLOAT, [1, h, n, n]),
        ],
        initializers,
    )
    proto = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
        producer_name="mha-lab scripts/bench/torch_bench.py",
    )
    proto.ir_version = 8  # ONNX 1.10+, which onnxruntime-web 1.17 reads
    onnx.checker.check_model(proto, full_check=True)
    return proto


def write_f32(path, t):
    np.ascontiguousarray(t.detach().numpy(), dtype="<f4").tofile(path)


def time_it(fn, budget, min_reps, max_reps):
    fn()  # warm-up (allocations, first-touch)
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", nargs="+", required=True, help="n,d,h ...")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of timing per config")
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--max-reps", type=int, default=200)
    ap.add_argument("--no-onnx", action="store_true", help="skip the ONNX export")
    ap.add_argument("--no-time", action="store_true", help="only write data and goldens")
    args = ap.parse_args()

    torch.set_num_threads(1)
    for spec in args.configs:
        n, d, h = (int(v) for v in spec.split(","))
        model, x = make_case(n, d, h)
        case = os.path.join(args.out, f"n{n}_d{d}_h{h}")
        os.makedirs(case, exist_ok=True)
        with torch.no_grad():
            out, w = model(x)
        assert out.shape == (1, n, d) and w.shape == (1, h, n, n), (out.shape, w.shape)
        write_f32(os.path.join(case, "x.f32"), x[0])
        write_f32(os.path.join(case, "in_proj_weight.f32"), model.mha.in_proj_weight)
        write_f32(os.path.join(case, "in_proj_bias.f32"), model.mha.in_proj_bias)
        write_f32(os.path.join(case, "out_proj_weight.f32"), model.mha.out_proj.weight)
        write_f32(os.path.join(case, "out_proj_bias.f32"), model.mha.out_proj.bias)
        write_f32(os.path.join(case, "torch_output.f32"), out[0])
        write_f32(os.path.join(case, "torch_weights.f32"), w[0])
        meta = {
            "n": n,
            "d_model": d,
            "num_heads": h,
            "torch": torch.__version__,
            "onnx_opset": None if args.no_onnx else ONNX_OPSET,
        }
        if not args.no_onnx:
            onnx_path = os.path.join(case, "mha.onnx")
            # Exported with autograd on: under no_grad torch 1.13 takes the fused
            # aten::_native_multi_head_attention path, which has no ONNX export.
            torch.onnx.export(
                model,
                (x,),
                onnx_path,
                input_names=["x"],
                output_names=["output", "attn_weights"],
                opset_version=ONNX_OPSET,
                do_constant_folding=True,
            )
            with open(os.path.join(case, "mha_minimal.onnx"), "wb") as f:
                f.write(minimal_graph(model, n, d, h).SerializeToString())
        with open(os.path.join(case, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        if args.no_time:
            continue

        def run():
            with torch.no_grad():
                model(x)

        times = time_it(run, args.budget, args.min_reps, args.max_reps)
        print(
            json.dumps(
                {
                    "system": "pytorch",
                    "n": n,
                    "d": d,
                    "h": h,
                    "median_ms": statistics.median(times),
                    "min_ms": min(times),
                    "reps": len(times),
                    "threads": torch.get_num_threads(),
                    "torch": torch.__version__,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
