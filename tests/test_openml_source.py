"""The real OpenML download path (openml-python), offline against a loopback HTTP server that
serves the recorded OpenML responses for anneal (data_id 2)."""

import contextlib
import http.server
import json
import threading
from pathlib import Path

import pytest

from modelvar.data import DatasetError, load, openml_source
from modelvar.data.sources import embedded_dir

EMBEDDED = embedded_dir()
ARFF = (EMBEDDED / "openml_d2_anneal.arff").read_bytes()
DESCRIPTION = (EMBEDDED / "openml_d2_anneal.description.xml").read_text()
ARFF_PATH = "/data/download/1666876/phpFsFYVN"


class OpenMLStandIn(http.server.ThreadingHTTPServer):
    """Serves /api/v1/xml/data/2 and the ARFF file; behaviour switchable per test."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.arff = ARFF
        self.description = DESCRIPTION
        self.fail_arff = False
        self.requests: list[str] = []

    @property
    def api(self):
        return f"http://127.0.0.1:{self.server_address[1]}/api/v1/xml"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        srv = self.server
        srv.requests.append(self.path)
        if self.path.startswith("/api/v1/xml/data/2"):
            body = srv.description.replace(
                "http://www.openml.org/data/download/1666876/phpFsFYVN",
                f"http://127.0.0.1:{srv.server_address[1]}{ARFF_PATH}",
            ).encode()
            self._send(200, body, "text/xml")
        elif self.path == ARFF_PATH and not srv.fail_arff:
            self._send(200, srv.arff, "text/plain")
        else:
            self._send(500, b"<html>server error</html>", "text/html")

    def _send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serving():
    """An :class:`OpenMLStandIn` serving on a thread of its own while the block runs."""
    srv = OpenMLStandIn()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def server():
    with serving() as srv:
        yield srv


def spec(**kw):
    return {"source": "openml", "data_id": 2, "version": 1, "retries": 1, **kw}


def entries(cache: Path) -> list[str]:
    """What the cache holds, without the download lock files (kept for coordination)."""
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) \
        if cache.exists() else []


def assert_no_entry(cache: Path):
    assert entries(cache) == []


def test_download_verify_cache_and_reuse_offline(server, tmp_path):
    cache = tmp_path / "cache"
    ds = openml_source.load("anneal", spec(md5="4eaed8b6ec9d8211024b6c089b064761"), cache,
                            server=server.api)
    embedded = load("anneal", {"source": "embedded"})
    assert ds.X.equals(embedded.X) and ds.y.tolist() == embedded.y.tolist()
    assert ds.target == "class"  # from OpenML's default_target_attribute
    desc = json.loads((cache / "openml-2" / "description.json").read_text())
    assert desc["md5_checksum"] == "4eaed8b6ec9d8211024b6c089b064761"
    assert entries(cache) == ["openml-2"]
    assert any(r.startswith("/api/v1/xml/data/2") for r in server.requests)
    assert ARFF_PATH in server.requests
    # second load: from the cache, no request reaches the server
    server.requests.clear()
    again = openml_source.load("anneal", spec(), cache, server=server.api)
    assert again.X.equals(ds.X) and server.requests == []


def test_checksum_mismatch_leaves_no_cache_entry(server, tmp_path):
    server.arff = ARFF.replace(b"@data", b"% tampered\n@data", 1)
    with pytest.raises(DatasetError, match="(?i)checksum"):
        openml_source.load("anneal", spec(), tmp_path / "cache", server=server.api)
    assert_no_entry(tmp_path / "cache")


def test_download_failure_leaves_no_cache_entry(server, tmp_path):
    server.fail_arff = True
    with pytest.raises(DatasetError, match="download from .* failed"):
        openml_source.load("anneal", spec(), tmp_path / "cache", server=server.api)
    assert_no_entry(tmp_path / "cache")


def test_unreachable_server(tmp_path):
    with pytest.raises(DatasetError, match=r"no connection from .* \(1 attempt\(s\)"):
        openml_source.load("anneal", spec(), tmp_path / "cache",
                           server="http://127.0.0.1:9/api/v1/xml")
    assert_no_entry(tmp_path / "cache")


@pytest.fixture
def stalled_server():
    """Accepts connections and never answers (a hung server)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    accepted = []
    stop = threading.Event()

    def serve():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/api/v1/xml", accepted
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    sock.close()


def test_stalled_server_times_out_with_bounded_retries(stalled_server, tmp_path, monkeypatch):
    """Two tries that each time out, with the back-off between them; the whole download ends
    (its duration bounded with a 10x margin over the ~3 s it takes: two tries of 0.5 s and the
    2 s back-off; without a timeout it would hang on the stalled server)."""
    import time
    import types

    backoff = []

    def sleep(seconds):
        backoff.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(openml_source, "time", types.SimpleNamespace(sleep=sleep))
    url, accepted = stalled_server
    start = time.monotonic()
    with pytest.raises(DatasetError, match=r"no answer from .* \(2 attempt\(s\), 0.5 s timeout"):
        openml_source.load("anneal", spec(retries=2), tmp_path / "cache", server=url,
                           timeout=0.5)
    assert len(accepted) == 2 and backoff == [2.0]
    assert time.monotonic() - start < 10 * (2 * 0.5 + 2.0)  # the timeout: a 10x margin
    assert_no_entry(tmp_path / "cache")


def test_killed_download_staging_folder_is_cleaned_on_the_next_attempt(server, tmp_path):
    cache = tmp_path / "cache"
    (cache / ".openml-2-k1ll3d" / "openml-cache-1").mkdir(parents=True)
    openml_source.load("anneal", spec(), cache, server=server.api)
    assert entries(cache) == ["openml-2"]


def test_cache_entry_missing_a_file_is_fetched_again(server, tmp_path):
    cache = tmp_path / "cache"
    openml_source.load("anneal", spec(), cache, server=server.api)
    (cache / "openml-2" / "dataset.arff").unlink()
    server.requests.clear()
    ds = openml_source.load("anneal", spec(), cache, server=server.api)
    assert ds.target == "class" and ARFF_PATH in server.requests
    assert (cache / "openml-2" / "dataset.arff").is_file()


def test_pinned_version_and_md5_are_enforced(server, tmp_path):
    with pytest.raises(DatasetError, match="pins version 3"):
        openml_source.load("anneal", spec(version=3), tmp_path / "c1", server=server.api)
    assert_no_entry(tmp_path / "c1")
    with pytest.raises(DatasetError, match="pinned 0000"):
        openml_source.load("anneal", spec(md5="0000"), tmp_path / "c2", server=server.api)
    assert_no_entry(tmp_path / "c2")


def test_missing_target(server, tmp_path):
    server.description = DESCRIPTION.replace(
        "<oml:default_target_attribute>class</oml:default_target_attribute>", "")
    with pytest.raises(DatasetError, match="no default target attribute"):
        openml_source.load("anneal", spec(), tmp_path / "cache", server=server.api)
    assert_no_entry(tmp_path / "cache")
    ds = openml_source.load("anneal", spec(target="class"), tmp_path / "cache",
                            server=server.api)
    assert ds.target == "class"


def test_tampered_cache_is_refused(server, tmp_path):
    cache = tmp_path / "cache"
    openml_source.load("anneal", spec(), cache, server=server.api)
    with open(cache / "openml-2" / "dataset.arff", "ab") as fh:
        fh.write(b"\n")
    with pytest.raises(DatasetError, match="delete .* to download it again"):
        openml_source.load("anneal", spec(), cache, server=server.api)


def test_prepare_command_downloads_through_the_real_path(server, tmp_path):
    from modelvar.cli import main

    spec_json = json.dumps(spec())
    rc = main(["prepare", "--name", "anneal", "--spec", spec_json,
               "--openml-cache", str(tmp_path / "cache"), "--openml-server", server.api,
               "--out-parquet", str(tmp_path / "a.parquet"),
               "--out-meta", str(tmp_path / "a.json")])
    assert rc == 0
    meta = json.loads((tmp_path / "a.json").read_text())
    assert meta["provenance"]["openml"]["data_id"] == 2
    assert meta["class_counts"] == {"1": 8, "2": 99, "3": 684, "5": 67, "U": 40}


def test_prepare_warns_when_a_profiles_few_valued_count_is_not_the_datas(server, tmp_path,
                                                                           capfd):
    """A profile's optional ``few_valued`` (numeric features of at most 16 distinct values, for
    the plan's cost estimates) is checked against the downloaded data: a wrong count is warned
    about (estimates only), the right one is not, and neither stops the job."""
    from modelvar.cli import main
    from modelvar.data import read
    from modelvar.data.schema import count_few_valued

    def prepare(profile=None):
        out = tmp_path / f"run{len(list(tmp_path.glob('*.parquet')))}"
        rc = main(["prepare", "--name", "anneal", "--spec", json.dumps(
            {**spec(), **({"profile": profile} if profile else {})}),
            "--openml-cache", str(tmp_path / "cache"), "--openml-server", server.api,
            "--out-parquet", f"{out}.parquet", "--out-meta", f"{out}.json"])
        assert rc == 0
        return read(f"{out}.parquet", f"{out}.json")

    ds = prepare()
    few = count_few_valued(ds.X[ds.numeric_columns])
    assert 0 < few < len(ds.numeric_columns)  # the recorded anneal has both kinds
    profile = {"rows": len(ds.y), "numeric": len(ds.numeric_columns),
               "categorical": len(ds.categorical_columns), "classes": len(ds.classes)}
    for declared, warned in ((few, False), (few + 1, True)):
        capfd.readouterr()
        prepare({**profile, "few_valued": declared})
        messages = [line for line in capfd.readouterr().err.splitlines()
                    if "few-valued" in line]
        assert bool(messages) == warned, messages
        if warned:
            assert f"says {few + 1} few-valued" in messages[0]
            assert f"the data has {few}" in messages[0]
