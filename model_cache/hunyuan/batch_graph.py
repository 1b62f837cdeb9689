"""One ncnn graph that takes a decode step for `slots` pages at once, assembled at load time from
the per-layer graphs (as fuse.py does for one page).

Row j of every activation is page j: the norms, projections, RoPE (cos/sin come per row, so
every page keeps its own positions) and MLP run once for all pages, i.e. the weights are read
once per step for up to `slots` tokens. Only attention is per page: in each layer the rotated
q/k/v of all rows are concatenated along the head axis, split back into q, k and v, then into
rows, and every row goes through its own SDPA layer with its own KV cache and mask; the rows'
outputs are concatenated again before the output projection. With host_attention (Vulkan) the
split, the SDPA layers and the concat run on the CPU next to the caches; the single concat
before them makes that one GPU->host download per layer, whatever `slots` is.
"""

from __future__ import annotations

from model_cache.hunyuan.fuse import HOST_ONLY, SHARED_INPUTS, _layer_lines, _line, _outputs

ROW_INPUTS = ("in0", "in2", "in3")  # hidden rows, cos, sin: one row per slot


def slot_cache_names(layer: int, slot: int) -> tuple[str, str, str, str]:
    return (f"cache_k{layer}_{slot}", f"cache_v{layer}_{slot}",
            f"out_cache_k{layer}_{slot}", f"out_cache_v{layer}_{slot}")


def slot_mask(slot: int) -> str:
    return f"mask_{slot}"


def batch_param(layer_params: list[str], slots: int, heads: int, kv_heads: int,
                host_attention: bool = False) -> str:
    """The graph text: inputs in0 [slots, hidden], in2/in3 cos/sin [slots, head_dim], mask_j
    [1, past_j + 1] and cache_k{i}_{j}/cache_v{i}_{j}; outputs out0 [slots, hidden] and the
    grown caches out_cache_k{i}_{j}/out_cache_v{i}_{j}."""
    if slots < 1:
        raise ValueError("a batch graph needs at least one slot")
    count = len(layer_params)
    caches = [n for i in range(count) for j in range(slots) for n in slot_cache_names(i, j)[:2]]
    body = [_line("Input", name, [], [name]) for name in ROW_INPUTS]
    body += [_line("Input", slot_mask(j), [], [slot_mask(j)]) for j in range(slots)]
    body.append(_line("Input", "kv_cache", [], caches))
    # Layer 0 reads cos0/sin0 (fuse.py keeps them apart for the 1.0 RoPE variant's prefill);
    # in a decode step every layer takes the same positions.
    body += [_line("Split", f"split_{name}", [name], [f"{name}_{i}" for i in range(count)])
             for name in ("in2", "in3")]
    # With host attention the masks stay on the host: a mask split on the GPU is downloaded again
    # by every page's SDPA, one submit-and-wait each (slots x layers per step; H200: ~1 ms each).
    host_suffix = f" {HOST_ONLY}" if host_attention else ""
    for j in range(slots):
        body.append(_line("Split", f"split_mask_{j}", [slot_mask(j)],
                          [f"{slot_mask(j)}_{i}" for i in range(count)]) + host_suffix)
    for i, text in enumerate(layer_params):
        for line in _layer_lines(i, count, text):
            parts = line.split()
            if parts[0] == "SDPA":
                body.extend(_attention_lines(i, parts, slots, heads, kv_heads, host_attention))
            else:
                body.append(_rewire(line, i))
    blobs = {b for line in body for b in _outputs(line)}
    return "\n".join(["7767517", f"{len(body)} {len(blobs)}", *body]) + "\n"


def any_rows(param_text: str) -> str:
    """The LM head graph with its Gemm taking M from the input (pnnx traced it on one row and
    wrote constant M = 1, which Vulkan's Gemm obeys): it then serves several pages' rows."""
    lines = param_text.rstrip("\n").split("\n")
    for i, line in enumerate(lines):
        parts = line.split()
        if parts and parts[0] == "Gemm":
            lines[i] = " ".join("7=0" if p == "7=1" else p for p in parts)
    return "\n".join(lines) + "\n"


def _rewire(line: str, layer: int) -> str:
    """fuse.py's naming feeds layer 0 from cos0/sin0 and layer i from in2_{i-1}; here every
    layer has its own split output of in2/in3."""
    rename = {"cos0": "in2_0", "sin0": "in3_0"}
    for name in SHARED_INPUTS[1:]:
        if layer > 0:
            rename[f"{name}_{layer - 1}"] = f"{name}_{layer}"
    parts = line.split()
    n_in = int(parts[2])
    inputs = [rename.get(b, b) for b in parts[4:4 + n_in]]
    return " ".join([*parts[:4], *inputs, *parts[4 + n_in:]])


def _attention_lines(layer: int, sdpa: list[str], slots: int, heads: int, kv_heads: int,
                     host: bool) -> list[str]:
    q, k, v, _mask = sdpa[4:8]
    out = sdpa[10]
    params = sdpa[13:]
    tag = f"L{layer}_b"
    host_suffix = [HOST_ONLY] if host else []
    lines = [_line("Concat", f"{tag}_qkv", [q, k, v], [f"{tag}_qkv"]) + " 0=0"]
    split = _line("Slice", f"{tag}_split", [f"{tag}_qkv"], [f"{tag}_q", f"{tag}_k", f"{tag}_v"])
    lines.append(" ".join([split, f"-23300=3,{heads},{kv_heads},{kv_heads}", "1=0", *host_suffix]))
    for part in ("q", "k", "v"):
        rows = [f"{tag}_{part}{j}" for j in range(slots)]
        sliced = _line("Slice", f"{tag}_{part}_rows", [f"{tag}_{part}"], rows)
        lines.append(" ".join([sliced, f"-23300={slots}," + ",".join(["1"] * slots), "1=1", *host_suffix]))
    outs = []
    for j in range(slots):
        k_in, v_in, k_out, v_out = slot_cache_names(layer, j)
        o = f"{tag}_o{j}"
        outs.append(o)
        inputs = [f"{tag}_q{j}", f"{tag}_k{j}", f"{tag}_v{j}", f"{slot_mask(j)}_{layer}", k_in, v_in]
        lines.append(" ".join([_line("SDPA", f"{tag}_sdpa{j}", inputs, [o, k_out, v_out]), *params,
                               *host_suffix]))
    lines.append(" ".join([_line("Concat", f"{tag}_rows", outs, [out]), "0=1", *host_suffix]))
    return lines
