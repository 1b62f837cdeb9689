"""The conversion-time graph rewrites (model_cache/ppocr/optimize.py) keep the net's output."""

from __future__ import annotations

import copy

import ncnn
import numpy as np
import pytest

from model_cache.ncnn_graph import Graph, Layer, Weight, load_graph, save_graph
from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.optimize import optimize

RNG = np.random.default_rng(7)


def _conv(name: str, src: str, dst: str, cin: int, cout: int, k: int, depthwise: bool = False) -> Layer:
    pad = k // 2
    count = cout * k * k * (1 if depthwise else cin)
    params = {"0": str(cout), "1": str(k), "4": str(pad), "5": "1", "6": str(count)}
    if depthwise:
        params["7"] = str(cout)
    weights = [Weight(RNG.normal(0, 0.3, count).astype(np.float32), True),
               Weight(RNG.normal(0, 0.1, cout).astype(np.float32), False)]
    return Layer("ConvolutionDepthWise" if depthwise else "Convolution", name, [src], [dst], params, weights)


def _affine(prefix: str, src: str, dst: str, scale: float, shift: float) -> list[Layer]:
    return [Layer("BinaryOp", f"{prefix}_mul", [src], [f"{prefix}_m"], {"0": "2", "1": "1", "2": repr(scale)}),
            Layer("BinaryOp", f"{prefix}_add", [f"{prefix}_m"], [dst], {"0": "0", "1": "1", "2": repr(shift)})]


def lab_block_graph() -> Graph:
    """PP-LCNetV3's pattern: conv -> affine -> HardSwish -> affine -> padded depthwise conv
    -> affine -> HardSwish -> affine -> 1x1 conv."""
    layers = [Layer("Input", "in0", [], ["in0"], {})]
    layers.append(_conv("c1", "in0", "a", 3, 8, 3))
    layers += _affine("lab1", "a", "b", 0.7, 0.2)
    layers.append(Layer("HardSwish", "hs1", ["b"], ["c"], {"0": "0.166666672", "1": "0.5"}))
    layers += _affine("lab2", "c", "d", 0.05, -0.4)  # large shift: padding must follow it
    layers.append(_conv("dw", "d", "e", 8, 8, 3, depthwise=True))
    layers += _affine("lab3", "e", "f", 1.3, 0.1)
    layers.append(Layer("HardSwish", "hs2", ["f"], ["g"], {"0": "0.166666672", "1": "0.5"}))
    layers += _affine("lab4", "g", "h", 0.9, 0.3)
    layers.append(_conv("c2", "h", "out0", 8, 4, 1))
    return Graph(layers)


def run_graph(graph: Graph, tmp_path, tag: str, image: np.ndarray, output: str = "out0") -> np.ndarray:
    param, binary = tmp_path / f"{tag}.param", tmp_path / f"{tag}.bin"
    save_graph(graph, param, binary)
    net = ncnn.Net()
    net.opt.num_threads = 1
    assert net.load_param(str(param)) == 0 and net.load_model(str(binary)) == 0
    with net.create_extractor() as ex:
        ex.input("in0", ncnn.Mat(image))
        ret, out = ex.extract(output)
        assert ret == 0
        return np.array(out)


def test_lab_pattern_folds_to_three_convolutions_with_the_same_output(tmp_path):
    graph = lab_block_graph()
    image = RNG.normal(0, 1, (3, 9, 13)).astype(np.float32)
    before = run_graph(graph, tmp_path, "before", image)
    folded = copy.deepcopy(graph)
    counts = optimize(folded)
    assert [layer.type for layer in folded.layers] == [
        "Input", "Convolution", "ConvolutionDepthWise", "Convolution"]
    assert counts == {"affine_into_producer": 2, "hardswish_fused": 2, "affine_into_consumer": 2,
                      "deconvolution_as_pixel_shuffle": 0}
    after = run_graph(folded, tmp_path, "after", image)
    np.testing.assert_allclose(after, before, rtol=1e-4, atol=1e-4)


def test_padding_value_is_what_makes_the_fold_exact_at_the_border(tmp_path):
    graph = lab_block_graph()
    image = RNG.normal(0, 1, (3, 9, 13)).astype(np.float32)
    before = run_graph(graph, tmp_path, "before", image)
    folded = copy.deepcopy(graph)
    optimize(folded)
    dw = next(layer for layer in folded.layers if layer.type == "ConvolutionDepthWise")
    assert float(dw.params["18"]) == pytest.approx(0.4 / 0.05)
    del dw.params["18"]  # zero padding: borders differ, the interior does not
    after = run_graph(folded, tmp_path, "after", image)
    assert not np.allclose(after, before, atol=1e-3)
    np.testing.assert_allclose(after[:, 1:-1, 1:-1], before[:, 1:-1, 1:-1], rtol=1e-4, atol=1e-4)


def test_affine_feeding_two_layers_is_left_alone():
    graph = lab_block_graph()
    graph.layers.append(Layer("Sigmoid", "extra", ["d"], ["z"], {}))  # 'd' now has two readers
    optimize(graph)
    assert any(layer.name == "lab2_mul" for layer in graph.layers)


def test_shipped_recogniser_has_no_scalar_affine_left_before_convolutions():
    models = load_model_set(None)
    graph = load_graph(models.rec.param, models.rec.bin)
    types = [layer.type for layer in graph.layers]
    assert "HardSwish" not in types
    assert types.count("BinaryOp") <= 12  # residual adds, SE gates, affines before a Split


def test_graph_round_trip_keeps_weights(tmp_path):
    models = load_model_set(None)
    graph = load_graph(models.det.param, models.det.bin)
    save_graph(graph, tmp_path / "d.param", tmp_path / "d.bin")
    again = load_graph(tmp_path / "d.param", tmp_path / "d.bin")
    assert [l.params for l in again.layers] == [l.params for l in graph.layers]
    for a, b in zip(graph.layers, again.layers):
        for wa, wb in zip(a.weights, b.weights):
            np.testing.assert_array_equal(wa.data, wb.data)


def _deconvolution(name: str, src: str, dst: str, cin: int, cout: int, relu: bool) -> Layer:
    count = cout * cin * 4
    params = {"0": str(cout), "1": "2", "11": "2", "12": "1", "13": "2", "14": "0", "18": "0", "19": "0",
              "2": "1", "3": "2", "4": "0", "5": "1", "6": str(count), "9": "1" if relu else "0"}
    weights = [Weight(RNG.normal(0, 0.3, count).astype(np.float32), True),
               Weight(RNG.normal(0, 0.1, cout).astype(np.float32), False)]
    return Layer("Deconvolution", name, [src], [dst], params, weights)


def test_block_deconvolutions_become_pixel_shuffles_with_the_same_output(tmp_path):
    """The DB head's pattern: 2x2 stride-2 deconvolution with ReLU, then one to a single map."""
    graph = Graph([Layer("Input", "in0", [], ["in0"], {}),
                   _deconvolution("up1", "in0", "a", 6, 5, relu=True),
                   _deconvolution("up2", "a", "out0", 5, 1, relu=False)])
    image = RNG.normal(0, 1, (6, 7, 9)).astype(np.float32)
    before = run_graph(graph, tmp_path, "before", image)
    rewritten = copy.deepcopy(graph)
    assert optimize(rewritten)["deconvolution_as_pixel_shuffle"] == 2
    assert [layer.type for layer in rewritten.layers] == [
        "Input", "Convolution", "PixelShuffle", "Convolution", "PixelShuffle"]
    after = run_graph(rewritten, tmp_path, "after", image)
    assert after.shape == before.shape == (1, 28, 36)
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)


def test_overlapping_deconvolutions_are_left_alone():
    layer = _deconvolution("up", "in0", "out0", 4, 4, relu=False)
    layer.params.update({"1": "3", "11": "3", "6": str(4 * 4 * 9)})
    layer.weights[0] = Weight(RNG.normal(0, 0.3, 4 * 4 * 9).astype(np.float32), True)
    graph = Graph([Layer("Input", "in0", [], ["in0"], {}), layer])
    assert optimize(graph)["deconvolution_as_pixel_shuffle"] == 0
