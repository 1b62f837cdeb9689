"""Torch modules shaped for pnnx: each wraps one part of the transformers model with ops that
map to single ncnn layers (SDPA with GQA, RotaryEmbed, RMSNorm, LayerNorm, Gemm).

Why not trace the transformers modules directly: repeat_kv leaves Tensor.expand (no ncnn op),
rotate_half must be written as one cat for pnnx to fuse RotaryEmbed, and cos/sin must be graph
inputs so the runtime can choose the RoPE variant.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _rms(weight: torch.Tensor, eps: float) -> nn.RMSNorm:
    norm = nn.RMSNorm(weight.shape[0], eps=eps)
    norm.weight.data.copy_(weight.detach().float())
    return norm


def _linear(src: nn.Linear) -> nn.Linear:
    dst = nn.Linear(src.in_features, src.out_features, bias=src.bias is not None)
    dst.load_state_dict({k: v.detach().float() for k, v in src.state_dict().items()})
    return dst


def _linear_from(weight: torch.Tensor, bias: torch.Tensor | None) -> nn.Linear:
    dst = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    dst.weight.data.copy_(weight.detach().float())
    if bias is not None:
        dst.bias.data.copy_(bias.detach().float())
    return dst


class VisionEmbed(nn.Module):
    """Conv2d(3, C, 16, stride 16) on one patch is a Linear on its 768 (C,16,16) values."""

    def __init__(self, embed):
        super().__init__()
        conv = embed.patch_embedding
        self.proj = _linear_from(conv.weight.reshape(conv.weight.shape[0], -1), conv.bias)

    def forward(self, patches: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return self.proj(patches) + pos


class VisionBlock(nn.Module):
    def __init__(self, block, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = block.layer_norm1
        self.ln2 = block.layer_norm2
        attn = block.self_attn
        self.q, self.k, self.v, self.o = (_linear(attn.q_proj), _linear(attn.k_proj),
                                          _linear(attn.v_proj), _linear(attn.o_proj))
        self.fc1, self.fc2 = _linear(block.mlp.fc1), _linear(block.mlp.fc2)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c = x.shape[1], x.shape[2]
        hd = c // self.heads
        h = self.ln1(x)
        # Scaling q explicitly keeps pnnx from fusing this into ncnn's MultiHeadAttention, which
        # holds all heads' n x n scores at once (1.9 GB at 5456 patches); SDPA works per thread.
        q = self.q(h).view(1, n, self.heads, hd).transpose(1, 2) * (hd ** -0.5)
        k = self.k(h).view(1, n, self.heads, hd).transpose(1, 2)
        v = self.v(h).view(1, n, self.heads, hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, scale=1.0)
        x = x + self.o(a.transpose(1, 2).reshape(1, n, c))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class VisionMerge(nn.Module):
    """The merger's 2x2 conv (as a Linear on gathered windows), GELU, 1x1 conv and projection.
    RMSNorms, the newline column and begin/end vectors are cheap and done in numpy."""

    def __init__(self, merger):
        super().__init__()
        conv, out = merger.proj_conv, merger.proj_out
        self.conv = _linear_from(conv.weight.reshape(conv.weight.shape[0], -1), conv.bias)
        self.out = _linear_from(out.weight.reshape(out.weight.shape[0], -1), out.bias)
        self.mlp = _linear(merger.mlp)
        self.act = nn.GELU()

    def forward(self, windows: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.out(self.act(self.conv(windows))))


class DecoderLayer(nn.Module):
    """One text layer; cos/sin are inputs (full head_dim width), QK-norm after RoPE."""

    def __init__(self, layer, heads: int, kv_heads: int, head_dim: int, eps: float):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, head_dim
        attn = layer.self_attn
        self.n1 = _rms(layer.input_layernorm.weight, eps)
        self.n2 = _rms(layer.post_attention_layernorm.weight, eps)
        self.qn = _rms(attn.query_layernorm.weight, eps)
        self.kn = _rms(attn.key_layernorm.weight, eps)
        self.q, self.k, self.v, self.o = (_linear(attn.q_proj), _linear(attn.k_proj),
                                          _linear(attn.v_proj), _linear(attn.o_proj))
        mlp = layer.mlp
        self.gate, self.up, self.down = _linear(mlp.gate_proj), _linear(mlp.up_proj), _linear(mlp.down_proj)

    def _rope(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = self.hd // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    def forward(self, x, mask, cos, sin):
        s = x.shape[1]
        h = self.n1(x)
        q = self.q(h).view(1, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(1, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(1, s, self.kv_heads, self.hd).transpose(1, 2)
        q = self.qn(self._rope(q, cos, sin))
        k = self.kn(self._rope(k, cos, sin))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(1, s, self.heads * self.hd))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LmHead(nn.Module):
    """Final RMSNorm and the (tied) output projection, on one hidden row."""

    def __init__(self, norm_weight: torch.Tensor, weight: torch.Tensor, eps: float):
        super().__init__()
        self.norm = _rms(norm_weight, eps)
        self.proj = _linear_from(weight, None)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.proj(self.norm(h))
