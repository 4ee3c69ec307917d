"""The data stage's error (importable without pandas: every job reports it)."""


class DatasetError(ValueError):
    """A dataset cannot be read or is not a valid classification dataset."""
