"""Draw one string that a regular expression matches (for documented formats).

Walks Python's parsed form of the pattern; repeats take their minimum, or a
length drawn in [min, min+8] for open ranges; classes draw from their members.
Deterministic per (pattern, seed).
"""

from __future__ import annotations

import hashlib
import random
import re
import string

try:
    import re._constants as sre_c  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

_ALNUM = string.ascii_letters + string.digits
_CATEGORY = {
    sre_c.CATEGORY_DIGIT: string.digits,
    sre_c.CATEGORY_WORD: _ALNUM + "_",
    sre_c.CATEGORY_SPACE: " ",
    sre_c.CATEGORY_NOT_SPACE: _ALNUM,
    sre_c.CATEGORY_NOT_DIGIT: string.ascii_letters,
    sre_c.CATEGORY_NOT_WORD: "-",
}


def _class(items: list) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op == sre_c.NEGATE:
            negate = True
        elif op == sre_c.LITERAL:
            chars.append(chr(av))
        elif op == sre_c.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op == sre_c.CATEGORY:
            chars.extend(_CATEGORY.get(av, _ALNUM))
    if negate:
        return "".join(c for c in _ALNUM if c not in chars)
    return "".join(c for c in chars if c.isprintable()) or _ALNUM


def _gen(parsed, rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, av in parsed:
        if op == sre_c.LITERAL:
            out.append(chr(av))
        elif op == sre_c.NOT_LITERAL:
            out.append(rng.choice([c for c in _ALNUM if ord(c) != av]))
        elif op == sre_c.ANY:
            out.append(rng.choice(_ALNUM))
        elif op == sre_c.IN:
            out.append(rng.choice(_class(av)))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", -1)):
            lo, hi, sub = av
            top = lo + 8 if hi == sre_c.MAXREPEAT else hi
            n = rng.randint(lo, max(lo, top)) if hi != lo else lo
            out.extend(_gen(sub, rng, groups) for _ in range(n))
        elif op == sre_c.SUBPATTERN:
            gid, _add, _del, sub = av
            text = _gen(sub, rng, groups)
            if gid:
                groups[gid] = text
            out.append(text)
        elif op == sre_c.BRANCH:
            out.append(_gen(rng.choice(av[1]), rng, groups))
        elif op == sre_c.GROUPREF:
            out.append(groups.get(av, ""))
        elif op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue
        elif op == sre_c.CATEGORY:
            out.append(rng.choice(_CATEGORY.get(av, _ALNUM)))
        else:
            raise ValueError(f"unsupported regex construct {op}")
    return "".join(out)


def sample(pattern: str, seed: str) -> str | None:
    """A string matching `pattern`, or None after 20 tries."""
    parsed = sre_parse.parse(pattern)
    rng = random.Random(hashlib.sha256((seed + pattern).encode()).digest())
    for _ in range(20):
        text = _gen(parsed, rng, {})
        if re.fullmatch(pattern, text):
            return text
    return None
