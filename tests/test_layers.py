"""Every module of Numi is in a layer of the import contract (pyproject.toml, [tool.importlinter]).

import-linter checks only the modules its layers name: a module in none could import
upward unnoticed. A new module must be given its place."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Packages whose modules are layered one by one: the package itself holds nothing.
CONTAINERS = {"backend", "backend.core"}


def layered() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "layers")
    return [name for layer in contract["layers"] for name in re.split(r"\s*[|:]\s*", layer.strip())]


def modules() -> list[str]:
    found = []
    for package in ("backend", "desktop"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(found)


def test_every_module_is_in_a_layer():
    layers = layered()
    outside = [m for m in modules()
               if m not in CONTAINERS and not any(m == name or m.startswith(name + ".") for name in layers)]
    assert not outside, f"give these modules a layer in pyproject.toml: {outside}"


def test_the_check_sees_a_module_outside_every_layer():
    layers = layered()
    assert "backend.web_assets" in layers and "backend.keys" in layers
    assert not any("backend.not_layered" == n or "backend.not_layered".startswith(n + ".") for n in layers)


def test_the_picture_in_docs_names_every_layer():
    drawn = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    missing = [name for name in layered() if name not in drawn]
    assert not missing, f"docs/ARCHITECTURE.md does not draw {missing}"


def test_every_feature_package_is_named_in_the_features_contract():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "features-apart")
    named = {n for layer in contract["layers"] for n in re.split(r"\s*[|:]\s*", layer.strip())}
    packages = {f"backend.features.{p.name}" for p in (ROOT / "backend" / "features").iterdir()
                if (p / "__init__.py").exists()}
    assert packages and packages <= named, f"name these in the features-apart contract: {packages - named}"
