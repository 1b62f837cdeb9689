"""Two graphs loaded as one ncnn net (model_cache/ppocr/joint_net.py): each part computes what
it computes alone, under its own names, on the CPU and on a Vulkan device."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr import nets
from model_cache.ppocr.assets import load_model_set
from model_cache.ppocr.batch_rec import prepare
from model_cache.ppocr.joint_net import JointPart, joint_text, load_joint
from model_cache.ppocr.recognition import RecParams
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions, gpu_available
from model_cache.ppocr.service import NetService

TINY = "ppocr-v6-tiny"


def page_and_crops(eval_dir) -> tuple[np.ndarray, list[np.ndarray]]:
    page = np.asarray(Image.open(eval_dir / "scans" / "phototest.tif").convert("RGB"))
    image = np.ascontiguousarray(((page[:480, :640].astype(np.float32) / 255 - 0.5) / 0.5).transpose(2, 0, 1))
    crops = [prepare(np.ascontiguousarray(page[40 + 48 * i:88 + 48 * i, 20:620]), RecParams()) for i in range(3)]
    return image, crops


def test_joint_text_keeps_each_part_behind_its_prefix():
    models = load_model_set(None, TINY)
    det = models.det.param.read_text(encoding="utf-8")
    rec = models.rec.param.read_text(encoding="utf-8")
    text = joint_text([JointPart(models.det, det), JointPart(models.rec, rec)])
    lines = text.splitlines()
    det_layers, rec_layers = (int(t.splitlines()[1].split()[0]) for t in (det, rec))
    assert int(lines[1].split()[0]) == det_layers + rec_layers == len(lines) - 2
    names = [line.split()[1] for line in lines[2:]]
    assert all(n.startswith("p0.") for n in names[:det_layers]) and all(n.startswith("p1.") for n in names[det_layers:])
    assert "p0.in0" in lines[2].split() and "p1.in0" in lines[2 + det_layers].split()  # both inputs, apart
    with pytest.raises(EngineError):
        joint_text([JointPart(models.det, "not a graph\n")])


def test_each_part_of_a_joint_net_computes_what_it_computes_alone(eval_dir):
    models = load_model_set(None, TINY)
    runtime = RuntimeOptions(threads=1)
    detector, recognizer = load_joint([JointPart(models.det, models.det.param.read_text(encoding="utf-8")),
                                       JointPart(models.rec, models.rec.param.read_text(encoding="utf-8"))], runtime)
    image, crops = page_and_crops(eval_dir)
    assert np.array_equal(detector.run(image), NcnnNet(models.det, runtime).run(image))
    alone = NcnnNet(models.rec, runtime)
    for crop in crops:
        assert np.array_equal(recognizer.run(crop), alone.run(crop))
    assert detector.stats.calls == 1 and recognizer.stats.calls == len(crops)  # counted per part


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="no Vulkan device")
def test_a_gpu_owner_loads_both_nets_as_one_and_reads_as_with_two(eval_dir):
    image, crops = page_and_crops(eval_dir)
    results = {}
    for joint in ("on", "off"):
        service = NetService(EngineOptions(threads=1, device="gpu", model=TINY, extra=(("gpu_joint", joint),)))
        assert (service.strips is not None) == (joint == "on")  # loaded with the detector
        service.load_recognizer()
        assert (service.det.net is service.strips.net.net) == (joint == "on")
        results[joint] = (service.det.run(image), [s for _, part in service.strips.iter_prepared(crops) for s in part])
    assert np.array_equal(results["on"][0], results["off"][0])
    assert all(np.array_equal(a, b) for a, b in zip(results["on"][1], results["off"][1]))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="no Vulkan device")
def test_nets_whose_options_differ_are_loaded_apart():
    """det_precision=fp16 with fp32 strips cannot share one net's options: two nets."""
    service = NetService(EngineOptions(threads=1, device="gpu", model=TINY, extra=(("det_precision", "fp16"),)))
    assert service.strips is not None and service.det.net is not service.strips.net.net
    assert service.det.net.opt.use_fp16_storage and not service.strips.net.net.opt.use_fp16_storage


def test_a_cpu_owner_loads_its_recogniser_later_and_gpu_joint_is_on_or_off():
    models = load_model_set(None, TINY)
    options = EngineOptions(threads=1, model=TINY, extra=(("rec_batch", "on"),))
    det, strips = nets.owner_nets(models, options)
    assert strips is None and det.prefix == ""
    with pytest.raises(EngineError, match="gpu_joint"):
        nets.owner_nets(models, replace(options, extra=(("gpu_joint", "maybe"),)))
