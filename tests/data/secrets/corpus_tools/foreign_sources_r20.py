"""Round 20 (issue 29): a fourteenth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: the credential options of two tools whose authors mark,
option by option, which ones hold a secret, written in every syntax the tools document.

    python tests/data/secrets/corpus_tools/foreign_sources_r20.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r20.py               # ../foreign_r20/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). Neither was used by an earlier round, and neither is an independent set:

* rclone/rclone (a sync tool for about 70 storage providers, MIT): each backend's options,
  as its Go source declares them (``fs.Option{Name:, Help:, Default:, Examples:,
  Sensitive:, IsPassword:}``), with the options every OAuth backend shares
  (``lib/oauthutil``). rclone's authors mark an option ``Sensitive`` (its value is redacted
  from ``rclone config redacted``) or ``IsPassword`` (its value is obscured in the config
  file): that mark is the label.
* influxdata/telegraf (a metrics agent with about 300 plugins, MIT): the plugins whose
  README says "This plugin supports secrets from secret stores for the `x` and `y`
  options": that sentence is the label; the plugin's ``sample.conf`` is its configuration.

**Units** are an rclone backend (a folder under ``backend/``) or a telegraf plugin (a folder
under ``plugins/<type>/``). They were chosen mechanically, by patterns fixed before any
source was read (``git grep -l``, file names only): an rclone backend with an option marked
``Sensitive`` or ``IsPassword`` or the shared OAuth options; a telegraf plugin whose README
holds the secret-store sentence. The split was made from the unit names alone (sorted,
shuffled with seed 2920, every third unit held out) and committed before any source was
read.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
import foreign_sources_r19 as r19  # noqa: E402

OUT = HERE.parent / "foreign_r20"
SEED = 2920
RCLONE = "rclone/rclone"
TELEGRAF = "influxdata/telegraf"
EARLIER = r19.EARLIER + ("foreign_r19/tuning.jsonl", "foreign_r19/heldout.jsonl")

LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def _grep_l(repo: str, pattern: str, *paths: str) -> list[str]:
    """``git grep -l -E pattern HEAD -- paths``: the names of the files that match."""
    gitdir = r5.MIRROR / repo.replace("/", "+") / "repo"
    out = subprocess.run(["git", "--git-dir", str(gitdir), "grep", "-l", "-E", pattern, "HEAD",
                          "--", *paths], capture_output=True, check=True).stdout.decode()
    return sorted(line.removeprefix("HEAD:") for line in out.splitlines())


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): an rclone backend's Go files (not its tests), a
    telegraf plugin's README and sample.conf."""
    units: dict[str, tuple[str, list[str]]] = {}
    marked = _grep_l(RCLONE, r"Sensitive:\s*true|IsPassword:\s*true|oauthutil\.SharedOptions",
                     "backend/*.go")
    for name in sorted({p.split("/")[1] for p in marked}):
        paths = [p for p in r5._files(RCLONE) if p.startswith(f"backend/{name}/")
                 and p.endswith(".go") and not p.endswith("_test.go")]
        units["rclone:" + name] = (RCLONE, paths)
    for readme in _grep_l(TELEGRAF, r"secrets from secret stores for the", "plugins/*/README.md"):
        folder = readme.rsplit("/", 1)[0]
        units["telegraf:" + folder.removeprefix("plugins/")] = (
            TELEGRAF, [readme, folder + "/sample.conf"])
    return units


def main() -> None:
    units = unit_files()
    r5.build_round(units, lambda *a: iter(()), OUT, SEED, EARLIER)


if __name__ == "__main__":
    main()
