"""Vision tower: patch embedding + position grid, transformer blocks, 2x2 merger -> the image's
embedding rows for the decoder ([begin; rows x (cols + newline); end], RMS-normalised)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from model_cache.hunyuan.graphs import GraphStore, to_mat, to_numpy
from model_cache.hunyuan.model_config import ModelConfig
from model_cache.hunyuan.preprocess import Patches, resize_position_grid


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    variance = np.mean(np.square(x, dtype=np.float32), axis=-1, keepdims=True)
    return (weight * (x / np.sqrt(variance + np.float32(eps)))).astype(np.float32)


class VisionTower:
    def __init__(self, folder: Path, cfg: ModelConfig, graphs: GraphStore):
        self.cfg = cfg
        self.graphs = graphs
        arrays = np.load(folder / "vision_arrays.npz")
        self.arrays = {k: arrays[k].astype(np.float32) for k in arrays.files}

    def graph_names(self) -> list[str]:
        return ["vis_embed", *(f"vis_block_{i}" for i in range(self.cfg.vision_layers)), "vis_merge"]

    def features(self, patches: Patches) -> np.ndarray:
        """Patch-level hidden states after the last block: [gh*gw, C]."""
        pos = resize_position_grid(self.arrays["pos_embed"], self.cfg.pos_edge, patches.grid_h, patches.grid_w)
        x = self._run("vis_embed", {"in0": to_mat(patches.values), "in1": to_mat(pos)})
        for i in range(self.cfg.vision_layers):
            x = self._run(f"vis_block_{i}", {"in0": x})
        return to_numpy(x).reshape(patches.grid_h * patches.grid_w, -1)

    def embed(self, patches: Patches) -> np.ndarray:
        """[N, hidden] rows to scatter into the image placeholders, N = rows*(cols+1) + 2."""
        return self.merge(self.features(patches), patches.grid_h, patches.grid_w)

    def merge(self, features: np.ndarray, grid_h: int, grid_w: int) -> np.ndarray:
        a, eps, m = self.arrays, self.cfg.rms_eps, self.cfg.merge
        x = rms_norm(features, a["before_rms"], eps)
        c = x.shape[-1]
        rows, cols = grid_h // m, grid_w // m
        # Conv2d(k=2, s=2) == Linear over each 2x2 window flattened as (C, kh, kw).
        windows = x.reshape(rows, m, cols, m, c).transpose(0, 2, 4, 1, 3).reshape(rows * cols, c * m * m)
        merged = to_numpy(self._run("vis_merge", {"in0": to_mat(windows)})).reshape(rows, cols, -1)
        newline = np.broadcast_to(a["newline"], (rows, 1, merged.shape[-1]))
        grid = np.concatenate([merged, newline], axis=1).reshape(rows * (cols + 1), -1)
        tokens = np.concatenate([a["begin"][None], grid, a["end"][None]], axis=0)
        return rms_norm(tokens, a["after_rms"], eps)

    def _run(self, name: str, inputs):
        (out,) = self.graphs.run(name, inputs, ["out0"])
        self.graphs.done(name)
        return out
