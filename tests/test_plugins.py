"""The plugin seam: discovery through real package metadata, loading, shape checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memgit import plugins
from memgit.errors import PluginError

EMBEDDER = '''
import hashlib


class HashEmbedder:
    name = "hash"
    model_id = "hash-v1"
    dimension = 16

    def __init__(self, settings):
        self.settings = settings

    def embed(self, texts, kind="passage"):
        return [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in texts]


def make(settings):
    return HashEmbedder(settings)


def broken(settings):
    return object()
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution installed the way pip leaves one: a module and a .dist-info folder."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "memgit_hashembed_test.py").write_text(EMBEDDER)
    info = site / "memgit_hashembed_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memgit-hashembed-test\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[memgit.embedders]\nhash = memgit_hashembed_test:make\n"
        "broken = memgit_hashembed_test:broken\nmissing = no_such_module_xyz:make\n")
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("memgit_hashembed_test", None)


def test_an_installed_plugin_is_found_and_loaded_with_its_settings(installed: Path) -> None:
    assert "hash" in plugins.available("embedder")
    emb = plugins.load("embedder", "hash", {"model": "x"})
    assert isinstance(emb, plugins.Embedder)
    assert emb.settings == {"model": "x"}
    vectors = emb.embed(["a", "b"], kind="query")
    assert len(vectors) == 2 and len(vectors[0]) == emb.dimension


def test_unknown_plugin_names_what_is_installed(installed: Path) -> None:
    with pytest.raises(PluginError) as err:
        plugins.load("embedder", "nope")
    assert "no embedder plugin named 'nope'" in err.value.message
    assert "hash" in err.value.hint


def test_a_plugin_without_the_kinds_shape_is_refused(installed: Path) -> None:
    with pytest.raises(PluginError) as err:
        plugins.load("embedder", "broken")
    assert "does not provide what the embedder kind needs" in err.value.message


def test_a_plugin_whose_module_is_missing_says_to_install_it(installed: Path) -> None:
    with pytest.raises(PluginError) as err:
        plugins.load("embedder", "missing")
    assert "cannot be loaded" in err.value.message
    assert "pip install" in err.value.hint


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(PluginError) as err:
        plugins.available("database")
    assert "unknown plugin kind 'database'" in err.value.message


def test_install_command_names_where_this_memgit_came_from() -> None:
    """Never ``pip install memgit``: that name on the package index is another project's.
    In the tests memgit runs from a checkout (editable, or on PYTHONPATH): the command
    names that folder, which holds memgit's pyproject.toml."""
    from memgit.plugins import install_command

    command = install_command("serve")
    assert command.startswith("pip install '") and command.endswith("[serve]'"), command
    folder = Path(command[len("pip install '"):-len("[serve]'")])
    assert 'name = "memgit"' in (folder / "pyproject.toml").read_text()
    assert install_command() == f"pip install '{folder}'"
