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
