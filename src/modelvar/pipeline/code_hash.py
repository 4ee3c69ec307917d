"""The code version of a workflow job: a hash of every modelvar module its entry point imports.

Snakemake reruns a job whose ``params`` changed, but it does not notice an edit inside an imported
package; so each rule carries ``code=code_version(COMMAND)`` (``rules/common.smk``). The modules
hashed are not listed by hand: they are the **import closure** of the job's module
``modelvar.jobs.<command>`` (:mod:`modelvar.jobs`), read from the source with :mod:`ast`:

* every ``import modelvar.x`` / ``from modelvar.x import y`` / relative import, wherever it stands
  (jobs import lazily, inside functions), where ``y`` counts when it is a module itself, or
  the module that the package's ``__getattr__`` loads for it (its ``_EXPORTS`` entry, or what
  that ``__getattr__`` imports);
* the ``__init__`` of every package on the way (``import modelvar.a.b`` runs ``modelvar/a``'s);
* followed transitively within the package; imports of other packages are not followed (their
  versions are recorded in the runs table).

A module may declare the package data it reads as ``PACKAGE_DATA = ("embedded/*",)`` (globs
relative to its folder): those files join the hash. ``modelvar.cli``, the argument parser, is
not in any closure: editing option help reruns nothing (domain logic lives in the job modules).

``tests/test_code_hash.py`` checks the closure against what real jobs import
(``PYTHONPROFILEIMPORTTIME``), for every rule.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

PACKAGE = "modelvar"


def package_root() -> Path:
    """The folder of the imported ``modelvar`` package."""
    import modelvar

    return Path(modelvar.__file__).resolve().parent


def module_path(module: str, root: Path | None = None) -> Path | None:
    """The source file of ``module`` (``modelvar.a.b``) in the package, or ``None``."""
    root = root or package_root()
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_lazy_getattr(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name == "__getattr__"


def _import_nodes(tree: ast.Module):
    """Every import statement of a module, except those in a module-level ``__getattr__``
    (lazy exports: they count for the importers of the names they serve, :func:`_lazy`)."""
    todo = [n for n in tree.body if not _is_lazy_getattr(n)]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        todo.extend(ast.iter_child_nodes(node))


@cache
def _package_exports(init: Path) -> tuple[frozenset, dict, frozenset]:
    """Of a package's ``__init__``: the names it binds at top level, its ``_EXPORTS`` mapping
    (name → module, served by ``__getattr__``), and the modules its ``__getattr__`` imports."""
    tree = ast.parse(init.read_text())
    names, exports, lazy = set(), {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "_EXPORTS":
                        try:
                            exports = ast.literal_eval(node.value)
                        except ValueError:  # computed entries: every lazy import counts
                            exports = {}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    for node in tree.body:
        if _is_lazy_getattr(node):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.module:
                    lazy.add(sub.module)
                    lazy.update(f"{sub.module}.{a.name}" for a in sub.names)
                elif isinstance(sub, ast.Import):
                    lazy.update(a.name for a in sub.names)
    return frozenset(names), exports, frozenset(lazy)


def _lazy(package: str, name: str, root: Path) -> set[str]:
    """The modules that ``from package import name`` loads through the package's
    ``__getattr__`` (nothing when the name is bound at import time)."""
    init = module_path(package, root)
    if init is None or init.name != "__init__.py":
        return set()
    names, exports, lazy = _package_exports(init)
    if name in names:
        return set()
    return {exports[name]} if name in exports else set(lazy)


@cache
def _parsed(path: Path, stamp: tuple[int, int]) -> ast.Module:
    """The syntax tree of ``path`` (``stamp``: its size and modification time, so that an edited
    file is parsed again); each module is parsed once however many closures it is in."""
    return ast.parse(path.read_text(), filename=str(path))


def _tree(path: Path) -> ast.Module:
    stat = path.stat()
    return _parsed(path, (stat.st_size, stat.st_mtime_ns))


def _imports(path: Path, root: Path) -> frozenset[str]:
    """The modelvar modules that the source of ``path`` imports, anywhere in it."""
    stat = path.stat()
    return _imports_of(path, root, (stat.st_size, stat.st_mtime_ns))


@cache
def _imports_of(path: Path, root: Path, stamp: tuple[int, int]) -> frozenset[str]:
    tree = _parsed(path, stamp)
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        found.add(source)
        for alias in node.names:
            found.add(f"{source}.{alias.name}")
            submodule = module_path(f"{source}.{alias.name}", root) is not None
            if source.split(".")[0] == PACKAGE and not submodule:
                found.update(_lazy(source, alias.name, root))
    return frozenset(m for m in found if m.split(".")[0] == PACKAGE and module_path(m, root))


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@cache
def import_closure(module: str, root: Path | None = None) -> tuple[str, ...]:
    """Every modelvar module that importing ``module`` and calling its functions can import
    (module docstring), sorted, ``module`` and its parent packages included."""
    root = root or package_root()
    if module_path(module, root) is None:
        raise ValueError(f"{module} is not a module of {root}")
    seen: set[str] = set()
    todo = _with_parents(module)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for found in _imports(module_path(name, root), root):
            todo += [m for m in _with_parents(found) if m not in seen]
    return tuple(sorted(seen))


def package_data(module: str, root: Path | None = None) -> list[Path]:
    """The files that ``module`` declares it reads (``PACKAGE_DATA`` globs), sorted."""
    root = root or package_root()
    path = module_path(module, root)
    files: set[Path] = set()
    for node in _tree(path).body:
        if (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "PACKAGE_DATA" for t in node.targets)):
            for pattern in ast.literal_eval(node.value):
                files.update(p for p in path.parent.glob(pattern) if p.is_file())
    return sorted(files)


def job_module(command: str) -> str:
    """The module of a workflow job's command (``dataset-overview`` →
    ``modelvar.jobs.dataset_overview``)."""
    return f"{PACKAGE}.jobs.{command.replace('-', '_')}"


def code_version(command: str, root: Path | None = None) -> str:
    """sha256 (16 hex digits) of the job module's import closure and the package data its
    modules declare: path and content of each file."""
    root = root or package_root()
    h = hashlib.sha256()
    for module in import_closure(job_module(command), root):
        path = module_path(module, root)
        for file in [path, *package_data(module, root)]:
            h.update(file.relative_to(root).as_posix().encode() + b"\0")
            h.update(file.read_bytes())
    return h.hexdigest()[:16]
