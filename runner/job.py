"""One `pagerunner run`: expand -> register -> claim -> render -> OCR -> commit -> write.

The driver is the only writer of the store and of OUT's files. Executors (runner/executors.py)
do the page work and hand results back; each result is committed before anything is written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from jobs.expand import ExpandOptions, InputError, InputFile, expand_inputs
from jobs.identity import document_id, file_sha256
from jobs.pageranges import PageRanges
from jobs.sources import DEFAULT_MAX_PIXELS, SourceError, looks_like_pdf, open_source
from jobs.store import STORE_DIR, DocumentRecord, JobStore, PageTask, StoreError
from model_cache.engine import RESULT_NEUTRAL_OPTIONS, EngineOptions
from model_cache.ppocr.assets import BUNDLED_MODELS, MODEL_NAME as LEGACY_PPOCR_MODEL, resolve_model
from model_cache.registry import ENGINE_NAMES, is_plugin_name
from outputs.files import remove_stale_temps
from outputs.jsonl import record_line
from outputs.model import ErrorCode
from outputs.paths import safe_relative_stem
from runner.errors import EnvironmentFailure, ExitCode, UsageError
from runner.device_owner import DeviceOwners, default_feeders
from runner.parallelism import plan
from runner.devices import DEFAULT_FEEDER_BATCH, DEFAULT_GPU_BATCH, expand_devices
from runner.executors import Executor, InlineExecutor, ProcessExecutor
from runner.export import RESULTS_FILE, document_records, export_all, write_document
from runner.lock import RunLock
from runner.progress import Reporter, SilentReporter
from runner.signals import StopSignals
from runner.worker import WorkerConfig

TEXT_LAYER_MODES = ("ignore", "auto", "only")


@dataclass
class RunConfig:
    inputs: list[str]
    out_dir: Path
    engine: str = "ppocr"
    dpi: float = 200.0
    pages: PageRanges = field(default_factory=lambda: PageRanges.parse(None))
    passwords: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("jsonl", "md", "txt")
    jsonl_stdout: bool = False
    text_layer: str = "auto"
    threads: int | None = None  # engine threads per worker; None: runner/parallelism.py decides
    device: str = "cpu"
    model_dir: Path | None = None
    model: str | None = None  # a shipped ppocr model by name (--model); None: the default
    engine_extra: tuple[tuple[str, str], ...] = ()
    max_pixels: int = DEFAULT_MAX_PIXELS
    expand: ExpandOptions = field(default_factory=ExpandOptions)
    executor: str = "process"  # "process" | "inline" | "ray"
    workers: int | None = None  # worker processes (Ray actors); None: runner/parallelism.py decides
    page_timeout: float | None = None
    ray_address: str | None = None
    gpus_per_worker: float = 0.0
    batch: int | None = None  # pages per engine call; None: DEFAULT_GPU_BATCH on a GPU, else 1
    # CPU worker processes per GPU device owner (ppocr on a GPU); None: from the host's cores;
    # 0: no owner, one worker per GPU runs every step of its pages itself.
    feeders: int | None = None
    from_store: bool = False  # resume the stored queue without expanding inputs (retry)

    def document_options(self) -> dict[str, Any]:
        """The options that change results (part of each document's identity)."""
        options = {"engine": self.engine, "model": str(self.model_dir) if self.model_dir else None,
                   "dpi": self.dpi, "pages": str(self.pages.text or ""), "text_layer": self.text_layer,
                   "max_pixels": self.max_pixels}
        settings = sorted((k, v) for k, v in self.engine_extra if k not in RESULT_NEUTRAL_OPTIONS)
        if settings:  # only when given, so documents of runs without settings keep their identity
            options["engine_options"] = settings
        model = self.ppocr_model()
        if model is not None and model != LEGACY_PPOCR_MODEL:  # the model every earlier id was made with
            options["ppocr_model"] = model
        return options

    def ppocr_model(self) -> str | None:
        """The shipped ppocr model this run uses (resolved from --model), None for other engines."""
        return resolve_model(self.model) if self.engine == "ppocr" else None

    def worker_config(self, device: str | None = None) -> WorkerConfig:
        options = EngineOptions(threads=self.threads, device=device or self.device, model_dir=self.model_dir,
                                model=self.ppocr_model(), extra=self.engine_extra)
        return WorkerConfig(engine=self.engine, engine_options=options, passwords=self.passwords,
                            max_pixels=self.max_pixels)

    def pages_per_call(self) -> int:
        if self.batch is not None:
            return self.batch
        if self.engine == "hunyuan":  # as many pages in flight as the engine decodes together
            return _hunyuan_batch_pages(self.device, dict(self.engine_extra))
        if self.uses_device_owners():
            return DEFAULT_FEEDER_BATCH
        return 1 if self.device == "cpu" else DEFAULT_GPU_BATCH

    def uses_device_owners(self) -> bool:
        """ppocr on a GPU with batched recognition: one owner per GPU, fed by CPU workers."""
        return (self.engine == "ppocr" and self.device != "cpu" and self.feeders != 0
                and self.executor == "process"
                and dict(self.engine_extra).get("rec_batch", "auto").lower() != "off")

    def with_parallelism(self) -> RunConfig:
        """This config with --workers and --threads filled in where the user left them out."""
        if self.workers is not None and self.threads is not None:
            return self  # already planned (or given): no need to read the host again
        chosen = plan(self.engine, self.device, self.executor, self.workers, self.threads)
        return replace(self, workers=chosen.workers, threads=chosen.threads)

    def validate(self) -> None:
        if self.engine not in ENGINE_NAMES and not is_plugin_name(self.engine):
            raise UsageError(f"unknown engine '{self.engine}' (choose from {', '.join(ENGINE_NAMES)})")
        if self.text_layer not in TEXT_LAYER_MODES:
            raise UsageError(f"--text-layer must be one of {', '.join(TEXT_LAYER_MODES)}")
        if not 10 <= self.dpi <= 1200:
            raise UsageError("--dpi must be between 10 and 1200")
        if self.max_pixels < 100_000:
            raise UsageError("--max-pixels must be at least 100000")
        expand_devices(self.device)  # raises UsageError on a bad value
        if self.batch is not None and self.batch < 1:
            raise UsageError("--batch must be at least 1")
        if self.feeders is not None and self.feeders < 0:
            raise UsageError("--feeders must be 0 or more")
        if self.model is not None and self.engine != "ppocr":
            raise UsageError(f"--model chooses a ppocr model ({', '.join(BUNDLED_MODELS)}); "
                             f"for {self.engine} use --model-dir")
        if self.model is not None and self.model not in BUNDLED_MODELS:
            raise UsageError(f"unknown --model {self.model!r} (choose from {', '.join(BUNDLED_MODELS)})")
        if self.page_timeout is not None and self.page_timeout <= 0:
            raise UsageError("--page-timeout must be a positive number of seconds")
        if self.page_timeout and self.executor == "inline":
            raise UsageError("--page-timeout needs worker processes (--executor process or ray)")


@dataclass
class RunSummary:
    documents: int = 0
    pages_total: int = 0
    pages_done: int = 0
    pages_failed: int = 0
    pages_pending: int = 0
    documents_failed: int = 0
    inputs: int = 0  # input names; more than documents when identical files share one document
    shared_inputs: int = 0  # inputs whose bytes another input also has (OCR'd once for all of them)
    processed_now: int = 0
    seconds: float = 0.0
    interrupted_by: int | None = None
    broken_pipe: bool = False
    failures: list[tuple[str, int | None, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # output files that could not be made, and why

    @property
    def exit_code(self) -> ExitCode:
        if self.broken_pipe:
            return ExitCode.BROKEN_PIPE
        if self.interrupted_by == signal.SIGINT:
            return ExitCode.INTERRUPTED
        if self.interrupted_by == signal.SIGTERM:
            return ExitCode.TERMINATED
        if self.pages_failed or self.documents_failed or self.pages_pending:
            return ExitCode.PAGES_FAILED
        return ExitCode.OK


ExecutorFactory = Callable[[RunConfig], Executor]


def make_executor(config: RunConfig) -> Executor:
    config = config.with_parallelism()
    worker_config = config.worker_config()
    batch = config.pages_per_call()
    if config.executor == "inline":
        return InlineExecutor(config.worker_config(expand_devices(config.device)[0]), batch=batch)
    if config.executor == "ray":
        from runner.ray_executor import RayExecutor

        return RayExecutor(worker_config, workers=config.workers, address=config.ray_address,
                           gpus_per_worker=config.gpus_per_worker, page_timeout=config.page_timeout)
    devices = expand_devices(config.device)
    configs = [config.worker_config(device) for device in devices]
    if config.uses_device_owners():
        if config.feeders is not None:
            feeders = config.feeders
        elif config.workers > 1:  # --workers N: N feeder processes in all
            feeders = max(1, config.workers // len(devices))
        else:
            feeders = default_feeders(len(devices))
        owners = DeviceOwners(configs, feeders)
        feeder_configs = owners.feeder_configs()
        return ProcessExecutor(worker_config, workers=len(feeder_configs), page_timeout=config.page_timeout,
                               batch=batch, configs=feeder_configs, owners=owners)
    if config.engine == "ppocr" and config.workers > 1 and devices == ["cpu"]:
        configs = _detector_turns(config, configs[0])
    # One worker per GPU, each owning its device (more only if --workers asks for more).
    return ProcessExecutor(worker_config, workers=config.workers, page_timeout=config.page_timeout,
                           batch=batch, configs=configs)


def _detector_turns(config: RunConfig, worker: WorkerConfig) -> list[WorkerConfig]:
    """One config per CPU worker, each pair sharing a turns file (model_cache/turns.py): where the
    model asks for turns, a pair's peak holds one detector, and a many-core run still has half its
    workers detecting at once."""
    store = config.out_dir / STORE_DIR
    return [replace(worker, engine_options=replace(worker.engine_options,
                                                   turns=str(store / f"detector.turns.{i // 2}")))
            for i in range(config.workers)]


def run_job(config: RunConfig, reporter: Reporter | None = None, stdout: TextIO | None = None,
            stdin: TextIO | None = None, executor_factory: ExecutorFactory = make_executor) -> RunSummary:
    config.validate()
    config = config.with_parallelism()
    reporter = reporter or SilentReporter()
    out_dir = config.out_dir
    expand = ExpandOptions(config.expand.recursive, config.expand.include, config.expand.exclude,
                           config.expand.hidden, (*config.expand.skip_dirs, out_dir))
    inputs: list[InputFile] | None = None
    if not config.from_store:
        try:
            inputs = expand_inputs(config.inputs, expand, stdin)
        except InputError as exc:
            raise UsageError(str(exc)) from None
        if not inputs:
            raise UsageError("no PDF or image files found in the inputs")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        lock = RunLock(out_dir / STORE_DIR)
        lock.acquire()
    except OSError as exc:
        raise EnvironmentFailure(f"cannot use output folder {out_dir}: {exc.strerror or exc}") from None
    try:
        remove_stale_temps(out_dir, STORE_DIR)  # a SIGKILLed run's half-written outputs
        return _run_locked(config, inputs, reporter, stdout, executor_factory)
    except StoreError as exc:
        raise EnvironmentFailure(str(exc)) from None
    except OSError as exc:
        raise EnvironmentFailure(_describe_os_error(exc, out_dir)) from None
    finally:
        lock.release()


def _run_locked(config: RunConfig, inputs: list[InputFile] | None, reporter: Reporter, stdout: TextIO | None,
                executor_factory: ExecutorFactory) -> RunSummary:
    started = time.monotonic()
    store = JobStore(config.out_dir)
    stop = StopSignals()
    summary = RunSummary()
    run_id = store.start_run(os.getpid(), _command_record(config))
    try:
        with stop.installed():
            if inputs is None:
                documents = _requeue_known(store, config)
            else:
                documents = _register(store, config, inputs, reporter, stop)
                summary.notes += _unselected(store, documents)
            emitter = _Emitter(stdout) if config.jsonl_stdout else None
            results_path = config.out_dir / RESULTS_FILE
            export_all(store, config.out_dir, config.formats, config.passwords)  # drops a crash's half-done files
            if emitter:
                for doc in documents:
                    emitter.write_many(document_records(store, doc))  # each under this run's name for it
            counts = store.counts()
            total = sum(counts.values())
            reporter.start(total, counts.get("done", 0) + counts.get("failed", 0), len(documents))
            if not stop.event.is_set():
                _process(store, config, run_id, reporter, stop, emitter, results_path, executor_factory,
                         summary)
            summary.interrupted_by = stop.signum
    except KeyboardInterrupt:
        summary.interrupted_by = signal.SIGINT
    finally:
        reporter.close()
    export_all(store, config.out_dir, config.formats, config.passwords, summary.notes)
    _fill_summary(store, summary)
    summary.seconds = time.monotonic() - started
    store.end_run(run_id, int(summary.exit_code))
    store.close()
    return summary


def _register(store: JobStore, config: RunConfig, inputs: list[InputFile], reporter: Reporter,
              stop: StopSignals) -> list[DocumentRecord]:
    """Hash every input, add new documents and queue their pages. Returns this run's documents."""
    options = config.document_options()
    records: list[DocumentRecord] = []
    for item in inputs:
        if stop.event.is_set():
            break
        reporter.current(item.relname)
        try:
            sha, size = file_sha256(item.path)
        except OSError as exc:
            sha, size = "unreadable:" + hashlib.sha256(os.fsencode(item.path)).hexdigest(), 0
            error = (ErrorCode.FILE_UNREADABLE, f"cannot read file: {exc.strerror or exc}")
        else:
            error = None
        doc_options = _options_for(item.path, options)
        record = store.register_document(DocumentRecord(
            document_id(sha, doc_options), sha, size, str(item.path), item.relname,
            safe_relative_stem(item.relname), None, None, "new", None, None, doc_options))
        if error is not None:
            store.fail_document(record.doc_id, error[0].value, error[1])
        elif record.state == "new":
            _open_and_queue(store, record, config)
        stored = store.document(record.doc_id) or record
        records.append(replace(stored, relname=item.relname))  # as this input names it (maybe an alias)
    return records


def _unselected(store: JobStore, documents: list[DocumentRecord]) -> list[str]:
    """A note for each document that --pages selects no page of (an image has one page): it
    gets outputs with no page in them, which is easy to miss in a folder of many inputs."""
    return [f"{doc.relname}: --pages {doc.options['pages']} selects none of its {doc.page_count} page(s)"
            for doc in documents
            if doc.options.get("pages") and doc.page_count and not store.page_states(doc.doc_id)]


def _options_for(path: Path, options: dict[str, Any]) -> dict[str, Any]:
    """An image has no text layer: `auto` does exactly what `ignore` does to it, so it gets the same
    identity (an image OCR'd before `auto` became the default is not OCR'd again)."""
    if options.get("text_layer") == "auto" and not looks_like_pdf(path):
        return {**options, "text_layer": "ignore"}
    return options


def _requeue_known(store: JobStore, config: RunConfig) -> list[DocumentRecord]:
    """Resume from the store alone (`retry`): reopen documents waiting to be opened."""
    for record in store.documents():
        if record.state == "new":
            _open_and_queue(store, record, config)
    return store.documents()


def _open_and_queue(store: JobStore, record: DocumentRecord, config: RunConfig) -> None:
    try:
        source = open_source(Path(record.path), config.passwords)
    except SourceError as exc:
        store.fail_document(record.doc_id, exc.code.value, exc.message)
        return
    try:
        pages = PageRanges.parse(record.options.get("pages") or None).select(source.page_count)
        store.set_pages(record.doc_id, source.kind, source.page_count, pages)
    finally:
        source.close()


def _process(store: JobStore, config: RunConfig, run_id: int, reporter: Reporter, stop: StopSignals,
             emitter: "_Emitter | None", results_path: Path, executor_factory: ExecutorFactory,
             summary: RunSummary) -> None:
    claimed: set[tuple[str, int]] = set()

    def tasks() -> Iterator[PageTask]:
        for task in store.pending_tasks():
            if stop.event.is_set():
                return
            store.claim(task.doc_id, task.page, run_id)
            claimed.add((task.doc_id, task.page))
            reporter.current(f"{task.relname} p{task.page}")
            yield task

    executor = executor_factory(config)
    try:
        for result in executor.run(tasks(), stop.event):
            record = result.to_dict()  # once: the store's copy and every JSONL line come from it
            store.commit_page(result, run_id, record)
            claimed.discard((result.doc_id, result.page))
            summary.processed_now += 1
            for name in store.names_of(result.doc_id):  # identical inputs share the page: a line each
                line = record_line({**record, "source": name.relname})
                if "jsonl" in config.formats:
                    _append(results_path, line)
                if emitter and not emitter.write(line):
                    summary.broken_pipe = True
                    stop.event.set()
            if store.document_finished(result.doc_id):
                doc = store.document(result.doc_id)
                if doc is not None:
                    write_document(store, doc, config.out_dir, config.formats, config.passwords)
            reporter.page_done(result)
    finally:
        for doc_id, page in claimed:
            store.release(doc_id, page)


def _append(path: Path, line: str) -> None:
    """Live results for `tail -f`; the final results.jsonl is rewritten from the store."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)


class _Emitter:
    """Page records to stdout, one flushed line each; notices a reader that went away."""

    def __init__(self, stream: TextIO | None):
        self.stream = stream or sys.stdout
        self.open = True

    def write(self, line: str) -> bool:
        if not self.open:
            return False
        try:
            self.stream.write(line)
            self.stream.flush()
        except BrokenPipeError:
            self.open = False
            _silence_stdout()
        return self.open

    def write_many(self, lines: Iterator[str]) -> None:
        for line in lines:
            if not self.write(line):
                return


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _fill_summary(store: JobStore, summary: RunSummary) -> None:
    counts = store.counts()
    docs = store.document_counts()
    summary.documents = sum(n for state, n in docs.items() if state != "superseded")
    summary.documents_failed = docs.get("failed", 0)
    summary.inputs = len(store.names())
    summary.shared_inputs = store.shared_counts()[0]
    summary.pages_total = sum(counts.values())
    summary.pages_done = counts.get("done", 0)
    summary.pages_failed = counts.get("failed", 0)
    summary.pages_pending = counts.get("pending", 0) + counts.get("running", 0)
    summary.failures = store.failures()


def _command_record(config: RunConfig) -> dict[str, Any]:
    """What `status`/`retry` need to know about the run; never passwords."""
    return {"inputs": [str(Path(i).absolute()) if i not in ("-",) and not i.startswith("@") else i
                       for i in config.inputs],
            "options": config.document_options(), "formats": list(config.formats),
            "threads": config.threads, "device": config.device, "executor": config.executor,
            "workers": config.workers, "batch": config.batch,
            "engine_extra": [list(kv) for kv in config.engine_extra],
            "model": config.ppocr_model()}  # resolved, so a retry keeps the model if the default changes


def _hunyuan_batch_pages(device: str, extra: dict[str, str]) -> int:
    from model_cache.hunyuan.engine import DEFAULT_BATCH_PAGES

    if extra.get("low_memory", "").lower() in ("1", "true", "yes", "on"):
        return 1
    try:
        return max(1, int(float(extra["batch_pages"])))
    except (KeyError, ValueError):
        return DEFAULT_BATCH_PAGES.get("cpu" if device == "cpu" else "gpu", 8)


def _describe_os_error(exc: OSError, out_dir: Path) -> str:
    if exc.errno == errno.ENOSPC:
        return f"disk full while writing to {out_dir}: free some space and rerun to resume"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write to {out_dir} ({exc.strerror}): fix the permissions and rerun to resume"
    if exc.errno == errno.ENOENT:
        return f"the output folder {out_dir} disappeared during the run ({exc.filename}); rerun to start again"
    return f"I/O error on {exc.filename or out_dir}: {exc.strerror or exc}"

