"""One ncnn graph for the whole decoder stack, assembled at load time from the per-layer graphs.

Why: with Vulkan every extract() is a GPU->host sync and a download, so 24 per-layer graphs
cost 24 round trips per token; the fused graph takes one input and gives one output per step.
The per-layer .param texts are renamed and chained (layer i's out0 feeds layer i+1), the shared
mask/cos/sin inputs are split to every layer, and the weights are read from the per-layer .bin
files in layer order (ncnn reads weights sequentially, layer by layer), so nothing is copied on
disk. Layer 0 has its own cos/sin inputs so the 1.0 RoPE variant still works.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import ncnn

SHARED_INPUTS = ("in1", "in2", "in3")  # mask, cos, sin
LAYER0_ROPE = ("cos0", "sin0")
HOST_ONLY = "31=16"  # layer featmask: no Vulkan for this layer


def cache_names(layer: int) -> tuple[str, str, str, str]:
    return f"cache_k{layer}", f"cache_v{layer}", f"out_cache_k{layer}", f"out_cache_v{layer}"


def fused_param(layer_params: list[str], host_attention: bool = False) -> str:
    """host_attention: run SDPA on the CPU inside a Vulkan net (ncnn featmask bit 4), so the
    KV caches never leave host memory; only q/k/v and the attention output cross per layer."""
    count = len(layer_params)
    body: list[str] = [
        _line("Input", "in0", [], ["in0"]),
        _line("Input", "in1", [], ["in1"]),
        _line("Input", "in2", [], ["in2"]),
        _line("Input", "in3", [], ["in3"]),
        _line("Input", "cos0", [], ["cos0"]),
        _line("Input", "sin0", [], ["sin0"]),
        _line("Input", "kv_cache", [], [n for i in range(count) for n in cache_names(i)[:2]]),
    ]
    for name in SHARED_INPUTS:
        targets = count if name == "in1" else count - 1
        if targets > 0:
            split = _line("Split", f"split_{name}", [name], [f"{name}_{i}" for i in range(targets)])
            # the mask feeds only SDPA: with attention on the host it need not visit the GPU
            body.append(f"{split} {HOST_ONLY}" if host_attention and name == "in1" else split)
    for i, text in enumerate(layer_params):
        lines = _layer_lines(i, count, text)
        if host_attention:
            lines = [f"{line} {HOST_ONLY}" if line.startswith("SDPA") else line for line in lines]
        body.extend(lines)
    blobs = {b for line in body for b in _outputs(line)}
    return "\n".join(["7767517", f"{len(body)} {len(blobs)}", *body]) + "\n"


def _layer_lines(i: int, count: int, text: str) -> list[str]:
    k_in, v_in, k_out, v_out = cache_names(i)
    rename = {"in0": "in0" if i == 0 else f"L{i - 1}_out0", "in1": f"in1_{i}",
              "in2": "cos0" if i == 0 else f"in2_{i - 1}", "in3": "sin0" if i == 0 else f"in3_{i - 1}",
              "cache_k": k_in, "cache_v": v_in, "out_cache_k": k_out, "out_cache_v": v_out,
              "out0": "out0" if i == count - 1 else f"L{i}_out0"}
    if count == 1:
        rename["in2"], rename["in3"] = "cos0", "sin0"
    lines = []
    for line in text.strip().split("\n")[2:]:
        parts = line.split()
        if parts[0] == "Input":
            continue
        n_in, n_out = int(parts[2]), int(parts[3])
        blobs = [rename.get(b, f"L{i}_{b}") for b in parts[4:4 + n_in + n_out]]
        lines.append(" ".join([parts[0], f"L{i}_{parts[1]}", parts[2], parts[3], *blobs,
                               *parts[4 + n_in + n_out:]]))
    return lines


def _line(kind: str, name: str, inputs: list[str], outputs: list[str]) -> str:
    return " ".join([kind, name, str(len(inputs)), str(len(outputs)), *inputs, *outputs])


def _outputs(line: str) -> list[str]:
    parts = line.split()
    n_in, n_out = int(parts[2]), int(parts[3])
    return parts[4 + n_in:4 + n_in + n_out]


class ChainedBinReader(ncnn.DataReader):
    """Feeds ncnn the per-layer .bin files one after another, as if they were one file."""

    def __init__(self, paths: list[Path]):
        super().__init__()
        self._paths = list(paths)
        self._index = 0
        self._fh = open(self._paths[0], "rb")

    def read(self, buf, size: int) -> int:
        ptr = _capsule_pointer(buf)
        done = 0
        while done < size:
            chunk = self._fh.read(size - done)
            if chunk:
                ctypes.memmove(ptr + done, chunk, len(chunk))
                done += len(chunk)
            elif not self._advance():
                break
        return done

    def _advance(self) -> bool:
        self._fh.close()
        self._index += 1
        if self._index >= len(self._paths):
            return False
        self._fh = open(self._paths[self._index], "rb")
        return True

    def close(self) -> None:
        self._fh.close()


def _capsule_pointer(capsule) -> int:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.py_object]
    return get(capsule, name(capsule))
