"""The ppocr nets, built from a model set and the engine options: the detector, the orientation
classifier, and the recogniser (one crop at a time, crop threads, or strips).

The engine (engine.py) builds them for its page pipeline. A GPU device owner (service.py) builds
only the detector and the strip recogniser, from here, so that it imports numpy and ncnn but not
the page pipeline's OpenCV, PIL and layout stage: the owner's start is on the critical path of
every GPU run (docs/benchmarks.md, "The GPU run's start, piece by piece").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from model_cache.engine import EngineError, EngineOptions
from model_cache.ppocr.assets import ModelSet
from model_cache.ppocr.batch_graph import Unbatchable
from model_cache.ppocr.batch_rec import BatchParams, StripRecognizer
from model_cache.ppocr.class_head import ClassHead, graph_to_features, read_class_head
from model_cache.ppocr.crop_threads import CropThreads
from model_cache.ppocr.joint_net import JointPart, load_joint
from model_cache.ppocr.recognition import softmax_input
from model_cache.ppocr.runtime import NcnnNet, RuntimeOptions

DET_PRECISION = "fp32"  # on an H200 fp32 cost 1-5 % of throughput and made every line the CPU's
REC_PRECISION = "fp32"
CONV_KERNELS = "direct"


@dataclass
class Recognizer:
    """The recogniser as the options chose it: `net` always; `batch` when crops go in strips,
    `crop_threads` when whole crops run on threads of their own, neither for one crop at a time;
    `class_head` when numpy runs the class head (then `net` ends at the head's input)."""
    net: NcnnNet
    batch: StripRecognizer | None = None
    crop_threads: CropThreads | None = None
    class_head: ClassHead | None = None


def parse_device(device: str) -> tuple[bool, int]:
    """'cpu' -> (False, 0); 'gpu' or 'gpu:N' -> (True, N)."""
    if device == "cpu":
        return False, 0
    kind, _, index = device.partition(":")
    if kind != "gpu" or (index and not index.isdigit()):
        raise EngineError(f"unknown device '{device}' (cpu, gpu or gpu:N)")
    return True, int(index or 0)


def plain_runtime(options: EngineOptions) -> RuntimeOptions:
    """The classifier's runtime: the options' threads and device, ncnn's default kernels."""
    gpu, index = parse_device(options.device)
    return RuntimeOptions(threads=options.threads, gpu=gpu, device_index=index)


def conv_runtime(options: EngineOptions) -> RuntimeOptions:
    """The detector's and recogniser's runtime: their convolution kernels follow `conv`."""
    return replace(plain_runtime(options), direct_conv=_direct_conv(options))


def detector(models: ModelSet, options: EngineOptions) -> NcnnNet:
    return NcnnNet(models.det, detector_runtime(options))


def detector_runtime(options: EngineOptions) -> RuntimeOptions:
    return replace(conv_runtime(options), fp16=_fp16(options, "det_precision", DET_PRECISION))


def classifier(models: ModelSet, options: EngineOptions) -> NcnnNet:
    return NcnnNet(models.cls, plain_runtime(options))


def recognizer(models: ModelSet, options: EngineOptions) -> Recognizer:
    """Strips, crop threads or one crop at a time, as the options say."""
    runtime = conv_runtime(options)
    batch = strip_recognizer(models, options, runtime)
    if batch is not None:
        return Recognizer(batch.net, batch=batch)
    threads = _crop_threads(models, options, runtime)
    if threads is not None:
        return Recognizer(threads.net, crop_threads=threads)
    head = numpy_class_head(models, options, runtime)
    if head is not None:
        graph = graph_to_features(models.rec.param.read_text(encoding="utf-8"), head)
        return Recognizer(NcnnNet(models.rec, runtime, param_text=graph), class_head=head)
    return Recognizer(NcnnNet(models.rec, runtime))


def owner_nets(models: ModelSet, options: EngineOptions) -> tuple[NcnnNet, StripRecognizer | None]:
    """A device owner's detector and, on a GPU, its strip recogniser, loaded as one ncnn net
    where their ncnn options agree (joint_net.py: each shader compiled once). The recogniser is
    None where the owner loads it later on its own (a CPU owner; `gpu_joint=off`)."""
    det = detector_runtime(options)
    # gpu_joint: 'on' loads a GPU owner's two nets as one (about 0.3 s less at its start on an
    # H200); 'off' as two, the detector first.
    joint = switch(options, "gpu_joint", "on")
    if not det.gpu or not joint:
        return NcnnNet(models.det, det), None
    strips = owner_recognizer(models, options, load=False)
    if strips.options != det:  # e.g. det_precision=fp16 with fp32 strips: two nets
        strips.load()
        return NcnnNet(models.det, det), strips
    det_net, rec_net = load_joint([JointPart(models.det, models.det.param.read_text(encoding="utf-8")),
                                   JointPart(models.rec, strips.graph.text)], det)
    strips.use_net(rec_net)
    return det_net, strips


def owner_recognizer(models: ModelSet, options: EngineOptions, load: bool = True) -> StripRecognizer:
    """A device owner's strip recogniser; an owner cannot do without it."""
    strips = strip_recognizer(models, options, load=load)
    if strips is None:
        raise EngineError("the device owner needs the strip recogniser (rec_batch)")
    return strips


def numpy_class_head(models: ModelSet, options: EngineOptions, runtime: RuntimeOptions) -> ClassHead | None:
    """rec_head: 'auto' runs the class head in numpy on a CPU when the model's head can be read
    (class_head.py: ~1.8x ncnn's per page here); 'ncnn' keeps it in the net."""
    mode = (options.get("rec_head") or "auto").lower()
    if mode not in ("auto", "ncnn"):
        raise EngineError(f"ppocr option rec_head={mode!r}: use 'auto' or 'ncnn'")
    if mode == "ncnn" or runtime.gpu:
        return None
    return read_class_head(models.rec.param, models.rec.bin, softmax_input(models.rec.param, models.rec.output))


def strip_recognizer(models: ModelSet, options: EngineOptions,
                     runtime: RuntimeOptions | None = None, load: bool = True) -> StripRecognizer | None:
    """load=False: the graph is planned, and the caller loads it (StripRecognizer.use_net)."""
    runtime = runtime or conv_runtime(options)
    rec_fp16 = _fp16(options, "rec_precision", REC_PRECISION)  # checked on a CPU too
    mode = (options.get("rec_batch") or "auto").lower()
    if mode not in ("auto", "on", "off"):
        raise EngineError(f"ppocr option rec_batch={mode!r}: use 'auto', 'on' or 'off'")
    if mode == "off" or (mode == "auto" and not runtime.gpu):
        return None
    # On a GPU the graph ends in the top-1 tail (its fp16 form gives the index in two parts).
    top1 = runtime.gpu
    rec_runtime = replace(runtime, fp16=not top1 or rec_fp16)
    steps = options.get("rec_strip_steps") or str(strip_steps(runtime.gpu))
    if not steps.isdigit() or int(steps) < 1:
        raise EngineError(f"ppocr option rec_strip_steps={steps!r} is not a positive whole number")
    # On a GPU every strip has the same shape (the tail is gap): ncnn's Vulkan allocator then
    # reuses its buffers instead of making new ones for every strip width.
    params = BatchParams(max_steps=int(steps), fixed_width=runtime.gpu)
    try:
        return StripRecognizer(models.rec, rec_runtime, params, top1=top1, load=load)
    except Unbatchable as exc:
        if mode == "on":
            raise EngineError(f"ppocr: this recogniser cannot be batched ({exc})") from None
        return None


def _crop_threads(models: ModelSet, options: EngineOptions, runtime: RuntimeOptions) -> CropThreads | None:
    mode = (options.get("rec_parallel") or "auto").lower()
    if mode not in ("auto", "crops", "layers"):
        raise EngineError(f"ppocr option rec_parallel={mode!r}: use 'auto', 'crops' or 'layers'")
    if runtime.gpu or mode in ("auto", "layers"):
        return None
    return CropThreads(models.rec, runtime, runtime.threads)


def strip_steps(gpu: bool) -> int:
    """Time steps per strip. On a GPU (H200, fp32) PP-OCRv5's strips cost 12.6 / 20 / 43 / 93 ms at
    1024 / 2048 / 4096 / 8192 steps (its attention grows with steps^2): 2048 read the mixed job
    13 % faster than 1024, longer strips slower (docs/benchmarks.md)."""
    return 2048 if gpu else BatchParams.max_steps


def _direct_conv(options: EngineOptions) -> bool:
    """conv: on a CPU direct convolutions halve the detector's peak memory and run the
    recogniser's 48 px high crops as fast or faster (20.7 vs 19.3 kpx/s on 2 threads); on an
    H200 gemm was no faster (strips within 3 %, dense40 230.7 vs 237.4 pages/min)."""
    kernels = (options.get("conv") or CONV_KERNELS).lower()
    if kernels not in ("direct", "gemm"):
        raise EngineError(f"ppocr option conv={kernels!r}: use 'direct' or 'gemm'")
    return kernels == "direct"


def switch(options: EngineOptions, key: str, default: str) -> bool:
    """An on/off ppocr option: its value, else `default` ("on" or "off")."""
    value = str(options.get(key) or default).lower()
    if value not in ("on", "off"):
        raise EngineError(f"ppocr option {key}={value!r}: use 'on' or 'off'")
    return value == "on"


def _fp16(options: EngineOptions, name: str, default: str) -> bool:
    """det_precision / rec_precision: storage and arithmetic on a GPU (a CPU runs fp32 anyway)."""
    precision = (options.get(name) or default).lower()
    if precision not in ("fp16", "fp32"):
        raise EngineError(f"ppocr option {name}={precision!r}: use 'fp16' or 'fp32'")
    return precision == "fp16"
