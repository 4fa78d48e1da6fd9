"""The project's promises: the README's quick start and CI run the same test command."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", quick, re.S)


def test_quick_start_is_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert "memgit demo" in commands[0] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci


def test_the_packaged_packages_are_every_package_of_src_and_the_bundles() -> None:
    """pyproject.toml lists the packages (memgit.bundles is plugins/, mapped in package-dir,
    which the automatic package finder cannot express): a new subpackage must be listed."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    src = ROOT / "src"
    found = {".".join(p.parent.relative_to(src).parts) for p in (src / "memgit").rglob(
        "__init__.py") if "__pycache__" not in p.parts}
    assert set(config["packages"]) == found | {"memgit.bundles"}
    assert config["package-dir"] == {"": "src", "memgit.bundles": "plugins"}
    assert (ROOT / "plugins" / "__init__.py").is_file()
    bundles = {p.name for p in (ROOT / "plugins").iterdir() if p.is_dir()
               and p.name != "__pycache__"}
    assert bundles == {"claude-code", "codex", "gemini", "shell", "github", "gitlab"}


def test_every_source_or_test_file_the_docs_name_exists() -> None:
    """Docs point readers at code and tests by path; a move must carry the docs along."""
    named = re.compile(r"(?<![\w/.])((?:src/)?memgit/[\w/]+\.py|tests/[\w/]+\.py)")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    cited = {(page.name, path) for page in pages for path in named.findall(page.read_text())}
    missing = sorted((page, path) for page, path in cited
                     if not (ROOT / path).is_file() and not (ROOT / "src" / path).is_file())
    assert len(cited) > 40 and not missing, missing
