import io
import os
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from jobs.expand import ExpandOptions, InputError, expand_inputs


def touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "scans"
    touch(root / "a.pdf")
    touch(root / "b.PNG")
    touch(root / "notes.txt")
    touch(root / ".hidden.pdf")
    touch(root / ".git" / "c.pdf")
    touch(root / "deep" / "er" / "d.tiff")
    return root


def names(found):
    return [f.relname for f in found]


def test_folder_recursive_sorted_supported_only(tree):
    assert names(expand_inputs([str(tree)])) == ["a.pdf", "b.PNG", "deep/er/d.tiff"]


def test_no_recursive(tree):
    assert names(expand_inputs([str(tree)], ExpandOptions(recursive=False))) == ["a.pdf", "b.PNG"]


def test_include_exclude(tree):
    assert names(expand_inputs([str(tree)], ExpandOptions(include=("*.pdf", "*.tiff")))) == ["a.pdf", "deep/er/d.tiff"]
    assert names(expand_inputs([str(tree)], ExpandOptions(exclude=("deep/*",)))) == ["a.pdf", "b.PNG"]


def test_hidden_files_when_asked(tree):
    assert ".hidden.pdf" in names(expand_inputs([str(tree)], ExpandOptions(hidden=True)))


def test_glob_stdin_and_list(tree, tmp_path):
    assert names(expand_inputs([str(tree / "*.pdf")])) == ["a.pdf"]
    assert names(expand_inputs([str(tree / "**" / "*.tiff")])) == ["d.tiff"]
    stdin = io.StringIO(f"{tree / 'a.pdf'}\n\n# comment\n{tree / 'b.PNG'}\n")
    assert names(expand_inputs(["-"], stdin=stdin)) == ["a.pdf", "b.PNG"]
    listing = tmp_path / "list.txt"
    listing.write_text(f"{tree / 'deep'}\n{tree / 'a.pdf'}\n")
    assert names(expand_inputs([f"@{listing}"])) == ["er/d.tiff", "a.pdf"]


def test_duplicates_once(tree):
    found = expand_inputs([str(tree / "a.pdf"), str(tree), str(tree / "a.pdf")])
    assert len([f for f in found if f.path.name == "a.pdf"]) == 1


def test_explicit_file_of_any_extension(tree):
    found = expand_inputs([str(tree / "notes.txt")])
    assert names(found) == ["notes.txt"] and found[0].explicit


def test_missing_input_is_usage_error(tmp_path):
    with pytest.raises(InputError):
        expand_inputs([str(tmp_path / "nope.pdf")])
    with pytest.raises(InputError):
        expand_inputs([str(tmp_path / "*.pdf")])
    with pytest.raises(InputError):
        expand_inputs([f"@{tmp_path / 'missing.txt'}"])


def test_symlink_loop_and_outside_link(tree, tmp_path):
    os.symlink(tree, tree / "deep" / "loop")
    outside = touch(tmp_path / "elsewhere" / "x.pdf")
    os.symlink(outside.parent, tree / "linked")
    found = names(expand_inputs([str(tree)]))
    assert found.count("a.pdf") == 1
    assert "linked/x.pdf" in found  # named by its place in the input tree, not by its target
    assert all(".." not in n for n in found)


def test_output_folder_inside_input_is_skipped(tree):
    out = tree / "out"
    touch(out / "old.pdf")
    assert "out/old.pdf" not in names(expand_inputs([str(tree)], ExpandOptions(skip_dirs=(out,))))


# Relative names only, read from an empty folder: an absolute or home path would walk the whole
# machine ("/" took 1.6 s on a loaded runner and tripped hypothesis's deadline).
_LISTED = st.text(max_size=20).filter(lambda s: not s.strip().startswith(("/", "~")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_LISTED, max_size=8))
def test_fuzz_input_lists(tmp_path, lines):
    listing = tmp_path / "fuzz.txt"
    listing.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    here = os.getcwd()
    (tmp_path / "cwd").mkdir(exist_ok=True)
    os.chdir(tmp_path / "cwd")
    try:
        expand_inputs([f"@{listing}"])
    except InputError:
        pass
    finally:
        os.chdir(here)


def test_same_name_in_two_folders_stays_separate(tmp_path):
    a = touch(tmp_path / "one" / "x.pdf")
    b = touch(tmp_path / "two" / "x.pdf")
    found = expand_inputs([str(a), str(b)])
    assert [f.relname for f in found] == ["one/x.pdf", "two/x.pdf"]
    found = expand_inputs([str(tmp_path / "one"), str(tmp_path / "two")])
    assert [f.relname for f in found] == ["one/x.pdf", "two/x.pdf"]


def test_non_utf8_names(tmp_path):
    name = os.fsdecode(b"scan-\xff.png")
    touch(tmp_path / "in" / name)
    found = expand_inputs([str(tmp_path / "in")])
    assert len(found) == 1 and found[0].path.exists()


def test_unknown_user_home_is_a_missing_path_not_a_crash(tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text("~nosuchuser-pagerunner/scan.pdf\n", encoding="utf-8")
    with pytest.raises(InputError, match="no such file"):
        expand_inputs([f"@{listing}"])
