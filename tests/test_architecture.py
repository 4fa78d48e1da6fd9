"""The project's structure, checked: one-way imports, lean hooks, small modules.

docs/architecture.md draws the layers these tests hold the code to.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, commit_all, git, memgit

SRC = ROOT / "src"
PACKAGE = SRC / "memgit"
MAX_LINES = 800
# Modules allowed over MAX_LINES, each with its reason (data tables only).
LONG_MODULES: set[str] = {
    "secrets/formats.py",  # records of documented token formats, one per shape: no code
}
LEAN_FORBIDDEN = ("pygit2", "click", "memgit.plugins")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


# The layers, bottom to top: a package (or top-level module) imports only packages of
# lower tiers, never one of its own tier or above. Written once, here; docs/architecture.md
# draws the same map (test_the_architecture_map_is_current).
TIERS: list[list[str]] = [
    ["safe_text"],
    ["errors", "http_client", "format"],
    ["git", "state", "secrets", "plugins"],
    ["policy"],
    ["index", "embeddings"],
    ["write", "githooks"],
    ["recall", "purge", "server_hook"],
    ["sync", "importing"],
    ["dream", "forges", "working"],
    ["review"],
    ["agents", "drives"],
    ["demo", "serve", "fleet"],
    ["cli"],
    ["__main__"],
]
TIER = {name: i for i, tier in enumerate(TIERS) for name in tier}
# Edges allowed against the tiers, each with its reason.
LATE_BOUND = {
    # The plugin seam names memgit's own plugins as "module:factory" strings and loads one
    # only when a caller asks for it by name: the arrow is the caller's, not the seam's.
    ("plugins", "dream"), ("plugins", "embeddings"), ("plugins", "agents"),
}
PLUGIN_TARGET = re.compile(r"(memgit(?:\.\w+)+):\w+")


def package_of(module: str) -> str:
    """``memgit.recall.hybrid`` -> ``recall``; ``memgit.errors`` -> ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "memgit"


def _dynamic_targets(call: ast.Call, name: str, known: set[str]) -> set[str]:
    """What ``importlib.import_module(...)`` may load: a constant name, or every module
    under the constant prefix of an f-string (``__name__`` read as the module's name)."""
    if not call.args:
        return set()
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value} if arg.value in known else set()
    if isinstance(arg, ast.JoinedStr):
        prefix = ""
        for part in arg.values:
            if isinstance(part, ast.Constant):
                prefix += str(part.value)
            elif isinstance(part.value, ast.Name) and part.value.id == "__name__" and not prefix:
                prefix = name
            else:
                break
        return {m for m in known if m.startswith(prefix) and m != name} \
            if prefix.startswith("memgit.") else set()
    return set()


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every memgit module ``name`` imports: at the top, in functions, under ``if
    TYPE_CHECKING:``, through ``importlib.import_module`` and as the plugin seam's
    ``module:factory`` names; resolved to modules (``from . import x`` is module x when x
    is one, else the package)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memgit"):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            if stem.startswith("memgit"):
                for alias in node.names:
                    full = f"{stem}.{alias.name}"
                    add(full if full in known else stem)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else ""
            if called == "import_module":
                for target in _dynamic_targets(node, name, known):
                    add(target)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = PLUGIN_TARGET.fullmatch(node.value)
            if found and found.group(1) in known:
                add(found.group(1))
    return out


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "memgit.index.reindex" in graph["memgit.write.writer"]  # a plain import
    assert "memgit.cli.commands.recall" in graph["memgit.cli.main"]  # importlib
    assert "memgit.importing.plan" in graph["memgit.importing"]  # importlib, f"{__name__}."
    assert "memgit.agents.install" in graph["memgit.plugins"]  # the plugin seam's names
    assert "memgit.git.repository" in graph["memgit.recall.context"]  # TYPE_CHECKING


def test_the_import_graph_has_no_cycle() -> None:
    graph = {a: {t for t in targets if (package_of(a), package_of(t)) not in LATE_BOUND}
             for a, targets in import_graph().items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[list[str]] = []

    def walk(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                walk(nxt, trail + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            walk(start, [start])
    assert cycles == []


def test_every_package_is_in_a_tier() -> None:
    assert {package_of(m) for m in modules()} - {"memgit"} == set(TIER)


def test_packages_import_only_the_tiers_below() -> None:
    wrong = sorted((a, t) for a, targets in import_graph().items() for t in targets
                   if package_of(t) not in ("memgit", package_of(a))
                   and (package_of(a), package_of(t)) not in LATE_BOUND
                   and TIER[package_of(a)] <= TIER[package_of(t)])
    assert wrong == []


def test_the_git_layer_keeps_its_hook_safe_half_free_of_pygit2() -> None:
    """The hook-safe git modules never reach the pygit2 ones (nor anything above git)."""
    graph = import_graph()

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    for hook_safe in ("memgit.git.plumbing", "memgit.git.raw", "memgit.git.rewrite",
                      "memgit.git.modes", "memgit.git.files"):
        assert not reaches(hook_safe) & {"memgit.git.repository", "memgit.git.worktree",
                                         "memgit.git.remote"}, hook_safe


def package_map() -> str:
    """The packages, tier by tier from the top, each with the first line of its docstring
    and the packages it imports: the map docs/architecture.md shows."""
    graph = import_graph()
    found = modules()
    arrows: dict[str, set[str]] = {}
    for a, targets in graph.items():
        for t in targets:
            if package_of(t) not in ("memgit", package_of(a)):
                arrows.setdefault(package_of(a), set()).add(package_of(t))
    lines = ["| tier | package | what it owns | imports |", "|---|---|---|---|"]
    for i, tier in reversed(list(enumerate(TIERS))):
        for pkg in tier:
            module = f"memgit.{pkg}"
            doc = ast.get_docstring(ast.parse(found[module].read_text())) or ""
            what = doc.split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
            where = f"`{pkg}/`" if found[module].name == "__init__.py" else f"`{pkg}.py`"
            uses = ", ".join(sorted(arrows.get(pkg, set())))
            lines.append(f"| {i} | {where} | {what} | {uses} |")
    return "\n".join(lines) + "\n"


MAP_START = "<!-- package map: generated by `python -m tests.test_architecture` -->\n"
MAP_END = "<!-- end of package map -->"


def test_the_architecture_map_is_current() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    current = doc.split(MAP_START, 1)[1].split(MAP_END, 1)[0]
    assert current == package_map(), "run python -m tests.test_architecture to redraw it"


def test_commands_are_imported_by_nothing_but_the_cli() -> None:
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("memgit.cli.commands") or name == "memgit.cli.main":
            continue
        assert not {t for t in targets if t.startswith("memgit.cli.commands")}, name
    test_code = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py")
                          if p.name != "test_architecture.py")
    bench_code = "\n".join(p.read_text() for p in (ROOT / "bench").glob("*.py"))
    assert "memgit.cli.commands" not in test_code + bench_code


# Besides state/ (a drive's own database), the fleet index's one module: the fleet index
# is a database of its own under a root of drives (or on a PostgreSQL server several
# hosts share), not a drive's state, and its statements are written once for both
# backends there (memgit.fleet.store).
SQL_MODULES = {"memgit.fleet.store"}


def test_only_the_state_package_speaks_sql() -> None:
    for name, path in modules().items():
        if name == "memgit.state" or name.startswith("memgit.state.") or name in SQL_MODULES:
            continue
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "sqlite3" not in imported and "psycopg" not in imported, name
    assert "import sqlite3" in (PACKAGE / "fleet" / "store.py").read_text()


def test_no_module_over_the_size_limit() -> None:
    long = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines())
            for p in PACKAGE.rglob("*.py") if len(p.read_text().splitlines()) > MAX_LINES}
    assert set(long) <= LONG_MODULES, long


def _loaded_after(code: str) -> list[str]:
    """The forbidden modules a fresh interpreter (isolated, no site) holds after ``code``."""
    probe = (f"import sys; sys.path[:0] = [{str(SRC)!r}]\n{code}\n"
             f"print(sorted(m for m in sys.modules if m.startswith({LEAN_FORBIDDEN!r})))")
    proc = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1:]


@pytest.mark.parametrize("module", ["memgit.githooks.receive", "memgit.githooks.entry",
                                    "memgit.githooks.post_receive", "memgit.githooks.precommit"])
def test_hook_modules_load_no_pygit2_click_or_plugins(module: str) -> None:
    assert _loaded_after(f"import {module}") == ["[]"]


def test_a_real_push_runs_both_hooks_without_pygit2_click_or_plugins(tmp_path: Path) -> None:
    """The installed hook scripts, run by git for a real push, wrapped to report what the
    hook process had loaded when it finished (post-receive's detached child may load
    pygit2: it is not the process the push waits for)."""
    from memgit.drives.create import create_drive
    from memgit.githooks.install import ASK_CALL, HOOK_CALL

    server = create_drive(tmp_path / "server.git", bare=True)
    for name in ("pre-receive", "post-receive"):
        hook = server / "hooks" / name
        script = hook.read_text()
        report = tmp_path / f"{name}.loaded"
        forbidden = json.dumps(list(LEAN_FORBIDDEN))  # double quotes: the script is in ''
        wrapped = script.replace(ASK_CALL, "").replace(  # judged in the hook's own process
            HOOK_CALL,
            f"status = hook_main(); open({json.dumps(str(report))}, \"w\").write(repr(sorted("
            f"m for m in sys.modules if m.startswith(tuple({forbidden}))))); "
            f"sys.exit(status)")
        assert wrapped != script
        hook.write_text(wrapped)
    work = tmp_path / "work"
    git("clone", "-q", str(server), str(work))
    (work / "notes.md").write_text("# Notes\n\n- Wrens nest in hedges "
                                   "[source: imported:unknown; id: m-wren]\n")
    commit_all(work, "wrens")
    git("push", "-q", "origin", "main", cwd=work)
    assert (tmp_path / "pre-receive.loaded").read_text() == "[]"
    assert (tmp_path / "post-receive.loaded").read_text() == "[]"


def test_the_pre_commit_entry_loads_no_pygit2_click_or_plugins(new_drive) -> None:
    """``memgit-precommit`` judging a real checkout's staged files, in a fresh process."""
    path = new_drive({"notes.md": "- Larks sing at dawn [source: imported:unknown]\n"},
                     commit=False)
    git("add", "-A", cwd=path)
    code = ("import os, runpy\n"
            f"os.chdir({str(path)!r}); sys.argv = ['memgit-precommit']\n"
            "try:\n    runpy.run_module('memgit.githooks.precommit', run_name='__main__')\n"
            "except SystemExit as exit:\n    assert exit.code == 0, exit.code")
    assert _loaded_after(code) == ["[]"]
    assert memgit("lint", "--cached", cwd=path).returncode == 0  # the CLI agrees


# What the shell's quick read path must not load: each of these costs more than the
# recall itself (docs/performance.md); the policy and the drive format only when the
# drive has a memgit.yaml or a memgit.policy git config key.
QUICK_FORBIDDEN = ("pygit2", "click", "memgit.plugins", "memgit.cli.main", "memgit.policy.judge",
                   "memgit.format.entries", "memgit.recall.read_path", "memgit.index.reindex",
                   "yaml",
                   "typing", "re", "pathlib", "dataclasses", "subprocess")


def test_a_quick_recall_from_the_shell_loads_only_what_it_uses(new_drive) -> None:
    """``memgit recall`` through the entry point on a current recall index, in a fresh
    isolated interpreter (printing text: --json loads json, and json loads re); the same
    command on a stale index takes the full path."""
    path = new_drive({"notes.md": "- Larks sing at dawn [source: imported:unknown]\n"})
    assert memgit("index", cwd=path).returncode == 0
    # Only what memgit adds counts: the interpreter's start may have loaded some of
    # these already (an editable install's import finder loads pathlib and re).
    probe = (f"import sys; sys.path[:0] = [{str(SRC)!r}]; before = set(sys.modules)\n"
             "from memgit.cli.quick import main\n"
             f"code = main(['-C', {str(path)!r}, 'recall', 'larks', 'dawn'])\n"
             "print(sorted(m for m in set(sys.modules) - before if m in {0} or "
             "m.startswith(tuple(f + '.' for f in {0}))))\n"
             "sys.exit(code)\n").format(repr(QUICK_FORBIDDEN))

    def loaded(*flags: str) -> tuple[list[str], str]:
        proc = subprocess.run([sys.executable, "-I", *flags, "-c", probe], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        *printed, modules = proc.stdout.splitlines()
        return printed, modules

    printed, modules = loaded("-S")  # no site: the quick path needs no installed package
    assert modules == "[]"
    printed, modules = loaded()
    assert modules == "[]"
    assert len(printed) == 1 and printed[0].startswith("notes.md:1: Larks sing at dawn")
    (path / "notes.md").write_text("- Larks sing at dusk [source: imported:unknown]\n")
    commit_all(path, "around memgit")  # the index is behind the branch now
    printed, modules = loaded()
    assert "'pygit2'" in modules and printed[0].startswith("notes.md:1: Larks sing at dusk")


if __name__ == "__main__":
    path = ROOT / "docs" / "architecture.md"
    text = path.read_text()
    head, rest = text.split(MAP_START, 1)
    path.write_text(head + MAP_START + package_map() + MAP_END + rest.split(MAP_END, 1)[1])
