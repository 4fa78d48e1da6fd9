"""Round 21 (issue 29): a fifteenth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: the parameters of automation modules for about 170
services, where the modules' authors mark each parameter that holds a secret.

    python tests/data/secrets/corpus_tools/foreign_sources_r21.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r21.py               # ../foreign_r21/

Source (a mirror brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). It was not used by an earlier round, and it is not an independent set:

* ansible-collections/community.general (Ansible modules for services, clouds, databases,
  chat and monitoring tools; GPL-3.0): ``plugins/modules/*.py``. A module declares its
  parameters in an ``argument_spec`` (``api_token=dict(type='str', no_log=True)``):
  Ansible hides a parameter marked ``no_log=True`` from its logs and output because it holds
  a secret; that mark is the label. A module's ``DOCUMENTATION`` describes its parameters and
  its ``EXAMPLES`` shows tasks that use it.

**Units** are modules (a file under ``plugins/modules/``). They were chosen mechanically, by
a pattern fixed before any module was read (``no_log=True`` in the file, ``git grep -l``,
file names only). The split was made from the unit names alone (sorted, shuffled with seed
2921, every third unit held out) and committed before any module was read.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r20 as r20  # noqa: E402

OUT = HERE.parent / "foreign_r21"
SEED = 2921
GENERAL = "ansible-collections/community.general"
EARLIER = r20.EARLIER + ("foreign_r20/tuning.jsonl", "foreign_r20/heldout.jsonl")

LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, [its module file])."""
    gitdir = r5.MIRROR / GENERAL.replace("/", "+") / "repo"
    out = subprocess.run(["git", "--git-dir", str(gitdir), "grep", "-l", "-E",
                          r"no_log\s*=\s*True", "HEAD", "--", "plugins/modules/*.py"],
                         capture_output=True, check=True).stdout.decode()
    paths = sorted(line.removeprefix("HEAD:") for line in out.splitlines())
    return {"ansible:" + p.rsplit("/", 1)[1].removesuffix(".py"): (GENERAL, [p]) for p in paths}


def main() -> None:
    r5.build_round(unit_files(), lambda *a: iter(()), OUT, SEED, EARLIER)


if __name__ == "__main__":
    main()
