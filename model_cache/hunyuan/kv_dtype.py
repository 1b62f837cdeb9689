"""bf16 KV caches under fp32 (CPU) or fp16 (Vulkan) weights: the decoder's attention reads
and grows its caches in bf16, half the bytes of the fp32 caches it keeps otherwise.

Why: a decode step reads every page's whole cache (24 layers x 2 x 8 heads x 128 x 4 B = 96 KB
a token of context in fp32: 283 MB a page at 1.5k tokens), so with several pages a step the
caches are as much traffic as the weights. ncnn's x86 SDPA has a bf16 kv-cache path
(sdpa_kvcache_bf16s: bf16 q/k/v/mask in, caches grown in place in bf16, fp32 output), taken when
the net runs with opt.use_bf16_storage. That option would also store every Gemm's weights in
bf16, so every other layer gets featmask bit 2 ("no bf16 storage", ncnn net.cpp
get_masked_option): they keep their weights and activations as before, and ncnn casts q/k/v to
bf16 on the way into SDPA. On Vulkan this only matters with host attention (SDPA on the CPU).
"""

from __future__ import annotations

NO_BF16 = 1 << 2  # ncnn layer featmask bit: ignore use_bf16_storage
KEEP = ("Input", "SDPA")  # layers left to bf16 storage (Input converts nothing)
DTYPES = ("fp32", "bf16")


def bf16_attention(param_text: str) -> str:
    """The graph with featmask bit 2 on every layer but SDPA (and Input)."""
    lines = param_text.rstrip("\n").split("\n")
    return "\n".join(lines[:2] + [_masked(line) for line in lines[2:]]) + "\n"


def _masked(line: str) -> str:
    parts = line.split()
    if not parts or parts[0] in KEEP:
        return line
    for i, part in enumerate(parts):
        if part.startswith("31="):
            parts[i] = f"31={int(part[3:]) | NO_BF16}"
            return " ".join(parts)
    return " ".join([*parts, f"31={NO_BF16}"])
