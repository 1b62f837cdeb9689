"""The interface every OCR engine implements, and how the runner asks for one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, runtime_checkable

from outputs.model import PageResult

if TYPE_CHECKING:  # a GPU device owner imports this module and needs no image library
    from PIL import Image


# Extra settings that change only speed or memory, never the text (not part of a document's
# identity): hunyuan's layer-at-a-time loading, one-graph decoder, where its attention runs,
# and how many pages decode together within what KV-cache budget (batched greedy tokens equal
# a lone page's: tests/test_hunyuan_batch.py); ppocr's batched recognition (the same text as
# one crop at a time, tests/test_ppocr_batch.py), crop threads (tests/test_ppocr_crop_threads.py)
# and the class head in numpy (the same arg-max at every step of the kit's lines: tests/test_class_head.py);
# a GPU owner's nets loaded as one (each part's outputs equal its own net's: tests/test_joint_net.py).
RESULT_NEUTRAL_OPTIONS = frozenset({"low_memory", "fused_decoder", "host_attention", "batch_pages",
                                    "kv_cache_mb", "rec_batch", "rec_strip_steps", "gpu_streams",
                                    "rec_parallel", "det_turns", "rec_head", "gpu_joint"})


@dataclass(frozen=True)
class EngineOptions:
    threads: int = 2
    device: str = "cpu"  # "cpu" | "gpu" (ncnn Vulkan)
    model_dir: Path | None = None  # user-supplied model folder (with manifest.json)
    model: str | None = None  # a shipped model by name (ppocr: ppocr-v5-mobile, ppocr-v6-tiny); None: default
    extra: tuple[tuple[str, str], ...] = ()  # engine-specific settings, e.g. (("max_new_tokens", "2048"),)
    # Address of a device owner process that holds the nets (ppocr on a GPU: model_cache/ppocr/
    # service.py); the engine then runs only its CPU steps here. Never changes results.
    service: str | None = None
    # A lock file the CPU workers of one run share (model_cache/turns.py): a memory-heavy step
    # (ppocr's detector, where the model asks for turns) runs in one of them at a time. Set by
    # the runner, never by users; never changes results.
    turns: str | None = None

    def get(self, key: str, default: str | None = None) -> str | None:
        return dict(self.extra).get(key, default)


class EngineError(Exception):
    """An engine could not be created (missing or altered model files, bad device)."""


class DeviceLost(Exception):
    """The process holding the engine's nets went away mid-request: this process must restart
    (its pages in flight are retried as a crashed worker's are)."""


@runtime_checkable
class Engine(Protocol):
    name: str

    def ocr(self, image: Image.Image) -> PageResult:
        """Recognise one upright-or-not page image. Returns blocks/lines in reading order;
        source, doc_id, page and dpi are filled in by the runner."""
        ...


EngineFactory = Callable[[EngineOptions], Engine]
