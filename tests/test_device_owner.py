"""The GPU owner and its feeders (model_cache/ppocr/service.py, remote.py, wire.py,
runner/device_owner.py), exercised on the CPU: the same protocol, nets and merging as on a GPU.
An owner that dies costs only the pages in flight, and one that cannot start stops the run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image
from threadpoolctl import threadpool_info

from model_cache.cpu_threads import limit_library_threads
from model_cache.engine import EngineOptions
from model_cache.ppocr.batch_rec import prepare
from model_cache.ppocr.engine import PPOCREngine
from model_cache.ppocr.recognition import RecParams
from model_cache.ppocr.runtime import NcnnNet, gpu_available
from model_cache.ppocr.service import NetService
from model_cache.ppocr.wire import INLINE_BELOW, Place, SharedBuffer, pack, unpack
from runner.device_owner import DeviceOwners, default_feeders
from runner.errors import EngineUnavailable
from runner.executors import ProcessExecutor
from runner.job import RunConfig, make_executor, run_job
from runner.worker import WorkerConfig
from tests.conftest import make_page

# PP-OCRv6 tiny batches on a CPU and is the fastest model: the owner's protocol is the same for both.
TINY = EngineOptions(threads=1, model="ppocr-v6-tiny", extra=(("rec_batch", "on"),))


def test_large_arrays_travel_through_the_shared_buffer_small_ones_inline():
    buffer = SharedBuffer(1 << 20)
    big = np.arange(50_000, dtype=np.float32).reshape(2, 25_000)
    small = np.ones(10, np.float32)
    payload, used = pack([big, small], buffer)
    assert isinstance(payload[0], Place) and isinstance(payload[1], np.ndarray)
    assert used >= big.nbytes and small.nbytes < INLINE_BELOW
    path = buffer.path
    other = SharedBuffer(buffer.size, path)  # the owner's mapping of the same file
    buffer.unlink()  # once both have it mapped, nothing is left behind if either dies
    assert buffer.path is None and not os.path.exists(path)
    got = unpack(payload, other)
    assert np.array_equal(got[0], big) and np.array_equal(got[1], small)
    too_big = np.zeros(1 << 19, np.float32)  # 2 MB > the buffer: sent inline instead
    payload, used = pack([too_big], buffer)
    assert used == 0 and isinstance(payload[0], np.ndarray)
    other.close()
    buffer.close()


def test_default_feeders_follow_the_cores():
    assert default_feeders(1, cores=16) == 12  # capped
    assert default_feeders(1, cores=8) == 6
    assert default_feeders(2, cores=16) == 6
    assert default_feeders(1, cores=2) == 2


def test_gpu_runs_use_one_owner_per_device_and_feeders_round_robin():
    executor = make_executor(RunConfig([], Path("/nonexistent"), device="gpu:0,1", feeders=3))
    assert isinstance(executor, ProcessExecutor) and executor.owners is not None
    assert [o.options.device for o in executor.owners.owners] == ["gpu:0", "gpu:1"]
    addresses = [o.address for o in executor.owners.owners]
    assert [c.engine_options.service for c in executor.configs] == addresses * 3
    assert executor.workers == 6 and executor.batch == 2
    executor.owners.stop()
    by_workers = make_executor(RunConfig([], Path("/nonexistent"), device="gpu:0,1", workers=8))
    assert by_workers.workers == 8 and len(by_workers.owners.owners) == 2  # --workers: feeders in all
    by_workers.owners.stop()
    old = make_executor(RunConfig([], Path("/nonexistent"), device="gpu:0,1", feeders=0))
    assert old.owners is None and old.workers == 2 and old.batch == 8  # one worker per GPU, as before
    unbatched = make_executor(RunConfig([], Path("/nonexistent"), device="gpu",
                                        engine_extra=(("rec_batch", "off"),)))
    assert unbatched.owners is None
    assert make_executor(RunConfig([], Path("/nonexistent"))).owners is None  # CPU runs: unchanged


def kit_page(eval_dir: Path) -> Image.Image:
    return Image.open(eval_dir / "scans" / "phototest.tif")


def test_a_remote_engine_reads_what_the_local_one_reads(eval_dir):
    owners = DeviceOwners([WorkerConfig(engine_options=TINY)], 1)
    owners.start()
    try:
        owners.wait_ready()
        limit_library_threads(3)
        remote = PPOCREngine(owners.feeder_configs()[0].engine_options)
        # A feeder's numpy and OpenCV keep to its threads: twelve feeders with a pool of one
        # thread per core each spent 4.4 s a page in the skew search on a 16-core host.
        assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}
        assert cv2.getNumThreads() == 1
        page = kit_page(eval_dir)
        got = remote.ocr_many([page, page.rotate(180, expand=True)])
        want = PPOCREngine(TINY).ocr_many([page, page.rotate(180, expand=True)])
        assert [r.text for r in got] == [r.text for r in want]
        assert [r.rotation for r in got] == [r.rotation for r in want] == [0, 180]
        timings = got[0].timings
        # Per page: one detection, a few orientation votes and half of one recognition request.
        assert 2 <= timings["net_calls"] <= 10 and timings["ipc_bytes"] > 1e6
        assert remote.det.host_layers == [] and remote.batch.top1 is False  # CPU strips return logits
        # The votes ran on the feeder's own classifier, on its CPU, not in the owner.
        assert isinstance(remote.cls, NcnnNet) and remote.cls.stats.calls >= 2
        assert not remote.cls.net.opt.use_vulkan_compute
    finally:
        owners.stop()


class _Collect:
    """Stands in for a feeder connection: keeps the replies."""

    def __init__(self):
        self.replies: list = []

    def reply(self, arrays, stats):
        self.replies.append((list(arrays), dict(stats)))

    def fail(self, message):
        self.replies.append(("error", message))


def test_concurrent_recognition_requests_share_strips(eval_dir):
    from model_cache.ppocr.service import _Request

    service = NetService(TINY)
    service.load_recognizer()
    page = np.asarray(kit_page(eval_dir).convert("RGB"))
    from model_cache.ppocr.detection import DetParams, detect
    from model_cache.ppocr.crops import rectify
    boxes = detect(service.det, page, DetParams())
    crops = [prepare(rectify(page, b.quad, RecParams()), RecParams()) for b in boxes]
    assert len(crops) >= 6
    a, b = _Collect(), _Collect()
    first, second = crops[: len(crops) // 2], crops[len(crops) // 2:]
    service._recognise([_Request(a, "rec", first), _Request(b, "rec", second)])
    assert service.stats.rounds == 1 and service.stats.merged == 1
    together = [*a.replies[0][0], *b.replies[0][0]]
    separately = [s for _, scores in service.strips.iter_prepared(crops) for s in scores]
    assert len(together) == len(crops)
    for x, y in zip(together, separately):
        assert x.shape == y.shape and np.allclose(x, y, atol=1e-4)
    # The strips' submissions are shared out by crops: both requests together paid for them all.
    assert a.replies[0][1]["submissions"] + b.replies[0][1]["submissions"] == pytest.approx(service.stats.strips)


def test_recognition_asked_before_the_recogniser_is_loaded_waits_for_it(eval_dir):
    """The owner serves detection while its recogniser loads; a recognition request made
    meanwhile is answered once it is loaded, with what the loaded recogniser reads."""
    import threading
    import time

    from model_cache.ppocr.service import _Request

    service = NetService(TINY)
    assert service.strips is None and service.info["top1"] is False
    assert not hasattr(service, "cls")  # the feeders vote on orientation themselves
    service.start()
    try:
        page = np.asarray(kit_page(eval_dir).convert("RGB"))
        detected, early = _Collect(), _Collect()
        service.det_queue.put(_Request(detected, "det", [np.zeros((3, 64, 64), np.float32)]))
        crop = prepare(np.ascontiguousarray(page[:48, :400]), RecParams())
        service.rec_queue.put(_Request(early, "rec", [crop]))
        deadline = time.monotonic() + 30
        while not detected.replies and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(detected.replies) == 1 and detected.replies[0][0] != "error"  # served before loading
        time.sleep(0.2)
        assert early.replies == []  # waits for the recogniser
        service.load_recognizer()
        while not early.replies and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(early.replies) == 1
        (got,), _ = early.replies[0]
        want = next(scores for _, scores in service.strips.iter_prepared([crop]))[0]
        assert np.allclose(got, want, atol=1e-4)
        assert "rec" in service.info["host_layers"]
    finally:
        service.stop()


def test_an_owner_whose_recogniser_cannot_load_stops_the_run(tmp_path):
    """The detector loads and serves, the recogniser then fails: the run stops with the reason."""
    root = pages_folder(tmp_path, 2)
    broken = EngineOptions(threads=1, model="ppocr-v6-tiny", extra=(("rec_batch", "on"), ("rec_strip_steps", "many")))
    with pytest.raises(EngineUnavailable, match="rec_strip_steps"):
        run_job(RunConfig([str(root)], tmp_path / "out", text_layer="ignore"),
                executor_factory=lambda config: owned_executor(options=broken))


def pages_folder(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    for index in range(count):
        make_page(f"owner test page {index} reads fine", size=(520, 300), seed=index).save(root / f"p{index}.png")
    return root


class _KillOwnerAfterFirst:
    """Runs the executor and SIGKILLs its (only) owner once the first page has come back."""

    def __init__(self, inner: ProcessExecutor):
        self.inner = inner

    def run(self, tasks, stop):
        for index, result in enumerate(self.inner.run(tasks, stop)):
            if index == 0:
                os.kill(self.inner.owners.owners[0].process.pid, signal.SIGKILL)  # type: ignore[union-attr]
            yield result


def owned_executor(feeders: int = 2, options: EngineOptions = TINY, devices: int = 1) -> ProcessExecutor:
    owners = DeviceOwners([WorkerConfig(engine_options=options)] * devices, feeders)
    configs = owners.feeder_configs()
    return ProcessExecutor(configs[0], workers=len(configs), batch=2, configs=configs, owners=owners)


@pytest.mark.slow
def test_an_owner_that_dies_costs_only_pages_in_flight(tmp_path):
    root = pages_folder(tmp_path, 6)
    inner = owned_executor()
    summary = run_job(RunConfig([str(root)], tmp_path / "out", text_layer="ignore"),
                      executor_factory=lambda config: _KillOwnerAfterFirst(inner))
    assert summary.pages_done == 6 and summary.pages_failed == 0
    assert inner.owners is not None and inner.owners.restarts >= 1
    assert all(o.process is None for o in inner.owners.owners)  # stopped at the end


class _AskOwnersAtTheEnd:
    """Runs the executor; once the last page is back, asks each owner what it served."""

    def __init__(self, inner: ProcessExecutor, pages: int):
        self.inner, self.pages, self.served = inner, pages, []

    def run(self, tasks, stop):
        for index, result in enumerate(self.inner.run(tasks, stop)):
            yield result
            if index + 1 == self.pages:
                for owner in self.inner.owners.owners:  # type: ignore[union-attr]
                    self.served.append(owner.stats())


@pytest.mark.slow
def test_two_owners_each_serve_their_feeders(tmp_path):
    """As gpu:0,1 gives: one owner per device, feeders round robin, every page detected once."""
    root = pages_folder(tmp_path, 4)
    executor = owned_executor(feeders=1, devices=2)
    assert len({c.engine_options.service for c in executor.configs}) == 2
    asking = _AskOwnersAtTheEnd(executor, 4)
    summary = run_job(RunConfig([str(root)], tmp_path / "out", text_layer="ignore"),
                      executor_factory=lambda config: asking)
    assert summary.pages_done == 4
    assert len(asking.served) == 2 and all(stats.requests["det"] >= 1 for stats in asking.served)
    assert sum(stats.requests["det"] for stats in asking.served) == 4


def test_an_owner_that_cannot_start_stops_the_run(tmp_path):
    root = pages_folder(tmp_path, 2)
    broken = EngineOptions(threads=1, model_dir=tmp_path / "no-such-model")
    with pytest.raises(EngineUnavailable, match="device owner"):
        run_job(RunConfig([str(root)], tmp_path / "out", text_layer="ignore"),
                executor_factory=lambda config: owned_executor(options=broken))


@pytest.mark.gpu
def test_an_owner_on_the_gpu_reads_what_the_cpu_reads(eval_dir):
    """lavapipe in CI: the owner's Vulkan nets (fp32 strips with the top-1 tail) through feeders."""
    if not gpu_available():
        pytest.skip("ncnn sees no Vulkan device")
    gpu = EngineOptions(threads=2, device="gpu", model="ppocr-v6-tiny")
    owners = DeviceOwners([WorkerConfig(engine_options=gpu)], 1)
    owners.start()
    try:
        info = owners.owners[0].wait_ready()
        assert info["top1"] is True and info["host_layers"]["rec"] == []
        remote = PPOCREngine(owners.feeder_configs()[0].engine_options)
        page = kit_page(eval_dir)
        assert remote.ocr(page).text == PPOCREngine(EngineOptions(threads=2, model="ppocr-v6-tiny")).ocr(page).text
    finally:
        owners.stop()
