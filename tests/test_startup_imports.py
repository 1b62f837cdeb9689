"""What a command's start imports. Every worker and device owner process is spawned, and spawn
re-imports the main script, so whatever the console script imports at its top, each of them
imports too; and the driver's own imports come before it starts them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _python(code: str, cwd: Path = REPO) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_console_script_names_a_light_entry_point():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["pagerunner"] == "runner:main"
    assert _python("import sys, runner; print('runner.cli' in sys.modules)") == "False"


def test_a_spawned_process_of_the_command_does_not_import_the_cli(tmp_path):
    script = tmp_path / "pagerunner_like.py"  # what pip writes for the console script, then a spawn
    script.write_text(textwrap.dedent("""
        import multiprocessing
        import sys

        from runner import main


        def report(queue):
            queue.put(sorted(m for m in ("runner.cli", "typer", "pikepdf") if m in sys.modules))


        if __name__ == "__main__":
            context = multiprocessing.get_context("spawn")
            queue = context.Queue()
            child = context.Process(target=report, args=(queue,))
            child.start()
            print(queue.get())
            child.join()
    """))
    out = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_the_cli_import_leaves_numpy_pdf_writers_and_layout_for_later():
    heavy = ("numpy", "pikepdf", "model_cache.layout", "model_cache.textlayer", "runner.export_layers")
    loaded = _python(f"import sys, runner.cli; print([m for m in {heavy!r} if m in sys.modules])")
    assert loaded == "[]"


def test_a_device_owner_loads_its_nets_without_the_page_pipelines_imports():
    """A GPU run's first page waits for its owner's start: the owner builds the detector and the
    strip recogniser from model_cache/ppocr/nets.py and imports no OpenCV, PIL or layout stage
    (0.15-0.2 s of a fresh process on this machine)."""
    heavy = ("cv2", "PIL", "model_cache.layout", "model_cache.ppocr.engine", "runner.worker", "pypdfium2")
    loaded = _python(textwrap.dedent(f"""
        import sys
        from model_cache.engine import EngineOptions
        from model_cache.ppocr.service import NetService
        import runner.device_owner
        service = NetService(EngineOptions(threads=1, model="ppocr-v6-tiny", extra=(("rec_batch", "on"),)))
        service.load_recognizer()
        assert service.det is not None and service.strips is not None
        print([m for m in {heavy!r} if m in sys.modules])
    """))
    assert loaded == "[]"
