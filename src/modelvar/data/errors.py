"""The data stage's error and the check of a prepared dataset's file (importable without
pandas: every job reports them)."""

from pathlib import Path


class DatasetError(ValueError):
    """A dataset cannot be read or is not a valid classification dataset."""


def check_prepared_file(parquet_path: str | Path, meta: dict) -> None:
    """Raise :class:`DatasetError` unless the prepared table exists with the sha256 that its
    metadata recorded (``meta["parquet_sha256"]``)."""
    from modelvar.table_files import sha256_file

    if not Path(parquet_path).is_file():
        raise DatasetError(f"{parquet_path}: no such file; re-run the prepare step")
    actual = sha256_file(parquet_path)
    if actual != meta["parquet_sha256"]:
        raise DatasetError(f"{parquet_path}: sha256 {actual} differs from the metadata's "
                           f"{meta['parquet_sha256']}; re-run the prepare step")
