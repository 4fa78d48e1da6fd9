"""The dashboard's pages: memgit.serve.pages' data, made safe, through Jinja2 templates.

Safety is applied to every value on its way out, not field by field:

1. every string of a page's data passes through memgit.policy.judge.quote with the drive's
   policy, so a possible credential (in an entry that landed before the hooks, a dream
   suggestion the checks refused, a queued write's error) shows as ``<redacted: KIND>``,
   never as itself: no page shows a value the gate would refuse;
2. every ``{{ value }}`` of a template goes through :func:`visible` (Jinja2's
   ``finalize``): control characters, bidi controls and other invisible characters are
   shown as ``\\uNNNN`` (memgit.safe_text.printable), so no text can reorder or hide
   what is around it;
3. Jinja2 escapes every value for HTML (``autoescape``): a ``<script>`` in an entry is
   text. A source becomes a link only when it is an ``https://`` URL the policy allows
   (:func:`source_link`), and links carry ``rel="noopener noreferrer nofollow"``; the
   app sends a Content-Security-Policy without any script source as a last line.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote as url_quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from memgit.errors import MemgitError
from memgit.format.entries import ID_RE, INVISIBLE_RE
from memgit.policy.judge import quote, source_allowed, source_scheme
from memgit.policy.settings import Policy
from memgit.safe_text import printable
from memgit.serve import pages
from memgit.serve.paths import DriveName

_NEEDS_PRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff]|"
                              + INVISIBLE_RE.pattern)


def visible(value: Any) -> Any:
    """A template value with control and invisible characters escaped (``\\uNNNN``)."""
    if isinstance(value, str) and _NEEDS_PRINTABLE.search(value):
        return printable(value)
    return value


def source_link(source: str, policy: Policy) -> str | None:
    """The URL a source may link to: an allowed ``https://`` source; else None (shown as
    text: ``javascript:``, ``data:`` and every other scheme never become a link)."""
    if source_scheme(source) == "https" and source.startswith("https://") and \
            source_allowed(source, policy):
        return source
    return None


def human_bytes(n: int) -> str:
    """``n`` bytes as people read them (B, KiB, MiB)."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


@functools.cache
def _environment() -> Environment:
    env = Environment(loader=PackageLoader("memgit.serve", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, finalize=visible, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["url"] = lambda v: url_quote(str(v), safe="/")
    env.filters["bytes"] = human_bytes
    return env


def _scrub(value: Any, policy: Policy | None, memo: dict[str, str]) -> Any:
    """Every string inside ``value`` (dicts, lists) through policy.quote, memoised."""
    if isinstance(value, str):
        out = memo.get(value)
        if out is None:
            out = memo[value] = quote(value, policy)
        return out
    if isinstance(value, dict):
        return {k: _scrub(v, policy, memo) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, policy, memo) for v in value]
    return value


def render(template: str, policy: Policy | None, status: int = 200,
           **data: Any) -> tuple[int, str]:
    safe = _scrub(data, policy, {})
    link = (lambda s: source_link(s, policy)) if policy is not None else (lambda s: None)
    return status, _environment().get_template(template).render(source_link=link, **safe)


def _error(status: int, message: str, name: str = "") -> tuple[int, str]:
    return render("error.html", None, status, title=f"{status}", message=message, name=name)


# --- pages ------------------------------------------------------------------------------


def home_page(root: Path, names: list[DriveName]) -> tuple[int, str]:
    """Every drive with its health (a drive that cannot be read says why)."""
    drives = []
    for name in names:
        try:
            opened = pages.open_drive(root / f"{name}.git")
            drives.append({"name": name, "ok": True, **pages.health(opened)})
        except MemgitError as err:
            drives.append({"name": name, "ok": False, "error": err.message})
    return render("home.html", None, drives=drives, title="Drives", name="")


def drive_page(root: Path, name: DriveName, folder: Path, rest: list[str],
               query: dict[str, str]) -> tuple[int, str]:
    """A drive's pages: overview and Index, a topic, search, an entry's history, the
    board, dreams, mounts."""
    try:
        opened = pages.open_drive(folder)
    except MemgitError as err:
        return _error(500, f"the drive cannot be read: {err.message}", name)
    policy = opened.policy
    common: dict[str, Any] = {"name": name, "policy_kind": policy.kind}
    try:
        if not rest:
            return render("drive.html", policy, title=name, health=pages.health(opened),
                          index=pages.index_listing(opened), **common)
        page, args = rest[0], rest[1:]
        if page == "topics" and args:
            path = "/".join(args)
            found = pages.topic(opened, path)
            if found is None:
                return _error(404, f"no topic {path} at the head of {name}", name)
            return render("topic.html", policy, title=f"{path} - {name}", topic=found,
                          **common)
        if page == "search" and not args:
            text = query.get("q", "").strip()[:500]
            found = pages.search(opened, text) if text else None
            return render("search.html", policy, title=f"search - {name}", q=text,
                          result=found, **common)
        if page == "entries" and len(args) == 1:
            if not ID_RE.match(args[0]):
                return _error(404, "not an entry id", name)
            return render("history.html", policy, title=f"{args[0]} - {name}",
                          history=pages.history(opened, args[0]), **common)
        if page == "questions" and not args:
            return render("questions.html", policy, title=f"questions - {name}",
                          questions=pages.board(opened), **common)
        if page == "dreams" and not args:
            return render("dreams.html", policy, title=f"dreams - {name}",
                          runs=pages.dreams(opened), **common)
        if page == "mounts" and not args:
            return render("mounts.html", policy, title=f"mounts - {name}",
                          mounts=pages.mounts(opened), **common)
    except MemgitError as err:
        return _error(400 if err.exit_code == 2 else 500, err.message, name)
    return _error(404, "no such page", name)
