"""Round 18 (issue 29): a twelfth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: infrastructure templates and application code that
static analysers flag for hard-coded credentials.

    python tests/data/secrets/corpus_tools/foreign_sources_r18.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r18.py               # ../foreign_r18/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). None was used by an earlier round, and none is an independent set (gitleaks',
Nosey Parker's, kingfisher's and betterleaks' material stays out):

* stelligent/cfn_nag (a CloudFormation linter, MIT): ``spec/test_templates/{json,yaml}/``,
  its rules' test templates; the templates whose file names name a password, secret,
  credential, token or authentication (``MasterUserPassword``, ``AuthToken``, an Amplify
  ``AccessToken``, a Pinpoint channel's ``TokenKey``, a DMS endpoint's ``Password``...), a
  unit a resource folder (``yaml/rds_dbinstance``).
* Bearer/bearer-rules (a SAST tool's rules, Elastic-2.0 for the rules, its tests' code
  fixtures): ``tests/<language>/<area>/<rule>/testdata/*`` of the rules on hard-coded
  secrets and database passwords (Go, Java, JavaScript, PHP, Python, Ruby), a unit a rule.
  Its ``go/gosec/secrets`` tests are a port of gosec's, round 13's source: left out.
* security-code-scan/security-code-scan (a Roslyn analyser, LGPL-3.0): its hard-coded
  password tests (``SecurityCodeScan.Test/Tests/Password/*.cs``, C# and VB inside the test
  strings), a unit a file.

**The split** is by source unit, made once from the paths alone (sorted, shuffled with seed
2918, every third unit held out) and stored in ``foreign_r18/units.json``, committed before
any file was read.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402

OUT = HERE.parent / "foreign_r18"
SEED = 2918
CFN_NAG = "stelligent/cfn_nag"
CFN_DIR = "spec/test_templates/"
BEARER = "Bearer/bearer-rules"
SCS = "security-code-scan/security-code-scan"
SCS_DIR = "SecurityCodeScan.Test/Tests/Password/"
EARLIER = r14.EARLIER + tuple(f"{d}/{p}.jsonl"
                              for d in ("foreign_r14", "foreign_r15", "foreign_r16", "foreign_r17")
                              for p in ("tuning", "heldout"))

# a template's file name that names a credential
_CFN_NAME = re.compile(r"(?i)passw|secret|cred|token|auth")
# Bearer's rules on hard-coded secrets and passwords (not its weak-hash rules, not the port
# of gosec's G101 tests)
_BEARER = re.compile(r"^tests/(?P<rule>\w+/\w+/\w+)/testdata/[^/]+$")
_BEARER_RULE = re.compile(r"(?i)hardcod|secret|passw|credential|authentication")
_BEARER_NOT = re.compile(r"weak_password|^go/gosec/")

LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from paths alone, no line read."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(CFN_NAG):
        rel = path.removeprefix(CFN_DIR)
        if path.startswith(CFN_DIR) and rel.count("/") >= 2 and \
                _CFN_NAME.search(rel.rsplit("/", 1)[1]) and \
                rel.endswith((".json", ".yml", ".yaml", ".template")):
            units.setdefault("cfn_nag:" + rel.rsplit("/", 1)[0], (CFN_NAG, []))[1].append(path)
    for path in r5._files(BEARER):
        m = _BEARER.match(path)
        if m and _BEARER_RULE.search(m.group("rule")) and not _BEARER_NOT.search(m.group("rule")):
            units.setdefault("bearer:" + m.group("rule"), (BEARER, []))[1].append(path)
    for path in r5._files(SCS):
        if path.startswith(SCS_DIR) and path.endswith(".cs"):
            units["scs:" + path.removeprefix(SCS_DIR)] = (SCS, [path])
    return units


def main() -> None:
    r5.build_round(unit_files(), lambda *a: iter(()), OUT, SEED, EARLIER)


if __name__ == "__main__":
    main()
