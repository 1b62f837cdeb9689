"""Give a pnnx-exported decoder layer ncnn's SDPA KV cache (param 7=1).

pnnx cannot express a growing cache, so the exported .param is edited: an Input layer supplies
the past K/V blobs, the SDPA layer takes them after the mask and returns the grown caches.
"""

from __future__ import annotations

CACHE_IN = ("cache_k", "cache_v")
CACHE_OUT = ("out_cache_k", "out_cache_v")


def add_kv_cache(param_text: str) -> str:
    lines = param_text.rstrip("\n").split("\n")
    magic, counts, body = lines[0], lines[1].split(), lines[2:]
    layer_count, blob_count = int(counts[0]), int(counts[1])
    sdpa = [i for i, line in enumerate(body) if line.split()[0] == "SDPA"]
    if len(sdpa) != 1:
        raise ValueError(f"expected one SDPA layer in the decoder graph, found {len(sdpa)}")
    body[sdpa[0]] = _with_cache(body[sdpa[0]])
    cache_input = f"Input                    kv_cache                 0 2 {' '.join(CACHE_IN)}"
    header = [magic, f"{layer_count + 1} {blob_count + 4}"]
    return "\n".join(header + [cache_input] + body) + "\n"


def _with_cache(line: str) -> str:
    parts = line.split()
    kind, name, n_in, n_out = parts[0], parts[1], int(parts[2]), int(parts[3])
    inputs = parts[4:4 + n_in]
    outputs = parts[4 + n_in:4 + n_in + n_out]
    params = [p for p in parts[4 + n_in + n_out:] if not p.startswith("7=")]
    if n_in != 4 or "5=1" not in params:
        raise ValueError(f"decoder SDPA must take q, k, v and a mask: {line}")
    inputs += list(CACHE_IN)
    outputs += list(CACHE_OUT)
    fields = [kind, name, str(len(inputs)), str(len(outputs)), *inputs, *outputs, *params, "7=1"]
    return " ".join(fields)
