"""Table files: atomic writes, a manifest per job, reads that name a bad file, and verification.

Every table (and JSON/HTML file) a pipeline job writes goes through this module:

* **Atomic writes** (:func:`write_parquet`, :func:`write_csv`, :func:`write_text`): the content
  goes to a uniquely named, hidden temporary file in the destination folder
  (``.<name>.<random>.tmp``: dataset readers such as pyarrow skip names that start with ``.`` or
  ``_``, so a stray one is never read as data), which is renamed over the destination only when
  complete. A failure removes the temporary file and leaves any previous file untouched; a
  full disk, a read-only or unwritable folder is a :class:`WriteFailed` naming the file and the
  cause in one line. :func:`write_tables` writes a set of files all or none.
* **Manifests** (:class:`Manifest`): what one job wrote — per file its path (relative to the
  results folder), size, sha256 and, for tables, row count — written atomically after all the
  job's files, as ``RESULTS/.modelvar/manifests/<rule>/<job>.json``.
* **Checked reads** (:func:`read_parquet`): a table that cannot be read raises
  :class:`TableReadError` naming the file and how to find and regenerate every bad table.
* **Verification** (:func:`verify`, ``modelvar verify RESULTS``): every manifest entry is checked
  (present, size, row count from the parquet footer, sha256), stray temporary files and tables no
  job recorded are listed, and each problem comes with the command that regenerates it.

The command comes from ``RESULTS/.modelvar/invocation.json``, which the workflow writes when a
run starts (``onstart``, :func:`modelvar.running.workflow_config.record_invocation`): the
working directory and the Snakemake options that select the workflow, profile and config.
``snakemake … --force TABLE all`` re-runs the job that writes TABLE and, in the same run, every
job that depends on it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

STATE_DIR = ".modelvar"
MANIFEST_DIR = "manifests"
INVOCATION_FILE = "invocation.json"
#: the results' folders of tables (read back whole by pandas and other parquet readers)
TABLE_FOLDERS = ("predictions", "aggregated")
TMP_SUFFIX = ".tmp"
#: in every temporary file modelvar writes (``.NAME.modelvar-RANDOM.tmp``): what tells its own
#: temporaries from a user's ``.draft.tmp``, which a run never touches
TMP_MARK = ".modelvar-"
_OWN_TEMPORARY = re.compile(r"\..+" + re.escape(TMP_MARK) + r"[A-Za-z0-9_]+" +
                            re.escape(TMP_SUFFIX))


def is_own_temporary(name: str) -> bool:
    """Whether a file name is one of modelvar's temporaries (:data:`TMP_MARK`)."""
    return bool(_OWN_TEMPORARY.fullmatch(name))


class TableReadError(OSError):
    """A table file is missing, truncated or corrupt."""


class PlacementError(ValueError):
    """A file cannot be moved where it was asked to go (:func:`move_file`): the message says
    why, and that nothing was written or removed."""


class WriteFailed(OSError):
    """A file could not be written (disk full, read-only or unwritable folder, …): one line
    naming the file and the cause; the system's error is its ``__cause__``."""

    def __str__(self) -> str:
        return str(self.strerror)


#: what the write errors a user can fix mean
WRITE_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "the folder is not writable (permission denied)",
    errno.EPERM: "the folder is not writable (operation not permitted)",
    errno.EFBIG: "the file is larger than the file system or `ulimit -f` allows",
}


def write_errno(exc: BaseException) -> int | None:
    """The errno of a failed write: the exception's, else the one whose text it quotes (pyarrow
    and zlib raise errors that carry only the system's message)."""
    number = getattr(exc, "errno", None)
    if number is None:
        text = str(exc)
        number = next((n for n in WRITE_CAUSES if os.strerror(n) in text), None)
    return number


def write_failed(path: str | Path, exc: BaseException) -> WriteFailed:
    """The :class:`WriteFailed` for writing ``path`` that failed with ``exc``."""
    number = write_errno(exc)
    cause = WRITE_CAUSES.get(number) or getattr(exc, "strerror", None) or str(exc)
    error = WriteFailed(number, f"cannot write {path}: {cause}; nothing was written there")
    error.filename = str(path)
    return error


def file_kind(path: str | Path) -> str:
    """What ``path`` is, as an error names it: "a folder", "a FIFO (named pipe)", …"""
    import stat

    mode = os.stat(path).st_mode
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def _atomic(path: str | Path) -> Iterator[Path]:
    """Yield a hidden temporary path next to ``path``; rename it onto ``path`` on success,
    remove it on any failure."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}{TMP_MARK}", suffix=TMP_SUFFIX,
                                        dir=path.parent)
    except OSError as exc:
        if write_errno(exc) not in WRITE_CAUSES:  # e.g. a file where a folder should be
            raise
        raise write_failed(path, exc) from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, WriteFailed) or write_errno(exc) not in WRITE_CAUSES:
            raise
        raise write_failed(path, exc) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_parquet(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` (without its index) atomically."""
    with _atomic(path) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(path)


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    with _atomic(path) as tmp:
        frame.to_csv(tmp, index=False)
    return Path(path)


def write_text(text: str, path: str | Path) -> Path:
    with _atomic(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_bytes(data: bytes, path: str | Path) -> Path:
    with _atomic(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def copy_file(source: str | Path, path: str | Path) -> Path:
    """Copy ``source`` to ``path`` atomically."""
    import shutil

    with _atomic(path) as tmp:
        shutil.copyfile(source, tmp)
    return Path(path)


def move_file(source: str | Path, dest: str | Path) -> Path:
    """Move ``source`` onto ``dest`` without losing either: ``dest`` is the whole of ``source``
    or what it was before (:func:`copy_file`), and ``source`` is removed only once ``dest`` is
    in place. Refused with a :class:`ValueError` naming the problem, before anything is
    written: a ``source`` that is not a file, a ``dest`` that is ``source`` itself (a copy onto
    itself then a removal would lose it), a folder, or a path in a folder that does not exist
    (never created: a typo would make folders anywhere, the file system's root included)."""
    source, dest = Path(source), Path(dest)
    if not source.is_file():
        raise PlacementError(f"{source}: no such file")
    if dest.is_dir():
        raise PlacementError(f"{dest} is a folder; give the file's path in it, e.g. "
                         f"{dest / source.name}")
    if not dest.parent.is_dir():
        raise PlacementError(f"{dest}: its folder {dest.parent} does not exist; nothing was "
                         "written or removed")
    if dest.exists() and os.path.samefile(source, dest):
        raise PlacementError(f"{dest} is {source} itself; nothing was written or removed")
    copy_file(source, dest)
    source.unlink()
    return dest


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Parquet, or CSV when the path ends in ``.csv``."""
    return (write_csv if Path(path).suffix.lower() == ".csv" else write_parquet)(frame, path)


def write_tables(frames: dict[Path, pd.DataFrame]) -> list[Path]:
    """Write every table (:func:`write_table`'s formats) or none: each goes to its temporary
    file first, and only when all are complete are they renamed into place (the stack's exits);
    a failed write leaves every earlier file at those paths as it was."""
    with contextlib.ExitStack() as stack:
        for path, frame in frames.items():
            tmp = stack.enter_context(_atomic(path))
            if Path(path).suffix.lower() == ".csv":
                frame.to_csv(tmp, index=False)
            else:
                frame.to_parquet(tmp, index=False)
    return [Path(p) for p in frames]



class PendingParquet:
    """A parquet file written under a hidden temporary name beside ``path`` (the same naming as
    :func:`write_parquet`), renamed into place by :meth:`commit`, removed by :meth:`abort`."""

    def __init__(self, path: str | Path, schema, **writer_options):
        import pyarrow.parquet as pq

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}{TMP_MARK}", suffix=TMP_SUFFIX,
                                    dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(name)
        try:
            self.writer = pq.ParquetWriter(self.tmp, schema, **writer_options)
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            raise

    def commit(self, key_value_metadata: dict[str, str] | None = None) -> Path:
        if key_value_metadata:
            self.writer.add_key_value_metadata(key_value_metadata)
        self.writer.close()
        os.chmod(self.tmp, 0o644)
        self.tmp.replace(self.path)
        return self.path

    def abort(self) -> None:
        self.writer.close()
        self.tmp.unlink(missing_ok=True)


class TableStream:
    """A table written batch by batch (``write`` a dict of columns per batch, then ``close``):
    bounded memory, renamed into place only when complete, recorded in the manifest.

    Batches are gathered into row groups of at least ``row_group_rows`` rows (the last may be
    smaller): a metrics job writes one small batch per (cell, repeat), and a row group per batch
    cost more in parquet's per-group metadata than the rows themselves (a one-row agreement
    batch: 3.6 kB). Memory stays bounded by one row group plus one batch."""

    def __init__(self, path: str | Path, manifest: Manifest | None = None,
                 row_group_rows: int = 65_536):
        self.path, self.manifest = Path(path), manifest
        self.row_group_rows = row_group_rows
        self.rows = 0
        self._file: PendingParquet | None = None
        self._pending: list = []
        self._pending_rows = 0

    def write(self, columns: dict) -> None:
        import pyarrow as pa

        table = pa.table(columns)
        if self._file is None:
            self._file = PendingParquet(self.path, table.schema, compression="zstd")
        else:
            table = table.select(self._file.writer.schema.names).cast(self._file.writer.schema)
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self.rows += table.num_rows
        if self._pending_rows >= self.row_group_rows:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._pending:
            self._file.writer.write_table(pa.concat_tables(self._pending),
                                          row_group_size=max(self._pending_rows, 1))
        self._pending, self._pending_rows = [], 0

    def close(self) -> int:
        if self._file is None:
            raise ValueError(f"{self.path}: nothing was written")
        self._flush()
        self._file.commit()
        if self.manifest is not None:
            self.manifest.record(self.path, self.rows)
        return self.rows

    def abort(self) -> None:
        self._pending = []
        if self._file is not None:
            self._file.abort()


# ----------------------------------------------------------------------------- manifests
def results_dir_of(path: str | Path) -> Path | None:
    """The results folder holding ``path``: the nearest ancestor with a ``.modelvar`` folder."""
    for parent in Path(path).resolve().parents:
        if (parent / STATE_DIR).is_dir():
            return parent
    return None


def parquet_rows(path: str | Path) -> int:
    """Row count from a parquet file's footer (reads no data pages)."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


@dataclass
class FileRecord:
    path: str           # relative to the results folder (absolute if outside one)
    target: str         # the path as the workflow names it (relative to its working directory)
    bytes: int
    sha256: str
    rows: int | None    # tables only
    #: the file's modification time when recorded: a load that finds another one compares the
    #: content (:func:`forget_damaged`); a same-size change then cannot pass for the job's file
    mtime_ns: int | None = None

    @classmethod
    def of(cls, path: Path, rows: int | None, root: Path | None) -> FileRecord:
        resolved = path.resolve()
        rel = (resolved.relative_to(root).as_posix()
               if root is not None and resolved.is_relative_to(root) else str(resolved))
        stat = resolved.stat()
        return cls(path=rel, target=str(path), bytes=stat.st_size,
                   sha256=sha256_file(resolved), rows=rows, mtime_ns=stat.st_mtime_ns)


def write_manifest(body: dict, path: str | Path) -> Path:
    return write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", path)


class Manifest:
    """Records what one job writes; ``close()`` writes the manifest (if a path was given).

    Use as a context manager: the manifest is written only when the block succeeds."""

    def __init__(self, path: str | Path | None, *, rule: str, job: dict | None = None):
        self.path = Path(path) if path else None
        self.rule = rule
        self.job = dict(job or {})
        self.records: list[FileRecord] = []
        root = None
        if self.path is not None:
            root = next((p.parent for p in self.path.resolve().parents if p.name == STATE_DIR),
                        None)
        self.root = root

    def _record(self, path: Path, rows: int | None) -> Path:
        self.records.append(FileRecord.of(Path(path), rows, self.root))
        return Path(path)

    def write_parquet(self, frame: pd.DataFrame, path: str | Path) -> Path:
        return self._record(write_parquet(frame, path), len(frame))

    def write_table(self, frame: pd.DataFrame, path: str | Path) -> Path:
        return self._record(write_table(frame, path), len(frame))

    def write_text(self, text: str, path: str | Path) -> Path:
        return self._record(write_text(text, path), None)

    def record(self, path: str | Path, rows: int | None = None) -> Path:
        """Record a file written by other code (it must be complete)."""
        return self._record(Path(path), rows)

    def close(self) -> None:
        if self.path is None:
            return
        write_manifest({"rule": self.rule, "job": self.job,
                        "files": [vars(r) for r in self.records]}, self.path)

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()


# ----------------------------------------------------------------------------- checked reads
def regenerate_hint(path: str | Path) -> str:
    """How to regenerate ``path`` (the exact command when the run's invocation is recorded)."""
    root = results_dir_of(path)
    if root is None:
        return f"re-run the job that wrote it (snakemake --force {path} all)"
    command = regenerate_command(root, str(path))
    return (f"regenerate it with: {command}\n(`modelvar verify {root}` lists every bad table "
            "with its command)")


def read_parquet(path: str | Path, **kwargs) -> pd.DataFrame:
    """``pandas.read_parquet`` that names the file, and how to regenerate it, when it cannot be
    read (missing, truncated, corrupt)."""
    import pandas as pd

    try:
        return pd.read_parquet(path, **kwargs)
    except FileNotFoundError as exc:
        raise TableReadError(f"{path}: no such table; {regenerate_hint(path)}") from exc
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, … for damaged files
        raise TableReadError(
            f"{path}: cannot be read, it is truncated or corrupt "
            f"({type(exc).__name__}: {exc}); {regenerate_hint(path)}"
        ) from exc


def read_json(path: str | Path) -> dict:
    """A JSON file the workflow wrote, or a :class:`TableReadError` naming it and the fix."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError as exc:
        raise TableReadError(f"{path}: no such file; {regenerate_hint(path)}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TableReadError(f"{path}: cannot be read, it is truncated or corrupt "
                             f"({type(exc).__name__}: {exc}); {regenerate_hint(path)}") from exc


# ----------------------------------------------------------------------------- the invocation
def regenerate_command(results_dir: str | Path, target: str) -> str:
    """``cd CWD && snakemake OPTIONS --force TARGET all``: re-runs the job that writes TARGET and
    everything that depends on it, in the results folder ``results_dir`` as it is now. A folder
    copied or moved since its run (the invocation records where it was) gets its own command:
    the target inside it, ``--config results_dir=`` it, and its parent as the working directory
    unless the run's working directory holds it. The target is named as the rules name it:
    absolute where the config's ``results_dir`` is, else relative to the working directory."""
    root = Path(results_dir).resolve()
    invocation = root / STATE_DIR / INVOCATION_FILE
    if not invocation.is_file():
        return (f"snakemake --configfile YOUR_CONFIG --cores all --force {shlex.quote(target)} "
                "all (from your study's working directory)")
    body = json.loads(invocation.read_text())
    cwd, options = Path(body["cwd"]), list(body["options"])
    absolute = Path(target) if Path(target).is_absolute() else cwd / target
    absolute = Path(os.path.normpath(absolute))
    original = Path(body["results_dir"]) if body.get("results_dir") else None
    if original is not None and original != root and absolute.is_relative_to(original):
        # copied or moved since the run: name the folder, and the target in it, as the rules
        # will (relative to the working directory), so that Snakemake matches the target
        if not root.is_relative_to(cwd):
            cwd = root.parent
            if "--directory" in options:
                options[options.index("--directory") + 1] = str(cwd)
        named = root.relative_to(cwd)
        entry = f"results_dir={named.as_posix()}"
        options += [entry] if "--config" in options else ["--config", entry]
        target = (named / absolute.relative_to(original)).as_posix()
    elif body.get("results_dir_absolute"):  # the rules name absolute paths: so does the target
        target = absolute.as_posix()
    elif absolute.is_relative_to(cwd):  # Snakemake matches targets as it names them
        target = absolute.relative_to(cwd).as_posix()
    # the options end with multi-value ones (--configfile A B): the next option ends them
    words = ["snakemake", *options, "--cores", "all", "--force", target, "all"]
    return f"cd {shlex.quote(str(cwd))} && {shlex.join(words)}"


def remove_stray_temporaries(results_dir: str | Path) -> list[Path]:
    """Remove the hidden temporaries of modelvar's own writes (``.NAME.modelvar-RANDOM.tmp``,
    :func:`is_own_temporary`) that interrupted writes left in ``results_dir`` (a ``kill -9``,
    a power loss); any other file, a user's ``.draft.tmp`` included, is left alone. Only when
    no job can be writing there: a run's start, holding the folder's lock
    (:mod:`modelvar.running.run_lock`)."""
    root = Path(results_dir)
    stray = [path for path in root.rglob(f".*{TMP_MARK}*{TMP_SUFFIX}")
             if path.is_file() and is_own_temporary(path.name)] if root.is_dir() else []
    for path in stray:
        path.unlink(missing_ok=True)
    return stray


#: a file whose time is within this of its job's manifest's was touched with it by Snakemake
#: when the job finished (``check_and_touch_output``), not changed since
TOUCHED_TOGETHER_NS = 2_000_000_000
#: a job's files all dated this long after the job last wrote one (Snakemake's touch comes
#: seconds after the job's end) were given new times by a copy that did not keep them
COPIED_AFTER_NS = 600 * 10**9


def forget_damaged(results_dir: str | Path,
                   found: list[tuple[Path, dict | None]] | None = None,
                   notes: list[str] | None = None) -> list[str]:
    """Delete the manifest of every job whose files no longer are what it wrote (missing, a
    size that differs from the manifest's: truncated, appended to, replaced; or, where a file's
    modification time is not the recorded one, a sha256 that differs: a same-size change), and
    every manifest that cannot be read; return one line per job. Each rule declares its
    manifest as an output and the workflow's ``all`` asks for every manifest (not for the files
    they record), so the next run reruns exactly these jobs (and, by Snakemake's file times,
    what depends on them) instead of skipping them as up to date. A stat per file, cheap enough
    for every load of the workflow; content is read only where a file's times are not those of
    its job (:func:`_unchanged`: a copy, a rename, a time set back by hand after a change) — each
    such file once: a match records its new times, and where its modification time was not the
    job's, ``notes`` gets one line saying why jobs may run again (a copy that lost the
    times). ``found``: :func:`manifests` of the resolved folder, where the caller has read
    them."""
    root = Path(results_dir).resolve()
    lines = []
    retimed = 0
    for manifest, body in manifests(root) if found is None else found:
        reason, moved = None, False
        if body is None:
            reason = "its manifest cannot be read"
        # Snakemake touches a finished job's outputs, its manifest among them, at once
        touched = manifest.stat().st_mtime_ns if body else 0
        written = [r["mtime_ns"] for r in body["files"] if r.get("mtime_ns")] if body else []
        # a touch long after the job's last write: the folder was copied without its times
        copied = bool(written) and touched - max(written) > COPIED_AFTER_NS
        for record in body["files"] if body else ():
            path = recorded_path(root, record)
            try:
                stat = path.stat()
            except FileNotFoundError:
                reason = f"{record['path']} is missing"
                break
            if stat.st_size != record["bytes"]:
                reason = (f"{record['path']} has {stat.st_size} bytes, the job wrote "
                          f"{record['bytes']}")
                break
            if copied or not _unchanged(stat, record, touched):
                if sha256_file(path) != record["sha256"]:
                    reason = (f"{record['path']} was changed since the job wrote it (same size, "
                              "other content)")
                    break
                retimed += copied or not _job_time(stat.st_mtime_ns, record, touched)
                record["mtime_ns"], record["ctime_ns"] = stat.st_mtime_ns, stat.st_ctime_ns
                moved = True
        if reason:
            manifest.unlink(missing_ok=True)
            lines.append(f"{manifest.relative_to(root / STATE_DIR / MANIFEST_DIR).with_suffix('')}"
                         f": {reason}; the job runs again")
        elif moved:  # the manifest keeps its time: Snakemake compares it with what follows
            times = manifest.stat()
            write_manifest(body, manifest)
            os.utime(manifest, ns=(times.st_atime_ns, times.st_mtime_ns))
    if retimed and notes is not None:
        notes.append(f"{retimed} file(s) hold what their jobs wrote, with other times than "
                     "those jobs gave them (a copy that did not keep times: cp -r, a "
                     "download): Snakemake decides by times, so jobs whose inputs now look "
                     "newer than their outputs run again. Copy a results folder with cp -a or "
                     "rsync -a to keep them")
    return lines


def _unchanged(stat: os.stat_result, record: dict, touched: int) -> bool:
    """Whether a file's times say it is as its job left it, without reading it: its
    modification time is the recorded one or the job's touch (:data:`TOUCHED_TOGETHER_NS` of
    the manifest's time), and its change time — which no tool can set — is the recorded one or
    within that window of the modification time (a file written, renamed into place and
    touched, and nothing since). A time set back with ``os.utime`` after a same-size change
    leaves a change time long after it, and so does a copy that keeps times (``cp -a``): such
    files are read."""
    mtime, ctime = stat.st_mtime_ns, stat.st_ctime_ns
    if not _job_time(mtime, record, touched):
        return False
    return record.get("ctime_ns") == ctime or abs(ctime - mtime) <= TOUCHED_TOGETHER_NS


def _job_time(mtime: int, record: dict, touched: int) -> bool:
    """A modification time its job gave the file: the recorded one, or the job's touch."""
    return record.get("mtime_ns") in (None, mtime) or abs(mtime - touched) <= \
        TOUCHED_TOGETHER_NS


def rule_of_manifest(path: str | Path | None) -> str | None:
    """The rule a job's manifest path is keyed by (``RESULTS/.modelvar/manifests/RULE/…``), or
    None for a path elsewhere."""
    if path is None:
        return None
    parts = Path(path).parts
    for i in range(len(parts) - 2):
        if parts[i] == STATE_DIR and parts[i + 1] == MANIFEST_DIR:
            return parts[i + 2]
    return None


# ----------------------------------------------------------------------------- verification
def recorded_path(root: Path, record: dict) -> Path:
    """Where a manifest's file record points: relative to the results folder ``root``, unless
    the job wrote outside it (an absolute path)."""
    return root / record["path"]  # an absolute record["path"] replaces root


def manifests(results_dir: str | Path) -> list[tuple[Path, dict | None]]:
    """Every job manifest of ``results_dir``, with its body (None where it cannot be read)."""
    out: list[tuple[Path, dict | None]] = []
    for manifest in sorted((Path(results_dir) / STATE_DIR / MANIFEST_DIR).glob("**/*.json")):
        try:
            body = json.loads(manifest.read_text())
            if not isinstance(body, dict) or not isinstance(body.get("files"), list):
                raise ValueError("not a manifest")
        except (OSError, UnicodeDecodeError, ValueError):
            body = None
        out.append((manifest, body))
    return out


def recorded_paths(results_dir: str | Path,
                   found: list[tuple[Path, dict | None]] | None = None) -> dict[Path, Path]:
    """The files that job manifests of ``results_dir`` record (resolved), each with its
    manifest: the files modelvar wrote, as opposed to files put there by hand. ``found``:
    :func:`manifests` of the resolved folder, where the caller has read them."""
    root = Path(results_dir).resolve()
    out: dict[Path, Path] = {}
    for manifest, body in manifests(root) if found is None else found:
        for record in body["files"] if body else ():
            out[recorded_path(root, record).resolve()] = manifest
    return out


@dataclass
class Problem:
    path: str
    problem: str
    rule: str | None
    command: str | None


def _check(root: Path, record: dict, quick: bool) -> str | None:
    path = recorded_path(root, record)
    if not path.exists():
        return "missing"
    size = path.stat().st_size
    if size != record["bytes"]:
        return f"size {size} bytes, the job wrote {record['bytes']}"
    if record.get("rows") is not None and path.suffix == ".parquet":
        try:
            rows = parquet_rows(path)
        except Exception as exc:  # damaged footer
            return f"unreadable ({type(exc).__name__}: {exc})"
        if rows != record["rows"]:
            return f"{rows} rows, the job wrote {record['rows']}"
    if not quick and sha256_file(path) != record["sha256"]:
        return "content differs from what the job wrote (sha256)"
    return None


def verify(results_dir: str | Path, *, quick: bool = False,
           progress: Callable[[int], None] | None = None,
           rule_order: Sequence[str] = ()) -> tuple[list[Problem], int]:
    """Check every table the manifests of ``results_dir`` list; return (problems, files checked).

    ``quick`` skips the sha256 comparison (size and row counts are still checked);
    ``rule_order``: the workflow's rules in the order data flows through them
    (:data:`modelvar.planning.outputs.RULES`), so that problems upstream come first and the
    first fix command regenerates the cause before what was made from it."""
    root = Path(results_dir).resolve()
    problems: list[Problem] = []
    recorded: set[Path] = set()
    checked = 0
    for manifest, body in manifests(root):
        if body is None:
            problems.append(Problem(
                manifest.relative_to(root).as_posix(),
                "job manifest cannot be read (truncated or corrupt): the tables it recorded "
                "cannot be checked; rerun its job (or delete the manifest: a resumed run then "
                "reruns the job)", None, None))
            continue
        for record in body["files"]:
            checked += 1
            recorded.add(recorded_path(root, record).resolve())
            problem = _check(root, record, quick)
            if problem:
                problems.append(Problem(record["path"], problem, body["rule"],
                                        regenerate_command(root, record["target"])))
        if progress is not None:
            progress(checked)
    for path in sorted(root.rglob("*")):
        if STATE_DIR in path.relative_to(root).parts or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if is_own_temporary(path.name):
            problems.append(Problem(rel, "stray temporary file of an interrupted write "
                                    "(never read as data; safe to delete)", None,
                                    f"rm {shlex.quote(str(path))}"))
        elif path.resolve() not in recorded and (
                path.suffix == ".parquet" or (rel.split("/", 1)[0] in TABLE_FOLDERS
                                              and not path.name.startswith((".", "_")))):
            problems.append(Problem(rel, "file not recorded by any job's manifest (written by "
                                    "hand, copied, or by an older modelvar); in a table folder, "
                                    "pandas.read_parquet of the folder would read it, and a "
                                    "run moves it to .modelvar/strays", None, None))
    rank = {rule: i for i, rule in enumerate(rule_order)}
    problems.sort(key=lambda p: rank.get(p.rule, len(rank)) if p.rule else len(rank) + 1)
    return problems, checked
