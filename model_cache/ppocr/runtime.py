"""One loaded ncnn net: options, loading, and a single-input/single-output run."""

from __future__ import annotations

from dataclasses import dataclass

import ncnn
import numpy as np

from model_cache.engine import EngineError
from model_cache.ppocr.assets import NetFiles


@dataclass(frozen=True)
class RuntimeOptions:
    threads: int = 2
    gpu: bool = False
    # im2col (sgemm) and winograd convolutions need large workspaces on big inputs: the
    # detector at 1920x1344 peaks at ~1.1 GB with them and ~0.65 GB without (measured).
    direct_conv: bool = False


def gpu_available() -> bool:
    try:
        return ncnn.get_gpu_count() > 0
    except Exception:  # a broken Vulkan loader must not break CPU use
        return False


class NcnnNet:
    """An ncnn.Net loaded once; `run` takes an ncnn.Mat (or a float32 CHW array) and
    returns the output blob as a numpy array (copied, so the Mat may be freed)."""

    def __init__(self, files: NetFiles, options: RuntimeOptions):
        if options.gpu and not gpu_available():
            raise EngineError("device 'gpu' requested but ncnn sees no Vulkan device")
        self.files = files
        self.net = ncnn.Net()
        self.net.opt.num_threads = max(1, int(options.threads))
        self.net.opt.use_vulkan_compute = bool(options.gpu)
        if options.direct_conv:
            self.net.opt.use_sgemm_convolution = False
            self.net.opt.use_winograd_convolution = False
        # Own pools, emptied by release(): ncnn's default pools keep every buffer size they
        # ever saw, so memory would grow with each new page size.
        self.blob_pool = ncnn.UnlockedPoolAllocator()
        self.work_pool = ncnn.PoolAllocator()
        if self.net.load_param(str(files.param)) != 0 or self.net.load_model(str(files.bin)) != 0:
            raise EngineError(f"ncnn could not load {files.param.name}/{files.bin.name}")

    def run(self, mat: ncnn.Mat | np.ndarray, output: str | None = None) -> np.ndarray:
        keep = mat  # the Mat may wrap this array without copying: keep it alive until extract ends
        if isinstance(mat, np.ndarray):
            mat = ncnn.Mat(np.ascontiguousarray(mat, dtype=np.float32))
        with self.net.create_extractor() as ex:
            if not self.net.opt.use_vulkan_compute:
                ex.set_blob_allocator(self.blob_pool)
                ex.set_workspace_allocator(self.work_pool)
            ex.input(self.files.input, mat)
            ret, out = ex.extract(output or self.files.output)
            if ret != 0:
                raise EngineError(f"ncnn extract failed ({ret}) in {self.files.param.name}")
            result = np.array(out, copy=True)
        del keep
        return result

    def release(self) -> None:
        """Return pooled intermediate buffers to the system (call between pages)."""
        self.blob_pool.clear()
        self.work_pool.clear()
