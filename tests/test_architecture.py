"""The project's structure, checked: one-way imports, lean hooks, small modules.

docs/architecture.md draws the layers these tests hold the code to.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, commit_all, git, memgit

SRC = ROOT / "src"
PACKAGE = SRC / "memgit"
MAX_LINES = 800
# Modules allowed over MAX_LINES, each with its reason (data tables only).
LONG_MODULES: set[str] = set()
LEAN_FORBIDDEN = ("pygit2", "click", "memgit.plugins")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The memgit modules ``name`` imports anywhere (functions too; not under
    ``if TYPE_CHECKING:``), resolved to modules (``from . import x`` is module x when x
    is one, else the package)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("memgit"):
                        add(alias.name)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                if not stem.startswith("memgit"):
                    continue
                for alias in child.names:
                    full = f"{stem}.{alias.name}"
                    add(full if full in known else stem)
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return out


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert "memgit.index.reindex" in graph["memgit.write.writer"]  # the graph sees real imports
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


def test_layers_point_one_way() -> None:
    """state <- recall_index <- writer <- read path, questions <- commands; the git layer
    imports nothing above it; the hook-safe git layers never the pygit2 ones."""
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

    for low in ("memgit.state", "memgit.state.facts", "memgit.state.pending"):
        assert not reaches(low) & {"memgit.index.reindex", "memgit.write.writer",
                                   "memgit.recall.read_path"}
    assert "memgit.write.writer" not in reaches("memgit.index.reindex")
    assert "memgit.recall.read_path" not in reaches("memgit.write.writer")
    for name in graph:
        if name.startswith("memgit.git"):
            outside = {m for m in graph[name] if not m.startswith("memgit.git")}
            assert outside <= {"memgit.errors"}, (name, outside)
    for hook_safe in ("memgit.git.plumbing", "memgit.git.raw", "memgit.git.rewrite",
                      "memgit.git.modes"):
        assert not reaches(hook_safe) & {"memgit.git.repository", "memgit.git.worktree",
                                         "memgit.git.remote"}, hook_safe
    assert not any(m.startswith("memgit.policy") for m in reaches("memgit.git.repository"))


def test_commands_are_imported_by_nothing_but_the_cli() -> None:
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("memgit.cli.commands") or name == "memgit.cli.main":
            continue
        assert not {t for t in targets if t.startswith("memgit.cli.commands")}, name
    test_code = "\n".join(p.read_text() for p in (ROOT / "tests").glob("*.py")
                          if p.name != "test_architecture.py")
    bench_code = "\n".join(p.read_text() for p in (ROOT / "bench").glob("*.py"))
    assert "memgit.cli.commands" not in test_code + bench_code


def test_only_the_state_package_speaks_sql() -> None:
    for name, path in modules().items():
        if name == "memgit.state" or name.startswith("memgit.state."):
            continue
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "sqlite3" not in imported, name


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

    server = create_drive(tmp_path / "server.git", bare=True)
    for name in ("pre-receive", "post-receive"):
        hook = server / "hooks" / name
        script = hook.read_text()
        report = tmp_path / f"{name}.loaded"
        forbidden = json.dumps(list(LEAN_FORBIDDEN))  # double quotes: the script is in ''
        wrapped = script.replace(
            "sys.exit(hook_main())",
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
