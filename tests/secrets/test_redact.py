"""redact(): quote a value safely in a message (issue 10, part 4)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.secrets import redact, scan_text
from memgit.secrets.rules import extra_rules_from_config

GH = "ghp_Zq8tW3mBHk2pL9xVn4RsT7yQ1uEo6cJa5dFg"
PW = "Xk9fQ2mLp0Zr7Tb4Wq1e"


def test_clean_values_come_back_unchanged_and_identical():
    for value in ("people.md", "m-01jd3xk8q7c9v2n4r6t8w0y1z3", "https://example.com/s/1",
                  "claude-code:session/42", "", "projects/payments"):
        assert redact(value) is value


def test_each_secret_span_becomes_its_kind():
    assert redact(f"notes/{GH}.md") == "notes/<redacted: GitHub token>.md"
    assert redact(f"https://deploy:{PW}@ci.example.com/run/1") == \
        "https://deploy:<redacted: password in URL>@ci.example.com/run/1"
    two = redact(f"token {GH} and password: {PW}")
    assert two == "token <redacted: GitHub token> and password: <redacted: password assignment>"


def test_a_schemeless_connection_string_loses_its_password():
    """Round 17: ``user:PW@host/dbname`` was read as a login pair (``user`` a label, the path
    the password): redact() replaced the path and kept the password."""
    for line in (f"user:{PW}@host/dbname?x=1", f"connect with app:{PW}@db.internal/shop"):
        assert PW not in redact(line)
        assert [f.kind for f in scan_text(line)] == ["password in URL"]


def test_extra_rules_reach_redact():
    rules = extra_rules_from_config([{"id": "acme", "kind": "Acme ticket secret",
                                      "regex": r"ACME-\d{4}-[A-Z]{6}", "keywords": ["acme-"]}])
    assert redact("topic ACME-2041-QKZRWT", rules) == "topic <redacted: Acme ticket secret>"
    assert redact("topic ACME-2041-QKZRWT") == "topic ACME-2041-QKZRWT"


FRAGMENTS = [GH, PW, "password: ", "token=", "https://u:", "@host/", "AKIAZ7Q3XKD5JH2LMN4P",
             "sk_live_Zq8tW3mBHk2pL9xVn4Rs", " ", "/", "-", ".md", "İ", "`", "**"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=10)), max_size=12))
def test_redacted_text_holds_no_detected_secret(parts):
    text = "".join(parts)
    out = redact(text)
    for finding in scan_text(text):
        secret = text[finding.start: finding.end]
        if len(secret) >= 8:
            assert secret not in out
    if not scan_text(text):
        assert out is text
