"""Tests of structlin.documents: small inline trees, archives and line files for every format and error,
stand-in NLTK corpora, then the real corpora (20 Newsgroups, movie_reviews, qc, ppattach, names)."""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import tempfile
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin.catalog import load_documents
from structlin.documents import (
    Document,
    read_csv,
    read_fasttext,
    read_folders,
    read_names,
    read_nltk_categorized,
    read_ppattach,
    read_qc,
    read_svmlight,
    read_tsv,
    strip_usenet,
)
from structlin.documents.formats import CONTENT_MIN_ROWS
from structlin.errors import CorpusFormatError, CorpusNotFoundError, UnknownNameError

# A one-folder-per-class tree: path -> bytes. Sorted order: neg/a, neg/b, pos/c, pos/more/d.
TREE = {
    "pos/more/d.txt": b"nested file\n",
    "pos/c.txt": b"great\nfun\n",
    "neg/b.txt": b"bad\n",
    "neg/a.txt": b"awful\n",
}
EXPECTED = [("awful\n", "neg", "neg/a.txt"), ("bad\n", "neg", "neg/b.txt"), ("great\nfun\n", "pos", "pos/c.txt"),
            ("nested file\n", "pos", "pos/more/d.txt")]


def make_tree(directory: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    return directory


def make_tar(path: Path, files: dict[str, bytes], mode: str = "w:gz") -> Path:
    """A tar archive of ``files`` in the given (unsorted) order, with folder members for the first."""
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def make_zip(path: Path, files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def archive_of(tmp_path: Path, kind: str, files: dict[str, bytes]) -> Path:
    """``files`` as a folder tree or as an archive of the kind named by its suffix."""
    if kind == "folder":
        return make_tree(tmp_path / "tree", files)
    if kind == ".zip":
        return make_zip(tmp_path / "tree.zip", files)
    mode = {".tar.gz": "w:gz", ".tgz": "w:gz", ".tar": "w", ".tar.bz2": "w:bz2", ".tar.xz": "w:xz"}[kind]
    return make_tar(tmp_path / f"tree{kind}", files, mode)


def format_error(read, *args, **options) -> CorpusFormatError:
    with pytest.raises(CorpusFormatError) as info:
        list(read(*args, **options))
    return info.value


def write(tmp_path: Path, text: str | bytes, name: str = "corpus.txt") -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


# --- read_folders: trees and archives ----------------------------------------------------------------

KINDS = ["folder", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip"]


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_gives_the_same_documents_in_sorted_order(tmp_path, kind):
    path = archive_of(tmp_path, kind, TREE)
    documents = list(read_folders(path))
    assert [(d.text, d.label) for d in documents] == [(text, label) for text, label, _ in EXPECTED]
    separator = "/" if kind == "folder" else ":"
    assert [d.source for d in documents] == [f"{path}{separator}{name}" for _, _, name in EXPECTED]
    assert {d.line for d in documents} == {None}


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_subset(tmp_path, kind):
    files = {f"{split}/{name}": data for split in ("train", "test") for name, data in TREE.items()}
    files["test/neg/b.txt"] = b"test only\n"
    path = archive_of(tmp_path, kind, files)
    test = list(read_folders(path, subset="test"))
    assert [(d.text, d.label) for d in test] == [("awful\n", "neg"), ("test only\n", "neg"), ("great\nfun\n", "pos"),
                                                  ("nested file\n", "pos")]
    assert test[0].source.endswith("test/neg/a.txt")
    assert len(list(read_folders(path, subset="train"))) == 4
    assert {d.label for d in read_folders(path)} == {"test", "train"}  # no subset: the top folders are labels
    error = format_error(read_folders, path, subset="dev")
    assert error.path == str(path) and "no folder 'dev'" in str(error) and "test, train" in str(error)


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_looks_inside_the_one_folder_holding_the_tree(tmp_path, kind):
    """``tar czf corpus.tar.gz corpus`` (or zipping the folder) puts the label folders inside one folder: its
    name is no label.  A single label folder of files (every document of one label) stays a label."""
    path = archive_of(tmp_path, kind, {f"corpus/{name}": data for name, data in TREE.items()})
    documents = list(read_folders(path))
    assert [(d.text, d.label) for d in documents] == [(text, label) for text, label, _ in EXPECTED]
    assert documents[0].source.endswith("corpus/neg/a.txt")
    one = tmp_path / "one"
    one.mkdir()
    single = archive_of(one, kind, {"pos/a.txt": b"great\n", "pos/more/b.txt": b"fun\n"})
    assert [d.label for d in read_folders(single)] == ["pos", "pos"]


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_skips_hidden_entries_and_says_so(tmp_path, kind):
    """A repository's ``.git``, Finder's ``.DS_Store``, macOS's ``._*`` companions and the ``__MACOSX`` folder of
    a zip made on a Mac are no label and no document (they were: ``.git`` a class, ``.DS_Store`` a text); one
    warning counts them; the one folder holding the tree is still found beside ``__MACOSX``."""
    files = {f"corpus/{name}": data for name, data in TREE.items()}
    hidden = {".git/config": b"[core]\n", "corpus/pos/.DS_Store": b"\0\1", "corpus/neg/._a.txt": b"fork",
              "__MACOSX/corpus/neg/._a.txt": b"fork"}
    path = archive_of(tmp_path, kind, {**files, **hidden})
    with pytest.warns(UserWarning, match=r"4 hidden entries skipped, not read as documents \(.*\.git.*, …\)"):
        documents = list(read_folders(path))
    assert [(d.text, d.label) for d in documents] == [(text, label) for text, label, _ in EXPECTED]
    plain = tmp_path / "plain"
    plain.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing hidden, nothing said
        assert len(list(read_folders(archive_of(plain, kind, files)))) == len(EXPECTED)


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_rejects_files_outside_label_folders(tmp_path, kind):
    path = archive_of(tmp_path, kind, {**TREE, "README": b"not a document\n"})
    error = format_error(read_folders, path)
    assert error.path == (f"{path}/README" if kind == "folder" else f"{path}:README")
    assert "a file outside any label folder (expected <label>/<file>" in str(error)
    files = {f"train/{name}": data for name, data in TREE.items()} | {"train/stray.txt": b"x"}
    sub = tmp_path / "sub"
    sub.mkdir()
    error = format_error(read_folders, archive_of(sub, kind, files), subset="train")
    assert error.path.endswith("stray.txt") and "expected train/<label>/<file>" in str(error)


@pytest.mark.parametrize("kind", KINDS)
def test_read_folders_latin1_read_as_utf8_names_member_and_line(tmp_path, kind):
    path = archive_of(tmp_path, kind, {**TREE, "pos/z.txt": b"first line\ncaf\xe9 au lait\n"})
    error = format_error(read_folders, path)
    member = f"{path}/pos/z.txt" if kind == "folder" else f"{path}:pos/z.txt"
    assert (error.path, error.line) == (member, 2)
    assert str(error).startswith(f"{member}:2: invalid utf-8: byte 0xe9 at position 4 of the line (expected utf-8 text")
    assert list(read_folders(path, encoding="latin-1"))[-1].text == "first line\ncafé au lait\n"
    assert list(read_folders(path, errors="replace"))[-1].text == "first line\ncaf\ufffd au lait\n"


def test_read_folders_streams_an_archive_whatever_its_member_order(tmp_path):
    files = {f"label{i % 3}/{i:03d}": f"document {i}\n".encode() for i in range(30)}
    shuffled = dict(sorted(files.items(), key=lambda item: (hash(item[0]) % 7, item[0]), reverse=True))
    for path in (make_tar(tmp_path / "a.tar.gz", shuffled), make_zip(tmp_path / "a.zip", shuffled)):
        documents = read_folders(path)
        assert next(documents).text == "document 0\n"  # label0/000 first, wherever it is in the archive
        assert [d.text for d in documents] == [files[name].decode() for name in sorted(files)][1:]


def test_read_folders_recognises_an_archive_without_its_suffix(tmp_path):
    for name, maker in (("tar", make_tar), ("zip", make_zip)):
        path = maker(tmp_path / f"corpus-{name}.data", TREE)
        assert [d.label for d in read_folders(path)] == ["neg", "neg", "pos", "pos"]


def test_read_folders_not_an_archive_and_missing_paths(tmp_path):
    error = format_error(read_folders, write(tmp_path, "just text\n"))
    assert "damaged or truncated archive" in str(error) and "(expected a tar archive)" in str(error)
    error = format_error(read_folders, write(tmp_path, "just text\n", "fake.zip"))
    assert error.path == str(tmp_path / "fake.zip") and "(expected a zip archive)" in str(error)
    with pytest.raises(CorpusNotFoundError, match="nowhere"):
        list(read_folders(tmp_path / "nowhere.tar.gz"))


def test_read_folders_rejects_bad_options(tmp_path):
    with pytest.raises(ValueError, match="unknown strip value 'signature'; accepted: headers, footers, quotes"):
        read_folders(tmp_path, strip=("headers", "signature"))
    with pytest.raises(ValueError, match="unknown encoding 'latin-9000'"):
        read_folders(tmp_path, encoding="latin-9000")
    with pytest.raises(ValueError, match="unknown errors handler"):
        read_folders(tmp_path, errors="lenient")
    with pytest.raises(ValueError, match="invalid subset"):
        read_folders(tmp_path, subset="/")


# Damaged archives. Documents big enough that a cut or a flipped byte lands inside the compressed data.
BIG = {f"{label}/{i:02d}.txt": " ".join(f"w{(i * 7919 + j * 104729) % 5003}" for j in range(3000)).encode()
       for label in ("neg", "pos") for i in range(6)}


@pytest.mark.parametrize("damage", ["cut-half", "cut-end", "flip-middle", "flip-crc"])
@pytest.mark.parametrize("suffix", [".tar.gz", ".tar.bz2", ".tar.xz"])
def test_read_folders_damaged_compressed_tar_is_reported_before_any_document(tmp_path, damage, suffix):
    path = archive_of(tmp_path, suffix, BIG)
    data = bytearray(path.read_bytes())
    if damage == "cut-half":
        data = data[: len(data) // 2]
    elif damage == "cut-end":
        data = data[:-30]
    elif damage == "flip-middle":
        for i in range(len(data) // 2, len(data) // 2 + 64):
            data[i] ^= 0x55
    else:  # the stored checksum: gzip's CRC-32 is in the last 8 bytes; bz2's and xz's near the end too
        data[-12 if suffix == ".tar.xz" else -8] ^= 0xFF
    path.write_bytes(bytes(data))
    documents = read_folders(path)
    with pytest.raises(CorpusFormatError) as info:
        next(documents)  # the whole stream is checked before the first document
    error = info.value
    assert error.path == str(path)
    assert "damaged or truncated archive: " in str(error) and "(expected a " in str(error)
    assert "\n" not in str(error)


def test_read_folders_damaged_plain_tar_header_is_not_a_silent_end(tmp_path):
    path = make_tar(tmp_path / "tree.tar", TREE, "w")
    data = bytearray(path.read_bytes())
    data[512 + 512 + 100] ^= 0xFF  # the mode field of the second member's header: a bad checksum
    path.write_bytes(bytes(data))
    with tarfile.open(path) as tar:
        assert len(tar.getmembers()) == 1  # what tarfile alone makes of it, without a word
    error = format_error(read_folders, path)
    assert error.path == str(path)
    assert str(error) == (
        f"{path}: damaged or truncated archive: unreadable header at byte 1024 after member pos/more/d.txt "
        "(expected a complete tar archive)"
    )
    path.write_bytes(bytes(data[:1024]))  # one whole member, then nothing: no end-of-archive marker
    assert "ends without an end-of-archive marker" in str(format_error(read_folders, path))


def test_read_folders_zip_member_with_a_wrong_crc(tmp_path):
    path = make_zip(tmp_path / "tree.zip", TREE, zipfile.ZIP_STORED)
    data = path.read_bytes()
    at = data.index(b"great\nfun")
    path.write_bytes(data[:at] + b"G" + data[at + 1:])  # pos/c.txt changed, its CRC not
    documents = read_folders(path)
    assert [next(documents).label for _ in range(2)] == ["neg", "neg"]
    with pytest.raises(CorpusFormatError) as info:
        next(documents)
    assert info.value.path == f"{path}:pos/c.txt"
    assert str(info.value).startswith(f"{path}:pos/c.txt: damaged or truncated archive: Bad CRC-32 for file 'pos/c.txt'")
    assert "(expected an intact zip member)" in str(info.value)


def test_read_folders_zip_member_with_damaged_deflate_data_or_a_truncated_zip(tmp_path):
    path = make_zip(tmp_path / "tree.zip", BIG)
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo("neg/03.txt")
    start = info.header_offset + 30 + len(info.filename)
    for i in range(start + 100, start + 164):
        data[i] ^= 0x55
    path.write_bytes(bytes(data))
    error = format_error(read_folders, path)
    assert error.path == f"{path}:neg/03.txt" and "damaged or truncated archive" in str(error)
    path.write_bytes(bytes(data[: len(data) // 2]))
    error = format_error(read_folders, path)
    assert error.path == str(path) and "File is not a zip file" in str(error)


# --- Usenet posts --------------------------------------------------------------------------------------

POST = (
    "From: alice@example.org (Alice)\n"
    "Subject: Re: Linear models\n"
    "Lines: 12\n"
    "\n"
    "In article <1993Apr1.1@example.org> bob@example.org (Bob) writes:\n"
    ">Perceptrons cannot learn XOR.\n"
    "> Nor parity.\n"
    "|A quote with a bar.\n"
    "\n"
    "They can, with the right features.\n"
    "As Rosenblatt said: averaging helps.\n"
    "Averaging helps anyway.\n"
    "\n"
    "-- \n"
    "Alice, Example Org\n"
)
BODY = POST.split("\n\n", 1)[1]
STRIPPED = {
    ("headers",): BODY,
    ("footers",): POST[: POST.index("\n-- ")],  # up to the blank line before "-- "
    ("quotes",): (
        "From: alice@example.org (Alice)\nSubject: Re: Linear models\nLines: 12\n\n\nThey can, with the right features.\n"
        "Averaging helps anyway.\n\n-- \nAlice, Example Org\n"
    ),
    ("headers", "footers", "quotes"): "\nThey can, with the right features.\nAveraging helps anyway.\n",
}


@pytest.mark.parametrize("strip", list(STRIPPED))
def test_strip_usenet(strip):
    assert strip_usenet(POST, strip) == STRIPPED[strip]
    assert strip_usenet(POST, tuple(reversed(strip))) == STRIPPED[strip]  # always headers, footers, quotes


def test_strip_usenet_edge_cases_follow_scikit_learn():
    assert strip_usenet("Subject: only headers\n", "headers") == ""  # no empty line: all headers
    assert strip_usenet("Hello\n\nSecond paragraph\n", "footers") == "Hello"  # the last blank line counts too
    assert strip_usenet("\n--\nno other separator\n", "footers") == "\n--\nno other separator\n"  # at line 1
    assert strip_usenet("a\nb\n", "footers") == "a\nb\n"
    assert strip_usenet("x\n>y\n|z\nI wrote: w\n", "quotes") == "x\n"
    assert strip_usenet(POST, ()) == POST


def test_strip_usenet_matches_scikit_learn():
    twenty = pytest.importorskip("sklearn.datasets._twenty_newsgroups")
    texts = [POST, BODY, "Hello\n\nSecond paragraph\n", "a\n\n", "\n\n\n", "x\n---\ny", "", "only one line"]
    for text in texts:
        assert strip_usenet(text, "headers") == twenty.strip_newsgroup_header(text)
        assert strip_usenet(text, "footers") == twenty.strip_newsgroup_footer(text)
        assert strip_usenet(text, "quotes") == twenty.strip_newsgroup_quoting(text)


@pytest.mark.parametrize("kind", ["folder", ".tar.gz"])
def test_read_folders_strips_posts(tmp_path, kind):
    path = archive_of(tmp_path, kind, {"rec.misc/1": POST.encode(), "sci.misc/2": b"x\n> quoted\ny\n"})
    documents = list(read_folders(path, strip=("headers", "footers", "quotes")))
    assert [(d.text, d.label) for d in documents] == [(STRIPPED["headers", "footers", "quotes"], "rec.misc"),
                                                      ("", "sci.misc")]  # no empty line: all headers
    assert [d.text for d in read_folders(path, strip="quotes")][1] == "x\ny\n"


# --- read_tsv and read_csv ------------------------------------------------------------------------------


def rows(documents) -> list[tuple[str, str, int]]:
    return [(d.text, d.label, d.line) for d in documents]


@pytest.mark.parametrize("name", ["data.tsv", "data.tsv.gz"])
def test_read_tsv_takes_fields_as_they_are(tmp_path, name):
    # SST-2-style texts that start with a quote, unbalanced quotes, a quote-only text, an empty text.
    path = write(tmp_path, 'pos\t"youre dead to me"...\nneg\tsays "hi\n\npos\t"\nneg\t\npos\tA "quoted" word\n', name)
    table = read_tsv(path)
    assert rows(table) == [('"youre dead to me"...', "pos", 1), ('says "hi', "neg", 2), ('"', "pos", 4),
                           ("", "neg", 5), ('A "quoted" word', "pos", 6)]
    assert (table.header, table.label_column, table.text_column) == (None, 0, 1)
    assert next(read_tsv(path)).source == str(path)


def test_read_tsv_strips_labels_line_ends_and_the_byte_order_mark(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf pos \t text with  spaces \r\nneg\tlast\r\n  \r\n")
    assert rows(read_tsv(path)) == [(" text with  spaces ", "pos", 1), ("last", "neg", 2)]
    header = write(tmp_path, b"\xef\xbb\xbfsentence\tlabel\r\nfine\t1\r\n", "bom.tsv")
    table = read_tsv(header)
    assert rows(table) == [("fine", "1", 2)] and table.header == ("sentence", "label")


def test_read_tsv_glue_sst2_with_a_detected_header(tmp_path):
    path = write(tmp_path, "sentence\tlabel\nhide new secretions from the parental units \t0\n"
                           "that loves its characters \t1\n\"youre dead to me\"...\t0\n", "train.tsv")
    table = read_tsv(path)
    assert rows(table) == [("hide new secretions from the parental units ", "0", 2),
                           ("that loves its characters ", "1", 3), ('"youre dead to me"...', "0", 4)]
    assert (table.header, table.label_column, table.text_column) == (("sentence", "label"), 1, 0)


@pytest.mark.parametrize("text", [
    "pos\tgreat film\nneg\tbad film\n",  # a label and a sentence
    "1\ttext\n0\tbad film\n",  # a number is no column name
    "label\tgreat film\nneg\tbad film\n",  # a label name but no text name
    "pos\ttext\nneg\tbad film\n",  # a text name but no label name
    "label\ttext name\tx y z w v\nneg\tbad film\tx\n",  # a name of five words
    "label\tthe plot\nneg\tbad film\n",  # words of which none is a text name
])
def test_read_tsv_keeps_a_first_row_that_is_not_a_header(tmp_path, text):
    path = write(tmp_path, text)
    table = read_tsv(path)
    assert table.header is None and len(list(table)) == 2 and next(read_tsv(path)).line == 1


@pytest.mark.parametrize("text, header, label, text_column", [
    ('"Review Text","Sentiment"\n"great film",pos\n"bad film",neg\n', ("Review Text", "Sentiment"), 1, 0),
    ("review_text,gold label\ngreat film,pos\nbad film,neg\n", ("review_text", "gold label"), 1, 0),
    ("id,Tweet Text,Category Name\n7,great film,pos\n8,bad film,neg\n", ("id", "Tweet Text", "Category Name"), 2, 1),
    (",label,text\n0,pos,great film\n1,neg,bad film\n", ("", "label", "text"), 1, 2),  # pandas' to_csv: an index
])
def test_read_csv_header_names_of_several_words(tmp_path, text, header, label, text_column):
    """Spreadsheets and data frames write names of words ("Review Text"): a word of a known name is enough."""
    table = read_csv(write(tmp_path, text, "data.csv"))
    assert [(d.text, d.label) for d in table] == [("great film", "pos"), ("bad film", "neg")]
    assert (table.header, table.label_column, table.text_column) == (header, label, text_column)


@pytest.mark.parametrize("text, options, where, by_index", [
    ("label\ttext\ttext\npos\tgreat\tx\nneg\tbad\ty\n", {}, "columns 1 'text' and 2 'text'", ["x", "y"]),
    ("label\tlabel\ttext\npos\tx\tgreat\nneg\ty\tbad\n", {}, "columns 0 'label' and 1 'label'", ["great", "bad"]),
    ("label\ttext\ttext\npos\tgreat\tx\nneg\tbad\ty\n", {"text_column": "text"}, "columns 1 'text' and 2 'text'",
     ["x", "y"]),
    # names not alike, each holding the word "label", and no text name: found while detecting the header
    ("label_a\tlabel_b\tfoo\npos\tx\tgreat\nneg\ty\tbad\nneg\tz\tworse\n", {}, "columns 0 'label_a' and 1 'label_b'",
     ["great", "bad", "worse"]),
])
def test_read_tsv_refuses_a_header_name_that_names_two_columns(tmp_path, text, options, where, by_index):
    """Which of two columns of one name is meant is not guessed (the first, silently, or the header read as data);
    given by index, the column is read."""
    path = write(tmp_path, text)
    error = format_error(read_tsv, path, **options)
    assert str(error).startswith(f"{path}:1: the header row's {where} could each be the one meant")
    assert "by its index" in str(error)
    assert [d.text for d in read_tsv(path, label_column=0, text_column=2)] == by_index


def test_read_tsv_first_row_of_a_known_label_is_data(tmp_path):
    """A first row of names that the rows below never use as a label, while one of theirs repeats, is taken for a
    header; unless its label field is a label the data is known to use (a model's, reading its test data)."""
    path = write(tmp_path, "pos\tgreat\nneg\tbad\nneg\tawful\n")
    table = read_tsv(path)
    assert rows(table) == [("bad", "neg", 2), ("awful", "neg", 3)] and table.header == ("pos", "great")
    table = read_tsv(path, labels={"pos", "neg"})
    assert rows(table) == [("great", "pos", 1), ("bad", "neg", 2), ("awful", "neg", 3)] and table.header is None
    named = write(tmp_path, "label\ttext\nlabel\tx\n", "named.tsv")  # detected by its names, but a known label
    assert rows(read_tsv(named, labels={"label"})) == [("text", "label", 1), ("x", "label", 2)]


def test_read_tsv_declared_header_or_no_header(tmp_path):
    path = write(tmp_path, "polarity\treview\npos\tgreat\n")  # detected: a label name and a text name
    assert rows(read_tsv(path)) == [("great", "pos", 2)]
    assert rows(read_tsv(path, header=False)) == [("review", "polarity", 1), ("great", "pos", 2)]
    odd = write(tmp_path, "y\tx\npos\tgreat\n", "odd.tsv")  # names not recognised: only a declared header
    assert rows(read_tsv(odd)) == [("x", "y", 1), ("great", "pos", 2)]
    table = read_tsv(odd, header=True)
    assert rows(table) == [("great", "pos", 2)] and table.header == ("y", "x")
    assert rows(read_tsv(odd, label_column="y", text_column="x")) == [("great", "pos", 2)]  # names declare a header


def test_read_tsv_detects_a_header_of_other_names_by_its_use(tmp_path):
    """A first row of names that are not the known ones is a header when the rows below never use its label
    field as a label while their labels repeat; a row whose label is used below stays data."""
    path = write(tmp_path, "topic_id\theadline\nsport\tCup final tonight\npolitics\tVote due\nsport\tA win\n")
    table = read_tsv(path)
    assert [d.label for d in table] == ["sport", "politics", "sport"] and table.header == ("topic_id", "headline")
    kept = read_tsv(write(tmp_path, "sport\tgoal\nsport\tCup final tonight\npolitics\tVote due\n", "kept.tsv"))
    assert len(list(kept)) == 3 and kept.header is None
    labelled_last = write(tmp_path, "headline\ttopic_id\nCup final\tsport\nA win\tsport\n", "last.tsv")
    table = read_tsv(labelled_last, label_column=1)
    assert [d.text for d in table] == ["Cup final", "A win"] and table.header == ("headline", "topic_id")
    # judged by the label column the rows' contents choose: a lexicon's first word, used once, is no header
    lexicon = write(tmp_path, "".join(f"{word}\t{'positive' if k % 2 else 'negative'}\n" for k, word in enumerate(
        ["wonderful", *(f"w{k % 12}" for k in range(30))])), "lexicon.tsv")
    table = read_tsv(lexicon)
    assert len(list(table)) == 31 and table.header is None and (table.label_column, table.text_column) == (1, 0)


def test_read_tsv_named_and_indexed_columns(tmp_path):
    path = write(tmp_path, "id\ttext\tcategory\tlabel\n7\tfirst\tA\tx\n8\tsecond\tB\ty\n")
    table = read_tsv(path)  # "label" is preferred to "category"
    assert rows(table) == [("first", "x", 2), ("second", "y", 3)] and (table.label_column, table.text_column) == (3, 1)
    assert [d.label for d in read_tsv(path, label_column="category")] == ["A", "B"]
    assert [d.label for d in read_tsv(path, label_column=2)] == ["A", "B"]
    assert [(d.text, d.label) for d in read_tsv(path, label_column=0, text_column=2)] == [("A", "7"), ("B", "8")]
    plain = write(tmp_path, "first\tpos\nsecond\tneg\n", "plain.tsv")
    assert [(d.text, d.label) for d in read_tsv(plain, text_column=0)] == [("first", "pos"), ("second", "neg")]
    assert [(d.text, d.label) for d in read_tsv(plain, label_column=1)] == [("first", "pos"), ("second", "neg")]


def test_read_csv_quoted_fields(tmp_path):
    path = write(tmp_path, 'id,text,label\r\n1,"Hello, world",greet\r\n2,"He said ""hi""\nand left",greet\r\n'
                           '3,Bye,  leave \r\n\r\n4,"a ""quote"" at the start",x\r\n', "data.csv")
    table = read_csv(path)
    assert rows(table) == [("Hello, world", "greet", 2), ('He said "hi"\nand left', "greet", 3), ("Bye", "leave", 5),
                           ('a "quote" at the start', "x", 7)]
    assert (table.header, table.label_column, table.text_column) == (("id", "text", "label"), 2, 1)
    semicolons = write(tmp_path, 'pos;"a; b"\nneg;c\n', "data.txt")
    assert rows(read_csv(semicolons, delimiter=";")) == [("a; b", "pos", 1), ("c", "neg", 2)]


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_read_csv_finds_the_delimiter_that_splits_the_first_rows_alike(tmp_path, delimiter):
    """A CSV file given no delimiter is read with the first of , ; TAB | that splits its first rows into as many
    fields each, two or more (quoted fields and fields holding the others' characters included), and says which."""
    d, other = delimiter, "|" if delimiter != "|" else ";"
    text = (f'label{d}text\r\npos{d}"Das ist gut{d} sehr gut, ja"\r\nneg{d}schlecht, wirklich {other} nein\r\n'
            f'pos{d}"zwei\nZeilen"\r\nneg{d}"nicht ""gut"""\r\n')
    table = read_csv(write(tmp_path, text, "data.csv"))
    assert rows(table) == [(f"Das ist gut{d} sehr gut, ja", "pos", 2), (f"schlecht, wirklich {other} nein", "neg", 3),
                           ("zwei\nZeilen", "pos", 4), ('nicht "gut"', "neg", 6)]
    assert table.delimiter == delimiter and table.header == ("label", "text")
    assert read_csv(write(tmp_path, text, "data.csv"), delimiter=",").delimiter == ","  # as given


def test_read_csv_keeps_the_comma_when_it_splits_the_rows_alike(tmp_path):
    commas = write(tmp_path, "pos,a; b; c\nneg,d; e\npos,f|g\n", "data.csv")
    table = read_csv(commas)
    assert rows(table) == [("a; b; c", "pos", 1), ("d; e", "neg", 2), ("f|g", "pos", 3)] and table.delimiter == ","
    ragged = write(tmp_path, "just one field\nand another\n", "one.csv")
    with pytest.raises(CorpusFormatError, match=r"one.csv:1: no text column 1 .*no delimiter among ',' ';' "
                                                r"'\\t' '\|' splits the first rows alike: --delimiter names"):
        list(read_csv(ragged))
    long_quote = write(tmp_path, 'label;text\npos;"' + "line\n" * 2000 + '"\nneg;short\n', "long.csv")
    assert [d.label for d in read_csv(long_quote)] == ["pos", "neg"]  # past the lines that choose: still read


@pytest.mark.parametrize("delimiter", [";", ",", "\t", "|"])
def test_read_csv_takes_the_delimiter_a_first_sep_line_declares(tmp_path, delimiter):
    """Excel reads (and some exports write) a first line ``sep=X``: it declares the delimiter and is no row; the rows
    below keep their line numbers."""
    d = delimiter
    table = read_csv(write(tmp_path, f"sep={d}\nlabel{d}text\npos{d}gut\nneg{d}schlecht\n", "export.csv"))
    assert [(d.label, d.line) for d in table] == [("pos", 3), ("neg", 4)] and table.delimiter == delimiter
    assert table.header == ("label", "text")



_SENTENCES = ["a film of rare beauty", "dull and far too long", "the cast is superb here", "I left before the end",
              "a joy from start to finish", "not worth the ticket price"]


def _rows(layout, n: int = 30) -> str:
    """``n`` tab-separated rows of the columns ``layout`` names: source (3 codes), gj04 (one source), label (0/1), mark
    (empty or *: CoLA's original judgement), sentence, id (distinct), name, gender."""
    make = {"source": lambda k: ["gj04", "bc01", "ks08"][k % 3], "gj04": lambda k: "gj04",
            "label": lambda k: str(k % 2), "mark": lambda k: "" if k % 2 else "*",
            "sentence": lambda k: f"{_SENTENCES[k % 6]} {k}",
            "id": lambda k: str(1000 + k), "name": lambda k: f"Name{k}", "gender": lambda k: ["f", "m"][k % 2]}
    return "".join("\t".join(make[column](k) for column in layout) + "\n" for k in range(n))


@pytest.mark.parametrize("layout, n, label, text, by_content", [
    (("gj04", "label", "mark", "sentence"), 30, 1, 3, True),  # GLUE CoLA, grouped by source: one in the first rows
    (("source", "label", "mark", "sentence"), 30, 0, 3, True),  # three sources that repeat can be labels: column 0
    (("label", "sentence", "gj04"), 30, 0, 1, False),  # read right by the defaults: so still
    (("sentence", "label"), 30, 1, 0, True),
    (("label", "sentence"), 30, 0, 1, False),
    (("id", "label", "sentence"), 30, 1, 2, True),
    (("name", "gender"), 30, 1, 0, True),  # no column of words: the one of half as many distinct values or fewer
    (("id", "sentence"), 30, 0, 1, False),  # GLUE SST-2's test file: no value repeats, no label column: the defaults
    (("sentence", "label"), 19, 1, 0, True),  # a column of sentences beside one of single words: however few the rows
    (("sentence", "label"), 2, 1, 0, True),
    (("label", "sentence"), 2, 0, 1, False),
    (("name", "gender"), 19, 0, 1, False),  # too few rows to tell
    (("sentence", "label", "gj04"), 19, 0, 1, False),
])
def test_read_tsv_without_a_header_chooses_the_columns_by_their_contents(tmp_path, layout, n, label, text, by_content):
    """Without a header row or given columns, the text column is the one of clearly the most words and the label
    column 0 if it can be one, else the first that can (CoLA's four columns were read as labels of source codes,
    texts of 0 and 1); given columns win."""
    path = write(tmp_path, _rows(layout, n), "t.tsv")
    table = read_tsv(path)
    documents = list(table)
    assert (table.label_column, table.text_column, table.by_content) == (label, text, by_content)
    assert len(documents) == n and documents[0].label == _rows(layout, 1).rstrip("\n").split("\t")[label]
    given = read_tsv(path, label_column=0, text_column=len(layout) - 1)
    assert (next(given).label, given.by_content) == (_rows(layout, 1).split("\t")[0], False)



def test_a_models_labels_find_the_label_column_of_a_few_rows(tmp_path):
    """Test data is read with its model's labels: the one column all of whose values are among them is the label
    column however few the rows (five CoLA rows are too few to judge by their contents alone)."""
    path = write(tmp_path, _rows(("source", "label", "mark", "sentence"), 5), "t.tsv")
    plain = read_tsv(path)
    assert [d.label for d in plain][:2] == ["gj04", "bc01"] and (plain.label_column, plain.text_column) == (0, 1)
    table = read_tsv(path, labels={"0", "1"})
    assert [d.label for d in table] == ["0", "1", "0", "1", "0"] and (table.label_column, table.text_column) == (1, 3)

@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(2, 5), st.data())
def test_the_columns_by_content_find_a_sentence_and_its_label_anywhere(width, data):
    """Property: a column of sentences (three words or more) and one of a few labels, among columns of ids, in any
    places and any number of rows from CONTENT_MIN_ROWS, are found by their contents."""
    text, label = data.draw(st.permutations(range(width)))[:2]
    n = data.draw(st.integers(CONTENT_MIN_ROWS, 60))
    labels = ["pos", "neg", *data.draw(st.lists(st.sampled_from(["pos", "neg", "neutral", "1", "0"]), min_size=n - 2,
                                                max_size=n - 2))]  # two values at least: a constant is no label
    sentences = data.draw(st.lists(st.lists(st.sampled_from(["good", "bad", "film", "a", "the", "plot"]), min_size=3,
                                            max_size=9).map(" ".join), min_size=n, max_size=n))
    rows = [["id%d_%d" % (j, k) for j in range(width)] for k in range(n)]
    for k in range(n):
        rows[k][text], rows[k][label] = sentences[k], labels[k]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.tsv"
        path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
        table = read_tsv(path)
        assert [(d.text, d.label) for d in table] == list(zip(sentences, labels))
    assert (table.label_column, table.text_column) == (label, text)

def test_read_tsv_and_csv_encodings(tmp_path):
    path = write(tmp_path, b"pos\tcaf\xe9\n")
    assert next(read_tsv(path, encoding="latin-1")).text == "café"
    error = format_error(read_tsv, path)
    assert str(error).startswith(f"{path}:1: invalid UTF-8: byte 0xe9 at position 8 of the line")
    utf16 = write(tmp_path, "text,label\ncafé,pos\nthé,neg\n".encode("utf-16"), "utf16.csv")
    assert rows(read_csv(utf16, encoding="utf-16")) == [("café", "pos", 2), ("thé", "neg", 3)]


@pytest.mark.parametrize(
    "read, text, options, line, message",
    [
        (read_tsv, "pos\tfine\nneg\ttab\tinside\n", {}, 2, "found 3 tab-separated fields, expected 2 as on line 1 "
         "(label in column 0, text in column 1, counted from 0; a TSV field cannot hold a tab)"),
        (read_tsv, "pos\tfine\nmissing-label-and-text\n", {}, 2,
         "found 1 tab-separated fields, expected 2 as on line 1"),
        (read_tsv, "sentence\tlabel\nfine\t1\nshort\n", {}, 3, "found 1 tab-separated fields, expected 2 as on line 1"),
        (read_tsv, "pos\tfine\n\ttext without a label\n", {}, 2, "empty label (expected a label in column 0, counted "
         "from 0)"),
        (read_tsv, "pos\tfine\n \ttext\n", {}, 2, "empty label"),
        (read_csv, "text,label\nfine,pos\nnone, \n", {}, 3, "empty label (expected a label in column 1"),
        (read_tsv, "sentence\tlabel\nfine\t1\n", {"label_column": "class"}, 1, "no label column named 'class' in the "
         "header row (the header row names columns 0 'sentence', 1 'label', counted from 0)"),
        (read_tsv, "pos\tfine\n", {"text_column": 2}, 1, "no text column 2 (the first row has 2 tab-separated fields: "
         "columns 0 to 1, counted from 0)"),
        (read_tsv, "a,b\nc,d\n", {}, 1, "no text column 1 (the first row has 1 tab-separated field: column 0, counted "
         "from 0; a comma-separated file is read as CSV (format csv))"),
        (read_tsv, "label\ttext\nlabel\tfine\n", {}, 2, "label 'label' is also the name of column 0 on line 1, which "
         "was taken for a header row"),
        (read_csv, 'pos,"a"b\n', {}, 1, "badly quoted field"),
        (read_csv, 'pos,fine\nneg,"never closed\nmore\n', {}, 2, "badly quoted field: unexpected end of data"),
    ],
)
def test_read_tsv_and_csv_errors_name_the_file_and_line(tmp_path, read, text, options, line, message):
    path = write(tmp_path, text)
    error = format_error(read, path, **options)
    assert (error.path, error.line) == (str(path), line)
    assert str(error).startswith(f"{path}:{line}: {message}") and "\n" not in str(error)


def test_a_column_named_by_an_option_is_found_without_regard_to_case(tmp_path):
    """``--label-column text`` finds a header's ``Text`` as the header row itself is recognised; an exact name first."""
    table = read_tsv(write(tmp_path, "Text\tLabel\nfine\tpos\n"), label_column="label", text_column="TEXT")
    assert [(d.text, d.label) for d in table] == [("fine", "pos")]
    table = read_tsv(write(tmp_path, "text\tTEXT\tlabel\na\tb\tpos\n", "two.tsv"), text_column="TEXT")
    assert [(d.text, d.label) for d in table] == [("b", "pos")]


def test_read_tsv_option_errors(tmp_path):
    path = write(tmp_path, "text\tlabel\nhi\tgreet\n")
    with pytest.raises(ValueError, match="needs a header row"):
        read_tsv(path, label_column="label", header=False)
    with pytest.raises(ValueError, match="one character"):
        read_csv(path, delimiter="::")
    with pytest.raises(ValueError, match="same column"):
        read_tsv(path, label_column=1, text_column=1)
    with pytest.raises(ValueError, match="index counted from 0"):
        read_tsv(path, text_column=-1)
    with pytest.raises(ValueError, match="header must be"):
        read_tsv(path, header="yes")
    assert str(format_error(read_tsv, path, label_column=1, text_column="label")).startswith(
        f"{path}:1: the label and the text are both column 1")
    with pytest.raises(CorpusNotFoundError, match="missing.tsv"):
        list(read_tsv(tmp_path / "missing.tsv"))
    empty = read_tsv(write(tmp_path, "\n\n", "empty.tsv"))
    assert list(empty) == [] and empty.header is None and empty.label_column is None


# Characters that trip quote-processing and whitespace-stripping readers (no column names: those are tested above).
_AWKWARD = ['"', "'", " ", ",", ";", "\\", "\u00a0", "\u2028", "é", "😀", "a", "b", "\x0b"]
_LABELS = ["pos", "neg", "0", "1", '"quoted"', "a b", "x,y"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.text(st.sampled_from(_AWKWARD), max_size=12), st.sampled_from(_LABELS)),
                min_size=1, max_size=6))
def test_tsv_lines_round_trip_exactly(documents):
    """Property: any texts without tab or line break, written as label<TAB>text lines, read back exactly with
    header=False; with detection too, unless the first row is taken for a header by the rule of read_tsv
    (names only, its label unused below while labels there repeat)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.tsv"
        path.write_text("".join(f"{label}\t{text}\n" for text, label in documents), encoding="utf-8")
        assert [(d.text, d.label) for d in read_tsv(path, header=False)] == documents
        table = read_tsv(path)
        read = [(d.text, d.label) for d in table]
    (text, label), rest = documents[0], [label for _, label in documents[1:]]
    names = (label.strip(), text.strip())  # a header's names are read without the spaces around them
    taken_for_header = (label not in rest and len(set(rest)) < len(rest)
                        and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name) for name in names)
                        and names[0].casefold() != names[1].casefold())
    assert read == (documents[1:] if taken_for_header else documents)
    assert table.header == (names if taken_for_header else None)


# --- read_fasttext -------------------------------------------------------------------------------------


def test_read_fasttext(tmp_path):
    path = write(tmp_path, "__label__pos I loved  it\n__label__neg   Awful.  \n\n__label__neg\n__label__x\tTabbed\n")
    assert [(d.text, d.label, d.line) for d in read_fasttext(path)] == [
        ("I loved  it", "pos", 1), ("Awful.", "neg", 2), ("", "neg", 4), ("Tabbed", "x", 5),
    ]
    latin = write(tmp_path, b"__label__fr caf\xe9\n", "latin.txt")
    assert next(read_fasttext(latin, encoding="latin-1")).text == "café"


@pytest.mark.parametrize(
    "line, message",
    [
        ("no label here", "no label: the line starts with 'no' (expected fastText's '__label__<label> <text>')"),
        ("text __label__late", "no label: the line starts with 'text'"),
        ("__label__a __label__b both", ("2 labels (__label__a __label__b): multi-label input is not supported "
                                        "(expected exactly one __label__ label per line)")),
        ("__label__a text __label__b", "2 labels"),
        ("__label__ text", "empty label (expected '__label__<label>')"),
        ("pos\tgood film", "no label: the line starts with 'pos' (expected fastText's '__label__<label> <text>'; a "
                           "tab-separated file needs --format tsv)"),
        ("pos,good film", "no label: the line starts with 'pos,good' (expected fastText's '__label__<label> <text>'; "
                          "a comma-separated file needs --format csv)"),
    ],
)
def test_read_fasttext_errors(tmp_path, line, message):
    path = write(tmp_path, f"__label__ok fine\n{line}\n")
    assert str(format_error(read_fasttext, path)).startswith(f"{path}:2: {message}")


# --- read_svmlight -------------------------------------------------------------------------------------


def test_read_svmlight(tmp_path):
    path = write(tmp_path, "# a comment line\n+1 1:0.5 3:-2e-1 # trailing\n\n-1 0:1 10:.25\n2\n  7 4:3.\n", "d.svm.gz")
    assert [(d.text, d.label, d.line) for d in read_svmlight(path)] == [
        ({1: 0.5, 3: -0.2}, "1", 2), ({0: 1.0, 10: 0.25}, "-1", 4), ({}, "2", 5), ({4: 3.0}, "7", 6),
    ]


def test_svmlight_labels_that_are_numbers_have_one_spelling(tmp_path):
    """SVMlight writes +1, other tools 1 or 1.0: one class (each spelling was a label of its own, and a test file of
    +1 / -1.0 was refused by a model trained on 1 / -1); a label that is no number stays as written."""
    path = write(tmp_path, "1 2:0.5\n+1 2:1\n1.0 2:2\n-1.0 3:1\n-1 3:2\n0.50 1:1\n1e3 1:2\n007 1:3\nspam 1:4\n")
    assert [d.label for d in read_svmlight(path)] == ["1", "1", "1", "-1", "-1", "0.5", "1000", "7", "spam"]


@pytest.mark.parametrize(
    "line, message",
    [
        ("1 a:0.5", "index 'a' of feature 'a:0.5' is not a non-negative integer (expected index:value with an integer"),
        ("1 -2:0.5", "index '-2' of feature '-2:0.5' is not a non-negative integer"),
        ("1 1.5:2", "index '1.5'"),
        ("1 1:abc", "value 'abc' of feature '1:abc' is not a number (expected index:value with a decimal value"),
        ("1 1:nan", "value 'nan'"),
        ("1 1:", "value ''"),
        ("1 7", "feature '7' has no ':' (expected index:value)"),
        ("1 1:0.5 1:0.25", "index 1 repeated (expected each index once per line)"),
        ("1:0.5 2:1", "no label: the line starts with '1:0.5' (expected 'label index:value ...')"),
        ("1 qid:3 1:0.5", "'qid:3': query ids are not supported"),
    ],
)
def test_read_svmlight_errors(tmp_path, line, message):
    path = write(tmp_path, f"0 1:1\n{line}\n")
    error = format_error(read_svmlight, path)
    assert (error.path, error.line) == (str(path), 2)
    assert str(error).startswith(f"{path}:2: {message}")


def test_line_readers_are_lazy_and_report_missing_files(tmp_path):
    for read in (read_tsv, read_csv, read_fasttext, read_svmlight, read_folders):
        documents = read(tmp_path / "missing.txt")  # nothing opened yet
        with pytest.raises(CorpusNotFoundError, match="missing.txt"):
            next(documents)


# --- NLTK corpora (stand-ins built in tmp_path) -----------------------------------------------------


@pytest.fixture
def nltk_allowed(tmp_path, monkeypatch):
    """Let NLTK readers open tmp_path (recent NLTK opens only files below nltk.data.path)."""
    import nltk.data

    monkeypatch.setattr(nltk.data, "path", [*nltk.data.path, str(tmp_path)])
    return tmp_path


def test_read_nltk_categorized_on_a_reader(tmp_path, nltk_allowed):
    from nltk.corpus.reader import CategorizedPlaintextCorpusReader

    make_tree(tmp_path, {"b.txt": b"second", "a.txt": b"first", "c.txt": b"third", "cats.txt": b"a.txt x\nb.txt y\nc.txt x y\n"})
    reader = CategorizedPlaintextCorpusReader(str(tmp_path), r"[abc]\.txt", cat_file="cats.txt")
    documents = read_nltk_categorized(reader, fileids=["b.txt", "a.txt"])
    assert [(d.text, d.label, d.source) for d in documents] == [
        ("first", "x", str(tmp_path / "a.txt")), ("second", "y", str(tmp_path / "b.txt")),
    ]
    error = format_error(read_nltk_categorized, reader)
    assert str(error) == f"{tmp_path / 'c.txt'}: 2 categories (x, y) (expected exactly one category per document)"
    with pytest.raises(UnknownNameError, match="'d.txt'; accepted: a.txt, b.txt, c.txt"):
        read_nltk_categorized(reader, fileids=["d.txt"])


def test_read_nltk_categorized_rejects_other_corpora(tmp_path, nltk_allowed):
    from nltk.corpus.reader import PlaintextCorpusReader

    with pytest.raises(TypeError, match="not a categorized corpus"):
        read_nltk_categorized(PlaintextCorpusReader(str(tmp_path), []))
    with pytest.raises(UnknownNameError, match="unknown NLTK corpus 'no_such_corpus'; accepted: .*movie_reviews"):
        read_nltk_categorized("no_such_corpus")


QC = b"DESC:manner How did serfdom develop ?\nLOC:city Which city has a sister\xf0city ?\n\nENTY:cremat  What films ?\n"


def test_read_qc_from_a_file_or_a_reader(tmp_path, nltk_allowed):
    from nltk.corpus.reader import StringCategoryCorpusReader

    path = write(tmp_path, QC, "train.txt")
    coarse = list(read_qc(path))
    assert [(d.text, d.label, d.line) for d in coarse] == [
        ("How did serfdom develop ?", "DESC", 1), ("Which city has a sisterđcity ?", "LOC", 2), ("What films ?", "ENTY", 4),
    ]  # ISO-8859-2 by default, as NLTK reads qc
    assert [d.label for d in read_qc(str(path), granularity="fine")] == ["DESC:manner", "LOC:city", "ENTY:cremat"]
    reader = StringCategoryCorpusReader(str(tmp_path), ["train.txt"], encoding="latin-1")
    assert [d.text for d in read_qc(reader, fileid="train.txt")][1] == "Which city has a sisterðcity ?"
    with pytest.raises(ValueError, match="unknown granularity 'medium'; accepted: coarse, fine"):
        read_qc(path, granularity="medium")
    with pytest.raises(UnknownNameError, match="accepted: train.txt"):
        read_qc(reader, fileid="test.txt")


@pytest.mark.parametrize(
    "line, message",
    [("DESC How ?", "label 'DESC' is not COARSE:fine (expected 'COARSE:fine question')"),
     (":manner How ?", "label ':manner' is not COARSE:fine"),
     ("DESC:manner", "no question after the label (expected 'COARSE:fine question')")],
)
def test_read_qc_errors(tmp_path, line, message):
    path = write(tmp_path, f"DESC:def What is it ?\n{line}\n", "qc.txt")
    assert str(format_error(read_qc, path)).startswith(f"{path}:2: {message}")


def test_read_ppattach_on_a_reader(tmp_path, nltk_allowed):
    from nltk.corpus.reader import PPAttachmentCorpusReader

    make_tree(tmp_path, {"training": b"0 join board as director V\n1 is chairman of N.V. N\n",
                         "bad": b"0 join board as director V\n1 is chairman of N\n2 a b c d X\n"})
    reader = PPAttachmentCorpusReader(str(tmp_path), ["training", "bad"])
    assert [(d.text, d.label, d.line) for d in read_ppattach(corpus=reader)] == [
        (("join", "board", "as", "director"), "V", 1), (("is", "chairman", "of", "N.V."), "N", 2),
    ]
    error = format_error(read_ppattach, "bad", corpus=reader)
    assert str(error) == (f"{tmp_path / 'bad'}:2: expected 6 whitespace-separated fields (sentence id, verb, noun1, "
                          "preposition, noun2, attachment), found 5")
    reader = PPAttachmentCorpusReader(str(tmp_path), ["bad"])
    make_tree(tmp_path, {"bad": b"2 a b c d X\n"})
    assert str(format_error(read_ppattach, "bad", corpus=reader)) == f"{tmp_path / 'bad'}:1: attachment 'X' (expected V or N)"


def test_read_names_on_a_reader(tmp_path, nltk_allowed):
    from nltk.corpus.reader import WordListCorpusReader

    make_tree(tmp_path, {"male.txt": b"Aamir\nAaron\n", "female.txt": b"Abbey\nGale \n\nJo Ann\n"})
    reader = WordListCorpusReader(str(tmp_path), ["male.txt", "female.txt"])
    assert [(d.text, d.label, d.line) for d in read_names(corpus=reader)] == [
        ("Aamir", "male", 1), ("Aaron", "male", 2), ("Abbey", "female", 1), ("Gale", "female", 2), ("Jo Ann", "female", 4),
    ]


def test_nltk_line_files_report_bad_bytes_with_their_line(tmp_path, nltk_allowed):
    from nltk.corpus.reader import WordListCorpusReader

    make_tree(tmp_path, {"male.txt": b"Aamir\nJos\xe9\n", "female.txt": b""})
    reader = WordListCorpusReader(str(tmp_path), ["male.txt", "female.txt"], encoding="ascii")
    error = format_error(read_names, corpus=reader)
    assert str(error).startswith(f"{tmp_path / 'male.txt'}:2: invalid ascii: byte 0xe9 at position 4 of the line")


# --- The real corpora --------------------------------------------------------------------------------

NEWSGROUPS = [
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware",
    "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey",
    "sci.crypt", "sci.electronics", "sci.med", "sci.space", "soc.religion.christian", "talk.politics.guns",
    "talk.politics.mideast", "talk.politics.misc", "talk.religion.misc",
]


@pytest.fixture(scope="session")
def news(news_archive) -> dict[str, list[Document]]:
    """Both splits of 20 Newsgroups, read once per session through the catalog (about 3 s)."""
    return {split: load_documents("20news-bydate", split, download=False) for split in ("train", "test")}


@pytest.mark.corpus
def test_20news_splits(news, news_archive):
    assert {split: len(documents) for split, documents in news.items()} == {"train": 11314, "test": 7532}
    for split, documents in news.items():
        assert sorted({d.label for d in documents}) == NEWSGROUPS
        first = documents[0]
        assert first.source == f"{news_archive}:20news-bydate-{split}/alt.atheism/{'49960' if split == 'train' else '53068'}"
        assert first.label == "alt.atheism" and first.text.startswith("From: ")
        assert [d.source for d in documents] == sorted(d.source for d in documents)  # the archive is sorted per split
    assert Counter(d.label for d in news["train"])["soc.religion.christian"] == 599
    assert min(Counter(d.label for d in news["train"]).values()) == 377  # talk.religion.misc


@pytest.mark.corpus
def test_20news_strip_matches_scikit_learn(news):
    twenty = pytest.importorskip("sklearn.datasets._twenty_newsgroups")
    for document in news["train"] + news["test"]:
        text = document.text
        assert strip_usenet(text, "headers") == twenty.strip_newsgroup_header(text)
        assert strip_usenet(text, "footers") == twenty.strip_newsgroup_footer(text)
        assert strip_usenet(text, "quotes") == twenty.strip_newsgroup_quoting(text)


@pytest.mark.corpus
def test_20news_is_not_utf8(news_archive):
    error = format_error(read_folders, news_archive, subset="20news-bydate-train")  # latin-1 is needed
    assert (error.path, error.line) == (f"{news_archive}:20news-bydate-train/alt.atheism/49960", 300)


@pytest.mark.corpus
def test_movie_reviews(nltk_data_dir):
    import nltk

    documents = list(read_nltk_categorized("movie_reviews"))
    assert len(documents) == 2000 and Counter(d.label for d in documents) == {"neg": 1000, "pos": 1000}
    assert documents[0].source.endswith("movie_reviews.zip:movie_reviews/neg/cv000_29416.txt")
    assert documents[-1].text == nltk.corpus.movie_reviews.raw("pos/cv999_13106.txt")
    assert [(d.text, d.label) for d in load_documents("movie_reviews", download=False)] == [
        (d.text, d.label) for d in documents
    ]


@pytest.mark.corpus
@pytest.mark.parametrize("split, size, fine_labels", [("train", 5452, 50), ("test", 500, 42)])
def test_qc(nltk_data_dir, split, size, fine_labels):
    import nltk

    coarse = load_documents("qc", split, download=False)
    fine = load_documents("qc", split, granularity="fine", download=False)
    assert len(coarse) == len(fine) == size
    assert {d.label for d in coarse} == {"ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"}
    assert len({d.label for d in fine}) == fine_labels
    assert [(d.label, d.text) for d in fine] == [tuple(t) for t in nltk.corpus.qc.tuples(f"{split}.txt")]
    assert [(d.text, d.label) for d in read_qc(fileid=f"{split}.txt")] == [(d.text, d.label) for d in coarse]


@pytest.mark.corpus
@pytest.mark.parametrize("split, fileid, size", [("train", "training", 20801), ("dev", "devset", 4039), ("test", "test", 3097)])
def test_ppattach(nltk_data_dir, split, fileid, size):
    import nltk

    documents = load_documents("ppattach", split, download=False)
    assert len(documents) == size and {d.label for d in documents} == {"N", "V"}
    expected = [((a.verb, a.noun1, a.prep, a.noun2), a.attachment) for a in nltk.corpus.ppattach.attachments(fileid)]
    assert [(d.text, d.label) for d in documents] == expected
    assert [d.text for d in read_ppattach(fileid)] == [d.text for d in documents]


@pytest.mark.corpus
def test_names(nltk_data_dir):
    documents = list(read_names())
    assert len(documents) == 7944 and Counter(d.label for d in documents) == {"male": 2943, "female": 5001}
    assert (documents[0].text, documents[0].label, documents[-1].text) == ("Aamir", "male", "Zuzana")
    labels: dict[str, set[str]] = {}
    for document in documents:
        labels.setdefault(document.text, set()).add(document.label)
    assert sum(len(both) == 2 for both in labels.values()) == 365  # names in both lists
    assert [(d.text, d.label) for d in load_documents("names", "all", download=False)] == [
        (d.text, d.label) for d in documents
    ]
