"""`pagerunner status`: what the store says about a job, as data and as a rich table."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.table import Table

from jobs.store import JobStore

RATE_WINDOW = 50  # pages: the rate is measured over the most recent finished pages of the last run


def status_data(store: JobStore) -> dict[str, Any]:
    pages = store.counts()
    docs = store.document_counts()
    runs = store.runs()
    last = runs[-1] if runs else None
    rate = _pages_per_minute(store, last["run_id"] if last else None)
    remaining = pages.get("pending", 0) + pages.get("running", 0)
    running = bool(last is not None and last["ended_at"] is None)
    return {
        "out": str(store.out_dir),
        "documents": {k: docs.get(k, 0) for k in ("ready", "failed", "new", "superseded")},
        "pages": {k: pages.get(k, 0) for k in ("done", "failed", "pending", "running")},
        "pages_total": sum(pages.values()),
        "inputs": len(store.names()),
        "shared_inputs": store.shared_counts()[0],
        "pages_per_minute": round(rate, 2) if rate else None,
        "eta_seconds": round(60.0 * remaining / rate) if rate and remaining else (0 if not remaining else None),
        "last_run": None if last is None else {
            "started_at": _iso(last["started_at"]), "ended_at": _iso(last["ended_at"]),
            "exit_code": last["exit_code"], "pid": last["pid"], "in_progress_or_killed": running},
        "failures": [{"source": rel, "page": page, "code": code, "message": message}
                     for rel, page, code, message in store.failures()],
    }


def _pages_per_minute(store: JobStore, run_id: int | None) -> float | None:
    if run_id is None:
        return None
    times = store.finish_times(run_id)[-RATE_WINDOW:]
    if len(times) < 2 or times[-1] <= times[0]:
        return None
    return 60.0 * (len(times) - 1) / (times[-1] - times[0])


def _iso(stamp: float | None) -> str | None:
    return None if stamp is None else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(stamp))


def print_status(console: Console, data: dict[str, Any]) -> None:
    table = Table(title=f"pagerunner job in {data['out']}", show_header=True)
    table.add_column("")
    for column in ("done", "failed", "pending", "running"):
        table.add_column(column, justify="right")
    pages = data["pages"]
    table.add_row("pages", *(str(pages[c]) for c in ("done", "failed", "pending", "running")))
    docs = data["documents"]
    table.add_row("documents", str(docs["ready"]), str(docs["failed"]), str(docs["new"]), "")
    console.print(table)
    if data["shared_inputs"]:
        console.print(f"inputs: {data['inputs']}, of which {data['shared_inputs']} are identical to another "
                      "input (OCR'd once, written under each name)")
    rate = data["pages_per_minute"]
    eta = data["eta_seconds"]
    console.print(f"rate: {rate if rate else '--'} pages/min   ETA: "
                  f"{_duration(eta) if eta is not None else '--'}")
    if data["last_run"]:
        run = data["last_run"]
        state = "running or killed" if run["in_progress_or_killed"] else f"exit code {run['exit_code']}"
        console.print(f"last run: started {run['started_at']}, {state}")
    if data["failures"]:
        failures = Table(title="failures", show_header=True)
        for column in ("source", "page", "code", "message"):
            failures.add_column(column)
        for item in data["failures"][:50]:
            failures.add_row(item["source"], str(item["page"] or "-"), item["code"], item["message"])
        console.print(failures)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
