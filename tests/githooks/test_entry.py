"""The installed hooks' entry point (memgit.githooks.entry): what a push's process loads.

Every import is paid by every push; ``inspect`` (which ``dataclasses`` imports for one
call it makes only for a dataclass without a docstring) is put off by a stand-in. Real
pushes through the real hook script, with one line added after the hook has run that
says whether the real module was ever loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memgit.githooks.entry import _Deferred, defer_inspect
from memgit.githooks.install import ASK_CALL, HOOK_CALL
from tests.conftest import git, memgit_ok

# (the hook's -c program is in single quotes: the probe uses double ones)
PROBE = ('s = hook_main(); m = sys.modules.get("inspect"); '
         'print("memgit-probe inspect", type(m).__name__, "ast" in sys.modules, '
         '"rules", "memgit.policy.autonomy" in sys.modules, '
         '"memgit.policy.working" in sys.modules, file=sys.stderr); sys.exit(s)')
ORDINARY = b"memgit-probe inspect _Deferred False rules False False"


def probed_server(tmp_path: Path) -> Path:
    """A ``memgit init --bare`` drive whose pre-receive, after judging, prints whether
    ``inspect`` (and ``ast``, which it imports) was loaded."""
    server = tmp_path / "server.git"
    memgit_ok("init", "--bare", str(server))
    hook = server / "hooks" / "pre-receive"
    script = hook.read_text()
    assert HOOK_CALL in script and ASK_CALL in script
    # the hook's own process judges (no warm judge: memgit.githooks.warm), then probes
    hook.write_text(script.replace(ASK_CALL, "").replace(HOOK_CALL, PROBE))
    return server


def test_a_judged_push_never_loads_inspect(tmp_path: Path) -> None:
    """A push of entries (judged, secrets scanned) and a refused one (a credential):
    neither loads inspect (every dataclass on the hook's path has a docstring), nor the
    autonomy rules (the drive has none) or working memory's (no push to its ref)."""
    server = probed_server(tmp_path)
    memgit_ok("clone", server.as_uri(), str(tmp_path / "work"))
    work = tmp_path / "work"
    memgit_ok("remember", "the heron waits by the reeds", cwd=work)
    memgit_ok("remember", "the mill pond freezes in January", cwd=work)
    pushed = git("push", "origin", "HEAD:main", cwd=work, check=False)
    assert pushed.returncode == 0, pushed.stderr
    assert ORDINARY in pushed.stderr
    notes = work / "notes.md"
    token = "ghp_" + "Xq7LmP2vRt9KsW4nBz8YcJ1dHf6GuA3eTo5i"
    notes.write_text(notes.read_text() + f"- the deploy key is {token}\n")
    git("commit", "-qam", "a credential", "--no-verify", cwd=work)
    refused = git("push", "origin", "HEAD:main", cwd=work, check=False)
    assert refused.returncode != 0 and b"MG" in refused.stderr
    assert ORDINARY in refused.stderr


def test_the_stand_in_imports_the_real_module_on_first_use() -> None:
    saved = sys.modules.pop("inspect", None)
    try:
        stand_in = _Deferred("inspect")
        sys.modules["inspect"] = stand_in
        signature = stand_in.signature  # the first use imports the real module
        real = sys.modules["inspect"]
        assert real is not stand_in and signature is real.signature
        assert str(stand_in.signature(lambda a, b=2: None)) == "(a, b=2)"
        defer_inspect()  # the real module is there: nothing is replaced
        assert sys.modules["inspect"] is real
    finally:
        if saved is not None:
            sys.modules["inspect"] = saved
