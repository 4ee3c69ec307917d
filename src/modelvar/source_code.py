"""A Python source as what it does: its syntax tree without docstrings, comments or layout.

Two texts that differ only in comments, docstrings or formatting give the same
:func:`normalised` form and :func:`digest`, so a code version built from it
(:mod:`modelvar.running.code_hash`, a user's estimator file in :mod:`modelvar.models.user`)
changes only where the code does.
"""

from __future__ import annotations

import ast
import hashlib


def normalised(text: str, not_results: tuple[str, ...] = ()) -> str:
    """``text``'s syntax tree (``ast.dump``) without the docstrings of the module, its classes
    and functions, and without the keyword arguments named in ``not_results`` (values that
    change no result: a classifier's colour in the figures); comments and formatting are not
    in the tree."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        elif isinstance(node, ast.Call) and not_results:
            node.keywords = [k for k in node.keywords if k.arg not in not_results]
    return ast.dump(tree, include_attributes=False)


def digest(text: str, not_results: tuple[str, ...] = ()) -> str:
    """sha256 of :func:`normalised`."""
    return hashlib.sha256(normalised(text, not_results).encode()).hexdigest()
