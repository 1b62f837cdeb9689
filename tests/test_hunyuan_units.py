"""Fast checks of the hunyuan runtime's pieces (no torch, no model)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model_cache.engine import EngineError, EngineOptions
from model_cache.hunyuan.kvcache_param import add_kv_cache
from model_cache.hunyuan.loop_guard import LoopGuard
from model_cache.hunyuan.preprocess import ImageSizeError, resize_position_grid, smart_resize
from model_cache.hunyuan.prompt import image_token_count
from model_cache.hunyuan.result import mean_confidence, split_blocks
from model_cache.hunyuan.rope import Rope, prompt_positions
from model_cache.hunyuan.sampling import Sampler, SamplingOptions

DECODER_PARAM = """7767517
4 6
Input                    in0                      0 1 in0
Input                    in1                      0 1 in1
Split                    splitncnn_0              1 3 in0 1 2 3
SDPA                     sdpa_20                  4 1 1 2 3 in1 out0 5=1
"""


def test_kv_cache_edit_adds_cache_blobs():
    edited = add_kv_cache(DECODER_PARAM).splitlines()
    assert edited[1] == "5 10"
    assert edited[2].split()[:4] == ["Input", "kv_cache", "0", "2"]
    sdpa = edited[-1].split()
    assert sdpa[2:4] == ["6", "3"]
    assert sdpa[4:13] == ["1", "2", "3", "in1", "cache_k", "cache_v", "out0", "out_cache_k", "out_cache_v"]
    assert sdpa[-1] == "7=1"


def test_kv_cache_edit_rejects_graph_without_mask():
    with pytest.raises(ValueError):
        add_kv_cache(DECODER_PARAM.replace("4 1 1 2 3 in1 out0 5=1", "3 1 1 2 3 out0"))


@pytest.mark.parametrize("hw,expected", [((1400, 1000), (1408, 992)), ((100, 160), (416, 672)),
                                         ((10, 10), (512, 512))])
def test_smart_resize(hw, expected):
    assert smart_resize(*hw, factor=32, min_pixels=512 * 512, max_pixels=2048 * 2048) == expected


def test_smart_resize_caps_pixels_and_aspect():
    h, w = smart_resize(8000, 6000, 32, 512 * 512, 2048 * 2048)
    assert h * w <= 2048 * 2048 and h % 32 == 0 and w % 32 == 0
    with pytest.raises(ImageSizeError):
        smart_resize(10, 4000, 32, 1, 10**9)


def test_position_grid_identity_and_corners():
    table = np.random.RandomState(0).rand(16, 3).astype(np.float32)
    assert np.allclose(resize_position_grid(table, 4, 4, 4), table)
    down = resize_position_grid(table, 4, 2, 2).reshape(2, 2, 3)
    grid = table.reshape(4, 4, 3)
    assert np.allclose(down[0, 0], grid[0:2, 0:2].mean(axis=(0, 1)), atol=1e-6)


def test_prompt_positions_follow_image_grid():
    pos = prompt_positions(12, 4, [(2, 2, 2)])  # 2x2 merged grid -> 2*(2+1)+2 = 8 placeholders
    assert image_token_count(4, 4, 2) == 8
    assert pos[:, 2].tolist() == [2, 2, 2, 2]  # begin vector keeps sequence positions
    assert pos[1, 3:9].tolist() == [0, 1, 2, 0, 1, 2]  # columns incl. the newline column
    assert pos[2, 3:9].tolist() == [0, 0, 0, 1, 1, 1]  # rows
    assert pos[3, 3:9].tolist() == [0] * 6  # first image
    assert pos[:, 9].tolist() == [9, 9, 9, 9]


def test_rope_sections_pick_axes():
    rope = Rope(head_dim=16, base=10000.0, sections=[2, 2, 2, 2])
    positions = np.array([[5], [1], [2], [0]])
    cos, _ = rope.cos_sin(positions)
    f = rope.inv_freq
    assert np.allclose(cos[0, 0:4], np.cos(5 * f[0:4]))
    assert np.allclose(cos[0, 4:8], np.cos(1 * f[4:8]))
    assert np.allclose(cos[0, 8:12], np.cos(2 * f[0:4]))
    assert np.allclose(cos[0, 12:16], np.cos(0 * f[4:8]))


def test_repetition_penalty_like_transformers():
    sampler = Sampler(SamplingOptions(repetition_penalty=2.0), vocab=4)
    sampler.start([0, 1])
    token, _ = sampler.choose(np.array([3.0, -1.0, 2.0, -3.0], dtype=np.float32))
    assert token == 2  # 3/2 = 1.5 < 2.0
    sampler.start([2])
    assert sampler.choose(np.array([1.0, 0.0, 1.5, 0.0], dtype=np.float32))[0] == 0


def test_sampling_is_seeded_and_respects_top_k():
    logits = np.log(np.array([0.4, 0.3, 0.2, 0.1], dtype=np.float32))
    draws = []
    for _ in range(2):
        s = Sampler(SamplingOptions(temperature=1.0, top_k=2, seed=7), vocab=4)
        s.start([])
        draws.append([s.choose(logits)[0] for _ in range(50)])
    assert draws[0] == draws[1]
    assert set(draws[0]) <= {0, 1}


def test_top_p_keeps_smallest_prefix():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    s = Sampler(SamplingOptions(temperature=1.0, top_p=0.7, seed=1), vocab=4)
    s.start([])
    assert {s.choose(logits)[0] for _ in range(200)} == {0, 1}


def test_loop_guard_trims_to_one_copy():
    guard = LoopGuard(max_period=8, min_repeats=4, min_span=12)
    text = [1, 2, 3]
    loop = [7, 8, 9] * 6
    assert guard.find(text + loop) == len(text) + 3
    assert guard.find(list(range(40))) is None
    assert guard.find([5] * 11) is None
    assert guard.find([5] * 12) == 1


def test_split_blocks_full_page_boxes():
    blocks = split_blocks("title\n\nline one\nline two\n", 100, 50, 0.9)
    assert [len(b.lines) for b in blocks] == [1, 2]
    assert blocks[1].lines[1].box == [[0.0, 0.0], [100.0, 0.0], [100.0, 50.0], [0.0, 50.0]]
    assert mean_confidence([0.5, 0.5]) == pytest.approx(0.5)


def test_engine_requires_model_dir():
    from model_cache.hunyuan.engine import create_engine

    with pytest.raises(EngineError, match="model folder"):
        create_engine(EngineOptions())


def test_engine_refuses_folder_without_manifest(tmp_path):
    from model_cache.hunyuan.engine import create_engine

    with pytest.raises(EngineError, match="manifest.json is missing"):
        create_engine(EngineOptions(model_dir=tmp_path))


def test_engine_refuses_foreign_manifest(tmp_path):
    from model_cache.hunyuan.engine import create_engine

    (tmp_path / "manifest.json").write_text(json.dumps({"name": "x", "engine": "hunyuan", "files": {}}))
    with pytest.raises(EngineError, match="not a converted HunyuanOCR folder"):
        create_engine(EngineOptions(model_dir=tmp_path))


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_package_sets_passive_openmp_wait_unless_given(given, expected):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    code = "import os, model_cache.hunyuan.graphs; print(os.environ['OMP_WAIT_POLICY'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    assert out == expected
