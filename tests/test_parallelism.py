"""The automatic --workers/--threads plan (runner/parallelism.py)."""

from pathlib import Path

from runner.job import RunConfig, make_executor
from runner.parallelism import PPOCR_WORKER_MIB, physical_cores, plan


def test_ppocr_on_a_cpu_gets_one_single_threaded_worker_per_core():
    chosen = plan("ppocr", "cpu", "process", None, None, cores=8, memory_mib=64_000)
    assert (chosen.workers, chosen.threads) == (8, 1)


def test_memory_caps_the_worker_count_and_the_cores_go_to_threads():
    memory = int(3 * PPOCR_WORKER_MIB / 0.6) + 1  # room for three workers
    chosen = plan("ppocr", "cpu", "process", None, None, cores=8, memory_mib=memory)
    assert (chosen.workers, chosen.threads) == (3, 2)
    assert plan("ppocr", "cpu", "process", None, None, cores=8, memory_mib=10).workers == 1


def test_what_the_user_gives_is_kept_and_the_rest_shares_the_cores():
    assert plan("ppocr", "cpu", "process", 3, 5, cores=2, memory_mib=64_000) == plan(
        "ppocr", "cpu", "process", 3, 5, cores=64, memory_mib=1)
    assert plan("ppocr", "cpu", "process", None, 2, cores=8, memory_mib=64_000).workers == 4
    assert plan("ppocr", "cpu", "process", 2, None, cores=8, memory_mib=64_000).threads == 4
    assert plan("ppocr", "cpu", "process", None, 16, cores=8, memory_mib=64_000).workers == 1


def test_other_engines_gpus_and_ray_keep_one_worker():
    assert plan("hunyuan", "cpu", "process", None, None, cores=8, memory_mib=64_000) == (
        plan("hunyuan", "cpu", "process", 1, 8, cores=8, memory_mib=0))
    gpu = plan("ppocr", "gpu", "process", None, None, cores=16, memory_mib=64_000)
    assert (gpu.workers, gpu.threads) == (1, 2)
    ray = plan("ppocr", "cpu", "ray", None, None, cores=16, memory_mib=64_000)
    assert (ray.workers, ray.threads) == (1, 2)
    assert plan("ppocr", "cpu", "inline", None, None, cores=4, memory_mib=64_000).threads == 4


def test_a_config_left_to_the_plan_builds_an_executor_with_concrete_counts():
    config = RunConfig([], Path("/nonexistent")).with_parallelism()
    assert config.workers >= 1 and config.threads >= 1
    executor = make_executor(RunConfig([], Path("/nonexistent")))
    assert executor.workers == config.workers
    assert executor.config.engine_options.threads == config.threads


def test_hardware_threads_of_one_core_go_to_one_worker():
    chosen = plan("ppocr", "cpu", "process", None, None, cores=16, physical=8, memory_mib=64_000)
    assert (chosen.workers, chosen.threads) == (8, 2)


def _topology(root, cores_of_cpus):
    for cpu, core in enumerate(cores_of_cpus):
        base = root / f"cpu{cpu}" / "topology"
        base.mkdir(parents=True)
        (base / "physical_package_id").write_text("0\n")
        (base / "core_id").write_text(f"{core}\n")


def test_physical_cores_are_read_from_the_topology(tmp_path):
    _topology(tmp_path, [0, 1, 2, 3, 0, 1, 2, 3])  # 4 cores with 2 hardware threads each
    assert physical_cores(set(range(8)), tmp_path) == 4
    assert physical_cores({0, 4}, tmp_path) == 1  # a cpuset of two siblings
    assert physical_cores({0, 9}, tmp_path) == 2  # Linux says nothing of cpu9: count CPUs
