"""Reports of an evaluation: a rich table for people (stderr) and JSON for machines (stdout)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.evaluation.diff import Hunk, aligned_diff
from runner.evaluation.evaluate import DocumentEval, EvalResult, PageEval
from runner.evaluation.metrics import Counts

REPORT_SCHEMA = "pagerunner.eval/1"


def _metrics(counts: Counts) -> dict[str, Any]:
    return {
        "cer": round(counts.cer, 5),
        "wer": round(counts.wer, 5),
        "bag_f1": round(counts.bag_f1, 5),
        "ref_chars": counts.ref_chars,
        "char_edits": counts.char_edits,
        "ref_words": counts.ref_words,
        "word_edits": counts.word_edits,
        "hyp_chars": counts.hyp_chars,
    }


def _page_dict(page: PageEval) -> dict[str, Any]:
    out: dict[str, Any] = {"page": page.page or None, "status": page.status}
    if page.status == "scored" and page.score is not None:
        out.update(_metrics(page.score.counts))
        out["cjk"] = page.score.cjk
        out["reference"] = page.reference
        out["seconds"] = round(page.seconds, 3)
    elif page.status == "skipped":
        out["reason"] = page.reason
    else:
        out["error"] = page.reason
    if page.warnings:
        out["warnings"] = list(page.warnings)
    return out


def _document_dict(doc: DocumentEval) -> dict[str, Any]:
    out: dict[str, Any] = {"source": doc.source, "path": str(doc.path)}
    if doc.error:
        out["error"] = doc.error
    out["pages_scored"] = doc.scored
    out.update(_metrics(doc.counts) if doc.scored else {})
    out["pages"] = [_page_dict(p) for p in doc.pages]
    return out


def _worst_dict(page: PageEval, max_hunks: int) -> dict[str, Any]:
    assert page.score is not None
    hunks = aligned_diff(page.score.ref, page.score.hyp, max_hunks=max_hunks)
    return {"source": page.source, "page": page.page or None, "cer": round(page.score.cer, 5),
            "bag_f1": round(page.score.bag_f1, 5),
            "diff": [[segment.to_dict() for segment in hunk] for hunk in hunks]}


def to_json(result: EvalResult, worst: int = 3, max_hunks: int = 4) -> dict[str, Any]:
    statuses = result.status_counts()
    options = result.options
    return {
        "schema": REPORT_SCHEMA,
        "engine": result.engine_name,
        "reference": options.reference_kind,
        "dpi": options.dpi,
        "min_chars": options.min_chars,
        "seconds": round(result.seconds, 3),
        "overall": {
            "documents": len(result.documents),
            "documents_failed": len(result.failed_documents()),
            "pages_scored": statuses.get("scored", 0),
            "pages_skipped": statuses.get("skipped", 0),
            "pages_failed": statuses.get("failed", 0),
            "skipped": dict(sorted(result.skip_reasons().items())),
            **_metrics(result.counts),
        },
        "documents": [_document_dict(d) for d in result.documents],
        "worst": [_worst_dict(p, max_hunks) for p in _worst_with_errors(result, worst)],
    }


def _worst_with_errors(result: EvalResult, count: int) -> list[PageEval]:
    return [p for p in result.worst_pages(count) if p.score is not None and p.score.counts.char_edits]


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _page_label(page: PageEval) -> str:
    return "all" if page.page == 0 else str(page.page)


def print_report(result: EvalResult, console: Console, worst: int = 3, max_hunks: int = 4) -> None:
    console.print(_table(result))
    _print_problems(result, console)
    worst_pages = _worst_with_errors(result, worst)
    if worst_pages:
        console.print(Text("Worst pages (normalised text; [ref] vs [ocr] marks the differences)",
                           style="bold"))
    for page in worst_pages:
        _print_diff(page, console, max_hunks)


def _table(result: EvalResult) -> Table:
    table = Table(title=f"pagerunner eval: {result.engine_name} vs "
                        f"{result.options.reference_kind.replace('_', ' ')}",
                  title_justify="left",
                  caption="CER/WER after NFKC normalisation; CJK pages ignore whitespace; "
                          "bag-F1 ignores reading order",
                  caption_justify="left")
    for name, justify in (("document", "left"), ("page", "right"), ("ref chars", "right"),
                          ("CER", "right"), ("WER", "right"), ("bag-F1", "right"),
                          ("note", "left")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for doc in result.documents:
        _add_document_rows(table, doc)
    statuses = result.status_counts()
    overall = result.counts
    note = f"{statuses.get('scored', 0)} pages scored"
    table.add_section()
    table.add_row(Text("overall", style="bold"), "", str(overall.ref_chars),
                  *(_fmt(v) for v in (overall.cer, overall.wer, overall.bag_f1)), note,
                  style="bold")
    return table


def _add_document_rows(table: Table, doc: DocumentEval) -> None:
    if doc.error:
        table.add_row(doc.source, "", "", "", "", "", Text(doc.error, style="red"))
        return
    for index, page in enumerate(doc.pages):
        table.add_row(doc.source if index == 0 else "", _page_label(page), *_page_cells(page))
    if doc.scored > 1:
        counts = doc.counts
        table.add_row("", "all", str(counts.ref_chars),
                      *(_fmt(v) for v in (counts.cer, counts.wer, counts.bag_f1)),
                      f"{doc.scored} pages", style="bold")


def _page_cells(page: PageEval) -> list[str | Text]:
    if page.status == "scored" and page.score is not None:
        score = page.score
        note = "CJK" if score.cjk else ""
        return [str(score.counts.ref_chars), _fmt(score.cer), _fmt(score.wer),
                _fmt(score.bag_f1), note]
    if page.status == "skipped":
        return ["", "", "", "", Text(f"skipped: {page.reason}", style="dim")]
    return ["", "", "", "", Text(f"failed: {page.reason}", style="red")]


def _print_problems(result: EvalResult, console: Console) -> None:
    reasons = result.skip_reasons()
    if reasons:
        listed = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
        console.print(f"Skipped {sum(reasons.values())} page(s): {listed}")
    failed = result.status_counts().get("failed", 0) + len(result.failed_documents())
    if failed:
        console.print(Text(f"{failed} page(s) or document(s) failed (see the table)", style="red"))


def _print_diff(page: PageEval, console: Console, max_hunks: int) -> None:
    assert page.score is not None
    label = f"{page.source}" + ("" if page.page == 0 else f" p{page.page}")
    console.print(Text(f"{label}: CER {_fmt(page.score.cer)}, bag-F1 {_fmt(page.score.bag_f1)}",
                       style="bold"))
    for hunk in aligned_diff(page.score.ref, page.score.hyp, max_hunks=max_hunks):
        ref_line, hyp_line = _styled(hunk)
        console.print(Text("  ref │ ").append_text(ref_line))
        console.print(Text("  ocr │ ").append_text(hyp_line))
        console.print()


def _styled(hunk: Hunk) -> tuple[Text, Text]:
    ref, hyp = Text(), Text()
    for segment in hunk:
        if segment.op == "equal":
            ref.append(segment.ref)
            hyp.append(segment.hyp)
        else:
            ref.append(f"[{segment.ref}]", style="red")
            hyp.append(f"[{segment.hyp}]", style="green")
    return ref, hyp
