"""The browser libraries under static/vendor/ are the packages vendor/package-lock.json
pins, byte for byte: `make vendor` copies them from the locked packages, and the
server needs no npm to serve them."""

import json
import os
import re

import pytest

from conftest import REPO_ROOT

VENDOR = REPO_ROOT / "vendor"
STATIC = REPO_ROOT / "static" / "vendor"


def vendored() -> list[tuple[str, str]]:
    """The Makefile's list of (file in the locked package, file under static/vendor/)."""
    line = re.search(r"^VENDORED := (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M)
    assert line, "the Makefile lists the vendored files in VENDORED"
    return [tuple(pair.split(":", 1)) for pair in line.group(1).split()]


def locked() -> dict[str, str]:
    lock = json.loads((VENDOR / "package-lock.json").read_text())
    return {
        path.removeprefix("node_modules/"): entry["version"]
        for path, entry in lock["packages"].items()
        if path.startswith("node_modules/")
    }


def test_each_library_is_pinned_to_the_version_its_lock_holds():
    wanted = json.loads((VENDOR / "package.json").read_text())["dependencies"]
    versions = locked()
    assert wanted and all(versions.get(name) == version for name, version in wanted.items())
    packages = {source.split("/")[0] for source, _ in vendored()}
    assert packages <= set(wanted)


def test_the_served_files_say_they_are_the_locked_versions():
    banner = (STATIC / "chart.js" / "chart.umd.min.js").read_text()[:200]
    assert f"Chart.js v{locked()['chart.js']}\n" in banner
    graph = (STATIC / "cytoscape" / "cytoscape.min.js").read_text()
    assert f'version="{locked()["cytoscape"]}"' in graph


def test_the_served_files_are_the_locked_packages_own():
    if not (VENDOR / "node_modules" / ".installed").exists():
        message = "The locked packages are not installed (npm ci --prefix vendor)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    differ = [
        served
        for source, served in vendored()
        if (VENDOR / "node_modules" / source).read_bytes() != (STATIC / served).read_bytes()
    ]
    assert differ == [], f"run make vendor: {differ} differ from the locked packages"
