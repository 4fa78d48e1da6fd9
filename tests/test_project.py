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


# A command in the docs: in a code block (after an optional "$ "), or in backquotes in
# the text; cut at a comment, a pipe or a redirection. Lines with a placeholder list
# ("...", "[OPTIONS]", "<x>", "|" alternatives) or a shell substitution describe a form,
# not a command.
_SKIP = re.compile(r"\.\.\.|\[|<|\||\$\(")


def doc_commands() -> list[tuple[str, int, str]]:
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        in_code = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                text = re.sub(r"^\$ ", "", line.strip())
                shown = [text] if text.startswith("memgit ") and "  " not in text else []
            else:
                shown = re.findall(r"`(memgit [^`]+)`", line)
            for command in shown:
                command = re.split(r" #| \| | && | > | 2>", command)[0].strip()
                if not _SKIP.search(command):
                    found.append((page.name, number, command))
    return found


def _parse(words: list[str]) -> str:
    """How click takes ``memgit WORDS``: "" when every subcommand and option exists
    (values are not checked: the docs' placeholders are not real paths), else why not."""
    import click

    from memgit.cli.main import cli
    from memgit.cli.options import hoist_directory

    command: click.Command = cli
    args = hoist_directory(words)
    parent = None
    name = "memgit"
    try:
        while True:
            ctx = command.make_context(name, args, parent=parent)
            if not isinstance(command, click.Group):
                return ""
            protected = ctx.__dict__.get("_protected_args")
            rest = [*(ctx.protected_args if protected is None else protected), *ctx.args]
            if not rest:
                return ""
            sub = command.get_command(ctx, rest[0])
            if sub is None:
                return f"no command {rest[0]!r}"
            command, name, args, parent = sub, rest[0], rest[1:], ctx
    except click.NoSuchOption as exc:
        return f"no option {exc.option_name}"
    except click.UsageError as exc:
        return exc.message if "unexpected extra argument" in exc.message else ""
    except click.exceptions.Exit:
        return ""  # --help, --version


def test_every_memgit_command_the_docs_show_parses() -> None:
    """Users paste what the docs show (`memgit mcp -C DRIVE` once did not exist): every
    command and option written in README.md and docs/ is one click accepts."""
    import shlex

    checked, wrong = 0, []
    for page, number, command in doc_commands():
        try:
            words = shlex.split(command)[1:]
        except ValueError:
            continue
        if any(word.endswith(":") for word in words):
            continue  # prose naming a command ("memgit agent-hook guard: cli.quick -> ...")
        checked += 1
        problem = _parse(words)
        if problem:
            wrong.append(f"{page}:{number}: {command}: {problem}")
    assert checked > 300 and not wrong, wrong


def test_every_import_in_the_docs_python_examples_exists() -> None:
    """A pasted example fails first on its imports (``from memgit.repo import open_drive``
    once named a module that was gone): every ``from memgit... import NAME`` and ``import
    memgit...`` in a ```python block of README.md and docs/ resolves."""
    import ast
    import importlib

    checked, wrong = 0, []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            try:
                tree = ast.parse(block)
            except SyntaxError:  # an API listing (signatures): its import statements only
                tree = ast.parse("\n".join(re.findall(r"^(?:from|import) memgit[^(\n]*"
                                                      r"(?:\([^)]*\))?", block, re.M)))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memgit"):
                    module = importlib.import_module(node.module or "")
                    for alias in node.names:
                        checked += 1
                        if not hasattr(module, alias.name):
                            try:
                                importlib.import_module(f"{node.module}.{alias.name}")
                            except ImportError:
                                wrong.append(f"{page.name}: {node.module}.{alias.name}")
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.startswith("memgit"):
                            checked += 1
                            importlib.import_module(alias.name)
    assert checked >= 3 and not wrong, wrong


def test_the_spec_sections_are_a_verbatim_copy() -> None:
    """docs/spec.md copies sections 1-4 of the agreed spec (../shared/SPEC.md, beside the
    repository here and in CI) so that the repository stands alone; a copy that lost lines
    once dropped most of section 1 and left a code fence open."""
    import pytest

    spec = ROOT.parent / "shared" / "SPEC.md"
    if not spec.is_file():
        pytest.skip("the shared spec is not beside this checkout")
    lines = spec.read_text().splitlines()
    start = lines.index("## 1. The format")
    end = next(i for i, line in enumerate(lines) if line.startswith("## 5. "))
    copy = (ROOT / "docs" / "spec.md").read_text().splitlines()
    assert copy[copy.index("## 1. The format"):] == lines[start:end - 1]
    assert sum(line.startswith("```") for line in copy) % 2 == 0
