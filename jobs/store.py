"""The SQLite job store: the single source of truth for what there is to do and what is done.

Lives in OUT/.pagerunner/store.sqlite (WAL, synchronous=FULL). A page's result and its state
change commit in one transaction, so a SIGKILL at any instant loses at most pages in flight.
Every other file in OUT is regenerated from here (`pagerunner export`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

from outputs.model import PageResult

STORE_DIR = ".pagerunner"
STORE_FILE = "store.sqlite"
# 2: the aliases table (other names of identical content). A version-1 store is upgraded in place
# when opened; a store from a newer pagerunner is refused.
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, ended_at REAL,
    pid INTEGER, command TEXT, exit_code INTEGER);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, path TEXT NOT NULL,
    relname TEXT NOT NULL, stem TEXT NOT NULL, kind TEXT, page_count INTEGER,
    state TEXT NOT NULL,              -- new | ready | failed | superseded
    error_code TEXT, error_message TEXT, options TEXT NOT NULL, added_at REAL NOT NULL,
    updated_at REAL NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS documents_active_stem ON documents(stem) WHERE state != 'superseded';
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id), page INTEGER NOT NULL,
    state TEXT NOT NULL,              -- pending | running | done | failed
    attempts INTEGER NOT NULL DEFAULT 0, result TEXT, error_code TEXT,
    run_id INTEGER, started_at REAL, finished_at REAL,
    PRIMARY KEY (doc_id, page));
CREATE INDEX IF NOT EXISTS pages_state ON pages(state);
CREATE TABLE IF NOT EXISTS aliases (  -- more names of an active document's bytes: OCR'd once, written for each
    relname TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(doc_id), path TEXT NOT NULL,
    stem TEXT NOT NULL UNIQUE, added_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_doc ON aliases(doc_id);
"""

# Every name of every active document: its own (primary) name and its aliases.
_NAMES = ("(SELECT relname, stem, path, doc_id, 1 AS is_primary FROM documents WHERE state != 'superseded' "
          "UNION ALL SELECT relname, stem, path, doc_id, 0 AS is_primary FROM aliases)")


class StoreError(Exception):
    """The store cannot be opened or written (disk full, read-only, corrupt)."""


@dataclass
class DocumentRecord:
    doc_id: str
    sha256: str
    size: int
    path: str
    relname: str
    stem: str
    kind: str | None
    page_count: int | None
    state: str
    error_code: str | None
    error_message: str | None
    options: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> "DocumentRecord":
        return cls(row["doc_id"], row["sha256"], row["size"], path_from_db(row["path"]), row["relname"], row["stem"],
                   row["kind"], row["page_count"], row["state"], row["error_code"],
                   row["error_message"], json.loads(row["options"]))


@dataclass(frozen=True)
class DocumentName:
    """One input name of a document; identical bytes under several names share one document."""
    relname: str
    stem: str
    path: str
    doc_id: str
    primary: bool

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> "DocumentName":
        return cls(row["relname"], row["stem"], path_from_db(row["path"]), row["doc_id"], bool(row["is_primary"]))


@dataclass(frozen=True)
class PageTask:
    doc_id: str
    page: int
    path: str
    relname: str
    kind: str | None
    options: dict[str, Any]


def path_to_db(path: str) -> str | bytes:
    """File paths that are not valid UTF-8 are stored as their raw bytes (SQLite TEXT must be UTF-8)."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path)


def path_from_db(value: str | bytes) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else value


def store_path(out_dir: Path) -> Path:
    return out_dir / STORE_DIR / STORE_FILE


class StoredPages:
    """A document's stored page results, in page order, as many passes as the caller makes.

    Each pass reads them from the store PAGE_CHUNK at a time, so a writer that streams (Markdown,
    text, JSONL, the searchable PDF) holds a few pages of a long document, not all of them."""

    PAGE_CHUNK = 32
    _FINISHED = "doc_id=? AND result IS NOT NULL AND state IN ('done','failed')"

    def __init__(self, store: JobStore, doc_id: str, source: str | None = None):
        self.store, self.doc_id, self.source = store, doc_id, source

    def __len__(self) -> int:
        return self.store.db.execute(f"SELECT COUNT(*) FROM pages WHERE {self._FINISHED}",
                                     (self.doc_id,)).fetchone()[0]

    def __iter__(self) -> Iterator[PageResult]:
        numbers = [r[0] for r in self.store.db.execute(
            f"SELECT page FROM pages WHERE {self._FINISHED} ORDER BY page", (self.doc_id,))]
        for start in range(0, len(numbers), self.PAGE_CHUNK):
            chunk = numbers[start:start + self.PAGE_CHUNK]
            rows = self.store.db.execute(
                f"SELECT result FROM pages WHERE {self._FINISHED} AND page BETWEEN ? AND ? ORDER BY page",
                (self.doc_id, chunk[0], chunk[-1])).fetchall()
            for row in rows:
                page = PageResult.from_dict(json.loads(row[0]))
                if self.source is not None and page.source != self.source:
                    page = replace(page, source=self.source)
                yield page


class JobStore:
    def __init__(self, out_dir: Path, *, create: bool = True):
        self.out_dir = out_dir
        self.path = store_path(out_dir)
        if not create and not self.path.exists():
            raise StoreError(f"{out_dir} holds no pagerunner job (no {STORE_DIR}/{STORE_FILE})")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                      check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            with self.transaction():
                self._create_or_upgrade()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the job store {self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create {self.path.parent}: {exc.strerror or exc}") from exc

    def _create_or_upgrade(self) -> None:
        has_meta = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() if has_meta else None
        version = int(row[0]) if row else SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise StoreError(f"the job store {self.path} was written by a newer pagerunner (store version "
                             f"{version}; this one reads up to {SCHEMA_VERSION}): use that version, or "
                             "another output folder")
        for statement in _SCHEMA.split(";"):  # every change so far only adds tables and indexes
            if statement.strip():
                self.db.execute(statement)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"job store write failed: {exc}") from exc

    # --- runs and meta ---------------------------------------------------------------------

    def start_run(self, pid: int, command: dict[str, Any]) -> int:
        with self.transaction() as db:
            cur = db.execute("INSERT INTO runs (started_at, pid, command) VALUES (?, ?, ?)",
                             (time.time(), pid, json.dumps(command)))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('last_command', ?)", (json.dumps(command),))
            # We hold the run lock: anything still 'running' was in flight when a process died.
            db.execute("UPDATE pages SET state = 'pending' WHERE state = 'running'")
            return int(cur.lastrowid)

    def end_run(self, run_id: int, exit_code: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE runs SET ended_at = ?, exit_code = ? WHERE run_id = ?",
                       (time.time(), exit_code, run_id))

    def last_command(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'last_command'").fetchone()
        return json.loads(row[0]) if row else None

    def runs(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM runs ORDER BY run_id").fetchall()

    # --- documents -------------------------------------------------------------------------

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self.db.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return DocumentRecord.from_row(row) if row else None

    def documents(self, include_superseded: bool = False) -> list[DocumentRecord]:
        where = "" if include_superseded else "WHERE state != 'superseded'"
        rows = self.db.execute(f"SELECT * FROM documents {where} ORDER BY stem").fetchall()
        return [DocumentRecord.from_row(r) for r in rows]

    def register_document(self, doc: DocumentRecord) -> DocumentRecord:
        """Add a new document, or a name for a known one. Returns the stored record.

        A document at the same relative name with other bytes or options supersedes the old one.
        Known bytes under a new name are a move when one of the document's names no longer exists
        on disk (that name is renamed, its results kept), else a copy: the name becomes an alias that
        shares the document's pages and gets its own records and files.
        """
        now = time.time()
        with self.transaction() as db:
            row = db.execute("SELECT * FROM documents WHERE doc_id = ?", (doc.doc_id,)).fetchone()
            known = DocumentRecord.from_row(row) if row is not None else None
            if known is None:
                self._release_name(db, doc.relname, doc.doc_id)
                stem = self._free_stem(db, doc.stem, doc.relname, exclude_doc=doc.doc_id)
                db.execute(
                    "INSERT INTO documents (doc_id, sha256, size, path, relname, stem, kind, page_count,"
                    " state, error_code, error_message, options, added_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 'new', NULL, NULL, ?, ?, ?)",
                    (doc.doc_id, doc.sha256, doc.size, path_to_db(doc.path), doc.relname, stem, doc.kind,
                     json.dumps(doc.options, sort_keys=True), now, now))
            elif known.state == "superseded":  # a name it had before: bring it back
                self._release_name(db, doc.relname, doc.doc_id)
                self._rename_primary(db, doc, "ready" if known.page_count is not None else "new", now)
            elif known.relname == doc.relname:
                if known.path != doc.path:
                    db.execute("UPDATE documents SET path=?, updated_at=? WHERE doc_id=?",
                               (path_to_db(doc.path), now, doc.doc_id))
            else:
                self._add_name(db, known, doc, now)
        stored = self.document(doc.doc_id)
        assert stored is not None
        return stored

    def _add_name(self, db: sqlite3.Connection, known: DocumentRecord, doc: DocumentRecord, now: float) -> None:
        alias = db.execute("SELECT * FROM aliases WHERE relname = ?", (doc.relname,)).fetchone()
        if alias is not None and alias["doc_id"] == doc.doc_id:  # a known alias, maybe at a new path
            db.execute("UPDATE aliases SET path=? WHERE relname=?", (path_to_db(doc.path), doc.relname))
            return
        self._release_name(db, doc.relname, doc.doc_id)
        if not os.path.lexists(known.path):  # the document moved
            self._rename_primary(db, doc, known.state, now)
            return
        for old in db.execute("SELECT relname, path FROM aliases WHERE doc_id=? ORDER BY stem",
                              (doc.doc_id,)).fetchall():
            if not os.path.lexists(path_from_db(old["path"])):  # this copy moved
                stem = self._free_stem(db, doc.stem, doc.relname, exclude_alias=old["relname"])
                db.execute("UPDATE aliases SET relname=?, path=?, stem=? WHERE relname=?",
                           (doc.relname, path_to_db(doc.path), stem, old["relname"]))
                return
        stem = self._free_stem(db, doc.stem, doc.relname)
        db.execute("INSERT INTO aliases (relname, doc_id, path, stem, added_at) VALUES (?, ?, ?, ?, ?)",
                   (doc.relname, doc.doc_id, path_to_db(doc.path), stem, now))

    def _rename_primary(self, db: sqlite3.Connection, doc: DocumentRecord, state: str, now: float) -> None:
        stem = self._free_stem(db, doc.stem, doc.relname, exclude_doc=doc.doc_id)
        db.execute("UPDATE documents SET path=?, relname=?, stem=?, state=?, updated_at=? WHERE doc_id=?",
                   (path_to_db(doc.path), doc.relname, stem, state, now, doc.doc_id))

    @staticmethod
    def _release_name(db: sqlite3.Connection, relname: str, doc_id: str) -> None:
        """`relname` now holds `doc_id`'s bytes: whatever else it named lets go of it. A document
        that loses its own name to other bytes lives on under its first alias, or is superseded."""
        db.execute("DELETE FROM aliases WHERE relname = ? AND doc_id != ?", (relname, doc_id))
        for row in db.execute("SELECT doc_id FROM documents WHERE relname = ? AND doc_id != ? "
                              "AND state != 'superseded'", (relname, doc_id)).fetchall():
            heir = db.execute("SELECT * FROM aliases WHERE doc_id = ? ORDER BY stem LIMIT 1",
                              (row["doc_id"],)).fetchone()
            if heir is None:
                db.execute("UPDATE documents SET state = 'superseded', updated_at = ? WHERE doc_id = ?",
                           (time.time(), row["doc_id"]))
                continue
            db.execute("DELETE FROM aliases WHERE relname = ?", (heir["relname"],))
            db.execute("UPDATE documents SET relname=?, path=?, stem=?, updated_at=? WHERE doc_id=?",
                       (heir["relname"], heir["path"], heir["stem"], time.time(), row["doc_id"]))

    @staticmethod
    def _free_stem(db: sqlite3.Connection, stem: str, relname: str, exclude_doc: str | None = None,
                   exclude_alias: str | None = None) -> str:
        """`stem`, or a variant no other name uses (the row being renamed excluded)."""
        def taken(candidate: str) -> bool:
            if db.execute("SELECT 1 FROM documents WHERE stem = ? AND doc_id IS NOT ? "
                          "AND state != 'superseded'", (candidate, exclude_doc)).fetchone() is not None:
                return True
            return db.execute("SELECT 1 FROM aliases WHERE stem = ? AND relname IS NOT ?",
                              (candidate, exclude_alias)).fetchone() is not None
        if not taken(stem):
            return stem
        suffix = relname.rsplit(".", 1)[-1] if "." in relname else "doc"
        candidate = f"{stem}.{suffix}"
        number = 2
        while taken(candidate):
            candidate = f"{stem}~{number}"
            number += 1
        return candidate

    def names(self) -> list[DocumentName]:
        """Every input name of every active document, in output order (by stem)."""
        rows = self.db.execute(f"SELECT * FROM {_NAMES} ORDER BY stem").fetchall()
        return [DocumentName.from_row(r) for r in rows]

    def names_of(self, doc_id: str) -> list[DocumentName]:
        """A document's names: its own first, then its aliases by stem."""
        rows = self.db.execute(f"SELECT * FROM {_NAMES} WHERE doc_id = ? ORDER BY is_primary DESC, stem",
                               (doc_id,)).fetchall()
        return [DocumentName.from_row(r) for r in rows]

    def shared_counts(self) -> tuple[int, int]:
        """(inputs whose bytes another input also has, documents those inputs share)."""
        row = self.db.execute("SELECT COUNT(*), COUNT(DISTINCT a.doc_id) FROM aliases a JOIN documents d "
                              "ON d.doc_id = a.doc_id WHERE d.state != 'superseded'").fetchone()
        return int(row[0]) + int(row[1]), int(row[1])

    def set_pages(self, doc_id: str, kind: str, page_count: int, pages: list[int]) -> None:
        """Record a document's page count and queue its selected pages (one transaction)."""
        with self.transaction() as db:
            db.execute("UPDATE documents SET kind=?, page_count=?, state='ready', error_code=NULL, "
                       "error_message=NULL, updated_at=? WHERE doc_id=?", (kind, page_count, time.time(), doc_id))
            db.executemany("INSERT OR IGNORE INTO pages (doc_id, page, state) VALUES (?, ?, 'pending')",
                           [(doc_id, p) for p in pages])

    def fail_document(self, doc_id: str, code: str, message: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE documents SET state='failed', error_code=?, error_message=?, updated_at=? "
                       "WHERE doc_id=?", (code, message, time.time(), doc_id))

    # --- pages -----------------------------------------------------------------------------

    def pending_tasks(self) -> list[PageTask]:
        rows = self.db.execute(
            "SELECT p.doc_id, p.page, d.path, d.relname, d.kind, d.options FROM pages p "
            "JOIN documents d ON d.doc_id = p.doc_id "
            "WHERE p.state = 'pending' AND d.state = 'ready' ORDER BY d.stem, p.page").fetchall()
        return [PageTask(r["doc_id"], r["page"], path_from_db(r["path"]), r["relname"], r["kind"],
                         json.loads(r["options"])) for r in rows]

    def claim(self, doc_id: str, page: int, run_id: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE pages SET state='running', attempts=attempts+1, run_id=?, started_at=? "
                       "WHERE doc_id=? AND page=?", (run_id, time.time(), doc_id, page))

    def commit_page(self, result: PageResult, run_id: int, record: dict[str, Any] | None = None) -> None:
        """Store a page's result and its new state in one transaction (`record`: its to_dict(),
        if the caller has made it already)."""
        state = "done" if result.status == "ok" else "failed"
        code = result.error.code.value if result.error else None
        payload = json.dumps(record or result.to_dict(), ensure_ascii=False, separators=(",", ":"))
        with self.transaction() as db:
            db.execute("UPDATE pages SET state=?, result=?, error_code=?, run_id=?, finished_at=? "
                       "WHERE doc_id=? AND page=?",
                       (state, payload, code, run_id, time.time(), result.doc_id, result.page))

    def release(self, doc_id: str, page: int) -> None:
        """Put a claimed page back (interrupted before it finished)."""
        with self.transaction() as db:
            db.execute("UPDATE pages SET state='pending' WHERE doc_id=? AND page=? AND state='running'",
                       (doc_id, page))

    def page_results(self, doc_id: str, source: str | None = None) -> StoredPages:
        """The document's finished pages in page order (`source`: the name to give them, for a
        document found under several names), read a few at a time on each pass over them."""
        return StoredPages(self, doc_id, source)

    def page_states(self, doc_id: str) -> dict[str, int]:
        rows = self.db.execute("SELECT state, COUNT(*) FROM pages WHERE doc_id=? GROUP BY state", (doc_id,))
        return {state: count for state, count in rows}

    def document_finished(self, doc_id: str) -> bool:
        row = self.db.execute("SELECT COUNT(*) FROM pages WHERE doc_id=? AND state IN ('pending','running')",
                              (doc_id,)).fetchone()
        return row[0] == 0

    def requeue_failed(self) -> tuple[int, int]:
        """Failed pages go back to pending; failed documents are re-opened on the next run."""
        with self.transaction() as db:
            pages = db.execute("UPDATE pages SET state='pending', result=NULL, error_code=NULL "
                               "WHERE state='failed'").rowcount
            docs = db.execute("UPDATE documents SET state='new', error_code=NULL, error_message=NULL "
                              "WHERE state='failed'").rowcount
        return pages, docs

    def counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT p.state, COUNT(*) FROM pages p JOIN documents d ON d.doc_id=p.doc_id "
                               "WHERE d.state != 'superseded' GROUP BY p.state")
        return {state: count for state, count in rows}

    def document_counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT state, COUNT(*) FROM documents GROUP BY state")
        return {state: count for state, count in rows}

    def failures(self, limit: int = 1000) -> list[tuple[str, int | None, str, str]]:
        """(relname, page or None, code, message) for failed documents and pages."""
        out: list[tuple[str, int | None, str, str]] = []
        for row in self.db.execute(f"SELECT n.relname, d.error_code, d.error_message FROM {_NAMES} n "
                                   "JOIN documents d ON d.doc_id=n.doc_id WHERE d.state='failed' "
                                   "ORDER BY n.stem LIMIT ?", (limit,)):
            out.append((row[0], None, row[1] or "", row[2] or ""))
        for row in self.db.execute(
                f"SELECT n.relname, p.page, p.error_code, p.result FROM pages p JOIN {_NAMES} n "
                "ON n.doc_id=p.doc_id WHERE p.state='failed' ORDER BY n.stem, p.page LIMIT ?", (limit,)):
            message = ""
            if row[3]:
                error = json.loads(row[3]).get("error") or {}
                message = error.get("message", "")
            out.append((row[0], row[1], row[2] or "", message))
        return out

    def finish_times(self, run_id: int | None = None) -> list[float]:
        if run_id is None:
            rows = self.db.execute("SELECT finished_at FROM pages WHERE finished_at IS NOT NULL "
                                   "ORDER BY finished_at")
        else:
            rows = self.db.execute("SELECT finished_at FROM pages WHERE run_id=? AND finished_at IS NOT NULL "
                                   "ORDER BY finished_at", (run_id,))
        return [r[0] for r in rows]
