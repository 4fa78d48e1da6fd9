"""``json.dumps(value, indent=2, ensure_ascii=False)`` for the quick path, without json.

The json package imports re (its encoder and decoder compile their patterns at import),
which costs a quick ``recall --json`` a fifth of its start (docs/performance.md). The
values printed are JSON built from dicts, lists, strings, ints, floats, booleans and None;
:func:`dumps` writes them byte for byte as json.dumps does (tests compare the two) and
hands anything else to json itself.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from typing import Any

# json.encoder's ESCAPE_DCT: the two-character escapes, and \u00XX for other controls
_ESCAPES = {chr(i): f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update({"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n",
                 "\r": "\\r", "\t": "\\t"})


class _Other(Exception):
    """A value of a type this writer leaves to json."""


def _string(text: str) -> str:
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # nothing to escape (the common case)
    return '"' + "".join(_ESCAPES.get(char, char) for char in text) + '"'


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _write(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(int.__repr__(value))
    elif type(value) is float:
        out.append(_float(value))
    elif type(value) in (list, tuple):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            _write(item, inner, out)
        out.append("\n" + indent + "]")
    elif type(value) is dict:
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise _Other  # json converts other keys; leave that to it
            out.append(("," if i else "") + "\n" + inner + _string(key) + ": ")
            _write(item, inner, out)
        out.append("\n" + indent + "}")
    else:
        raise _Other


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, importing json only for a
    value of another type (a str or int subclass, a custom object)."""
    out: list[str] = []
    try:
        _write(value, "", out)
    except _Other:
        import json

        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(out)
