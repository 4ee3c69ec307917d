"""OpenML datasets by pinned ``data_id`` (+ version, optional md5), downloaded once into a cache.

The download is openml-python's own code path (``openml.datasets.get_dataset``): it fetches the
XML description, downloads the ARFF file from the URL the description names and verifies its md5
against the description's ``md5_checksum``. Parquet downloads are switched off
(``OPENML_SKIP_PARQUET``) so that the checksum is always verified.

**Timeouts and retries.** openml-python sends its requests without a timeout (a stalled server
hangs the job forever) and retries only refused connections. Here every request it sends
carries ``timeout`` seconds (for the connection and between received bytes), and the whole
download is tried ``retries`` times, 2 s · attempt apart, on timeouts and connection errors;
then a :class:`DatasetError` says what happened. Server errors and checksum mismatches are not
retried.

Cache layout (``cache_dir/openml-<data_id>/``): ``dataset.arff`` and ``description.json`` (id,
name, version, md5, target, licence, url). An entry is complete when it exists: it is assembled
in a staging folder ``.openml-<data_id>-*`` and renamed into place only after every check passed,
so a download failure, checksum mismatch, version mismatch or missing target leaves no cache
entry behind. One download per data_id runs at a time (a lock file ``.openml-<data_id>.lock``);
under that lock, staging folders left by a killed download are removed, and an entry that lacks
one of its files (interrupted by hand) is fetched again. Later loads read the cache and re-verify
the md5 without contacting OpenML.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from modelvar.data.canonical import Dataset, DatasetError
from modelvar.data.readers import read_arff

DEFAULT_SERVER = "https://www.openml.org/api/v1/xml"
DEFAULT_TIMEOUT = 60.0
ENTRY_FILES = ("dataset.arff", "description.json")
log = logging.getLogger("modelvar.openml")


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@contextlib.contextmanager
def _requests_timeout(seconds: float):
    """Give every ``requests`` call without a timeout this one (openml-python sets none)."""
    import requests

    original = requests.Session.request

    def request(self, method, url, **kwargs):
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = seconds
        return original(self, method, url, **kwargs)

    requests.Session.request = request
    try:
        yield
    finally:
        requests.Session.request = original


@contextlib.contextmanager
def _openml_settings(cache: Path, server: str, timeout: float):
    """Point openml-python at a cache and server for the duration of one download attempt."""
    import openml

    cfg = openml.config
    saved = (cfg.server, cfg.connection_n_retries, cfg.retry_policy, cfg._root_cache_directory)
    saved_env = os.environ.get("OPENML_SKIP_PARQUET")
    try:
        cfg.server = server
        cfg.connection_n_retries = 1  # retries are ours (they also cover timeouts)
        cfg.retry_policy = "robot"
        cfg.set_root_cache_directory(str(cache))
        os.environ["OPENML_SKIP_PARQUET"] = "true"
        with _requests_timeout(timeout):
            yield openml
    finally:
        cfg.server, cfg.connection_n_retries, cfg.retry_policy = saved[:3]
        cfg._root_cache_directory = saved[3]
        if saved_env is None:
            os.environ.pop("OPENML_SKIP_PARQUET", None)
        else:
            os.environ["OPENML_SKIP_PARQUET"] = saved_env


@contextlib.contextmanager
def _download_lock(cache_dir: Path, data_id: int):
    with open(cache_dir / f".openml-{data_id}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _clean_stale(cache_dir: Path, data_id: int) -> None:
    """Under the download lock: staging folders of killed downloads, incomplete entries."""
    for stale in cache_dir.glob(f".openml-{data_id}-*"):
        if stale.is_dir():
            log.warning("OpenML %s: removing %s, left by an interrupted download", data_id, stale)
            shutil.rmtree(stale, ignore_errors=True)
    entry = cache_dir / f"openml-{data_id}"
    missing = [f for f in ENTRY_FILES if not (entry / f).is_file()]
    if entry.exists() and missing:
        log.warning("OpenML %s: cache entry %s lacks %s; downloading it again", data_id, entry,
                    missing)
        shutil.rmtree(entry)


def _get_dataset(data_id: int, work: Path, server: str, retries: int, timeout: float):
    """openml-python's download, with timeouts and bounded retries (see module docstring)."""
    import requests

    last: Exception | None = None
    for attempt in range(1, retries + 1):
        attempt_dir = work / f"openml-cache-{attempt}"
        try:
            with _openml_settings(attempt_dir, server, timeout) as openml:
                return openml.datasets.get_dataset(
                    int(data_id), download_data=True, download_qualities=False,
                    download_features_meta_data=False,
                )
        except (requests.Timeout, requests.ConnectionError) as exc:
            last = exc
            log.warning("OpenML %s: attempt %d of %d failed: %s", data_id, attempt, retries,
                        exc)
            if attempt < retries:
                time.sleep(2.0 * attempt)
        except Exception as exc:  # server, parse and checksum errors of openml/requests
            raise DatasetError(
                f"OpenML {data_id}: download from {server} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    kind = "no answer" if isinstance(last, requests.Timeout) else "no connection"
    raise DatasetError(
        f"OpenML {data_id}: {kind} from {server} ({retries} attempt(s), {timeout:g} s timeout "
        f"each; last error {type(last).__name__}: {last}). Check the network and "
        "`openml.server`, raise `openml.timeout` or `retries`, or download on a machine with "
        "access and copy the cache folder."
    ) from last


def fetch(
    data_id: int,
    cache_dir: str | Path,
    *,
    version: int | None = None,
    md5: str | None = None,
    target: str | None = None,
    server: str = DEFAULT_SERVER,
    retries: int = 3,
    timeout: float = DEFAULT_TIMEOUT,
) -> Path:
    """Ensure ``cache_dir/openml-<data_id>`` holds the verified dataset; return that directory."""
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _download_lock(cache_dir, data_id):
        _clean_stale(cache_dir, data_id)
        entry = cache_dir / f"openml-{data_id}"
        if entry.exists():
            desc = json.loads((entry / "description.json").read_text())
            actual = _md5(entry / "dataset.arff")
            if actual != desc["md5_checksum"]:
                raise DatasetError(
                    f"OpenML {data_id}: cached file {entry / 'dataset.arff'} has md5 {actual}, "
                    f"expected {desc['md5_checksum']}; delete {entry} to download it again"
                )
            _check_pins(data_id, desc, version, md5)
            return entry
        work = Path(tempfile.mkdtemp(prefix=f".openml-{data_id}-", dir=cache_dir))
        try:
            ds = _get_dataset(data_id, work, server, retries, timeout)
            desc = {
                "data_id": int(ds.dataset_id),
                "name": ds.name,
                "version": int(ds.version),
                "md5_checksum": ds.md5_checksum,
                "default_target_attribute": ds.default_target_attribute,
                "licence": ds.licence,
                "url": ds.url,
                "server": server,
            }
            _check_pins(data_id, desc, version, md5)
            if (target or desc["default_target_attribute"]) is None:
                raise DatasetError(
                    f"OpenML {data_id}: no default target attribute in OpenML's metadata; "
                    f"name the target in the config"
                )
            staged = work / "entry"
            staged.mkdir()
            shutil.copyfile(ds.data_file, staged / "dataset.arff")
            if _md5(staged / "dataset.arff") != desc["md5_checksum"]:
                raise DatasetError(f"OpenML {data_id}: md5 of the downloaded file differs")
            (staged / "description.json").write_text(json.dumps(desc, indent=2) + "\n")
            staged.rename(entry)
            return entry
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _check_pins(data_id: int, desc: dict, version: int | None, md5: str | None) -> None:
    if version is not None and desc["version"] != int(version):
        raise DatasetError(
            f"OpenML {data_id}: version {desc['version']} ({desc['name']}), "
            f"but the config pins version {version}"
        )
    if md5 is not None and desc["md5_checksum"] != md5:
        raise DatasetError(
            f"OpenML {data_id}: md5_checksum {desc['md5_checksum']} differs from the "
            f"config's pinned {md5}"
        )


def load(name: str, spec: dict, cache_dir: str | Path, server: str = DEFAULT_SERVER,
         timeout: float = DEFAULT_TIMEOUT) -> Dataset:
    """Load a config entry ``{source: openml, data_id, version?, md5?, target?, retries?}``."""
    entry = fetch(
        spec["data_id"], cache_dir, version=spec.get("version"), md5=spec.get("md5"),
        target=spec.get("target"), server=server, retries=spec.get("retries", 3),
        timeout=timeout,
    )
    desc = json.loads((entry / "description.json").read_text())
    target = spec.get("target") or desc["default_target_attribute"]
    prov = {"source": "openml", "openml": desc}
    return read_arff(entry / "dataset.arff", name, target, prov)
