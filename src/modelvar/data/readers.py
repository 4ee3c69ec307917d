"""Readers for the file formats datasets come in: ARFF (liac-arff), delimited text and parquet
(pandas), each optionally gzip-compressed (``.gz``, except parquet, which compresses inside).

A file's format (:class:`FileFormat`) comes from its name, or from the config's ``format`` key:

=====================================  =============================================================
file                                   read as
=====================================  =============================================================
``.csv`` (``.csv.gz``)                 comma-separated, first row = column names
``.tsv``, ``.tab`` (``.gz``)           tab-separated, first row = column names
``.data``, ``.txt`` (``.gz``)          delimited text (UCI style): the delimiter is detected from
                                       the first lines (``,``, tab, ``;``, ``|`` or runs of
                                       spaces) when exactly one splits every line into the same
                                       number (> 1) of fields, else name it (``delimiter``)
``.arff`` (``.arff.gz``)               ARFF: nominal attributes are categorical, with their levels
``.parquet``, ``.pq``                  parquet
any name + ``format: csv|tsv|arff|``   that format
``parquet``
=====================================  =============================================================

Text (delimited or ARFF) is UTF-8 unless the config's ``encoding`` names another codec
(``encoding: cp1252`` for a file saved by Excel on Windows, ``latin-1``, …). A file that does not
decode is refused with the byte offset and line of the first byte that does not, never guessed
at: single-byte encodings cannot be told apart by their bytes (0xE9 is "é" in cp1252 and "й" in
cp1251). The one unambiguous case is a byte-order mark: a file that starts with one is read in
the encoding it names, with a warning.

Delimited text: ``header: false`` for a file without a header row, with ``columns: [...]`` (or the
columns are named V1, V2, …); spaces after a delimiter are skipped; empty cells, ``?`` and pandas'
missing-value markers (``NA``, ``NaN``, ``null``, …) are missing values. The target and the
categorical columns are read as text exactly as written (``false``/``true`` stay themselves, never
booleans), and numeric features as numbers.
"""

from __future__ import annotations

import codecs
import gzip
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from modelvar.data.canonical import Dataset, DatasetError, build
from modelvar.table_files import sha256_file

_ARFF_NUMERIC = {"NUMERIC", "REAL", "INTEGER"}
SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".data": "detect",
                  ".txt": "detect", ".arff": "arff", ".parquet": "parquet", ".pq": "parquet"}
FORMATS = ("csv", "tsv", "arff", "parquet")
_DELIMITERS = {",": ",", "\t": "\t", ";": ";", "|": "|", " ": r"\s+"}
MISSING_MARKERS = ["?"]


@dataclass(frozen=True)
class FileFormat:
    kind: str                      # "csv" (any delimited text), "arff" or "parquet"
    delimiter: str | None = None   # delimited text: the separator (r"\s+" for runs of spaces)
    gzip: bool = False
    header: bool = True
    columns: tuple[str, ...] | None = None
    encoding: str = "utf-8"

    def describe(self) -> dict:
        out = {"format": self.kind, "delimiter": self.delimiter, "gzip": self.gzip,
               "header": self.header}
        if self.encoding != "utf-8":  # UTF-8 files keep the provenance they always had
            out["encoding"] = self.encoding
        return out


#: byte-order marks and the encodings they name, longest first (UTF-32's starts with UTF-16's)
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                    (codecs.BOM_UTF16_BE, "utf-16"))


def _open_bytes(path: Path, gz: bool):
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _open_text(path: Path, gz: bool, encoding: str = "utf-8"):
    return gzip.open(path, "rt", encoding=encoding) if gz else open(path, encoding=encoding)


def text_encoding(path: Path, gz: bool, name: str, declared: str | None) -> str:
    """The encoding to read ``path`` in: ``declared`` (the config's ``encoding``), else the one
    its byte-order mark names (with a warning), else UTF-8. Refused: a name that is no codec,
    a codec that is not a text encoding (``rot13``, ``base64``: they map text to text or bytes
    to bytes), and a declared encoding that the file's byte-order mark contradicts (a UTF-16
    file declared cp1252 would be read as mojibake)."""
    if declared:
        try:
            codec = codecs.lookup(declared).name
            "".encode(codec)  # LookupError for a codec that is not a text encoding
        except LookupError as exc:
            what = "is not a text encoding" if "text encoding" in str(exc) else \
                "is not a codec Python knows"
            raise DatasetError(f"{name}: encoding {declared!r} {what}; e.g. utf-8, cp1252, "
                               "latin-1") from None
    try:
        with _open_bytes(path, gz) as fh:
            head = fh.read(4)
    except OSError as exc:
        raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc
    mark = next((encoding for mark, encoding in BYTE_ORDER_MARKS if head.startswith(mark)),
                None)
    if declared:
        family = None if mark is None else "-".join(mark.split("-")[:2])  # utf-8, utf-16, …
        if family is not None and not codec.startswith(family):
            raise DatasetError(
                f"{name}: {path} starts with a {family.upper()} byte-order mark, but its config "
                f"entry declares encoding {declared!r}; the file is {family.upper()} text: set "
                f"`encoding: {mark}` (or leave `encoding:` out: the mark is read)")
        return codec
    if mark is None:
        return "utf-8"
    if mark != "utf-8-sig":  # a UTF-8 mark is UTF-8: nothing to warn about
        print(f"modelvar: warning: {name}: {path} starts with a {mark.upper()} byte-order "
              f"mark: read as {mark.upper()}; set `encoding:` in its config entry to say so",
              file=sys.stderr)
    return mark


#: C1 control characters (U+0080–U+009F): no text file means them; a single-byte encoding
#: that maps bytes 0x80–0x9F onto them (latin-1, the ISO 8859 family) was likely the wrong one
C1_CONTROLS = re.compile("[\x80-\x9f]")


def warn_c1_controls(path: Path, fmt: FileFormat, name: str) -> None:
    """Warn (stderr) where ``path`` read in ``fmt.encoding`` holds C1 control characters:
    the first one's line and code, and the encoding that has printable characters there
    (cp1252 for latin-1: Windows' curly quotes and dashes are bytes 0x91–0x97). Unicode
    encodings are not read again: only a single-byte one maps a byte onto a C1 character."""
    if fmt.encoding.startswith("utf"):
        return
    try:
        with _open_text(path, fmt.gzip, fmt.encoding) as fh:
            for number, line in enumerate(fh, 1):
                found = C1_CONTROLS.search(line)
                if found:
                    byte = ord(found.group())
                    try:
                        shown = bytes([byte]).decode("cp1252")
                        hint = (f"; in cp1252 that byte is {shown!r}: set `encoding: cp1252` "
                                "if the file was saved on Windows")
                    except UnicodeDecodeError:
                        hint = ""
                    print(f"modelvar: warning: {name}: {path} read as {fmt.encoding} holds "
                          f"the control character U+{byte:04X} (line {number:,}), which no "
                          f"text means{hint}", file=sys.stderr)
                    return
    except (UnicodeDecodeError, OSError):
        return  # the read itself names these


def first_undecodable(path: Path, gz: bool, encoding: str
                       ) -> tuple[int, int, int, bytes] | None:
    """(byte offset, line number, the byte, the bytes around it) of the first byte of ``path``
    that ``encoding`` cannot decode, or None when the whole file decodes."""
    offset, line, carry = 0, 1, b""  # offset: where ``carry`` starts in the file
    with _open_bytes(path, gz) as fh:
        while True:
            chunk = fh.read(1 << 20)
            data = carry + chunk
            try:
                data.decode(encoding)
                done = len(data)
            except UnicodeDecodeError as exc:
                if not chunk or exc.end < len(data):  # not a character cut by the chunk's end
                    at = exc.start
                    return (offset + at, line + data[:at].count(b"\n"), data[at],
                            data[max(at - 20, 0):at + 20])
                done = exc.start  # decode the cut character with the next chunk
            if not chunk:
                return None
            line += data[:done].count(b"\n")
            offset += done
            carry = data[done:]


def undecodable(path: Path, fmt: FileFormat, name: str) -> DatasetError:
    """The error for a file that ``fmt.encoding`` does not decode: where and how to fix it."""
    found = first_undecodable(path, fmt.gzip, fmt.encoding)
    where = "" if found is None else (
        f": byte 0x{found[2]:02x} at offset {found[0]:,} (line {found[1]:,}, in "
        f"{found[3]!r}) does not decode")
    return DatasetError(
        f"{name}: {path} is not {fmt.encoding.upper()} text{where}; set `encoding:` in its "
        "config entry to the file's encoding (cp1252 for a CSV saved by Excel on Windows, "
        "latin-1, …), or save it as UTF-8")


def _detect_delimiter(path: Path, gz: bool, name: str, encoding: str) -> str:
    try:
        with _open_text(path, gz, encoding) as fh:
            lines = [ln.rstrip("\n") for ln, _ in zip(fh, range(200), strict=False)]
    except UnicodeDecodeError:
        raise undecodable(path, FileFormat("csv", gzip=gz, encoding=encoding), name) from None
    except OSError as exc:
        raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc
    lines = [ln for ln in lines if ln.strip()][:50]
    if not lines:
        raise DatasetError(f"{name}: {path} is empty")
    consistent: dict[str, int] = {}
    for key, sep in _DELIMITERS.items():
        counts = {len(re.split(sep, ln.strip()) if key == " " else ln.split(sep))
                  for ln in lines}
        if len(counts) == 1 and (count := counts.pop()) > 1:
            consistent[key] = count
    if " " in consistent and any(consistent[k] == consistent[" "] for k in consistent
                                 if k != " "):
        del consistent[" "]  # tab-separated lines also split on runs of spaces: the tab wins
    if len(consistent) != 1:
        found = "none" if not consistent else " and ".join(repr(c) for c in consistent)
        raise DatasetError(
            f"{name}: cannot tell the delimiter of {path} (delimiters that split every line "
            f"evenly: {found}); set `delimiter:` (and `format: csv`) in its config entry")
    return _DELIMITERS[next(iter(consistent))]


def file_format(path: str | Path, name: str, spec: dict | None = None) -> FileFormat:
    """The format of a dataset file: from the config (``format``, ``delimiter``, ``header``,
    ``columns``, ``encoding``) or its name (see module docstring)."""
    spec = spec or {}
    path = Path(path)
    lower = path.name.lower()
    gz = lower.endswith(".gz")
    suffix = Path(lower[:-3] if gz else lower).suffix
    kind = spec.get("format") or SUFFIX_FORMATS.get(suffix)
    if kind is None:
        raise DatasetError(
            f"{name}: unsupported file type {path.name!r}; use {sorted(SUFFIX_FORMATS)} "
            f"(optionally .gz), or set `format:` to one of {list(FORMATS)}")
    if kind == "parquet" and gz:
        raise DatasetError(f"{name}: {path.name}: parquet compresses inside; do not gzip it")
    columns = tuple(spec["columns"]) if spec.get("columns") else None
    header = spec.get("header", columns is None)
    if kind == "parquet" and "encoding" in spec:
        raise DatasetError(f"{name}: `encoding` applies to text files, not parquet")
    if kind in ("arff", "parquet"):
        extra = [k for k in ("delimiter", "header", "columns") if k in spec]
        if extra:
            raise DatasetError(f"{name}: {extra} apply to delimited text, not {kind} files")
        if kind == "parquet":
            return FileFormat(kind=kind)
        return FileFormat(kind=kind, gzip=gz,
                          encoding=text_encoding(path, gz, name, spec.get("encoding")))
    encoding = text_encoding(path, gz, name, spec.get("encoding"))
    if "delimiter" in spec:
        delimiter = _DELIMITERS.get(spec["delimiter"], spec["delimiter"])
    elif kind == "detect":
        delimiter = _detect_delimiter(path, gz, name, encoding)
    else:
        delimiter = "\t" if kind == "tsv" else ","
    return FileFormat(kind="csv", delimiter=delimiter, gzip=gz, header=bool(header),
                      columns=columns, encoding=encoding)


# ----------------------------------------------------------------------------- ARFF
def arff_attributes(path: str | Path, gz: bool = False, encoding: str = "utf-8",
                    name: str = "") -> list[tuple[str, object]]:
    """(name, type) of each ARFF attribute, from the header alone: a list of levels for nominal
    attributes, the type name otherwise."""
    import arff

    header = []
    try:
        with _open_text(Path(path), gz, encoding) as fh:
            for line in fh:
                header.append(line)
                if line.strip().lower().startswith("@data"):
                    break
    except UnicodeDecodeError:
        raise undecodable(Path(path), FileFormat("arff", gzip=gz, encoding=encoding),
                          name or Path(path).name) from None
    parsed = arff.load("".join(header) + "\n")
    return list(parsed["attributes"])


def dropped(frame: pd.DataFrame, drop, name: str, target: str) -> pd.DataFrame:
    """``frame`` without the columns ``drop`` names (config ``datasets.NAME.drop``): each must
    be a column, and not the target."""
    drop = list(drop or [])
    missing = [c for c in drop if c not in frame.columns]
    if missing:
        raise DatasetError(f"{name}: drop names column(s) {missing} that the file does not have "
                           f"(its columns: {list(frame.columns)})")
    if target in drop:
        raise DatasetError(f"{name}: drop names the target {target!r}")
    return frame.drop(columns=drop)


def read_arff(path: str | Path, name: str, target: str, provenance: dict | None = None,
              *, gz: bool = False, encoding: str = "utf-8", drop=()) -> Dataset:
    """Read an ARFF file; nominal attributes are categorical with their declared levels;
    ``drop``: columns left out."""
    import arff

    path = Path(path)
    fmt = FileFormat(kind="arff", gzip=gz, encoding=encoding)
    try:
        with _open_text(path, gz, encoding) as fh:
            parsed = arff.load(fh)
    except UnicodeDecodeError:
        raise undecodable(path, fmt, name) from None
    except (OSError, arff.ArffException) as exc:
        raise DatasetError(f"{name}: cannot read ARFF file {path}: {exc}") from exc
    warn_c1_controls(path, fmt, name)
    columns, categorical, levels = [], [], {}
    for attr_name, attr_type in parsed["attributes"]:
        columns.append(attr_name)
        if isinstance(attr_type, list):
            levels[attr_name] = [str(v) for v in attr_type]
            categorical.append(attr_name)
        elif str(attr_type).upper() not in _ARFF_NUMERIC:
            raise DatasetError(
                f"{name}: ARFF attribute {attr_name!r} has unsupported type {attr_type!r}"
            )
    if not parsed["data"]:
        raise DatasetError(f"{name}: ARFF file {path} has no data rows")
    frame = dropped(pd.DataFrame(parsed["data"], columns=columns), drop, name, target)
    categorical = [c for c in categorical if c in frame.columns]
    levels = {c: v for c, v in levels.items() if c in frame.columns}
    class_order = levels.pop(target, None)
    if target in categorical:
        categorical.remove(target)
    prov = {"file": path.name, "file_sha256": sha256_file(path), **fmt.describe()}
    prov.update(provenance or {})
    return build(
        name,
        frame,
        target,
        categorical,
        categories=levels,
        class_order=class_order,
        provenance=prov,
    )


# ----------------------------------------------------------------------------- delimited text
def _first_line(path: Path, fmt: FileFormat, name: str) -> str:
    """The first line of ``path`` that is not blank."""
    try:
        with _open_text(path, fmt.gzip, fmt.encoding) as fh:
            return next((ln for ln in fh if ln.strip()), "")
    except UnicodeDecodeError:
        raise undecodable(path, fmt, name) from None
    except OSError as exc:
        raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc


def _refuse_repeated_names(path: Path, fmt: FileFormat, name: str) -> None:
    """pandas renames a repeated column name (``x``, ``x.1``): refuse it instead, since which
    column a config's ``target`` or ``categorical`` means would be a guess."""
    import csv
    from collections import Counter

    first = _first_line(path, fmt, name)
    if fmt.delimiter == r"\s+":
        header = first.split()
    else:
        header = next(csv.reader([first], delimiter=fmt.delimiter, skipinitialspace=True), [])
    repeated = sorted(c for c, n in Counter(h.strip() for h in header).items() if n > 1)
    if repeated:
        raise DatasetError(f"{name}: {path} names column(s) {repeated} more than once; "
                           "rename them so that each column has its own name")


def read_delimited(path: Path, fmt: FileFormat, name: str, *, text_columns=(),
                   nrows: int | None = None) -> pd.DataFrame:
    """A delimited-text file as a frame; ``text_columns`` are read as text exactly as written."""
    names = list(fmt.columns) if fmt.columns else None
    header: int | None = 0 if fmt.header else None
    if not fmt.header and names is None:
        first = _first_line(path, fmt, name)
        width = len(re.split(fmt.delimiter, first.strip())) if fmt.delimiter == r"\s+" \
            else len(first.split(fmt.delimiter))
        names = [f"V{i + 1}" for i in range(width)]
    if fmt.header and names is None:
        _refuse_repeated_names(path, fmt, name)
    dtype = {c: str for c in text_columns}
    try:
        frame = pd.read_csv(
            path, sep=fmt.delimiter, header=header, names=names, dtype=dtype or None,
            na_values=MISSING_MARKERS, keep_default_na=True, skipinitialspace=True,
            compression="gzip" if fmt.gzip else None, nrows=nrows, encoding=fmt.encoding,
            engine="python" if fmt.delimiter == r"\s+" else "c",
        )
    except UnicodeDecodeError:
        raise undecodable(path, fmt, name) from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DatasetError(f"{name}: cannot read {path} as delimited text "
                           f"(delimiter {fmt.delimiter!r}): {exc}") from exc
    if len(frame.columns) == 1 or (fmt.columns and frame.iloc[:, 1:].isna().all().all()):
        _refuse_another_delimiter(path, fmt, name)
    return frame


def _refuse_another_delimiter(path: Path, fmt: FileFormat, name: str) -> None:
    """A file read as one column (or, with ``columns``, with every column after the first
    empty) whose first line splits on another delimiter: that delimiter is the cause, so say
    it (a dataset needs a target and a feature; a tab-separated file declared ``format: csv``
    would otherwise be told about its header row)."""
    first = _first_line(path, fmt, name).strip()
    for key, sep in _DELIMITERS.items():
        fields = len(re.split(sep, first) if key == " " else first.split(sep))
        if sep != fmt.delimiter and key != " " and fields > 1:
            shown = {"\t": "a tab"}.get(key, repr(key))
            fix = "`format: tsv`" if key == "\t" else f"`delimiter: {key!r}`"
            raise DatasetError(
                f"{name}: {path} reads as one column with the delimiter {fmt.delimiter!r}, "
                f"but its first line splits on {shown} into {fields} fields; set {fix} in its "
                "config entry")


def read_table(
    path: str | Path,
    name: str,
    target: str,
    categorical: list[str],
    provenance: dict | None = None,
    *,
    fmt: FileFormat | None = None,
    drop=(),
) -> Dataset:
    """Read a delimited-text or parquet file; ``categorical`` names the categorical features;
    ``drop``: columns left out."""
    path = Path(path)
    fmt = fmt or file_format(path, name)
    if fmt.kind == "parquet":
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types for unreadable files
            raise DatasetError(f"{name}: cannot read {path}: {exc}") from exc
    else:
        frame = read_delimited(path, fmt, name, text_columns=[target, *categorical])
        warn_c1_controls(path, fmt, name)
    if frame.empty:
        raise DatasetError(f"{name}: {path} has no data rows")
    frame = dropped(frame, drop, name, target)
    prov = {"file": path.name, "file_sha256": sha256_file(path), **fmt.describe()}
    prov.update(provenance or {})
    return build(name, frame, target, list(categorical), provenance=prov)


def read_file(
    path: str | Path,
    name: str,
    target: str,
    categorical: list[str] | None = None,
    provenance: dict | None = None,
    spec: dict | None = None,
) -> Dataset:
    """Read any supported file (format from ``spec`` or the name); for ARFF, ``categorical``
    must be empty (the file declares it)."""
    fmt = file_format(path, name, spec)
    drop = (spec or {}).get("drop", [])
    if fmt.kind == "arff":
        if categorical:
            raise DatasetError(f"{name}: ARFF files declare their categorical columns themselves")
        return read_arff(path, name, target, provenance, gz=fmt.gzip, encoding=fmt.encoding,
                         drop=drop)
    return read_table(path, name, target, categorical or [], provenance, fmt=fmt, drop=drop)
