"""End-to-end tests of corpus downloads and local copies (structlin.catalog.resolve) against a real HTTP
server on 127.0.0.1: what lands in the cache, the progress bar, one-line errors that leave no file
behind, and which copies of a corpus in STRUCTLIN_DATA are accepted (the catalog's local-copy rule)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import nltk.data
import pytest

from structlin import catalog as catalog_module
from structlin.catalog import Catalog, load_documents, resolve
from structlin.errors import ChecksumError, CorpusNotFoundError, LocalCopyError, StructlinError

from archives import tar_bytes

POSTS = {"news-train/sci.misc/1": b"Subject: hi\n\nScience.\n", "news-train/rec.misc/2": b"Subject: yo\n\nCars.\n"}


def tar_gz(mtime: int) -> bytes:
    """POSTS as a .tar.gz whose gzip header carries ``mtime``: the same data in other bytes per mtime."""
    return gzip.compress(tar_bytes(POSTS), mtime=mtime)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


UPSTREAM = tar_gz(mtime=1_000_000_000)  # what the server serves
REPACK = tar_gz(mtime=0)  # a re-compressed copy of it
assert UPSTREAM != REPACK


def news(tmp_path, url: str, checksum: str = sha256(UPSTREAM), local: tuple[str, ...] = ()):
    """The catalog entry of "news", a folders corpus at news/news.tar.gz downloaded from ``url``."""
    (tmp_path / "catalog.toml").write_text(
        '[corpus.news]\nkind = "documents"\nformat = "folders"\ndescription = "a test"\nlicence = "none"\n'
        f'path = "news/news.tar.gz"\nurl = "{url}"\nsha256 = "{checksum}"\n'
        f"local_sha256 = [{', '.join(f'{h!r}' for h in local)}]\n"
        'splits.train = { subset = "news-train" }\n',
        encoding="utf-8",
    )
    return Catalog.load(tmp_path / "catalog.toml")["news"]


def files_under(directory) -> list[str]:
    """Every file below ``directory``, hidden temporary files included."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def one_line(err: pytest.ExceptionInfo) -> str:
    """The error's message, which must be one line (as the command line prints it)."""
    message = str(err.value)
    assert isinstance(err.value, StructlinError) and "\n" not in message
    return message


@pytest.fixture
def env(monkeypatch, tmp_path):
    """An empty STRUCTLIN_DATA (tmp_path/data), the cache in tmp_path/cache, an empty NLTK path."""
    dirs = SimpleNamespace(data=tmp_path / "data", cache=tmp_path / "cache")
    dirs.data.mkdir()
    monkeypatch.setenv("STRUCTLIN_DATA", str(dirs.data))
    monkeypatch.setenv("STRUCTLIN_CACHE", str(dirs.cache))
    monkeypatch.setattr(nltk.data, "path", [])
    return dirs


class Handler(SimpleHTTPRequestHandler):
    """Serves a directory; ``/cut`` announces twice the bytes it sends, then closes the connection."""

    def do_GET(self):
        self.server.requests.append(self.path)
        if self.path != "/cut":
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Length", str(2 * len(UPSTREAM)))
        self.end_headers()
        self.wfile.write(UPSTREAM)
        self.close_connection = True

    def log_message(self, *args):
        """Quiet."""


@pytest.fixture
def server(tmp_path, monkeypatch):
    """An HTTP server on 127.0.0.1 (port 0) serving UPSTREAM as /news.tar.gz; ``.requests`` logs paths."""
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    www = tmp_path / "www"
    www.mkdir()
    (www / "news.tar.gz").write_bytes(UPSTREAM)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(www)))
    httpd.requests = []
    httpd.url = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


# -- downloads --------------------------------------------------------------------------------------


def test_download_lands_in_the_cache_once(tmp_path, env, server):
    entry = news(tmp_path, f"{server.url}/news.tar.gz")
    path = resolve(entry, "train", progress=False)
    assert path == env.cache / "news" / "news.tar.gz" and path.read_bytes() == UPSTREAM
    assert resolve(entry, "train") == path
    assert [d.label for d in load_documents(entry, "train")] == ["rec.misc", "sci.misc"]
    assert server.requests == ["/news.tar.gz"]
    assert files_under(env.cache) == ["news/news.tar.gz"] and files_under(env.data) == []


@pytest.mark.parametrize("progress", [True, False])
def test_progress_bar_only_when_asked(tmp_path, env, server, capsys, progress):
    resolve(news(tmp_path, f"{server.url}/news.tar.gz"), "train", progress=progress)
    err = capsys.readouterr().err
    if progress:
        assert "news.tar.gz" in err and "100%" in err
    else:
        assert err == ""


def test_checksum_mismatch_leaves_nothing(tmp_path, env, server):
    entry = news(tmp_path, f"{server.url}/news.tar.gz", checksum="0" * 64, local=(sha256(UPSTREAM),))
    with pytest.raises(ChecksumError) as err:  # local_sha256 is never accepted for a download
        resolve(entry, "train")
    message = one_line(err)
    assert all(part in message for part in (f"{server.url}/news.tar.gz", "0" * 64, sha256(UPSTREAM)))
    assert files_under(env.cache) == []


def test_truncated_transfer_leaves_nothing(tmp_path, env, server):
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(news(tmp_path, f"{server.url}/cut"), "train")
    message = one_line(err)
    assert f"{server.url}/cut failed: connection closed after {len(UPSTREAM)} of {2 * len(UPSTREAM)} bytes" in message
    assert files_under(env.cache) == []


def test_missing_url_is_one_line(tmp_path, env, server):
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(news(tmp_path, f"{server.url}/gone.tar.gz"), "train")
    assert f"{server.url}/gone.tar.gz failed: HTTP Error 404" in one_line(err)
    assert files_under(env.cache) == []


def test_no_network_says_where_to_put_the_file(tmp_path, env, server, monkeypatch):
    url = f"{server.url}/news.tar.gz"
    server.shutdown()
    server.server_close()
    entry = news(tmp_path, url)
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(entry, "train")
    message = one_line(err)
    assert f"downloading {url} failed: " in message and "Connection refused" in message
    assert message.endswith(f"to install it by hand, save it as {env.data / 'news' / 'news.tar.gz'}")
    monkeypatch.delenv("STRUCTLIN_DATA")
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(entry, "train")
    assert one_line(err).endswith("save it as DIR/news/news.tar.gz and set STRUCTLIN_DATA=DIR")
    assert files_under(env.cache) == []


def test_download_off_says_where_to_get_and_put_the_file(tmp_path, env, server):
    with pytest.raises(CorpusNotFoundError) as err:
        resolve(news(tmp_path, f"{server.url}/news.tar.gz"), "train", download=False)
    assert one_line(err).endswith(
        f"downloading is off: get {server.url}/news.tar.gz and save it as {env.data / 'news' / 'news.tar.gz'}")
    assert server.requests == []


def test_interrupted_download_leaves_nothing(tmp_path, env, server, monkeypatch):
    class Interrupt:  # a progress bar on which the user presses Ctrl-C
        def __init__(self, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            raise KeyboardInterrupt

    monkeypatch.setattr(catalog_module, "tqdm", Interrupt)
    with pytest.raises(KeyboardInterrupt):
        resolve(news(tmp_path, f"{server.url}/news.tar.gz"), "train")
    assert files_under(env.cache) == []


# -- local copies: the catalog's sha256 or a declared local_sha256, in STRUCTLIN_DATA ----------------------


def put(directory, content: bytes):
    """Save ``content`` as ``directory``/news/news.tar.gz."""
    (directory / "news").mkdir(parents=True)
    (directory / "news" / "news.tar.gz").write_bytes(content)
    return directory / "news" / "news.tar.gz"


@pytest.mark.parametrize(("content", "local"), [(UPSTREAM, ()), (REPACK, (sha256(REPACK),))])
def test_listed_local_copy_is_used(tmp_path, env, server, content, local):
    path = put(env.data, content)
    entry = news(tmp_path, f"{server.url}/news.tar.gz", local=local)
    assert resolve(entry, "train") == path
    assert [d.text for d in load_documents(entry, "train")] == ["Subject: yo\n\nCars.\n", "Subject: hi\n\nScience.\n"]
    assert server.requests == [] and files_under(env.cache) == []


@pytest.mark.parametrize(("content", "local"), [(REPACK, ()), (UPSTREAM[:-8], (sha256(REPACK),))])
def test_unlisted_local_copy_is_refused(tmp_path, env, server, content, local):
    path = put(env.data, content)
    entry = news(tmp_path, f"{server.url}/news.tar.gz", local=local)
    with pytest.raises(LocalCopyError) as err:
        resolve(entry, "train")
    message = one_line(err)
    assert isinstance(err.value, ChecksumError)
    assert message.startswith(f"{path}: SHA-256 is {sha256(content)}, the catalog expects {sha256(UPSTREAM)}")
    assert f"replace it with {server.url}/news.tar.gz" in message and all(h in message for h in local)
    assert path.read_bytes() == content and server.requests == []


def test_copies_outside_the_data_directory_are_not_checked(tmp_path, env, server):
    entry = news(tmp_path, f"{server.url}/news.tar.gz")
    nltk.data.path.append(str(tmp_path / "nltk"))  # NLTK's downloader checks what it puts there
    repack = put(tmp_path / "nltk", REPACK)
    assert resolve(entry, "train") == repack
    unpacked = env.data / "news" / "news" / "news-train" / "sci.misc"  # a folder cannot be checked
    unpacked.mkdir(parents=True)
    (unpacked / "1").write_bytes(POSTS["news-train/sci.misc/1"])
    assert resolve(entry, "train") == env.data / "news" / "news"
    assert server.requests == []


# -- the real corpora in ../shared: accepted by the default catalog's rule ------------------------------


@pytest.mark.corpus
def test_shared_copies_pass_the_default_catalog(ewt_dir, news_archive):
    catalog = Catalog.load()
    for split in ("train", "dev", "test"):
        path = resolve(catalog["ud-english-ewt"], split, data_dir=ewt_dir.parent, download=False)
        assert path == ewt_dir / f"en_ewt-ud-{split}.conllu"
    news_entry = catalog["20news-bydate"]
    assert resolve(news_entry, "train", data_dir=news_archive.parents[1], download=False) == news_archive
    assert sha256(news_archive.read_bytes()) != news_entry.splits["train"].sha256  # a re-pack, accepted as such
