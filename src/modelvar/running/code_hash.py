"""The code version of a workflow job: a hash of what can change its outputs, over every
modelvar module its entry point imports.

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

Each module counts by its **normalised source**: its syntax tree without docstrings
(``ast.dump``; comments and formatting are not in the tree), so that an edit to a comment, a
docstring or the layout reruns nothing. A module may declare keyword arguments whose values
change no result, ``NOT_RESULTS = ("colour", "memory_mb")``: their values are left out of its
tree (a classifier's colour in the figures or its memory in the plan, which the fit jobs do not
use). A module may declare the package data it reads as ``PACKAGE_DATA = ("embedded/*",)``
(globs relative to its folder): those files join the hash. ``modelvar.cli``, the argument
parser, is not in any closure: editing option help reruns nothing (domain logic lives in the
job modules).

``tests/test_code_hash.py`` checks the closure against what real jobs import
(``PYTHONPROFILEIMPORTTIME``), for every rule.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from functools import cache
from pathlib import Path

from modelvar import source_code

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


def source_facts(text: str) -> dict:
    """What the closure needs of one module's source, read from its syntax tree (a function of
    the text alone, so it can be cached by the text's digest, :func:`_facts`):

    * ``imports``: ``[level, module, names]`` per import statement outside a module-level
      ``__getattr__`` (``level`` −1 for ``import a.b``, whose names are the modules; else the
      ``from`` import's level, module or ``""``, and imported names);
    * ``names``: the names bound at top level; ``exports``: its ``_EXPORTS`` mapping (name →
      module, served by ``__getattr__``; empty when computed); ``lazy``: the modules its
      ``__getattr__`` imports (for packages' ``__init__``);
    * ``package_data``: its ``PACKAGE_DATA`` globs;
    * ``normal``: the digest of its normalised source (module docstring,
      :func:`modelvar.source_code.normalised`).
    """
    tree = ast.parse(text)
    imports = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            imports.append([-1, "", [a.name for a in node.names]])
        else:
            imports.append([node.level, node.module or "", [a.name for a in node.names]])
    names, exports, lazy, data, not_results = set(), {}, set(), [], ()
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
                            exports = dict(ast.literal_eval(node.value))
                        except ValueError:  # computed entries: every lazy import counts
                            exports = {}
                    elif target.id == "PACKAGE_DATA":
                        data = list(ast.literal_eval(node.value))
                    elif target.id == "NOT_RESULTS":
                        not_results = tuple(ast.literal_eval(node.value))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        if _is_lazy_getattr(node):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.module:
                    lazy.add(sub.module)
                    lazy.update(f"{sub.module}.{a.name}" for a in sub.names)
                elif isinstance(sub, ast.Import):
                    lazy.update(a.name for a in sub.names)
    return {"imports": imports, "names": sorted(names), "exports": exports,
            "lazy": sorted(lazy), "package_data": data,
            "normal": source_code.digest(text, not_results)}


# ------------------------------------------------------------- the facts, cached by content
_FACT_KEYS = {"imports": list, "names": list, "exports": dict, "lazy": list,
              "package_data": list, "normal": str}


def facts_cache_file() -> Path | None:
    """Where the facts of sources already parsed are kept: ``$MODELVAR_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/modelvar`` or ``~/.cache/modelvar``; one file per Python version (its
    parser decides the facts) and per text of this module (which decides what the facts are:
    an edit here starts a new cache). ``None`` without a home folder (and neither variable):
    then every process parses."""
    base = os.environ.get("MODELVAR_CACHE_DIR")
    if not base:
        try:
            home_cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        except RuntimeError:  # no HOME and no password-database entry
            return None
        base = Path(home_cache, "modelvar")
    major, minor = sys.version_info[:2]
    return Path(base, f"code-facts-py{major}.{minor}-{_THIS_MODULE_DIGEST}.json")


class _FactsCache:
    """sha256 of a source's bytes → its :func:`source_facts`, read from
    :func:`facts_cache_file` once per process and written back (atomically) when a closure
    needed new ones. Parsing the package's modules is most of the cost of the workflow's code
    versions at every load; a digest is what the code version hashes anyway, so an entry
    can only be used for the very text it was read from. A file that cannot be read, or an entry
    of the wrong shape, counts as absent; one that cannot be written leaves parsing to the next
    process."""

    def __init__(self) -> None:
        self.entries: dict[str, dict] | None = None
        self.added = False

    def _load(self) -> dict[str, dict]:
        if self.entries is None:
            path = facts_cache_file()
            try:
                loaded = json.loads(path.read_text()) if path else {}
            except (OSError, ValueError):
                loaded = {}
            self.entries = loaded if isinstance(loaded, dict) else {}
        return self.entries

    def get(self, digest: str) -> dict | None:
        entry = self._load().get(digest)
        if isinstance(entry, dict) and all(
                isinstance(entry.get(k), t) for k, t in _FACT_KEYS.items()):
            return entry
        return None

    def put(self, digest: str, facts: dict) -> None:
        self._load()[digest] = facts
        self.added = True

    def save(self) -> None:
        if not self.added:
            return
        path = facts_cache_file()
        if path is None:
            return
        handle = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False,
                                             suffix=".tmp") as handle:
                json.dump(self.entries, handle, sort_keys=True)
            os.replace(handle.name, path)
        except OSError:  # a full disk, a read-only home: the next process parses again
            if handle is not None:
                Path(handle.name).unlink(missing_ok=True)
            return
        self.added = False


_THIS_MODULE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_CACHE = _FactsCache()


@cache
def _facts_of(path: Path, stamp: tuple[int, int]) -> dict:
    """The :func:`source_facts` of ``path`` (``stamp``: its size and modification time, so that
    an edited file is read again), from the cache when its text was parsed before."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    facts = _CACHE.get(digest)
    if facts is None:
        facts = source_facts(data.decode())
        _CACHE.put(digest, facts)
    return facts


def _facts(path: Path) -> dict:
    stat = path.stat()
    return _facts_of(path, (stat.st_size, stat.st_mtime_ns))


def _lazy(package: str, name: str, root: Path) -> set[str]:
    """The modules that ``from package import name`` loads through the package's
    ``__getattr__`` (nothing when the name is bound at import time)."""
    init = module_path(package, root)
    if init is None or init.name != "__init__.py":
        return set()
    facts = _facts(init)
    if name in facts["names"]:
        return set()
    exports = facts["exports"]
    return {exports[name]} if name in exports else set(facts["lazy"])


def _imports(path: Path, root: Path) -> frozenset[str]:
    """The modelvar modules that the source of ``path`` imports, anywhere in it."""
    stat = path.stat()
    return _imports_of(path, root, (stat.st_size, stat.st_mtime_ns))


@cache
def _imports_of(path: Path, root: Path, stamp: tuple[int, int]) -> frozenset[str]:
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for level, module, names in _facts_of(path, stamp)["imports"]:
        if level < 0:
            found.update(names)
            continue
        if level:
            base = package.split(".")
            base = base[: len(base) - (level - 1)]
            source = ".".join(base + ([module] if module else []))
        else:
            source = module
        found.add(source)
        for name in names:
            found.add(f"{source}.{name}")
            submodule = module_path(f"{source}.{name}", root) is not None
            if source.split(".")[0] == PACKAGE and not submodule:
                found.update(_lazy(source, name, root))
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
    for pattern in _facts(path)["package_data"]:
        files.update(p for p in path.parent.glob(pattern) if p.is_file())
    return sorted(files)


def job_module(command: str) -> str:
    """The module of a workflow job's command (``dataset-overview`` →
    ``modelvar.jobs.dataset_overview``)."""
    return f"{PACKAGE}.jobs.{command.replace('-', '_')}"


def code_version(command: str, root: Path | None = None) -> str:
    """sha256 (16 hex digits) of the job module's import closure and the package data its
    modules declare: each module's path and normalised source (module docstring), each data
    file's path and content."""
    root = root or package_root()
    h = hashlib.sha256()
    for module in import_closure(job_module(command), root):
        path = module_path(module, root)
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(_facts(path)["normal"].encode())
        for file in package_data(module, root):
            h.update(file.relative_to(root).as_posix().encode() + b"\0")
            h.update(file.read_bytes())
    _CACHE.save()
    return h.hexdigest()[:16]
