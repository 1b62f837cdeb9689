"""One loaded ncnn net: options, loading, and a single-input/single-output run."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import ncnn
import numpy as np

from model_cache.engine import EngineError
from model_cache.ppocr.assets import NetFiles


@dataclass(frozen=True)
class RuntimeOptions:
    threads: int = 2
    gpu: bool = False
    device_index: int = 0  # which Vulkan device (with gpu)
    fp16: bool = True  # on a GPU, fp16 storage and arithmetic where the device has them
    # im2col (sgemm) and winograd convolutions need large workspaces on big inputs: the
    # detector at 1920x1344 peaks at ~1.1 GB with them and ~0.65 GB without (measured).
    direct_conv: bool = False


def gpu_available() -> bool:
    try:
        return ncnn.get_gpu_count() > 0
    except Exception:  # a broken Vulkan loader must not break CPU use
        return False


@dataclass
class NetStats:
    """Extract calls of one net. On a GPU each call is one submission, plus one per layer that
    falls back to the host; `downloaded` counts the output blobs only (not those round trips)."""
    calls: int = 0
    submissions: float = 0  # a device owner's strips are shared out among the feeders' requests
    downloaded: float = 0  # bytes
    uploaded: float = 0  # bytes of input blobs
    seconds: float = 0.0  # inside extract calls
    moved: int = 0  # bytes between processes (a net held by a device owner: remote.py)

    def add(self, submissions: float, downloaded: float, uploaded: float, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds
        self.submissions += submissions
        self.downloaded += downloaded
        self.uploaded += uploaded


def configured_net(options: RuntimeOptions) -> ncnn.Net:
    """An empty ncnn.Net with the options' threads, device, kernels and precision."""
    if options.gpu and not gpu_available():
        raise EngineError("device 'gpu' requested but ncnn sees no Vulkan device")
    net = ncnn.Net()
    net.opt.num_threads = max(1, int(options.threads))
    net.opt.use_vulkan_compute = bool(options.gpu)
    if options.direct_conv:
        net.opt.use_sgemm_convolution = False
        net.opt.use_winograd_convolution = False
    if options.gpu:
        net.set_vulkan_device(options.device_index)
        if not options.fp16:
            net.opt.use_fp16_storage = False
            net.opt.use_fp16_packed = False
            net.opt.use_fp16_arithmetic = False
    return net


class NcnnNet:
    """An ncnn.Net loaded once; `run` takes an ncnn.Mat (or a float32 CHW array) and
    returns the output blob as a numpy array (copied, so the Mat may be freed), or what
    `read` makes of it in place."""

    def __init__(self, files: NetFiles, options: RuntimeOptions, param_text: str | None = None):
        """`param_text`: a rewritten graph (batch_graph.py) over the same .bin."""
        net = configured_net(options)
        loaded = net.load_param_mem(param_text) if param_text else net.load_param(str(files.param))
        if loaded != 0 or net.load_model(str(files.bin)) != 0:
            raise EngineError(f"ncnn could not load {files.param.name}/{files.bin.name}")
        self._attach(net, files, options, prefix="")

    @classmethod
    def part_of(cls, net: ncnn.Net, files: NetFiles, options: RuntimeOptions, prefix: str) -> "NcnnNet":
        """One graph of a loaded joint net (joint_net.py): its blob and layer names begin with
        `prefix` there, and callers go on naming them without it."""
        part = cls.__new__(cls)
        part._attach(net, files, options, prefix)
        return part

    def _attach(self, net: ncnn.Net, files: NetFiles, options: RuntimeOptions, prefix: str) -> None:
        self.files = files
        self.net = net
        self.prefix = prefix
        # Own pools, emptied by release(): ncnn's default pools keep every buffer size they
        # ever saw, so memory would grow with each new page size.
        self.blob_pool = ncnn.UnlockedPoolAllocator()
        self.work_pool = ncnn.PoolAllocator()
        self.stats = NetStats()
        self._calls = threading.local()  # this thread's last call (a device owner runs several)
        # Layers without a Vulkan kernel run on the host: their input is downloaded and their
        # output uploaded again, inside the same extract call (one more submission each).
        self.host_layers = [l.type for l in net.layers()
                            if options.gpu and not l.support_vulkan and l.type != "Input"
                            and l.name.startswith(prefix)]

    def run(self, mat: ncnn.Mat | np.ndarray, output: str | None = None,
            read: Callable[[np.ndarray], Any] | None = None) -> Any:
        return self.run_inputs({self.files.input: mat}, output, read)

    def run_inputs(self, inputs: dict[str, ncnn.Mat | np.ndarray], output: str | None = None,
                   read: Callable[[np.ndarray], Any] | None = None, consume: bool = False) -> Any:
        """One extract call: every named input, one output blob. With `read`, the result is
        read(blob) on the output blob itself while it is still in the pool (no copy: a wide
        line's logits are up to 36 MiB); `read` must not keep the array. With `consume`, the
        caller hands its ncnn.Mat inputs over (`inputs` is emptied): ncnn frees each once the
        layers that read it are done, instead of at the end of the call."""
        # ncnn.Mat wraps a numpy array without copying: keep every array alive until extract ends.
        arrays = {name: np.ascontiguousarray(m, dtype=np.float32)
                  for name, m in inputs.items() if isinstance(m, np.ndarray)}
        mats = {name: ncnn.Mat(arrays[name]) if name in arrays else m for name, m in inputs.items()}
        uploaded = sum(np.asarray(m).nbytes for m in mats.values())
        if consume:
            inputs.clear()
        start = time.perf_counter()
        with self.net.create_extractor() as ex:
            if not self.net.opt.use_vulkan_compute:
                ex.set_blob_allocator(self.blob_pool)
                ex.set_workspace_allocator(self.work_pool)
            for name, mat in mats.items():
                ex.input(self.prefix + name, mat)
            if consume:  # handed over: the extractor now holds the only reference to each Mat
                del mat
                mats.clear()
            ret, out = ex.extract(self.prefix + (output or self.files.output))
            if ret != 0:
                raise EngineError(f"ncnn extract failed ({ret}) in {self.files.param.name}")
            seconds = time.perf_counter() - start
            blob = np.array(out, copy=read is None)
            nbytes = blob.nbytes
            result = read(blob) if read is not None else blob
            del blob, out
        call = (1 + len(self.host_layers), nbytes, uploaded, seconds)
        self.stats.add(*call)
        self._calls.last = call
        del arrays
        return result

    def last_call(self) -> dict[str, float]:
        """Submissions, bytes down- and uploaded and seconds of this thread's last run."""
        call = getattr(self._calls, "last", (0, 0, 0, 0.0))
        return dict(zip(("submissions", "downloaded", "uploaded", "seconds"), map(float, call)))

    def release(self) -> None:
        """Return pooled intermediate buffers to the system (call between pages)."""
        self.blob_pool.clear()
        self.work_pool.clear()
