"""Read the string values of Go test tables (trufflehog's detector tests).

Only what those files use: string literals (raw and interpreted), identifiers
bound at file or function scope, ``+`` concatenation and ``fmt.Sprintf`` with
``%s``/``%v``/``%d``/``%q``. Anything else makes the expression unknown (None).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_TOKEN = re.compile(
    r"""(?P<raw>`[^`]*`)
      | (?P<str>"(?:[^"\\\n]|\\.)*")
      | (?P<sprintf>fmt\.Sprintf\b)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
      | (?P<num>\d+)
      | (?P<op>:=|[-+(){}\[\],:=])
      | (?P<ws>\s+|//[^\n]*)
      | (?P<other>.)""",
    re.X | re.S,
)

_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def _unquote(lit: str) -> str:
    body = lit[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "x" and i + 3 < len(body):
                out.append(chr(int(body[i + 2 : i + 4], 16)))
                i += 4
                continue
            if nxt == "u" and i + 5 < len(body):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESC.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def tokens(src: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(src):
        kind = m.lastgroup or "other"
        if kind == "ws":
            if "\n" in m.group(0):
                out.append(("nl", "\n"))
            continue
        out.append((kind, m.group(0)))
    return out


class _Parser:
    def __init__(self, toks: list[tuple[str, str]], env: dict[str, str]) -> None:
        self.toks = toks
        self.env = env
        self.i = 0

    def peek(self, skip_nl: bool = True) -> tuple[str, str]:
        j = self.i
        while skip_nl and j < len(self.toks) and self.toks[j][0] == "nl":
            j += 1
        return self.toks[j] if j < len(self.toks) else ("eof", "")

    def take(self) -> tuple[str, str]:
        while self.i < len(self.toks) and self.toks[self.i][0] == "nl":
            self.i += 1
        tok = self.toks[self.i] if self.i < len(self.toks) else ("eof", "")
        self.i += 1
        return tok

    def expr(self) -> str | None:
        value = self.term()
        while self.peek()[1] == "+":
            self.take()
            right = self.term()
            value = None if value is None or right is None else value + right
        return value

    def term(self) -> str | None:
        kind, text = self.take()
        if kind == "raw":
            return text[1:-1]
        if kind == "str":
            return _unquote(text)
        if kind == "sprintf":
            if self.take()[1] != "(":
                return None
            args = [self.expr()]
            while self.peek()[1] == ",":
                self.take()
                if self.peek()[1] == ")":
                    break
                args.append(self.expr())
            if self.take()[1] != ")":
                return None
            return _sprintf(args)
        if kind == "ident":
            if self.peek(False)[1] == "(":  # a call we do not know
                self._skip_group()
                return None
            return self.env.get(text)
        if kind == "num":
            return text
        return None

    def _skip_group(self) -> None:
        depth = 0
        while True:
            kind, text = self.take()
            if kind == "eof":
                return
            if text in "([{":
                depth += 1
            elif text in ")]}":
                depth -= 1
                if depth == 0:
                    return


def _sprintf(args: list[str | None]) -> str | None:
    if not args or args[0] is None:
        return None
    fmt_s, rest = args[0], list(args[1:])
    out: list[str] = []
    i = 0
    while i < len(fmt_s):
        ch = fmt_s[i]
        if ch == "%" and i + 1 < len(fmt_s):
            verb = fmt_s[i + 1]
            if verb == "%":
                out.append("%")
            else:
                if not rest or rest[0] is None:
                    return None
                value = rest.pop(0)
                assert value is not None
                out.append('"' + value + '"' if verb == "q" else value)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ASSIGN = re.compile(r"^\s*(?:const\s+|var\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|=)\s*", re.M)


def bindings(src: str) -> dict[str, str]:
    """name -> string for every `name = <string expr>` / `name := ...` in the file."""
    env: dict[str, str] = {}
    for m in _ASSIGN.finditer(src):
        toks = tokens(src[m.end() : m.end() + 20000])
        value = _Parser(toks, env).expr()
        if value is not None:
            env[m.group(1)] = value
    return env


def cases(src: str) -> Iterator[tuple[str, str | None, list[str | None] | None]]:
    """(case name, input, want) for each table entry with an ``input:`` field."""
    env = bindings(src)
    toks = tokens(src)
    for idx, (kind, text) in enumerate(toks):
        if kind != "ident" or text != "input":
            continue
        if idx + 1 >= len(toks) or toks[idx + 1][1] != ":":
            continue
        p = _Parser(toks, env)
        p.i = idx + 2
        value = p.expr()
        name = _field_back(toks, idx, "name", env)
        want = _want_after(toks, p.i, env)
        yield name, value, want


def _field_back(toks: list[tuple[str, str]], idx: int, field: str, env: dict[str, str]) -> str:
    for j in range(idx - 1, max(0, idx - 40), -1):
        if toks[j] == ("ident", field) and toks[j + 1][1] == ":":
            p = _Parser(toks, env)
            p.i = j + 2
            return p.expr() or ""
        if toks[j][1] == "{" and j < idx - 1 and toks[j - 1][1] in (",", "{"):
            break
    return ""


def _want_after(
    toks: list[tuple[str, str]], start: int, env: dict[str, str]
) -> list[str | None] | None:
    for j in range(start, min(len(toks), start + 60)):
        if toks[j] == ("ident", "input"):
            return None
        if toks[j] == ("ident", "want") and toks[j + 1][1] == ":":
            p = _Parser(toks, env)
            p.i = j + 2
            kind, text = p.take()
            if text == "nil":
                return []
            if text != "[":
                return None
            # []string{...} or []detectors.Result{...}
            p.take()
            elem = p.take()
            if elem[1] != "string":
                return None
            if p.take()[1] != "{":
                return None
            out: list[str | None] = []
            while p.peek()[1] != "}":
                out.append(p.expr())
                if p.peek()[1] == ",":
                    p.take()
                elif p.peek()[1] != "}":
                    return None
            return out
    return None
