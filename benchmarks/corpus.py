#!/usr/bin/env python3
"""A wide corpus of born-digital pages from Debian documentation packages, split by document.

    python benchmarks/corpus.py select --out /work/corpus   # choose pages, write the manifest
    python benchmarks/corpus.py build  --out /work/corpus   # fetch, check, render what it names

`select` downloads the packages in PACKAGES (`apt-get download`, the versions apt offers), pools a
seeded sample of each package's PDFs and seeded pages of each, files every pooled page under layout
categories from its text layer (benchmarks/corpus_layout.py), picks the corpus by the seeded rule
of `choose_pages` and writes benchmarks/corpus_manifest.json: package versions and .deb sha256,
documents with their half (`tune` / `check`, from a seeded hash of the document's name, fixed
before any OCR result exists), pages with tags and category.

`build` reproduces the corpus from the manifest alone: it downloads exactly the named versions,
refuses a .deb whose sha256 differs, extracts the PDFs and writes under --out:

    pages/<half>/born/<page>.png      the page rendered by pagerunner's renderer (200 dpi)
    pages/<half>/scan/<page>.png      the same page through the seeded simulated scan
    pages/<half>/{born,scan}/<page>.gt.txt   its text layer, as `pagerunner eval
                                      --against-text-layer` reads it (the ground truth)
    pages.jsonl                       one record per page (id, half, lang, tags, category, paths)
    READY                             what is there and how to score it

Packages held back to check the layout work (issue 12) are refused: see HELD_BACK.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import subprocess
import sys
import tarfile
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MANIFEST = REPO / "benchmarks" / "corpus_manifest.json"
SEED = 20261201
SUBSET_SEED = 20261201
DPI = 200.0
HELD_BACK = ("debian-reference", "maint-guide", "packaging-tutorial", "texlive-latex-recommended-doc",
             "texlive-publishers-doc", "texlive-lang-chinese")
MAX_PDF_BYTES = 40_000_000
PAGES_PROBED = 10  # seeded pages looked at per pooled PDF
MAX_PAGES_PER_PDF = 8
TARGET_PAGES = 520
TAG_QUOTA = 40  # the seeded rule first gives every layout tag this many pages
ZH_QUOTA = 100  # and Chinese pages (issue 12 holds them to their own bar) this many
MIN_TEXT_CHARS = 20


@dataclass(frozen=True)
class PackageSpec:
    name: str
    max_pdfs: int  # PDFs pooled from the package (seeded sample); 0: all


# English and Chinese manuals, LaTeX package docs (papers, slides, posters, books), font samples.
PACKAGES = (
    PackageSpec("texlive-latex-extra-doc", 140),
    PackageSpec("texlive-science-doc", 30),
    PackageSpec("texlive-pictures-doc", 40),
    PackageSpec("texlive-humanities-doc", 20),
    PackageSpec("texlive-fonts-extra-doc", 25),
    PackageSpec("texlive-metapost-doc", 8),
    PackageSpec("texlive-lang-cjk", 0),
    PackageSpec("r-doc-pdf", 6),
    PackageSpec("auto-multiple-choice-doc-pdf", 0),
    PackageSpec("gri-pdf-doc", 0),
    PackageSpec("python-reportlab-doc", 0),
    PackageSpec("siscone-doc-pdf", 0),
    PackageSpec("why3-doc-pdf", 0),
    PackageSpec("debian-edu-doc-zh-cn", 0),
    PackageSpec("debian-edu-doc-legacy-zh-cn", 0),
    PackageSpec("linuxcnc-doc-zh-cn", 0),
    PackageSpec("fonts-lxgw-wenkai-doc", 0),
)


@dataclass
class Candidate:
    doc: str
    page: int
    lang: str
    tags: list[str]
    category: str
    chars: int


# --------------------------------------------------------------------------- packages


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def refuse_held_back(name: str) -> None:
    if any(name == h or name.startswith(h + "-") or name.startswith(h) for h in HELD_BACK):
        raise SystemExit(f"{name} is held back to check the layout work; it cannot be in the corpus")


def candidate_version(name: str) -> str:
    shown = subprocess.run(["apt-cache", "policy", name], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Candidate:\s*(\S+)", shown)
    if not match or match.group(1) == "(none)":
        raise SystemExit(f"apt knows no version of {name} (run apt-get update)")
    return match.group(1)


def download(name: str, version: str, folder: Path) -> Path:
    """The .deb of name=version in `folder`, fetched with `apt-get download` unless present."""
    refuse_held_back(name)
    folder.mkdir(parents=True, exist_ok=True)
    pattern = f"{name}_{version.split(':')[-1]}_*.deb"
    found = sorted(folder.glob(pattern))
    if not found:
        subprocess.run(["apt-get", "download", "-q", f"{name}={version}"], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        found = sorted(folder.glob(pattern))
    if not found:
        raise SystemExit(f"apt-get download {name}={version} left no {pattern} in {folder}")
    return found[0]


def extract_pdfs(deb: Path, folder: Path) -> list[str]:
    """Every PDF of the package under `folder` (its path below usr/share/doc); sorted names."""
    done = folder / ".extracted"
    if done.exists():
        return json.loads(done.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    seen: set[str] = set()  # a file shipped twice (R's refman.pdf = fullrefman.pdf) is one document
    tar_stream = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    assert tar_stream.stdout is not None
    with tarfile.open(fileobj=tar_stream.stdout, mode="r|") as archive:
        for member in archive:
            lower = member.name.lower()
            if not member.isfile() or not lower.endswith((".pdf", ".pdf.gz")) or member.size > MAX_PDF_BYTES:
                continue
            data = archive.extractfile(member)
            assert data is not None
            content = data.read()
            if lower.endswith(".gz"):  # Debian compresses some manuals
                content = gzip.decompress(content)
            digest = hashlib.sha256(content).hexdigest()
            if digest in seen or not content.startswith(b"%PDF"):
                continue
            seen.add(digest)
            rel = re.sub(r"^(\./)?(usr/share/doc/)?", "", member.name).removesuffix(".gz")
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            names.append(rel)
    if tar_stream.wait() != 0:
        raise SystemExit(f"dpkg-deb could not read {deb}")
    names.sort()
    done.write_text(json.dumps(names))
    return names


# --------------------------------------------------------------------------- selection


def doc_id(package: str, rel: str) -> str:
    short = package.removeprefix("texlive-").removesuffix("-doc").removesuffix("-doc-pdf")
    stem = Path(rel).with_suffix("").as_posix()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{short}.{Path(stem).parent.name}.{Path(stem).name}")
    return slug.strip("._") + "-" + hashlib.sha256(f"{package}/{rel}".encode()).hexdigest()[:6]


def half_of(doc: str, seed: int = SEED) -> str:
    """The document's half, from a seeded hash of its name alone."""
    return "tune" if hashlib.sha256(f"{seed}:{doc}".encode()).digest()[0] % 2 == 0 else "check"


def pooled_pdfs(package: PackageSpec, names: list[str], seed: int) -> list[str]:
    rng = random.Random(f"{seed}:pdfs:{package.name}")
    chosen = list(names)
    rng.shuffle(chosen)
    return sorted(chosen if package.max_pdfs == 0 else chosen[: package.max_pdfs])


def probe_document(path: Path, doc: str, seed: int) -> tuple[int, list[Candidate]]:
    """(page count, candidate pages): seeded pages whose text layer is real text."""
    import pypdfium2 as pdfium

    from corpus_layout import analyse_page
    from model_cache.textlayer import extract_text_layer

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:
        print(f"  skip {doc}: {exc}", file=sys.stderr)
        return 0, []
    try:
        count = len(pdf)
        numbers = list(range(1, count + 1))
        random.Random(f"{seed}:pages:{doc}").shuffle(numbers)
        found = []
        for number in numbers[:PAGES_PROBED]:
            page = pdf[number - 1]
            try:
                if not _real_text(extract_text_layer(page, DPI / 72.0)):
                    continue
                layout = analyse_page(page)
            except Exception as exc:
                print(f"  skip {doc} p{number}: {exc}", file=sys.stderr)
                continue
            finally:
                page.close()
            found.append(Candidate(doc, number, layout.lang, layout.tags, layout.category, layout.chars))
        return count, found
    finally:
        pdf.close()


def _real_text(layer) -> bool:
    """The rules of `pagerunner eval --against-text-layer` (and `--text-layer auto`'s is_real)."""
    from runner.evaluation.evaluate import MAX_BAD_GLYPH_SHARE

    if layer.nonspace_chars < MIN_TEXT_CHARS:
        return False
    if layer.bad_chars > MAX_BAD_GLYPH_SHARE * layer.nonspace_chars:
        return False
    return layer.is_real


def choose_pages(pool: list[Candidate], seed: int, target: int = TARGET_PAGES) -> list[Candidate]:
    """The seeded rule: first, for each tag from the rarest in the pool up (Chinese counted as a
    tag), seeded picks of pages with that tag until it has TAG_QUOTA pages (ZH_QUOTA for Chinese;
    both scaled by `target` / TARGET_PAGES) in the corpus; then seeded picks round-robin over
    documents (each document's next page, documents in seeded order) until `target` pages; never
    more than MAX_PAGES_PER_PDF pages of one document."""
    rng = random.Random(f"{seed}:choose")
    order = sorted(pool, key=lambda c: (c.doc, c.page))
    rng.shuffle(order)
    chosen: list[Candidate] = []
    taken: set[tuple[str, int]] = set()
    per_doc: Counter[str] = Counter()

    def labels(c: Candidate) -> list[str]:
        return c.tags + (["zh"] if c.lang == "zh" else [])

    def take(c: Candidate) -> bool:
        if (c.doc, c.page) in taken or per_doc[c.doc] >= MAX_PAGES_PER_PDF or len(chosen) >= target:
            return False
        chosen.append(c)
        taken.add((c.doc, c.page))
        per_doc[c.doc] += 1
        return True

    in_pool = Counter(t for c in pool for t in labels(c))
    for tag in sorted(in_pool, key=lambda t: (in_pool[t], t)):
        have = sum(1 for c in chosen if tag in labels(c))
        quota = round((ZH_QUOTA if tag == "zh" else TAG_QUOTA) * target / TARGET_PAGES)
        for c in order:
            if have >= quota:
                break
            if tag in labels(c) and take(c):
                have += 1
    by_doc: dict[str, list[Candidate]] = defaultdict(list)
    for c in order:
        by_doc[c.doc].append(c)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    while len(chosen) < target:
        progressed = False
        for doc in docs:
            for c in by_doc[doc]:
                if take(c):
                    progressed = True
                    break
        if not progressed:
            break
    return sorted(chosen, key=lambda c: (c.doc, c.page))


@dataclass
class Manifest:
    seed: int
    dpi: float
    scan_seed: int
    packages: list[dict] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    pages: list[dict] = field(default_factory=list)

    def write(self, path: Path) -> None:
        body = {"schema": "pagerunner.corpus/1",
                "about": "Pages of Debian documentation PDFs chosen by benchmarks/corpus.py select; "
                         "rebuild with benchmarks/corpus.py build. Halves are by document.",
                "held_back": list(HELD_BACK), **asdict(self)}
        path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> "Manifest":
        body = json.loads(path.read_text(encoding="utf-8"))
        return cls(body["seed"], body["dpi"], body["scan_seed"], body["packages"], body["documents"],
                   body["pages"])


def select(out: Path, seed: int, manifest_path: Path, outside: Sequence[Path] = (),
           target: int = TARGET_PAGES) -> Manifest:
    """`outside`: manifests whose documents are left out of the pool, for a set of pages from
    documents those sets never saw (to try a layout rule on before the checking half)."""
    from eval_sets import DEFAULT_SEED

    excluded = {d["id"] for path in outside for d in Manifest.read(path).documents}

    manifest = Manifest(seed, DPI, DEFAULT_SEED)
    pool: list[Candidate] = []
    documents: dict[str, dict] = {}
    for spec in PACKAGES:
        refuse_held_back(spec.name)
        version = candidate_version(spec.name)
        deb = download(spec.name, version, out / "debs")
        names = extract_pdfs(deb, out / "pdfs" / spec.name)
        pooled = pooled_pdfs(spec, names, seed)
        manifest.packages.append({"name": spec.name, "version": version, "deb": deb.name,
                                  "sha256": sha256_of(deb), "bytes": deb.stat().st_size,
                                  "pdfs_in_package": len(names), "pdfs_pooled": len(pooled)})
        print(f"{spec.name} {version}: {len(names)} PDFs, pooling {len(pooled)}", file=sys.stderr)
        for rel in pooled:
            path = out / "pdfs" / spec.name / rel
            doc = doc_id(spec.name, rel)
            if doc in excluded:
                continue
            count, found = probe_document(path, doc, seed)
            if not found:
                continue
            documents[doc] = {"id": doc, "package": spec.name, "path": rel, "sha256": sha256_of(path),
                              "page_count": count, "half": half_of(doc, seed)}
            pool += found
    chosen = choose_pages(pool, seed, target)
    used = {c.doc for c in chosen}
    manifest.documents = [documents[d] for d in sorted(used)]
    for c in chosen:
        doc = documents[c.doc]
        manifest.pages.append({"id": page_id(c.doc, c.page), "doc": c.doc, "page": c.page,
                               "half": doc["half"], "lang": c.lang, "category": c.category,
                               "tags": c.tags, "chars": c.chars})
    manifest.write(manifest_path)
    print(f"pool {len(pool)} pages of {len(documents)} documents; chose {len(chosen)} pages of "
          f"{len(used)} documents -> {manifest_path}", file=sys.stderr)
    return manifest


def page_id(doc: str, page: int) -> str:
    return f"{doc}.p{page:03d}"


# --------------------------------------------------------------------------- build


def fetch(manifest: Manifest, out: Path) -> dict[str, Path]:
    """Every named .deb, checked against its sha256; the PDFs extracted. Package -> PDF folder."""
    folders = {}
    for package in manifest.packages:
        deb = download(package["name"], package["version"], out / "debs")
        digest = sha256_of(deb)
        if digest != package["sha256"]:
            raise SystemExit(f"{deb.name}: sha256 {digest} is not the manifest's {package['sha256']}")
        folders[package["name"]] = out / "pdfs" / package["name"]
        extract_pdfs(deb, folders[package["name"]])
    for doc in manifest.documents:
        path = folders[doc["package"]] / doc["path"]
        if sha256_of(path) != doc["sha256"]:
            raise SystemExit(f"{path}: not the PDF the manifest names (sha256 differs)")
    return folders


def subset_rank(page: str) -> str:
    """The order of a half's pages for seeded subsets: a subset of N is the first N in this order."""
    return hashlib.sha256(f"{SUBSET_SEED}:{page}".encode()).hexdigest()


def build_order(pages: list[dict]) -> list[dict]:
    """Pages in subset order, the halves interleaved: a build cut short (or still running) holds
    exactly the first seeded subsets of both halves."""
    halves = {h: sorted((p for p in pages if p["half"] == h), key=lambda p: subset_rank(p["id"]))
              for h in ("tune", "check")}
    ordered = []
    for i in range(max(len(v) for v in halves.values())):
        ordered += [halves[h][i] for h in ("tune", "check") if i < len(halves[h])]
    return ordered


def build(manifest: Manifest, out: Path) -> list[dict]:
    """Render every page of the manifest (both copies) with its ground truth; pages.jsonl grows as
    pages are done, so scoring can start on the first subsets while the rest is rendered."""
    from eval_sets import _page_seed, simulate_scan
    from jobs.sources import RenderOptions, open_source
    from runner.evaluation.evaluate import _layer_text

    folders = fetch(manifest, out)
    docs = {d["id"]: d for d in manifest.documents}
    records = []
    index = out / "pages.jsonl"
    index.write_text("", encoding="utf-8")
    for n, page in enumerate(build_order(manifest.pages), 1):
        doc = docs[page["doc"]]
        source = open_source(folders[doc["package"]] / doc["path"])
        try:
            record = _build_page(source, page, doc, out, manifest, _layer_text, simulate_scan,
                                 _page_seed, RenderOptions)
        finally:
            source.close()
        records.append(record)
        with open(index, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        if n % 20 == 0:
            print(f"  {n} of {len(manifest.pages)} pages", file=sys.stderr, flush=True)
    return records  # in build order: pages.jsonl lists each half's pages in seeded-subset order


def _build_page(source, page: dict, doc: dict, out: Path, manifest: Manifest, layer_text,
                simulate_scan, page_seed, render_options) -> dict:
    born_dir = out / "pages" / page["half"] / "born"
    scan_dir = out / "pages" / page["half"] / "scan"
    born_dir.mkdir(parents=True, exist_ok=True)
    scan_dir.mkdir(parents=True, exist_ok=True)
    born, scan = born_dir / f"{page['id']}.png", scan_dir / f"{page['id']}.png"
    rendered = source.render(page["page"], render_options(dpi=manifest.dpi, want_image=True,
                                                           want_text_layer=True))
    reference = layer_text(rendered.text_layer)
    dpi = (round(manifest.dpi), round(manifest.dpi))
    if not born.exists():
        rendered.image.save(born, dpi=dpi, compress_level=3)
    if not scan.exists():
        scanned = simulate_scan(rendered.image, page_seed(manifest.scan_seed, page["id"]))
        scanned.convert("L").save(scan, dpi=dpi, compress_level=3)
    for folder in (born_dir, scan_dir):
        (folder / f"{page['id']}.gt.txt").write_text(reference, encoding="utf-8")
    return {**page, "package": doc["package"], "pdf": doc["path"],
            "born": str(born.relative_to(out)), "scan": str(scan.relative_to(out)),
            "gt": str((born_dir / f"{page['id']}.gt.txt").relative_to(out)),
            "width": rendered.image.width, "height": rendered.image.height}


def write_ready(manifest: Manifest, records: list[dict], out: Path) -> None:
    from corpus_report import ready_text

    with open(out / "pages.jsonl", "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    (out / "READY").write_text(ready_text(manifest, records, out), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("select", "build"))
    parser.add_argument("--out", type=Path, default=Path("/work/corpus"), help="where debs, PDFs and pages go")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--outside", type=Path, action="append", default=[],
                        help="select: leave out the documents of this manifest (repeatable)")
    parser.add_argument("--pages", type=int, default=TARGET_PAGES, help="select: how many pages")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "select":
        select(args.out, args.seed, args.manifest, args.outside, args.pages)
        return
    manifest = Manifest.read(args.manifest)
    records = build(manifest, args.out)
    write_ready(manifest, records, args.out)
    print(f"{len(records)} pages under {args.out / 'pages'}; see {args.out / 'READY'}", file=sys.stderr)


if __name__ == "__main__":
    main()
