import shutil

from jobs.store import JobStore
from runner.job import RunConfig, run_job
from tests.conftest import FAKE_ENGINE, make_pdf


def config(inputs, out, **kw):
    return RunConfig(inputs=[str(i) for i in inputs], out_dir=out, engine=FAKE_ENGINE, executor="inline", **kw)


def results(out):
    return (out / "results.jsonl").read_text().splitlines()


def test_rerun_does_not_redo_finished_pages(corpus, tmp_path):
    out = tmp_path / "out"
    first = run_job(config([corpus], out))
    assert first.exit_code == 0 and first.pages_done == 9 and first.processed_now == 9
    again = run_job(config([corpus], out))
    assert again.processed_now == 0 and again.pages_done == 9


def test_moved_file_recognised_by_content(corpus, tmp_path):
    out = tmp_path / "out"
    run_job(config([corpus], out))
    shutil.move(corpus / "alpha.pdf", corpus / "sub" / "alpha-moved.pdf")
    summary = run_job(config([corpus], out))
    assert summary.processed_now == 0
    store = JobStore(out)
    names = {d.relname for d in store.documents()}
    assert "sub/alpha-moved.pdf" in names and "alpha.pdf" not in names
    assert (out / "sub" / "alpha-moved.md").exists()


def test_changed_file_is_redone_and_supersedes(corpus, tmp_path):
    out = tmp_path / "out"
    run_job(config([corpus], out))
    make_pdf(corpus / "alpha.pdf", 4, "alpha changed")
    summary = run_job(config([corpus], out))
    assert summary.processed_now == 4
    records = [r for r in results(out) if '"source":"alpha.pdf"' in r]
    assert len(records) == 4


def test_new_files_are_added(corpus, tmp_path):
    out = tmp_path / "out"
    run_job(config([corpus], out))
    make_pdf(corpus / "delta.pdf", 2, "delta")
    assert run_job(config([corpus], out)).processed_now == 2


def test_option_change_makes_new_documents(corpus, tmp_path):
    out = tmp_path / "out"
    run_job(config([corpus], out))
    summary = run_job(config([corpus], out, dpi=100))
    assert summary.processed_now == 9
    assert len(results(out)) == 9  # the old-dpi records are superseded, not duplicated


def test_page_selection(corpus, tmp_path):
    from jobs.pageranges import PageRanges

    out = tmp_path / "out"
    summary = run_job(config([corpus / "alpha.pdf"], out, pages=PageRanges.parse("2-")))
    assert summary.pages_total == 2
    assert [r.count('"page":2') + r.count('"page":3') for r in results(out)] == [1, 1]


def test_retry_requeues_failed(tmp_path, corpus):
    out = tmp_path / "out"
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    summary = run_job(config([corpus], out))
    assert summary.exit_code == 1 and summary.documents_failed == 1
    store = JobStore(out)
    pages, docs = store.requeue_failed()
    assert docs == 1
    store.close()
    make_pdf(corpus / "broken.pdf", 1, "fixed")  # the user repaired the file in place
    again = run_job(config([corpus], out))
    assert again.exit_code == 0


def test_commit_is_one_transaction(tmp_path, corpus):
    out = tmp_path / "out"
    run_job(config([corpus], out))
    store = JobStore(out)
    rows = store.db.execute("SELECT state, result IS NOT NULL FROM pages").fetchall()
    assert all(state == "done" and has for state, has in rows)


def test_pages_left_pending_are_not_success(corpus, tmp_path):
    """An executor that silently drops pages must not make the run look finished."""
    from runner.executors import InlineExecutor

    class DroppingExecutor(InlineExecutor):
        def run(self, tasks, stop):
            for index, result in enumerate(super().run(tasks, stop)):
                if index % 2 == 0:
                    yield result

    summary = run_job(config([corpus], tmp_path / "out"),
                      executor_factory=lambda cfg: DroppingExecutor(cfg.worker_config()))
    assert summary.pages_pending > 0 and summary.exit_code == 1


def test_long_documents_are_reopened_to_bound_memory(tmp_path, monkeypatch):
    """PDFium grows with every parsed page until the document closes: the worker reopens it."""
    import jobs.sources as sources
    import outputs.pdfium_pages as pdfium_pages
    import runner.worker as worker

    monkeypatch.setattr(pdfium_pages, "REOPEN_MIN_PAGES", 3)
    monkeypatch.setattr(pdfium_pages, "REOPEN_COST_RATIO", 0.0)
    opened = []
    real_open = sources.open_source

    def counting_open(*args, **kwargs):
        opened.append(args[0])
        return real_open(*args, **kwargs)

    monkeypatch.setattr(worker, "open_source", counting_open)
    pdf = make_pdf(tmp_path / "long.pdf", 7, "long")
    summary = run_job(config([pdf], tmp_path / "out"))
    assert summary.exit_code == 0 and summary.pages_done == 7
    assert len(opened) == 3  # the worker opens it for pages 1-3, 4-6 and 7


def test_a_slow_opening_document_is_reopened_less_often(tmp_path, monkeypatch):
    """Reopening costs an open: a document whose open took long is kept open longer."""
    import jobs.sources as sources
    import outputs.pdfium_pages as pdfium_pages
    import runner.worker as worker

    monkeypatch.setattr(pdfium_pages, "REOPEN_MIN_PAGES", 1)
    monkeypatch.setattr(pdfium_pages, "REOPEN_COST_RATIO", 1e9)
    opened = []
    real_open = sources.open_source
    monkeypatch.setattr(worker, "open_source", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    summary = run_job(config([make_pdf(tmp_path / "long.pdf", 5, "long")], tmp_path / "out"))
    assert summary.exit_code == 0 and summary.pages_done == 5
    assert len(opened) == 1


def test_stored_pages_are_read_a_chunk_at_a_time_in_page_order(tmp_path, monkeypatch):
    """Exports stream a document's pages from the store (a long document's results never all in
    memory): every pass gives every finished page once, in order, under the name asked for."""
    from jobs.store import StoredPages
    from outputs.model import PageResult

    summary = run_job(config([make_pdf(tmp_path / "long.pdf", 7, "long")], tmp_path / "out"))
    assert summary.exit_code == 0
    store = JobStore(tmp_path / "out")
    doc = store.documents()[0]
    decoded = []
    real = PageResult.from_dict
    monkeypatch.setattr(StoredPages, "PAGE_CHUNK", 3)
    monkeypatch.setattr(PageResult, "from_dict", staticmethod(lambda d: decoded.append(d["page"]) or real(d)))
    pages = store.page_results(doc.doc_id, "renamed.pdf")
    stream = iter(pages)
    assert next(stream).page == 1 and decoded == [1]  # one page decoded, not the document
    assert [p.page for p in pages] == list(range(1, 8)) and len(pages) == 7
    assert {p.source for p in pages} == {"renamed.pdf"}
    assert {p.source for p in store.page_results(doc.doc_id)} == {"long.pdf"}
