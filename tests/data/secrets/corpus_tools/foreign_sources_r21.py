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

**Lines** (labels fixed before any module was read; the authors' ``no_log`` marks are the
labels):

* Each parameter of a module's argument spec is written in the three ways a task sets it:
  a YAML line of the task (``api_token: X``, plain or quoted), the module's ``key=value``
  form (``community.general.datadog_event: api_key=X``) and an ad-hoc command
  (``ansible localhost -m community.general.X -a "api_key=X"``); and, when the spec names
  an environment variable the parameter falls back to (``fallback=(env_fallback,
  ["CLOUDFLARE_TOKEN"])``), an ``export`` of that variable.
* A parameter marked ``no_log=True`` whose type is text is written with a synthetic value
  of its kind (a password: ``foreign_sources.synthetic_password``; any other:
  ``foreign_sources_r20._key_value``), a positive, when its name or its documented
  description names a credential (a password, a passphrase, a token, a secret, a key, a
  credential, an authentication); a marked parameter that names none (a message, an
  id) or whose type is not text (a list, a number, a choice) is left out, counted; so is,
  by a label fix made after the first count from the tuning part, one whose name says it
  holds something else (``passwordhint``, a path, a file, a URL, a name, a type, a mode, a
  format, an id: ``_OTHER_THAN_VALUE``) or whose description says it holds public keys
  (systemd-homed's ``sshkeys``).
* A parameter marked ``no_log=False`` (the authors' word that a name which sounds secret,
  ``update_password`` or ``key_tag``, holds none: Ansible's sanity test makes them say so)
  and any other parameter with a default or choices is written with that value (a number
  for an integer, ``yes`` for a boolean, a path for a path), a negative.
* Every line of a parameter's documented description and every line of the module's
  ``EXAMPLES`` is a negative, except an example line that sets a marked parameter to a
  literal (the author's example value is not judged here: left out, counted). A negative
  line the labelling policy reads a credential in is left out, counted
  (``foreign_sources_r20._judged_negative``).
"""

from __future__ import annotations

import ast
import functools
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
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


# ---- a module's parameters ------------------------------------------------------------------

_SPEC_KEYS = frozenset(("type", "no_log", "default", "choices", "required", "aliases",
                        "fallback", "elements", "options"))
_CRED = re.compile(r"(?i)pass(?:word|wd|phrase)?|pwd|token|secret|(?<![a-z])keys?(?![a-z])"
                   r"|api[_ -]?key|credential|auth|private|signature|pin(?![a-z])|otp|cookie"
                   r"|session")


# a marked parameter's name that says it holds something else than the secret
_OTHER_THAN_VALUE = re.compile(r"(?i)hint|policy|length|path|file|url"
                               r"|(?:^|_)(?:name|type|mode|format|id)(?:$|_)")


def _spec_of(node: ast.AST) -> dict | None:
    """A parameter's spec from ``dict(type=..., no_log=...)`` or ``{"type": ...}``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
            and not node.args:
        items = {kw.arg: kw.value for kw in node.keywords if kw.arg}
    elif isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        items = {k.value: v for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[union-attr]
    else:
        return None
    if not items or not set(items) <= _SPEC_KEYS | {"removed_in_version", "removed_from_collection",
                                                    "deprecated_aliases", "apply_defaults",
                                                    "mutually_exclusive", "required_if",
                                                    "required_one_of", "required_together",
                                                    "removed_at_date", "version_added"}:
        return None
    spec: dict = {"_line": node.lineno}
    for key, value in items.items():
        if key == "fallback" and isinstance(value, ast.Tuple) and len(value.elts) == 2:
            try:
                spec["env"] = [v for v in ast.literal_eval(value.elts[1]) if isinstance(v, str)]
            except (ValueError, SyntaxError):
                pass
            continue
        try:
            spec[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            spec[key] = None
    return spec


def parameters(src: str) -> list[tuple[str, dict]]:
    """(name, spec) of every parameter a module's source declares (``name=dict(...)`` in a
    ``dict(...)`` call, ``"name": {...}`` in a dict literal)."""
    out: list[tuple[str, dict]] = []
    for node in ast.walk(ast.parse(src)):
        pairs: list[tuple[str, ast.AST]] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        elif isinstance(node, ast.Dict):
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        for name, value in pairs:
            spec = _spec_of(value)
            if spec is not None and re.fullmatch(r"[a-z][a-z0-9_]*", name):
                out.append((name, spec))
    return out


def _documented(src: str) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """(parameter -> its description, [(line number, line)] of EXAMPLES)."""
    tree = ast.parse(src)
    described: dict[str, str] = {}
    examples: list[tuple[int, str]] = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            continue
        name, text = node.targets[0].id, node.value.value
        if name == "DOCUMENTATION":
            try:
                doc = yaml.safe_load(text) or {}
            except yaml.YAMLError:
                doc = {}
            for option, about in (doc.get("options") or {}).items():
                if isinstance(about, dict):
                    d = about.get("description")
                    described[option] = "\n".join(d) if isinstance(d, list) else str(d or "")
        elif name == "EXAMPLES":
            examples = [(node.lineno + 1 + i, line) for i, line in enumerate(text.split("\n"))]
    return described, examples


def _negative_value(spec: dict) -> str | None:
    kind = spec.get("type") or "str"
    if isinstance(spec.get("default"), str) and spec["default"].strip() and kind in ("str", "raw"):
        return spec["default"]
    choices = spec.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], str):
        return choices[-1]
    if kind == "int":
        return str(spec["default"]) if isinstance(spec.get("default"), int) else "30"
    if kind == "bool":
        return "true"
    if kind == "path":
        return "/etc/ansible/files/" + "example.conf"
    return None


def _forms(module: str, name: str, value: str, env: list[str], seed: str) -> list[str]:
    """The ways a task sets a parameter (see the module's docstring)."""
    rng = random.Random("forms:" + seed)
    quoted = f'"{value}"' if rng.random() < 0.5 else value
    arg = f"{name}={value}" if not re.search(r"[\s\"']", value) else f"{name}='{value}'"
    out = [f"{name}: {quoted}", f"community.general.{module}: {arg}",
           f'ansible localhost -m community.general.{module} -a "{arg}"']
    out.extend(f"export {var}={value}" for var in env[:1])
    return out


def module(unit: str, path: str) -> Iterator[dict]:
    """A module's records (the module's docstring says how each line is labelled)."""
    commit = r5._commit(GENERAL)
    src = r5._text(GENERAL, path) or ""
    name_of_module = unit.removeprefix("ansible:")
    described, examples = _documented(src)
    marked: set[str] = set()
    for name, spec in parameters(src):
        origin = f"{GENERAL}@{commit}:{path}:{spec['_line']}"
        common = {"family": "tool configuration", "source": "community.general modules",
                  "unit": unit, "origin": origin}
        about = described.get(name, "")
        if spec.get("no_log") is True:
            marked.add(name)
            if (spec.get("type") or "str") not in ("str", "raw") or spec.get("choices"):
                LEFT_OUT[_PART[0] + ": a marked parameter whose type is not text"] += 1
                continue
            if not _CRED.search(name) and not _CRED.search(about):
                LEFT_OUT[_PART[0] + ": a marked parameter that names no credential"] += 1
                continue
            if _OTHER_THAN_VALUE.search(name) or re.search(r"(?i)public key", about):
                LEFT_OUT[_PART[0] + ": a marked parameter that names something else"] += 1
                continue
            value = r5.synthetic_password(origin) if re.search(r"(?i)pass|pwd", name) \
                else r20._key_value(origin)
            for line in _forms(name_of_module, name, value, spec.get("env") or [], origin):
                yield from r20._positive(line, value, {**common, "kind": "ansible parameter (no_log)"})
            continue
        value = _negative_value(spec)
        if value is not None and "\n" not in value:
            for line in _forms(name_of_module, name, value, spec.get("env") or [], origin):
                yield from r20._judged_negative(line, common)
    for name, about in described.items():
        for text in about.split("\n"):
            yield from r20._judged_negative(text, {
                "family": "tool documentation", "source": "community.general modules",
                "unit": unit, "origin": f"{GENERAL}@{commit}:{path}:DOCUMENTATION:{name}"})
    for number, raw in examples:
        common = {"family": "tool documentation", "source": "community.general modules",
                  "unit": unit, "origin": f"{GENERAL}@{commit}:{path}:{number}"}
        setting = re.match(r"^\s*(?:-\s+)?([a-z_][a-z0-9_]*)\s*:\s*(.+?)\s*$", raw)
        if setting and setting.group(1) in marked:
            bare = setting.group(2).strip("\"'")
            if r5._literal_value(bare, setting.group(1)) and "{{" not in bare:
                LEFT_OUT[_PART[0] + ": an example setting a marked parameter to a literal"] += 1
                continue
        yield from r20._judged_negative(raw, common)


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type only
    (its message could quote the unit's text)."""
    _PART[0] = r14.part_of(OUT).get(unit, "tune")
    r20._PART[0] = _PART[0]  # the shared line helpers count under this unit's part
    yield from r5.read_guarded(functools.partial(module, unit, paths[0]), _PART[0], LEFT_OUT,
                               "module")


_NOTE = ("Lines labelled mechanically by foreign_sources_r21.py from the modules' own marks "
         "(no_log=True: a positive when written with a synthetic value; no_log=False: a "
         "negative); no line is relabelled against a source verdict. The held-out part's are "
         "counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE,
                        (LEFT_OUT, r20.LEFT_OUT))


if __name__ == "__main__":
    main()
