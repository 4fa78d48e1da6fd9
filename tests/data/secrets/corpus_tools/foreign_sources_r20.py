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

**Lines** (labels fixed before any source was read; the authors' marks are the labels):

* rclone: each option is written in the four syntaxes rclone's documentation gives for
  setting it: a config file line (``key = value``), a command-line flag
  (``--b2-key value`` or ``--b2-key=value``, after an ``rclone`` command), an environment
  variable (``RCLONE_B2_KEY=value``, with or without ``export``) and a connection string
  (``:b2,key=value:bucket``). An option marked ``IsPassword`` or ``Sensitive`` is written
  with a synthetic value of its kind (a password: ``foreign_sources.synthetic_password``;
  the OAuth ``token``: the JSON blob rclone stores, with synthetic tokens; any other: a
  random key of one of four shapes), a positive. A marked option that names who or where
  rather than a secret (rclone marks personal data too: a host, a user, an account, an
  e-mail, an id, a URL, an endpoint, a region, a domain, a tenant, a user to impersonate, a
  public key, a key's MD5...: ``_WHO_OR_WHERE``) is left out, counted (the list was
  completed from the tuning part's option names before the first count). An unmarked option is written with its example values and its default
  when they are text (``--s3-region us-east-1``), a negative. Every line of every option's
  help text is a negative (prose about options).
* telegraf: in a plugin's ``sample.conf``, a line setting an option the README names
  (``password = ""``, commented or not) is written twice: as the sample has it, a negative
  when its value is empty, a reference (``@{store:key}``, ``${VAR}``) or a template, left out
  (counted) when it is a literal (an author's example value is not judged here); and with a
  synthetic value of its kind, a positive. A username or a headers table among the named
  options is no secret's value, nor is an option that names who or where (``address``,
  ``url``, SNMP's ``sec_name``: ``_WHO_OR_WHERE``; a label fix made after the first count,
  from the tuning part): such a line is an ordinary configuration line. Every other
  line of ``sample.conf`` and every prose line of the README is a negative.
* A negative line the labelling policy (``foreign_sources.policy_value``) reads a credential
  in is left out, counted, like every line shorter than 8 characters or longer than 500, and
  a line with a private key's header (the decision table flags it on any line; a label fix
  made after the first count, from the tuning part: rclone's help shows a PEM on one line).
"""

from __future__ import annotations

import base64
import functools
import random
import re
import string
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
import gosrc  # noqa: E402
import late_sources  # noqa: E402

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



# ---- rclone: options as the Go source declares them ---------------------------------------

# fs/config's names of the shared OAuth options (constants the backends' sources use)
_CONSTANTS = {"config.ConfigClientID": "client_id", "config.ConfigClientSecret": "client_secret",
              "config.ConfigToken": "token", "config.ConfigAuthURL": "auth_url",
              "config.ConfigTokenURL": "token_url",
              "config.ConfigClientCredentials": "client_credentials",
              "config.ConfigEncoding": "encoding"}
_STRING_KINDS = ("str", "raw")


def _literal(kind: str, text: str) -> str:
    return text[1:-1] if kind == "raw" else gosrc._unquote(text)


def _field_value(toks: list[tuple[str, str]], i: int) -> tuple[object, int]:
    """The value of the struct field whose tokens start at ``i`` (after ``Name:``) and the
    index after it: a string (literals joined by ``+``; ``strings.ReplaceAll(lit, a, b)``
    applied), True/False, a known constant's text, or None."""
    depth, j, parts = 0, i, []
    while j < len(toks):
        kind, text = toks[j]
        if text in "([{" and kind == "op":
            depth += 1
        elif text in ")]}" and kind == "op":
            if depth == 0:
                break
            depth -= 1
        elif text == "," and depth == 0:
            break
        parts.append((kind, text))
        j += 1
    parts = [t for t in parts if t[0] != "nl"]
    literals = [_literal(k, t) for k, t in parts if k in _STRING_KINDS]
    first = parts[0] if parts else ("", "")
    if first[1] == "strings.ReplaceAll" and len(literals) == 3:
        return literals[0].replace(literals[1], literals[2]), j
    if first[0] in _STRING_KINDS and all(k in _STRING_KINDS or t == "+" for k, t in parts):
        return "".join(literals), j
    if len(parts) == 1 and first[1] in ("true", "false"):
        return first[1] == "true", j
    if len(parts) == 1 and first[1] in _CONSTANTS:
        return _CONSTANTS[first[1]], j
    return None, j


def go_structs(src: str) -> Iterator[dict]:
    """Every struct literal of ``src`` with its fields (name -> value, see ``_field_value``),
    ``_line`` (where it opens) and ``_examples`` (the ``Value`` of the struct literals nested
    in it, for an option's ``Examples``), innermost first."""
    toks = gosrc.tokens(src)
    stack: list[dict] = []
    line, i = 1, 0
    while i < len(toks):
        kind, text = toks[i]
        if kind == "nl":
            line += 1
        elif kind == "op" and text == "{":
            stack.append({"_line": line, "_examples": []})
        elif kind == "op" and text == "}" and stack:
            done = stack.pop()
            if stack:
                if "Value" in done and isinstance(done["Value"], str):
                    stack[-1]["_examples"].append(done["Value"])
                elif "Name" not in done:
                    stack[-1]["_examples"].extend(done["_examples"])
            yield done
        elif kind == "ident" and stack and i + 1 < len(toks) and toks[i + 1][1] == ":" \
                and (i == 0 or toks[i - 1][1] in ("{", ",") or toks[i - 1][0] == "nl"):
            value, j = _field_value(toks, i + 2)
            if any(t == "{" and k == "op" for k, t in toks[i + 2:j]):
                stack[-1][text] = True  # a composite literal: walked into for its structs
                i += 2
                continue
            stack[-1][text] = value
            line += sum(1 for k, _ in toks[i:j] if k == "nl")
            line += sum(t.count("\n") for k, t in toks[i:j] if k == "raw")
            i = j
            continue
        if kind == "raw":
            line += text.count("\n")
        i += 1


_OAUTH = None


def _shared_oauth() -> list[dict]:
    """lib/oauthutil's ``SharedOptions`` (the OAuth client id, secret and token...)."""
    global _OAUTH
    if _OAUTH is None:
        src = r5._text(RCLONE, "lib/oauthutil/oauthutil.go") or ""
        body = src[src.index("var SharedOptions"):]
        body = body[:body.index("\n}}\n") + 4]
        _OAUTH = [s for s in go_structs(body) if isinstance(s.get("Name"), str)]
    return _OAUTH


def backend_options(paths: list[str]) -> tuple[str, str, list[tuple[str, dict]]]:
    """(backend name, flag prefix, [(path, option)]) of a backend's Go files."""
    name = prefix = ""
    options: list[tuple[str, dict]] = []
    for path in paths:
        src = r5._text(RCLONE, path) or ""
        for st in go_structs(src):
            if isinstance(st.get("Name"), str) and ("NewFs" in st or "Description" in st) \
                    and "Options" in st:
                name = st["Name"]
                prefix = st.get("Prefix") if isinstance(st.get("Prefix"), str) else name
            elif isinstance(st.get("Name"), str) and ("Help" in st or "Default" in st):
                options.append((path, st))
        if "oauthutil.SharedOptions" in src:
            options.extend(("lib/oauthutil/oauthutil.go", o) for o in _shared_oauth())
    return name, prefix or name, options


# a marked option that names who or where, not a secret (rclone marks personal data too)
_WHO_OR_WHERE = re.compile(
    r"(?i)(?:^|_)(?:host|user|username|login|account|email|mail|id|url|uri|endpoint|region"
    r"|domain|tenant|team|site|bucket|drive|library|root|folder|directory|namespace|project"
    r"|name|address|server|hostname|owner|location|path|impersonate|compartment|namenode|spn"
    r"|public|md5)(?:$|_)")


def _key_value(seed: str) -> str:
    """A random key in one of four shapes people's keys have."""
    rng = random.Random("key:" + seed)
    shape = rng.randrange(4)
    if shape == 0:
        return "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((32, 40, 64))))
    if shape == 1:
        raw = bytes(rng.randrange(256) for _ in range(rng.choice((24, 30, 33))))
        return base64.b64encode(raw).decode()
    if shape == 2:
        return r19._token(seed)[: rng.choice((24, 31, 40))]
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "-".join("".join(rng.choice(alphabet) for _ in range(8)) for _ in range(4))


def _oauth_blob(seed: str) -> str:
    """rclone's stored OAuth token: a JSON object with an access and a refresh token."""
    rng = random.Random("oauth:" + seed)
    access = "".join(rng.choice(string.ascii_letters + string.digits + "-_") for _ in range(60))
    refresh = "".join(rng.choice(string.ascii_letters + string.digits + "-_") for _ in range(45))
    return (f'{{"access_token":"{access}","token_type":"Bearer","refresh_token":"{refresh}",'
            f'"expiry":"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:2{rng.randint(0, 9)}'
            f':11.{rng.randint(100000, 999999)}+01:00"}}')


def _secret_value(option: dict, seed: str) -> str:
    name = option["Name"]
    if option.get("IsPassword") is True or re.search(r"(?i)pass", name):
        return r5.synthetic_password(seed)
    if name == "token" and "JSON" in str(option.get("Help", "")):
        return _oauth_blob(seed)
    if "pem" in name:  # rclone's help: the PEM text on one line, line ends written \n
        body = base64.b64encode(bytes(random.Random("pem:" + seed).randrange(256)
                                      for _ in range(96))).decode()
        return f"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----"
    return _key_value(seed)


def _forms(backend: str, prefix: str, option: str, value: str, seed: str) -> list[str]:
    """The four ways rclone's documentation sets an option (see the module's docstring)."""
    rng = random.Random("forms:" + seed)
    flag = f"--{prefix}-{option.replace('_', '-')}"
    quoted = f"'{value}'" if re.search(r"[\s\"'{}$&;|<>*?]", value) else value
    verb = rng.choice(("lsd remote:", "copy /srv/data remote:backup", "sync ./docs remote:docs",
                       "ls remote:bucket"))
    out = [f"{option} = {value}",
           f"rclone {verb} {flag}={quoted}" if rng.random() < 0.5
           else f"rclone {verb} {flag} {quoted}",
           ("export " if rng.random() < 0.5 else "")
           + f"RCLONE_{prefix.upper()}_{option.upper()}={quoted}"]
    if not re.search(r"[,:\s\"']", value):
        out.append(f"rclone lsf :{backend},{option}={value}:{rng.choice(('bucket', 'path/to/dir', ''))}")
    return out


def rclone(unit: str, paths: list[str]) -> Iterator[dict]:
    """A backend's records (the module's docstring says how each line is labelled)."""
    commit = r5._commit(RCLONE)
    backend, prefix, options = backend_options(paths)
    if not backend:
        LEFT_OUT[_PART[0] + ": a backend without a registration the builder reads"] += 1
        return
    for path, option in options:
        name = option["Name"]
        origin = f"{RCLONE}@{commit}:{path}:{option['_line']}"
        common = {"family": "tool configuration", "source": "rclone backend options",
                  "unit": unit, "origin": origin}
        for text in str(option.get("Help") or "").split("\n"):
            yield from _judged_negative(text, common)
        marked = option.get("Sensitive") is True or option.get("IsPassword") is True
        if marked and _WHO_OR_WHERE.search(name) and option.get("IsPassword") is not True:
            LEFT_OUT[_PART[0] + ": a marked option that names who or where"] += 1
            continue
        if marked:
            value = _secret_value(option, origin)
            for line in _forms(backend, prefix, name, value, origin):
                yield from _positive(line, value, {**common, "kind": "rclone option (marked)"})
            continue
        values = [v for v in [*option["_examples"], option.get("Default")]
                  if isinstance(v, str) and v.strip() and "\n" not in v]
        for n, value in enumerate(dict.fromkeys(values)):
            for line in _forms(backend, prefix, name, value, f"{origin}:{n}"):
                yield from _judged_negative(line, common)


# ---- telegraf: the sample configuration of a plugin with secret-store options ----------

_SENTENCE = re.compile(r"secrets from secret stores for the (.*?) options?\b", re.S)
_SETTING = re.compile(r"^(?P<lead>\s*(?:#\s*)?)(?P<key>[A-Za-z_][\w.-]*)\s*=\s*(?P<value>.*?)\s*$")
_NOT_A_SECRET = re.compile(r"(?i)^(?:user|username|headers?|cookie_auth_headers|.*_headers)$")


def telegraf(unit: str, readme: str, sample: str) -> Iterator[dict]:
    """A plugin's records (the module's docstring says how each line is labelled)."""
    commit = r5._commit(TELEGRAF)
    text = r5._text(TELEGRAF, readme) or ""
    named = _SENTENCE.search(re.sub(r"\s+", " ", text))
    secrets = {w for w in re.findall(r"`([^`]+)`", named.group(1))
               if not _NOT_A_SECRET.match(w) and not _WHO_OR_WHERE.search(w)} if named else set()
    fenced = False
    for number, raw in enumerate(text.split("\n"), 1):
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield from _judged_negative(raw.strip().lstrip("#>*- ").strip(), {
                "family": "tool documentation", "source": "telegraf plugin readmes",
                "unit": unit, "origin": f"{TELEGRAF}@{commit}:{readme}:{number}"})
    for number, raw in enumerate((r5._text(TELEGRAF, sample) or "").split("\n"), 1):
        common = {"family": "tool configuration", "source": "telegraf sample configurations",
                  "unit": unit, "origin": f"{TELEGRAF}@{commit}:{sample}:{number}"}
        setting = _SETTING.match(raw)
        if not setting or setting.group("key") not in secrets:
            yield from _judged_negative(raw, common)
            continue
        value = setting.group("value").strip()
        bare = value.strip("\"'")
        if value.startswith(("[", "{")):
            LEFT_OUT[_PART[0] + ": a named option set to a table or a list"] += 1
            continue
        if bare and r5._literal_value(bare, setting.group("key")) and "@{" not in bare:
            LEFT_OUT[_PART[0] + ": a named option set to the author's example value"] += 1
        else:
            yield from _judged_negative(raw, common)
        key = setting.group("key")
        secret = r5.synthetic_password(common["origin"]) if re.search(r"(?i)pass", key) \
            else _key_value(common["origin"])
        line = f'{setting.group("lead")}{key} = "{secret}"'
        yield from _positive(line, secret, {**common, "kind": "telegraf option (named)"})


# ---- lines ------------------------------------------------------------------------------------

# the decision table flags a private key's header on any line (docs/security.md)
_KEY_HEADER = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")


def _judged_negative(line: str, common: dict) -> Iterator[dict]:
    """A negative, unless the labelling policy reads a credential in it (counted)."""
    if not line.strip():
        return
    if r5.policy_value(line) or r5.unjudged_random(line):
        LEFT_OUT[_PART[0] + ": a negative line the labelling policy reads a value in"] += 1
        return
    if _KEY_HEADER.search(line):
        LEFT_OUT[_PART[0] + ": a negative line with a private key's header"] += 1
        return
    yield from late_sources._negative(line, **common)


def _positive(line: str, secret: str, common: dict) -> Iterator[dict]:
    stripped = line.strip()
    if not 8 <= len(stripped) <= 500:
        LEFT_OUT[_PART[0] + ": a positive shorter than 8 or longer than 500 characters"] += 1
        return
    start = stripped.index(secret)
    yield {"line": stripped, "label": "pos", "secret": secret, "start": start, **common}


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type only
    (its message could quote the unit's text)."""
    _PART[0] = r14.part_of(OUT).get(unit, "tune")
    read = functools.partial(rclone, unit, paths) if unit.startswith("rclone:") \
        else functools.partial(telegraf, unit, *paths)
    yield from r5.read_guarded(read, _PART[0], LEFT_OUT, "unit")


_NOTE = ("Lines labelled mechanically by foreign_sources_r20.py from the tools' own marks "
         "(rclone's Sensitive and IsPassword, telegraf's secret-store sentence): a marked "
         "option written with a synthetic value is a positive; no line is relabelled against "
         "a source verdict. The held-out part's are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE, (LEFT_OUT,))


if __name__ == "__main__":
    main()
