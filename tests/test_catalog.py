"""Tests of structlin.catalog: the default catalog, schema errors, where files are found and loading
splits of the real corpora (downloads and the checking of local copies: test_downloads.py)."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import zipfile

import nltk.data
import pytest

from structlin import catalog as catalog_module
from structlin.catalog import Catalog, CorpusKindError, is_corpus_name, load_documents, load_split, resolve
from structlin.errors import CorpusFormatError, CorpusNotFoundError, UnknownNameError

CONTENT = b"1\tHello\thello\tINTJ\tUH\t_\t0\troot\t_\t_\n\n" * 1000
SHA256 = hashlib.sha256(CONTENT).hexdigest()
UNIVERSAL = {"ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRT", "PRON", "VERB", ".", "X"}


def write_catalog(tmp_path, url="https://example.org/tiny.conllu", sha256=SHA256, body=None) -> Catalog:
    """A one-corpus catalog ("tiny", one CoNLL-U file at tiny/tiny.conllu) in tmp_path."""
    body = body or (
        '[corpus.tiny]\nformat = "conllu"\ndescription = "a test"\nlicence = "none"\ncolumn = "upos"\n'
        f'[corpus.tiny.splits.train]\npath = "tiny/tiny.conllu"\nurl = "{url}"\nsha256 = "{sha256}"\n'
    )
    path = tmp_path / "catalog.toml"
    path.write_text(body, encoding="utf-8")
    return Catalog.load(path)


def digest(path) -> str:
    """The SHA-256 of the file at ``path`` (an archive put in a data directory must have the catalog's)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No STRUCTLIN_DATA, an empty NLTK path, and the cache in tmp_path/cache."""
    monkeypatch.delenv("STRUCTLIN_DATA", raising=False)
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(nltk.data, "path", [])
    return tmp_path / "cache"


# -- the default catalog and the schema -----------------------------------------------------------


def test_default_catalog_lists_corpora_with_checksums_and_https_urls():
    catalog = Catalog.load()
    assert {"ud-english-ewt", "treebank", "conll2000", "brown"} <= set(catalog.names())
    for name in catalog.names():
        entry = catalog[name]
        if entry.kind != "tagged":  # document corpora: test_default_catalog_document_corpora
            continue
        assert entry.format in ("conllu", "nltk") and entry.description and entry.licence
        assert {"train", "dev", "test"} <= set(entry.splits)
        for split in entry.splits.values():
            assert re.fullmatch(r"[0-9a-f]{64}", split.sha256)
            assert split.url.startswith("https://")
    assert catalog["ud-english-ewt"].column == "upos"
    release = "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/r2.16"  # ../shared's, docs/'
    for name, split in catalog["ud-english-ewt"].splits.items():
        assert split.url == f"{release}/en_ewt-ud-{name}.conllu"
    assert catalog["treebank"].splits["dev"].fraction == (0.8, 0.9)
    assert catalog["conll2000"].splits["dev"].fileids == ("train.txt",)


def test_unknown_corpus_and_split_list_the_accepted_names():
    catalog = Catalog.load()
    with pytest.raises(UnknownNameError) as err:
        catalog["ud-english"]
    assert all(name in str(err.value) for name in catalog.names())
    with pytest.raises(UnknownNameError, match="dev, test, train"):
        catalog["ud-english-ewt"].split("validation")
    with pytest.raises(UnknownNameError):  # one file per split: a split must be named
        catalog["ud-english-ewt"].split(None)
    assert catalog["brown"].split(None).path == "corpora/brown.zip"


def test_bad_toml_is_reported_with_its_line(tmp_path):
    with pytest.raises(CorpusFormatError) as err:
        write_catalog(tmp_path, body='[corpus.tiny]\nformat = "conllu"\ndescription = oops\n')
    assert err.value.line == 3 and str(err.value).startswith(f"{tmp_path / 'catalog.toml'}:3:")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[corpus.tiny]\nformat = "conllu"\n', "'splits' must be a table"),
        ('[corpus.tiny]\nformat = "conllu"\nsplits.train = { path = "a", url = "b" }\n', "missing 'sha256'"),
        ('[corpus.tiny]\nformat = "tsv"\nsplits.train = {}\n', "format 'tsv'"),
        ('[corpus.tiny]\nformat = "conllu"\nsha265 = "x"\nsplits.train = {}\n', "unknown key 'sha265'"),
        ('[corpus.tiny]\nformat = "conllu"\nsplits.train = { path = "a", url = "b", sha256 = "0" }\n', "64"),
        ('[corpus.tiny]\nformat = "conllu"\npath = "a"\nurl = "b"\nsha256 = "%s"\nlocal_sha256 = "%s"\n'
         'splits.train = {}\n' % (SHA256, SHA256), "'local_sha256' must be a list of strings"),
        ('[corpus.tiny]\nformat = "conllu"\nsplits.train = { path = "a", url = "b", sha256 = "%s", '
         'local_sha256 = ["0"] }\n' % SHA256, "'local_sha256' must be a list of 64 lower-case hex digits each"),
        ('[corpus.tiny]\nformat = "nltk"\npath = "a"\nurl = "b"\nsha256 = "%s"\nsplits.train = {}\n' % SHA256,
         "'nltk' must be a table"),
    ],
)
def test_schema_errors_name_the_corpus_and_key(tmp_path, body, message):
    with pytest.raises(CorpusFormatError, match=message) as err:
        write_catalog(tmp_path, body=body)
    assert "corpus 'tiny'" in str(err.value) and err.value.line is None


def test_names_and_paths_are_told_apart(tmp_path, monkeypatch):
    catalog = Catalog.load()
    monkeypatch.chdir(tmp_path)
    assert is_corpus_name(catalog, "ud-english-ewt")
    assert is_corpus_name(catalog, "ud-englsh-ewt")  # a typo: "unknown corpus", not "no such file"
    assert not is_corpus_name(catalog, "train.conllu")
    assert not is_corpus_name(catalog, "data/train")
    (tmp_path / "brown").write_text("")
    assert not is_corpus_name(catalog, "brown")  # an existing file wins


# -- where files are found ---------------------------------------------------------------------


def test_data_dir_beats_nltk_path_beats_cache(tmp_path, isolated):
    entry = write_catalog(tmp_path)["tiny"]
    dirs = [tmp_path / "data", tmp_path / "nltk", isolated]
    nltk.data.path.append(str(dirs[1]))
    for directory in dirs:
        (directory / "tiny").mkdir(parents=True)
        (directory / "tiny" / "tiny.conllu").write_bytes(CONTENT)
    for directory in dirs:
        assert resolve(entry, "train", data_dir=dirs[0], download=False) == directory / "tiny" / "tiny.conllu"
        (directory / "tiny" / "tiny.conllu").unlink()
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(entry, "train", data_dir=dirs[0], download=False)
    message = str(err.value)
    assert "\n" not in message and "https://example.org/tiny.conllu" in message
    assert all(str(directory) in message for directory in dirs)


def test_structlin_data_is_honoured_and_overridden_by_data_dir(tmp_path, isolated, monkeypatch):
    entry = write_catalog(tmp_path)["tiny"]
    for name in ("env", "arg"):
        (tmp_path / name / "tiny").mkdir(parents=True)
        (tmp_path / name / "tiny" / "tiny.conllu").write_bytes(CONTENT)
    monkeypatch.setenv("STRUCTLIN_DATA", str(tmp_path / "env"))
    assert resolve(entry, "train") == tmp_path / "env" / "tiny" / "tiny.conllu"
    assert resolve(entry, "train", data_dir=tmp_path / "arg") == tmp_path / "arg" / "tiny" / "tiny.conllu"


def test_cache_location_follows_the_environment(tmp_path, isolated, monkeypatch):
    entry = write_catalog(tmp_path)["tiny"]
    monkeypatch.delenv("STRUCTLIN_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(CorpusNotFoundError, match=re.escape(str(tmp_path / "xdg" / "structlin"))):
        resolve(entry, "train", download=False)
    with pytest.raises(CorpusNotFoundError, match=re.escape(str(tmp_path / "mine"))):
        resolve(entry, "train", cache_dir=tmp_path / "mine", download=False)


# -- NLTK corpora: archives, unzipped folders, fraction splits ----------------------------------------

TAGGED = "".join(f"w{i}/N v{i}/V ./.\n" for i in range(10))  # ten one-line sentences


def tagged_catalog(tmp_path, sha256) -> Catalog:
    """A catalog with "mini", a TaggedCorpusReader corpus of 10 sentences split 80/10/10."""
    return write_catalog(
        tmp_path,
        body=(
            '[corpus.mini]\nformat = "nltk"\npath = "corpora/mini.zip"\nurl = "https://example.org/mini.zip"\n'
            f'sha256 = "{sha256}"\n'
            'splits.train = { fraction = [0.0, 0.8] }\nsplits.dev = { fraction = [0.8, 0.9] }\n'
            'splits.test = { fraction = [0.9, 1.0] }\n'
            '[corpus.mini.nltk]\nreader = "TaggedCorpusReader"\nfileids = \'c.*\'\ntagset = "en-ptb"\n'
        ),
    )


@pytest.mark.parametrize("layout", ["zip", "folder"])
def test_nltk_corpus_from_archive_or_folder_split_by_fraction(tmp_path, isolated, layout):
    data = tmp_path / "data" / "corpora"
    data.mkdir(parents=True)
    if layout == "zip":
        with zipfile.ZipFile(data / "mini.zip", "w") as archive:
            archive.writestr("mini/c01", TAGGED)
    else:
        (data / "mini").mkdir()
        (data / "mini" / "c01").write_text(TAGGED)
    entry = tagged_catalog(tmp_path, digest(data / "mini.zip") if layout == "zip" else "0" * 64)["mini"]
    assert resolve(entry, data_dir=tmp_path / "data").name == ("mini.zip" if layout == "zip" else "mini")
    parts = {split: load_split(entry, split, data_dir=tmp_path / "data") for split in ("train", "dev", "test")}
    assert [len(parts[s]) for s in ("train", "dev", "test")] == [8, 1, 1]
    assert parts["train"][0].words == ["w0", "v0", "."] and parts["train"][0].tags == ["N", "V", "."]
    assert parts["test"][0].words[0] == "w9"


# -- the real corpora (skipped when ../shared is absent) --------------------------------------------


@pytest.mark.corpus
def test_ewt_dev(ewt_dir):
    dev = load_split("ud-english-ewt", "dev", download=False)
    assert len(dev) == 2001
    assert sum(len(s.words) for s in dev) == 25147
    assert "PROPN" in {tag for s in dev for tag in s.tags}


@pytest.mark.corpus
def test_treebank_splits_cover_the_corpus_in_order(nltk_data_dir):
    parts = [load_split("treebank", split, download=False) for split in ("train", "dev", "test")]
    assert sum(map(len, parts)) == 3914
    assert [len(p) for p in parts] == [3131, 392, 391]
    assert parts[0][0].words[:2] == ["Pierre", "Vinken"]


@pytest.mark.corpus
def test_conll2000_columns(nltk_data_dir):
    test = load_split("conll2000", "test", download=False)
    assert len(test) == 2012
    assert len(load_split("conll2000", "train", download=False)) + len(load_split("conll2000", "dev", download=False)) == 8936
    first = test[0]
    assert first.columns[0] == ["Rockwell", "NNP", "B-NP"] and first.tags[0] == "NNP"
    chunks = load_split("conll2000", "test", column="chunk", download=False)[0]
    assert chunks.words == first.words and chunks.tags[0] == "B-NP"
    universal = load_split("conll2000", "test", column="universal", download=False)[0]
    assert set(universal.tags) <= UNIVERSAL
    with pytest.raises(UnknownNameError, match="chunk, pos, universal, word"):
        load_split("conll2000", "test", column="ner", download=False)


@pytest.mark.corpus
def test_brown_universal_tags(nltk_data_dir):
    test = load_split("brown", "test", column="universal", download=False)
    assert len(test) == 57340 - round(0.9 * 57340)
    assert {tag for s in test for tag in s.tags} <= UNIVERSAL


# -- document corpora (kind = "documents"): schema, load_documents ----------------------------------------


def test_default_catalog_document_corpora():
    catalog = Catalog.load()
    documents = {name for name in catalog.names() if catalog[name].kind == "documents"}
    assert documents == {"20news-bydate", "movie_reviews", "qc", "ppattach", "names"}
    assert {catalog[name].kind for name in catalog.names()} - {"documents"} == {"tagged"}
    splits = {name: sorted(catalog[name].splits) for name in documents}
    assert splits == {"20news-bydate": ["test", "train"], "movie_reviews": ["all"], "qc": ["test", "train"],
                      "ppattach": ["dev", "test", "train"], "names": ["all"]}
    for name in documents:
        entry = catalog[name]
        assert entry.description and entry.licence and entry.column is None
        for split in entry.splits.values():
            assert re.fullmatch(r"[0-9a-f]{64}", split.sha256)
        if entry.format == "nltk":
            assert entry.nltk.documents in catalog_module.DOCUMENT_READERS
            assert split.url == f"https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/{name}.zip"
            assert split.path == f"corpora/{name}.zip"
    news = catalog["20news-bydate"]
    assert (news.format, news.encoding, news.licence) == ("folders", "latin-1", "as distributed by its authors for research")
    train = news.split("train")  # the upstream archive as scikit-learn fetches it; the ../shared re-pack
    assert (train.url, train.sha256) == ("https://ndownloader.figshare.com/files/5975967",
                                         "8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610")
    assert train.local_sha256 == ("9f82a4a02c69b694ff61ffa2178454e660ca1a1c7df55fcec20202dc2e3135b2",)
    assert [news.split(s).subset for s in ("train", "test")] == ["20news-bydate-train", "20news-bydate-test"]
    assert catalog["qc"].splits["test"].fileids == ("test.txt",)
    assert catalog["ppattach"].splits["dev"].fileids == ("devset",)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('kind = "document"\nformat = "nltk"\n', "kind 'document' is not one of tagged, documents"),
        ('format = "folders"\n', "format 'folders' is for kind documents"),
        ('kind = "documents"\nformat = "conllu"\n', "format 'conllu' is for kind tagged"),
        ('format = "conllu"\nencoding = "latin-1"\n', "'encoding' and a split's 'subset' are only for format 'folders'"),
        ('kind = "documents"\nformat = "folders"\nencoding = "latin-42"\n', "unknown encoding 'latin-42'"),
        ('kind = "documents"\nformat = "folders"\ncolumn = "upos"\n', "'column' is only for tagged corpora"),
        ('kind = "documents"\nformat = "nltk"\nnltk = { reader = "X", fileids = "a" }\n',
         "nltk: missing 'documents' one of categorized, qc, ppattach, names"),
        ('kind = "documents"\nformat = "nltk"\nnltk = { reader = "X", fileids = "a", documents = "tweets" }\n',
         "'documents' 'tweets' is not one of categorized"),
        ('format = "nltk"\nnltk = { reader = "X", fileids = "a", documents = "qc" }\n',
         "'documents' is only for kind 'documents'"),
    ],
)
def test_document_schema_errors(tmp_path, body, message):
    files = f'path = "a"\nurl = "b"\nsha256 = "{SHA256}"\nsplits.train = {{}}\n'
    with pytest.raises(CorpusFormatError, match=re.escape(message)) as err:
        write_catalog(tmp_path, body="[corpus.tiny]\n" + body + files)
    assert "corpus 'tiny'" in str(err.value)
    with pytest.raises(CorpusFormatError, match="'subset' are only for format 'folders'"):
        write_catalog(tmp_path, body='[corpus.tiny]\nformat = "conllu"\n' + files.replace("{}", '{ subset = "x" }'))


NEWS = {  # a tiny 20news: posts in latin-1, train/test subsets
    "news-train/rec.misc/1": b"Subject: hi\n\nCaf\xe9?\n> quoted\n",
    "news-train/sci.misc/2": b"Subject: yo\n\nScience.\n",
    "news-test/sci.misc/3": b"Subject: ok\n\nTest post.\n-- \nsig\n",
}


def folders_catalog(tmp_path, layout="archive") -> tuple[Catalog, object]:
    """A catalog with "news" (format folders, train/test subsets) and its data directory."""
    data = tmp_path / "data"
    (data / "news").mkdir(parents=True)
    if layout == "archive":
        with tarfile.open(data / "news" / "news.tar.gz", "w:gz") as tar:
            for name, content in NEWS.items():
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    else:  # unpacked beside where the archive would be
        for name, content in NEWS.items():
            (data / "news" / "news" / name).parent.mkdir(parents=True, exist_ok=True)
            (data / "news" / "news" / name).write_bytes(content)
    sha256 = digest(data / "news" / "news.tar.gz") if layout == "archive" else SHA256
    catalog = write_catalog(
        tmp_path,
        body=(
            '[corpus.news]\nkind = "documents"\nformat = "folders"\nencoding = "latin-1"\npath = "news/news.tar.gz"\n'
            f'url = "https://example.org/news.tar.gz"\nsha256 = "{sha256}"\n'
            'splits.train = { subset = "news-train" }\nsplits.test = { subset = "news-test" }\n'
            'splits.half = { subset = "news-train", fraction = [0.0, 0.5] }\n'
        ),
    )
    return catalog, data


@pytest.mark.parametrize("layout", ["archive", "folder"])
def test_load_documents_from_a_folders_corpus(tmp_path, isolated, layout):
    catalog, data = folders_catalog(tmp_path, layout)
    train = load_documents("news", "train", catalog=catalog, data_dir=data)
    assert [(d.text, d.label) for d in train] == [("Subject: hi\n\nCafé?\n> quoted\n", "rec.misc"),
                                                  ("Subject: yo\n\nScience.\n", "sci.misc")]
    where = f"{data}/news/news.tar.gz:" if layout == "archive" else f"{data}/news/news/"
    assert train[0].source == f"{where}news-train/rec.misc/1"
    test = load_documents(catalog["news"], "test", data_dir=data, strip=("headers", "footers", "quotes"))
    assert [(d.text, d.label) for d in test] == [("Test post.", "sci.misc")]
    assert [d.text for d in load_documents("news", "train", catalog=catalog, data_dir=data, strip="quotes")][0] == (
        "Subject: hi\n\nCafé?\n")
    assert len(load_documents("news", "half", catalog=catalog, data_dir=data)) == 1


def test_load_documents_errors(tmp_path, isolated):
    catalog, data = folders_catalog(tmp_path)
    with pytest.raises(TypeError, match=r"unexpected option 'granularity' for corpus 'news' \(accepted: strip, and"):
        load_documents("news", "train", catalog=catalog, data_dir=data, granularity="fine")
    with pytest.raises(ValueError, match="unknown strip value 'sig'"):
        load_documents("news", "train", catalog=catalog, data_dir=data, strip="sig")
    with pytest.raises(UnknownNameError, match="corpus 'news' has a file per split: name one .*; accepted: half, test, "
                                               "train"):
        load_documents("news", None, catalog=catalog, data_dir=data)
    with pytest.raises(CorpusKindError, match=r"corpus 'news' holds labelled documents, not tagged sentences: it trains "
                                              r"a classifier \(structlin train classifier\), and Python reads it with "
                                              "load_documents"):
        load_split("news", "train", catalog=catalog, data_dir=data)
    with pytest.raises(CorpusNotFoundError, match="https://example.org/news.tar.gz"):
        load_documents("news", "train", catalog=catalog, data_dir=tmp_path / "empty", download=False)
    (tmp_path / "tagged").mkdir()
    tagged = write_catalog(tmp_path / "tagged")
    with pytest.raises(CorpusKindError, match=r"corpus 'tiny' holds tagged sentences, not labelled documents: it trains a "
                                              r"tagger \(structlin train tagger\), and Python reads it with load_split"):
        load_documents("tiny", "train", catalog=tagged)
    with pytest.raises(CorpusKindError):
        load_documents("treebank", "train")


def test_load_documents_from_an_nltk_archive(tmp_path, isolated):
    data = tmp_path / "data" / "corpora"
    data.mkdir(parents=True)
    with zipfile.ZipFile(data / "miniqc.zip", "w") as archive:
        archive.writestr("miniqc/train.txt", b"DESC:manner How ?\nLOC:city Where ?\n")
        archive.writestr("miniqc/test.txt", b"NUM:date When ?\n")
    catalog = write_catalog(
        tmp_path,
        body=(
            '[corpus.miniqc]\nkind = "documents"\nformat = "nltk"\npath = "corpora/miniqc.zip"\n'
            f'url = "https://example.org/miniqc.zip"\nsha256 = "{digest(data / "miniqc.zip")}"\n'
            'splits.train = { fileids = ["train.txt"] }\nsplits.all = {}\n'
            '[corpus.miniqc.nltk]\nreader = "StringCategoryCorpusReader"\ndocuments = "qc"\n'
            'fileids = ["train.txt", "test.txt"]\noptions = { encoding = "ISO-8859-2" }\n'
        ),
    )
    train = load_documents("miniqc", "train", catalog=catalog, data_dir=tmp_path / "data", granularity="fine")
    assert [(d.text, d.label, d.line) for d in train] == [("How ?", "DESC:manner", 1), ("Where ?", "LOC:city", 2)]
    assert train[0].source == f"{data / 'miniqc.zip'}:miniqc/train.txt"
    every = load_documents("miniqc", "all", catalog=catalog, data_dir=tmp_path / "data")
    assert [d.label for d in every] == ["DESC", "LOC", "NUM"]
    assert nltk.data.path == []  # the archive was allowed only meanwhile
