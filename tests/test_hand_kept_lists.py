"""Every list comes from its registry (issue 48): no code names several perturbation families,
pairwise metrics, class distributions or claim kinds in a list of its own, and no code after
the config check repeats a default of the schema. Each scan is shown to find what it looks
for."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import REPO
from modelvar.findings import kinds as claim_kinds
from modelvar.metrics import registry as metric_registry
from modelvar.planning.config_check import workflow_schema
from modelvar.simulation.class_distributions import DISTRIBUTIONS
from modelvar.study import families


def code_files():
    yield from (REPO / "src").rglob("*.py")
    yield from (REPO / "rules").glob("*.smk")
    yield REPO / "Snakefile"
    yield REPO / "workflow" / "schemas" / "config.schema.yaml"


def written_out(names, at_least: int, quoted: bool = True) -> re.Pattern:
    """A list of ``at_least`` or more of ``names`` separated by commas or ``|`` (a tuple, a
    regular expression), each quoted (code) or not (``quoted=False``: a YAML enum)."""
    name = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    one = rf"""["'](?:{name})["']""" if quoted else rf"(?<![\w-])(?:{name})(?![\w-])"
    return re.compile(rf"{one}(?:\s*[,|]\s*{one}){{{at_least - 1},}}")


def hand_kept(names, at_least: int, path, text: str) -> list[int]:
    """The lines of ``text`` (a file's, ``path``'s) where such a list starts (it may run over
    several lines)."""
    pattern = written_out(names, at_least, quoted=path.suffix != ".yaml")
    return [text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)]


#: (what, the names, how many in one list make it a hand-kept copy, the files that declare
#: them). A figure or a table may show a chosen few metrics (up to 5 of 15); a copy of the
#: registry names most of them, or any two of a property's (signed) or of a family.
REGISTRIES = {
    "families": (families.names(), 3, {"src/modelvar/study/families.py"}),
    "pairwise metrics": (metric_registry.names(), 6, {"src/modelvar/metrics/registry.py"}),
    "signed metrics": ([m.name for m in metric_registry.BUILT_IN if m.signed], 2,
                       {"src/modelvar/metrics/registry.py"}),
    "class distributions": (DISTRIBUTIONS, 2,
                            {"src/modelvar/simulation/class_distributions.py"}),
    "claim kinds": ([k.name for k in claim_kinds.BUILT_IN], 2,
                    {"src/modelvar/findings/kinds.py"}),
}


@pytest.mark.parametrize("what", REGISTRIES)
def test_no_code_writes_out_a_list_of_a_registrys_names(what):
    names, at_least, declared = REGISTRIES[what]
    found = []
    for path in code_files():
        if str(path.relative_to(REPO)) in declared:
            continue
        text = path.read_text()
        found += [f"{path.relative_to(REPO)}:{number}: {text.splitlines()[number - 1].strip()}"
                  for number in hand_kept(names, at_least, path, text)]
    assert found == []


def test_the_list_scan_finds_the_lists_of_before():
    """The hand-kept lists issue 48 found, each caught by its registry's scan."""
    def caught(what, line, suffix=".py"):
        names, at_least, _ = REGISTRIES[what]
        return bool(hand_kept(names, at_least, REPO / f"x{suffix}", line))

    assert caught("families", 'if family in ("data", "categorical", "hparam", "downsample")')
    assert caught("families", '_panel_families(grid, ["data", "hparam", "categorical"])')
    assert caught("signed metrics", 'SIGNED = ("ec_corr", "ec_kappa", "kappa", "kripp_alpha",')
    assert caught("pairwise metrics", "enum: [ec_local, ec_global, ec_agree, ec_corr, ec_kappa,\n"
                  "       ec_local_accnorm_sqrt, pa]", ".yaml")
    assert caught("class distributions",
                  "items: {enum: [uniform, exponential, multimodal, step]}", ".yaml")
    assert caught("class distributions", 'SIM_DISTRIBUTIONS = ["uniform", "exponential",')
    assert caught("claim kinds", 'LEADING_KINDS = ("leader", "largest share")')
    assert not caught("pairwise metrics", "default: [ec_global, pa]", ".yaml")  # a choice
    assert not caught("families", "order (data, categorical, hparam, training fraction)")


def schema_defaults() -> set[str]:
    """The names of the config keys that have a default in the schema."""
    schema = workflow_schema(yaml.safe_load(
        (REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()))
    keys = set()

    def walk(node):
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        for name, sub in node.get("properties", {}).items():
            if isinstance(sub, dict):
                if "default" in sub:
                    keys.add(name)
                walk(sub)
        for alt in node.get("oneOf", []):
            walk(alt)

    walk(schema)
    return keys


def default_repeated(keys) -> re.Pattern:
    """A read of the config (``config.get("KEY", …)``, ``config["x"].get("KEY", …)``) that
    gives a default of its own for a key whose default the schema holds."""
    key = "|".join(re.escape(k) for k in sorted(keys))
    return re.compile(rf"""config(?:\[[^\]]+\])*\.get\(\s*["']({key})["']\s*,""")


def test_no_code_after_the_check_repeats_a_schema_default():
    """After check_config every key with a schema default is filled in: code reads
    config[KEY]. A read of the raw config before the check says so on its line."""
    assert {"test_fraction", "design", "target_minutes", "warn_changed_below"} <= \
        schema_defaults()
    pattern = default_repeated(schema_defaults())
    found = []
    for path in code_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and "before the check" not in line:
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []


def test_the_default_scan_finds_the_defaults_of_before():
    pattern = default_repeated(schema_defaults())
    assert pattern.search('test_fraction=config["split"].get("test_fraction", 0.25),')
    assert pattern.search('DESIGN = config.get("design", "both")')
    assert pattern.search('target = 60.0 * config.get("jobs", {}).get("target_minutes", 60)')
    assert pattern.search('jobs = config.get("jobs", {})')
    assert not pattern.search('settings.get("hparams", {})')  # a classifier's own settings
