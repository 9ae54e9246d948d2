"""Shared test settings: where the real corpora are, and a marker for tests that need them.

CI points ``STRUCTLIN_DATA`` at ``../shared/corpora`` and ``NLTK_DATA`` at ``../shared/nltk_data``.
When they are unset and a ``../shared`` checkout sits beside the project, the tests use it; otherwise
tests that need real corpora are skipped with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

if "STRUCTLIN_DATA" not in os.environ and (SHARED / "corpora").is_dir():
    os.environ["STRUCTLIN_DATA"] = str(SHARED / "corpora")
if "NLTK_DATA" not in os.environ and (SHARED / "nltk_data").is_dir():
    os.environ["NLTK_DATA"] = str(SHARED / "nltk_data")


def _data_dir() -> Path | None:
    value = os.environ.get("STRUCTLIN_DATA")
    return Path(value) if value else None


@pytest.fixture(scope="session")
def ewt_dir() -> Path:
    """The UD English EWT directory, or skip."""
    data = _data_dir()
    path = data / "ud-english-ewt" if data else None
    if path is None or not (path / "en_ewt-ud-train.conllu").is_file():
        pytest.skip("UD English EWT not found: set STRUCTLIN_DATA to ../shared/corpora")
    return path


@pytest.fixture(scope="session")
def nltk_data_dir() -> Path:
    """The NLTK data directory with the shared corpora, or skip."""
    value = os.environ.get("NLTK_DATA")
    path = Path(value) if value else None
    if path is None or not (path / "corpora").is_dir():
        pytest.skip("NLTK data not found: set NLTK_DATA to ../shared/nltk_data")
    return path


@pytest.fixture(scope="session")
def news_archive() -> Path:
    """The 20 Newsgroups "bydate" archive (20news-bydate/20news-bydate.tar.gz), or skip."""
    data = _data_dir()
    path = data / "20news-bydate" / "20news-bydate.tar.gz" if data else None
    if path is None or not path.is_file():
        pytest.skip("20news-bydate.tar.gz not found: set STRUCTLIN_DATA to ../shared/corpora")
    return path


_CASES_TRIED: list[str] = []


@pytest.fixture
def report_cases():
    """``report_cases(line)``: record how many cases a property-based test tried (the line is printed in the
    session's summary, so that CI's log shows it without ``-s``)."""
    return _CASES_TRIED.append


def pytest_terminal_summary(terminalreporter):
    if _CASES_TRIED:
        terminalreporter.section("property-based tests: cases tried")
        for line in _CASES_TRIED:
            terminalreporter.write_line(line)


@pytest.fixture
def registry(monkeypatch):
    """A private copy of the template registry (``structlin.templates._REGISTRY``), restored after the test."""
    from structlin import templates

    monkeypatch.setattr(templates, "_REGISTRY", dict(templates._REGISTRY))
    return templates._REGISTRY


# --- a working folder for the command line's tests ----------------------------------------------------------

#: Six fastText documents of two labels.
DOCUMENTS = "".join(f"__label__{y} {x}\n" for x, y in [("good great fun", "pos"), ("bad awful plot", "neg")] * 3)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A tagger and a classifier trained by the command line on small files, in a folder of their own."""
    from structlin.cli import main
    from test_cli import SMALL_CONLLU

    root = tmp_path_factory.mktemp("hostile")
    (root / "r.conllu").write_text(SMALL_CONLLU, "utf-8")
    (root / "docs.txt").write_text(DOCUMENTS, "utf-8")
    for argv in (["train", "tagger", "--train", root / "r.conllu", "--output", root / "m.model"],
                 ["train", "classifier", "--train", root / "docs.txt", "--output", root / "c.model"]):
        assert main([str(a) for a in [*argv, "-q", "--bits", "12", "--epochs", "2"]]) == 0
    return root


@pytest.fixture()
def work(models, tmp_path, monkeypatch):
    """A working folder (the current one) holding r.conllu, t.txt, docs.txt and copies of the models."""
    for name in ("r.conllu", "docs.txt", "m.model", "c.model"):
        (tmp_path / name).write_bytes((models / name).read_bytes())
    (tmp_path / "t.txt").write_text("The dog barks .\nCats sleep\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path
