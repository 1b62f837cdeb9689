"""`--device` values: cpu, gpu (every Vulkan device ncnn sees), gpu:N or gpu:N,M,... ."""

from __future__ import annotations

from runner.errors import UsageError

DEFAULT_GPU_BATCH = 8  # pages per engine call on a GPU (docs/benchmarks.md, "GPU throughput")
# Pages per call of a worker feeding a device owner: the owner merges the recognition of
# several feeders, so small groups keep the end of a job balanced.
DEFAULT_FEEDER_BATCH = 2


def expand_devices(spec: str) -> list[str]:
    """One engine device per entry: ['cpu'], or ['gpu:0', 'gpu:1', ...]."""
    if spec == "cpu":
        return ["cpu"]
    kind, _, indices = spec.partition(":")
    if kind != "gpu":
        raise UsageError("--device must be cpu, gpu or gpu:N[,M...]")
    if not indices:
        return [f"gpu:{i}" for i in range(max(1, _gpu_count()))]
    parts = indices.split(",")
    if not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"--device {spec}: GPU indices must be numbers, e.g. gpu:0,1")
    return [f"gpu:{int(p)}" for p in dict.fromkeys(parts)]


def _gpu_count() -> int:
    try:
        import ncnn

        return int(ncnn.get_gpu_count())
    except Exception:  # no Vulkan loader: the engine reports the missing device itself
        return 0
