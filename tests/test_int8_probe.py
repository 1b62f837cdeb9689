"""The int8 probe's two graph rewrites (benchmarks/int8_probe.py) keep the fp32 net's results."""

from __future__ import annotations

import ncnn
import numpy as np

from benchmarks.int8_probe import short_floats, unfold_pad_values
from model_cache.ncnn_graph import load_graph, save_graph
from model_cache.ppocr.assets import default_model_dir


def _logits(param: str, weights: str, x: np.ndarray) -> np.ndarray:
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(param) == 0 and net.load_model(weights) == 0
    with net.create_extractor() as ex:
        ex.input("in0", ncnn.Mat(x))
        return np.array(ex.extract("229")[1])  # the blob before the Softmax, as the engine reads


def test_short_floats_reads_back_the_same_float32() -> None:
    text = "7767517\n1 1\nConvolutionDepthWise c 1 1 a b 0=32 18=0.9685701131820679 -23310=2,0.166666672,0.5\n"
    fields = short_floats(text).split("\n")[2].split()
    assert fields[-2].startswith("18=") and len(fields[-2]) - 3 <= 15  # what the older parser reads
    assert np.float32(float(fields[-2][3:])) == np.float32(0.9685701131820679)
    assert fields[-1] == "-23310=2,0.166666672,0.5"


def test_unfolded_pad_values_give_the_shipped_logits(tmp_path) -> None:
    folder = default_model_dir()
    graph = load_graph(folder / "rec.ncnn.param", folder / "rec.ncnn.bin")
    assert unfold_pad_values(graph) == 13  # PP-OCRv5's depthwise convolutions that pad with -b/a
    assert not any("18" in layer.params for layer in graph.layers if layer.type.startswith("Convolution"))
    save_graph(graph, tmp_path / "u.param", tmp_path / "u.bin")
    x = np.random.default_rng(0).uniform(-1, 1, (3, 48, 200)).astype(np.float32)
    shipped = _logits(str(folder / "rec.ncnn.param"), str(folder / "rec.ncnn.bin"), x)
    unfolded = _logits(str(tmp_path / "u.param"), str(tmp_path / "u.bin"), x)
    assert np.abs(shipped - unfolded).max() <= 1e-4 * np.abs(shipped).max()
