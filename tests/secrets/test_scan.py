"""Tests of memgit.secrets: corpus recall / false positives, one test family per
rule, the contract of SecretFinding, and robustness on arbitrary text."""

from __future__ import annotations

import base64
import importlib
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.secrets import KINDS, SecretFinding, scan_lines, scan_text

DATA = Path(__file__).parents[1] / "data" / "secrets"
POSITIVES = [json.loads(line) for line in (DATA / "positives.jsonl").read_text().splitlines()]
NEGATIVES = [json.loads(line) for line in (DATA / "negatives.jsonl").read_text().splitlines()]


def kinds(text: str) -> list[str]:
    return [f.kind for f in scan_text(text)]


def spans(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in scan_text(text)]


def detected(rec: dict) -> bool:
    start = rec["start"]
    end = start + len(rec["secret"])
    return any(
        f.kind == rec["kind"] and f.start < end and f.end > start for f in scan_text(rec["line"])
    )


# --------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------


def test_corpus_shape():
    assert len(POSITIVES) >= 150
    assert len({r["kind"] for r in POSITIVES}) >= 25
    assert len(NEGATIVES) >= 150
    for rec in POSITIVES:
        assert rec["doc"], rec
        assert rec["line"][rec["start"] : rec["start"] + len(rec["secret"])] == rec["secret"]


def test_recall_over_corpus():
    misses = [f"{r['kind']}: {r['line'][:90]}" for r in POSITIVES if not detected(r)]
    recall = 1 - len(misses) / len(POSITIVES)
    assert recall >= 0.95, "missed:\n" + "\n".join(misses)


def test_spans_over_corpus():
    """The finding of the expected kind covers exactly the fake secret."""
    wrong = []
    for rec in POSITIVES:
        want = (rec["start"], rec["start"] + len(rec["secret"]))
        got = [(f.start, f.end) for f in scan_text(rec["line"]) if f.kind == rec["kind"]]
        if want not in got:
            wrong.append(f"{rec['kind']}: {rec['line'][:90]}")
    assert len(wrong) <= 0.05 * len(POSITIVES), "\n".join(wrong)


def test_false_positive_rate_over_corpus():
    flagged = [
        f"{r['category']}: {r['line'][:90]} -> {kinds(r['line'])}"
        for r in NEGATIVES
        if scan_text(r["line"])
    ]
    rate = len(flagged) / len(NEGATIVES)
    assert rate <= 0.02, "flagged:\n" + "\n".join(flagged)


def test_kind_never_contains_the_secret():
    """Kinds are fixed names (KINDS), never built from the scanned text.  A short
    secret can still be a word of a kind by chance ("pass" in "password in URL")."""
    assert len(KINDS) >= 25
    for rec in POSITIVES:
        for f in scan_text(rec["line"]):
            assert f.kind in KINDS, f.kind
            secret = rec["line"][f.start : f.end]
            if len(secret) >= 6:
                assert secret not in f.kind, (f.kind, rec["line"])
                assert rec["secret"] not in f.kind


def test_finding_contract():
    line = "- password: hunter2 and token ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    found = scan_text(line)
    assert all(isinstance(f, SecretFinding) for f in found)
    assert [f.start for f in found] == sorted(f.start for f in found)
    with pytest.raises(AttributeError):
        found[0].kind = "x"  # type: ignore[misc]
    assert hash(found[0]) == hash(SecretFinding(found[0].kind, found[0].start, found[0].end))


@pytest.fixture(scope="module")
def corpus_module():
    spec = importlib.util.spec_from_file_location("make_corpus", DATA / "make_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_upstream_plugins_still_flag_their_lines():
    """Each corpus line marked `upstream` is flagged by that detect-secrets plugin:
    the formats we re-express are the ones detect-secrets documents."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    # detect-secrets' own registry of plugin classes, by class name
    plugins = {c.__name__: c for c in get_mapping_from_secret_type_to_class().values()}
    marked = [r for r in POSITIVES if r["upstream"]]
    assert len(marked) >= 50
    with default_settings():
        for rec in marked:
            plugin = plugins[rec["upstream"]]()
            found = plugin.analyze_line(filename="memory.md", line=rec["line"], line_number=1)
            assert found, (rec["upstream"], rec["line"])
            assert detected(rec)


# --------------------------------------------------------------------------
# rule families
# --------------------------------------------------------------------------

GH = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key id AKIA4NPVQ7L2XHR5WJ3M for backups", "AWS access key ID"),
        ("ASIA4NPVQ7L2XHR5WJ3M from STS", "AWS access key ID"),
        (
            "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCY8k2Qz5Lm7v3R",
            "AWS secret access key",
        ),
        (
            "AKIA4NPVQ7L2XHR5WJ3M / wJalrXUtnFEMIK7MDENGbPxRfiCY8k2Qz5Lm7v3R",
            "AWS secret access key",
        ),
    ],
)
def test_aws(text, kind):
    assert kind in kinds(text)


def test_aws_documentation_example_is_allowed():
    assert scan_text("the AWS docs use AKIAIOSFODNN7EXAMPLE") == []
    assert (
        scan_text("secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY with AKIAIOSFODNN7EXAMPLE") == []
    )


def test_aws_secret_needs_context():
    # a git hash next to "aws" is not a secret key; a 40-character base64 run alone is
    # reported as a generic API token (issue 11), not as an AWS key
    assert scan_text("aws deploy at commit 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345") == []
    assert kinds("blob wJalrXUtnFEMIK7MDENGbPxRfiCY8k2Qz5Lm7v3R in the tree") == ["API token"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (GH, "GitHub token"),
        ("gho_" + GH[4:], "GitHub token"),
        ("ghs_" + GH[4:], "GitHub token"),
        ("github_pat_11A7QZK2M0rTbWqLsNvXcY_" + "Hq4Tz9XwPe" * 6, "GitHub fine-grained token"),
        ("glpat-aB3dE5fG7hJ9kL1mN3pQ", "GitLab token"),
        ("GR1348941aB3dE5fG7hJ9kL1mN3pQ", "GitLab token"),
    ],
)
def test_source_hosting(text, kind):
    assert kinds(f"- token {text} [id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]") == [kind]


def test_placeholder_tokens_are_not_flagged():
    assert scan_text("ghp_" + "x" * 36) == []
    assert scan_text("sk-ant-api03-...") == []
    assert scan_text("xoxb-YOUR-TOKEN-HERE") == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("xoxb-123456789012-1234567890123-aB3dE5fG7hJ9kL1mN3pQ5rS7", "Slack token"),
        (
            "https://hooks.slack.com/services/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",
            "Slack webhook URL",
        ),
        (
            "https://discord.com/api/webhooks/918273645501928374/" + "aB3dE5fG7h" * 7,
            "Discord webhook URL",
        ),
        ("MTIzNDU2Nzg5MDEyMzQ1Njc4.GaB3dE.aB3dE5fG7hJ9kL1mN3pQ5rS7tU9", "Discord bot token"),
        ("1234567890:AAaB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3", "Telegram bot token"),
        ("SK7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e", "Twilio API key"),
        ("AC7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e", "Twilio account SID"),
        (
            "SG.aB3dE5fG7hJ9kL1mN3pQ5r.aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f",
            "SendGrid API key",
        ),
        ("key-7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e", "Mailgun API key"),
        ("7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e-us14", "Mailchimp API key"),
    ],
)
def test_messaging(text, kind):
    assert kinds(f"- {text} [source: x]") == [kind]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("sk_live_aB3dE5fG7hJ9kL1mN3pQ5rS7", "Stripe secret key"),
        ("rk_live_aB3dE5fG7hJ9kL1mN3pQ5rS7", "Stripe restricted key"),
        ("pk_live_aB3dE5fG7hJ9kL1mN3pQ5rS7", "Stripe publishable key"),
        ("sq0csp-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f", "Square access token"),
        ("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", "Shopify token"),
        ("sk-proj-" + "aB3dE5fG7h" * 8, "OpenAI API key"),
        ("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", "OpenAI API key"),
        ("sk-ant-api03-" + "aB3dE5fG7h-" * 9 + "AA", "Anthropic API key"),
        ("AIzaSyaB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3", "Google API key"),
        ("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", "Hugging Face token"),
        ("dop_v1_" + "7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e" * 2, "DigitalOcean token"),
        ("HRKU-AA" + "aB3dE5fG7h" * 6, "Heroku API key"),
        ("npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "npm token"),
        ("pypi-AgEIcHlwaS5vcmc" + "aB3dE5fG7h" * 7, "PyPI token"),
        ("dapi7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e", "Databricks token"),
        ("hvs." + "aB3dE5fG7h" * 10, "HashiCorp Vault token"),
        (
            "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6M",
            "age secret key",
        ),
    ],
)
def test_provider_formats(text, kind):
    assert kinds(f"- the key is {text}") == [kind]


def test_azure():
    key = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1h+/Zx" * 2 + "Qw=="
    conn = f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={key};EndpointSuffix=x"
    assert kinds(conn) == ["Azure storage account key"]
    sas = "https://a.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5%3D"
    assert kinds(sas) == ["Azure SAS token"]


def test_jwt():
    def seg(obj: str) -> str:
        return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")

    jwt = (
        seg('{"alg":"HS256","typ":"JWT"}')
        + "."
        + seg('{"sub":"joe","iat":1700000000}')
        + ".aB3dE5fG7hJ9kL1mN3pQ5rS7"
    )
    assert spans(f"cookie {jwt} expired") == [("JSON Web Token", jwt)]
    # the bearer header holds a JWT: one finding, the more specific one
    assert kinds(f"Authorization: Bearer {jwt}") == ["JSON Web Token"]
    # base64 JSON that is not a JWT (OAuth state parameter)
    assert scan_text("state=eyJyZXR1cm4iOiIvaG9tZSJ9.eyJyZXR1cm4iOiIvaG9tZSJ9.x") == []


@pytest.mark.parametrize(
    "header",
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    ],
)
def test_private_key_header_alone(header):
    assert spans(header) == [("private key block", header)]
    assert kinds(f"- deploy key: {header} [id: m-1]") == ["private key block"]


def test_private_key_body_and_public_keys():
    assert kinds("MIIEowIBAAKCAQEAxP3dgGy++bc+fB4Ku5MmPgGHD6/KQ/1kNmLL9LmF") == [
        "private key material"
    ]
    assert kinds("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB") == ["private key material"]
    assert scan_text("-----BEGIN PUBLIC KEY-----") == []
    assert scan_text("-----BEGIN CERTIFICATE-----") == []
    assert scan_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa1b2c3d4e5f6g7h8 joe@laptop") == []
    assert scan_text("prose that mentions BEGIN OPENSSH PRIVATE KEY without the dashes") == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("postgres://app:hunter2@db.internal/app", "hunter2"),
        ("postgres://user:pass@host", "pass"),
        ("https://user:token@github.com", "token"),
        ("redis://:p4ssw0rd@cache:6379/0", "p4ssw0rd"),
        ("mysql://root:S3cure!p@ss@10.0.4.12:3306/shop", "S3cure!p@ss"),
    ],
)
def test_password_in_url(text, secret):
    assert spans(
        f"- The DB is {text} [source: https://x.y/1; id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]"
    ) == [("password in URL", secret)]


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:<password>@localhost/app",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
        "git clone https://oauth2:$GITLAB_TOKEN@gitlab.com/acme/app.git",
        "https://user:****@example.com",
        "ssh://git@github.com/acme/app.git",
        "https://example.com:8443/path@v2",
        "postgres://localhost:5432/app",
    ],
)
def test_url_without_password(text):
    assert scan_text(text) == []


def test_url_token_is_reported_by_its_provider():
    text = f"https://x-access-token:{GH}@github.com/acme/app.git"
    assert spans(text) == [("GitHub token", GH)]


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        (
            "Authorization: Basic " + base64.b64encode(b"deploy:hunter2").decode(),
            "HTTP Basic credentials",
            None,
        ),
        ("Authorization: Bearer aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1", "bearer token", None),
        (
            "Authorization: token 7f3a9c1e5b2d8f4a6c0e9b1d3f5a7c2e1b4d6f8a",
            "Authorization header credential",
            None,
        ),
        ("machine api.acme.com login deploy password Zx81!kq0", "netrc credentials", "Zx81!kq0"),
    ],
)
def test_headers(text, kind, secret):
    assert kinds(text) == [kind]
    if secret:
        assert spans(text)[0][1] == secret


@pytest.mark.parametrize(
    "text",
    [
        "Basic auth is disabled",
        "The Basic plan costs $10/month",
        "Bearer tokens expire after one hour",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        "Authorization: see the gateway docs",
    ],
)
def test_headers_negative(text):
    assert scan_text(text) == []


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("password: hunter2", "password assignment", "hunter2"),
        ("passwd=hunter", "password assignment", "hunter"),
        ("DB_PASSWORD=s3cr3t-Pa55", "password assignment", "s3cr3t-Pa55"),
        ("PGPASSWORD=hunter22 psql", "password assignment", "hunter22"),
        ('dbPassword: "Tr0ub4dor&3"', "password assignment", "Tr0ub4dor&3"),
        ("The wifi password is Bl4ckC0ffee!", "password assignment", "Bl4ckC0ffee!"),
        ("admin password (staging): Qw3rty!9", "password assignment", "Qw3rty!9"),
        ("password for the admin console is Admin#2026", "password assignment", "Admin#2026"),
        ("token = 7c3e91fa04b8d26e5f13", "token assignment", "7c3e91fa04b8d26e5f13"),
        (
            "https://app.acme.com/reset?token=Zy3vj50HmDpaCthkEMbIQh",
            "token assignment",
            "Zy3vj50HmDpaCthkEMbIQh",
        ),
        (
            "api_key: 4f9c2e7f3a9c1e5b2d8f4a6c0e9b1d3f",
            "API key assignment",
            "4f9c2e7f3a9c1e5b2d8f4a6c0e9b1d3f",
        ),
        ("X-API-Key: T3nmadBR5gqWHeRKaAQfOTYV", "API key assignment", "T3nmadBR5gqWHeRKaAQfOTYV"),
        ("secret=OTJw4qzJTkuJwxETAWnfhikt", "secret assignment", "OTJw4qzJTkuJwxETAWnfhikt"),
        ("client_secret: 'Fh15awgEWPNDOuKFgDq'", "secret assignment", "Fh15awgEWPNDOuKFgDq"),
        ("creds=VVeBfQAWAA8UhsVt5s06", "credential assignment", "VVeBfQAWAA8UhsVt5s06"),
    ],
)
def test_keyword_assignments(text, kind, secret):
    assert spans(f"- {text} [source: claude-code:session/42; added: 2026-09-03]") == [
        (kind, secret)
    ]


@pytest.mark.parametrize(
    "text",
    [
        # borderline, decided: prose after the keyword is not a secret
        "token: see the vault entry",
        "password: see 1Password item 'Staging DB'",
        "Joe rotates the deploy token every Monday",
        "password policy requires 12 characters",
        "The password is rotated every 90 days",
        "password: Hunter (the dog's name)",
        "Password: Disabled for service accounts",
        "password: 2FA-enforced",
        # placeholders and references
        "password=<redacted>",
        "password: ********",
        "api_key: ${OPENAI_API_KEY}",
        "export GITHUB_TOKEN=$(gh auth token)",
        "api_key=os.getenv('API_KEY')",
        "password: !vault |",
        "password: '{{ vault_db_password }}'",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "password = settings.DB_PASSWORD",
        "password: DB_PASSWORD",
        # counts, names and suffixed keys are not secrets
        "max_tokens=4096",
        "token_count: 1532",
        "next_page_token=CiAKGjBpNDd2Nmp2Zml2cXRvMTQ5ZDc0",
        "secret_name: prod/db/credentials",
        "PASSWORD_MIN_LENGTH=12",
        "tokenizer=tiktoken",
        "bypass=true",
        "Pass rate: 98.57%",
    ],
)
def test_keyword_negatives(text):
    assert scan_text(f"- {text} [source: claude-code:session/42; added: 2026-09-03]") == []


def test_seed_phrase():
    words = "abandon ability able about above absent absorb abstract absurd abuse access accident"
    assert spans(f"seed phrase: {words}") == [("seed phrase", words)]
    assert scan_text("seed the database with make seed before the tests") == []
    assert scan_text("The recovery phrase is kept offline by two officers") == []


def test_overlaps_keep_the_specific_kind():
    assert kinds(f"token={GH}") == ["GitHub token"]
    assert kinds(f"GITHUB_TOKEN: {GH}") == ["GitHub token"]


def test_several_findings_on_one_line():
    text = f"- password: hunter2; token {GH}; key AKIA4NPVQ7L2XHR5WJ3M"
    assert kinds(text) == ["password assignment", "GitHub token", "AWS access key ID"]


def test_empty_and_plain():
    assert scan_text("") == []
    assert scan_text("- Joe prefers tabs") == []


def test_scan_lines_indexes():
    lines = [
        "- ordinary",
        f"- token {GH}",
        "- ordinary too",
        "- password: hunter2 and sk_live_aB3dE5fG7hJ9kL1mN3pQ5rS7",
    ]
    result = scan_lines(lines)
    assert [(i, f.kind) for i, f in result] == [
        (1, "GitHub token"),
        (3, "password assignment"),
        (3, "Stripe secret key"),
    ]
    assert scan_lines(iter(lines)) == result  # any iterable
    assert scan_lines([]) == []


def test_unicode_that_changes_length_when_lowercased():
    # "İ".lower() is two characters: offsets must still be those of the original
    text = "İİİİ password: hunter2 İ"
    assert spans(text) == [("password assignment", "hunter2")]


# --------------------------------------------------------------------------
# robustness and cost
# --------------------------------------------------------------------------

FRAGMENTS = [
    "password",
    "token",
    ": ",
    "=",
    "://",
    "@",
    "-----BEGIN ",
    "PRIVATE KEY",
    "AKIA",
    "ghp_",
    "sk-",
    "eyJ",
    ".",
    "Basic ",
    "Bearer ",
    "seed phrase: ",
    "abandon ",
    "hunter2",
    "xox",
    "'",
    '"',
    "`",
    "(",
    "İ",
]


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_never_raises_on_arbitrary_text(text):
    for f in scan_text(text):
        assert 0 <= f.start < f.end <= len(text)
        assert f.kind in KINDS


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=30))
def test_never_raises_on_secret_like_text(parts):
    text = "".join(parts)
    for f in scan_text(text):
        assert 0 <= f.start < f.end <= len(text)
        assert f.kind in KINDS


PATHOLOGICAL = [
    "a_",
    "password=",
    "password",
    "key",
    "key-",
    "token: ",
    "api key is ",
    "pass (",
    "a-b.",
    "AKIA",
    "1234567890:",
    "eyJhbGc.",
    "://a:b@",
    "x://a:",
    "://",
    ":",
    "seed ",
    "Basic ",
    "bearer ",
    "Authorization: ",
    "machine a login b password ",
    "-----BEGIN ",
    "AccountKey=",
    "aws secret ",
    # round 5's rules: thousands of findings on one line resolve in n log n
    "identified by ",
    "user/pass: a/",
    "sqlplus a/",
    "redis-cli -a ",
    "--a-password ",
    "login(",
    "mot de passe ",
    "\u5bc6\u7801\uff1a",
    "pre-shared key: ",
    "a, b string = ",
    "password has been changed to ",
]


@pytest.mark.parametrize("chunk", PATHOLOGICAL)
def test_long_lines_stay_linear(chunk):
    """No quadratic blow-up: a 40,000-character line of repeated keyword-like
    fragments scans in well under a second."""
    text = chunk * (40_000 // len(chunk))
    start = time.perf_counter()
    scan_text(text)
    assert time.perf_counter() - start < 2.0, chunk  # quadratic would take minutes


def test_import_is_light():
    code = (
        "import sys, memgit.secrets as s, memgit.secrets.values as v; "
        "assert 'detect_secrets' not in sys.modules; assert 'requests' not in sys.modules; "
        "assert 'betterleaks' not in sys.modules; "
        "assert s._compiled == {} and v._RX == {}, 'a regex was compiled at import'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("trie", [False, True])
def test_a_lone_surrogate_does_not_break_the_scan(trie):
    """A non-UTF-8 path read with surrogateescape reaches the scanner as a lone
    surrogate; both keyword finders take it, and a token beside it is still found."""
    import memgit.secrets as package
    from memgit.secrets import engine

    engine.use_trie_finder(trie)
    package._compiled.clear()  # the next scan builds the finder chosen above
    try:
        assert scan_text("caf\udce9.md") == []
        token = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"
        assert [f.kind for f in scan_text("caf\udce9 " + token)]
    finally:
        engine.use_trie_finder(False)
        package._compiled.clear()


@pytest.mark.parametrize("seed", range(40))
def test_memgit_source_ids_are_not_user_token_pairs(seed):
    """``memgit:observation/<id>`` is a URI path, not ``user:TOKEN`` (ids are random)."""
    import random

    rng = random.Random(seed)
    ident = "m-01" + "".join(rng.choice("0123456789abcdefghjkmnpqrstvwxyz") for _ in range(24))
    line = (f"- Who owns billing? [source: memgit:observation/{ident}; added: 2026-12-01; "
            f"id: {ident}; kind: question; status: open]")
    assert scan_text(line) == []


@pytest.mark.parametrize(("line", "secret"), [
    ("| prod db | deploy | Tq9vLm2Xw8Rb#k1 |", "Tq9vLm2Xw8Rb#k1"),
    ("| staging | admin | `*Wq4Lp9Zr2Kx` |", "*Wq4Lp9Zr2Kx"),
])
def test_a_generated_password_in_a_table_cell(line, secret):
    found = scan_text(line)
    assert [(f.kind, line[f.start:f.end]) for f in found] == [("password in a table", secret)]


@pytest.mark.parametrize("line", [
    "| Name | Version | Path |",
    "| foo | v1.2.3-beta.4 | /usr/lib/x |",
    "| MyComponentName | UserRepository2 | getUserById |",
    "| Tq9vLm2Xw8Rb#k1 | first cell: the row's name |",
    "| a | <YOUR_PASSWORD> |",
    "| a | XXXXXXXXXXXX |",
    "| a | bob@Example99.org |",
])
def test_table_cells_that_are_not_passwords(line):
    assert scan_text(line) == []


def test_a_real_digest_behind_a_placeholder_salt_is_a_hash():
    """passlib's bcrypt test vectors: a salt of X and a computed digest."""
    line = "('U*U*U', '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a'),"
    assert [f.kind for f in scan_text(line)] == ["password hash"]
    assert scan_text("$2a$10$" + "X" * 53) == []


@pytest.mark.parametrize("line", [
    "- Wi-Fi: network `office`, passphrase `Tq9vLm2Xw8Rb`",
    "- wifi password `Tq9vLm2Xw8Rb`",
    "- set password to `Tq9vLm2Xw8Rb`",
])
def test_a_credential_word_then_a_code_span(line):
    found = scan_text(line)
    assert [(f.kind, line[f.start:f.end]) for f in found] == [
        ("password assignment", "Tq9vLm2Xw8Rb")]


@pytest.mark.parametrize("line", [
    "- the password `field` is required",
    "- rotate the token `ACCESS_TOKEN` weekly",
    "- secret `${DB_PASSWORD}`",
    "- the api key `OPENAI_API_KEY` env var",
])
def test_a_credential_word_then_a_name_in_a_code_span(line):
    assert scan_text(line) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(1, 12),
                          st.sampled_from(["a", "b"])), max_size=40))
def test_overlap_resolution_matches_the_plain_definition(spans):
    """engine._resolve keeps, strongest first, each candidate that overlaps none kept:
    the same as checking every kept span (what it replaced, quadratic on long lines)."""
    from memgit.secrets.engine import _resolve

    candidates = sorted({(p, s, s + n, k) for p, s, n, k in spans})
    plain: list[tuple[int, int, str]] = []
    for _p, start, end, kind in candidates:
        if all(end <= s or start >= e for s, e, _k in plain):
            plain.append((start, end, kind))
    assert (_resolve(candidates) if candidates else []) == sorted(plain)


def _keyword_entry():  # type: ignore[no-untyped-def]
    """The compiled keyword-assignment rule, as the engine dispatches it."""
    from memgit.secrets import _comp

    scan_text("x")
    return next(e for _w, _named, actions in _comp(()).table for _t, e, _p in actions
                if e.rule.id == "keyword-assignment")


def _corpus_lines() -> list[str]:
    dev = DATA / "dev" / "lines.jsonl"
    return [json.loads(x)["line"] for x in dev.read_text().splitlines()] + \
        [r["line"] for r in POSITIVES + NEGATIVES]


def test_the_keyword_check_reports_inside_its_value_group():
    """A rule's ``value_group`` bounds what its check reports (the group's span less one
    pair of quotes): the engine drops a match so bounded inside a stronger finding before
    its check, so a span outside it would be lost. Every keyword match of the corpus."""
    from memgit.secrets import engine

    entry = _keyword_entry()
    assert entry.bound == "val"
    reported = 0
    for line in _corpus_lines():
        for m in entry.rx.finditer(line):
            verdict = entry.fn(m, line)
            if isinstance(verdict, tuple):
                lo, hi = engine._value_span(m, entry.bound, line)
                assert lo <= verdict[0] and verdict[1] <= hi, line
                reported += 1
    assert reported > 1000


def test_the_value_group_shortcut_changes_no_finding():
    """The same findings on every corpus line with the keyword rule's ``value_group``
    shortcut and without it (its group's whole span, the name included)."""
    entry = _keyword_entry()
    lines = _corpus_lines()
    with_bound = [scan_text(line) for line in lines]
    entry.bound = ""
    try:
        without = [scan_text(line) for line in lines]
    finally:
        entry.bound = "val"
    assert with_bound == without
    assert sum(map(bool, with_bound)) > 1500


@pytest.mark.parametrize("line,secret", [
    (r'body = "{\"password\": \"wqeTR583zn\", \"user\": \"bob\"}"', "wqeTR583zn"),
    (r'curl -d "{\"client_secret\":\"Hq7rT2xWv9LpQ3zK\"}" https://h/token', "Hq7rT2xWv9LpQ3zK"),
    (r'log: {\"msg\": \"ok\", \"api_key\": \"Tq9vLm2Xw8Rb4Kp7\"}', "Tq9vLm2Xw8Rb4Kp7"),
])
def test_json_escaped_inside_a_string_is_read_and_its_span_is_the_lines(line, secret):
    """engine._scan_unescaped: the line is read again without its \\" escapes; the finding's
    span is mapped back onto the line as written."""
    found = scan_text(line)
    assert [line[f.start:f.end] for f in found] == [secret]


@pytest.mark.parametrize("line", [r'say \"hi\" to \"bob\"', r'x = "a\\\\\"b"', '\\"' * 40])
def test_escaped_quotes_alone_are_no_credential(line):
    assert scan_text(line) == []


# a password percent-encoded from its first character (found by the hostile sweep,
# bench/hostile_sweep.py): "%" at the start had meant a template, "%s" or "%PASSWORD%"
@pytest.mark.parametrize("password", ["%51v7G%46fW%640a%33k%4Cm%5Ap", "%70%40ss%21Zq8vR2mX"])
def test_a_percent_encoded_password_in_a_url_is_found(password: str) -> None:
    line = f"- connect to postgres://deploy:{password}@db.internal.example.com/app"
    assert [f.kind for f in scan_text(line)] == ["password in URL"]


@pytest.mark.parametrize("template", ["%s", "%(password)s", "%PASSWORD%", "%DB_PASS%",
                                      "%70assword", "%24%7BDB_PASSWORD%7D"])
def test_percent_templates_in_a_url_are_not_passwords(template: str) -> None:
    assert scan_text(f"- url: postgres://deploy:{template}@db.example.com/app") == []


def test_a_percent_encoded_password_refuses_the_push(tmp_path: Path) -> None:
    from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

    drive = Drive(tmp_path, files=base_files())
    before = drive.main()
    url = "postgres://deploy:%51v7G%46fW%640a%33k%4Cm%5Ap@db.internal.example.com/app"
    drive.build(({"people.md": people_text(entry(f"the app uses {url}", ulid_like(92)))},
                 "add"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG401" in result.codes(), result.stderr
    assert "%51v7G%46fW" not in result.stderr
    assert drive.main() == before


def test_a_memgit_serve_token_refuses_the_push(tmp_path: Path) -> None:
    """memgit's own tokens (mgt_<id>_<secret>, docs/serve.md) were no credential to the
    scanner: one in prose, or as MEMGIT_TOKEN=..., landed (hostile sweep)."""
    import secrets as random_secrets

    from memgit.serve.tokens import PREFIX
    from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

    token = f"{PREFIX}{random_secrets.token_hex(6)}_{random_secrets.token_urlsafe(32)}"
    assert [f.kind for f in scan_text(f"MEMGIT_TOKEN={token}")] == ["memgit serve token"]
    drive = Drive(tmp_path, files=base_files())
    before = drive.main()
    drive.build(({"people.md": people_text(entry(f"CI clones with {token}", ulid_like(93)))},
                 "add"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG401" in result.codes(), result.stderr
    assert token[17:29] not in result.stderr
    assert drive.main() == before


def test_terminal_colours_around_a_token_are_read_as_blanks():
    """A terminal's output pasted into a note keeps its colour codes (ESC[93m ... ESC[0m) around
    the token it printed: the scanner reads them as blanks, so the offsets stay the line's."""
    line = ">>>\x1b[93msk-proj-" + "aB3dE5fG7h" * 8 + "\x1b[0m<<<"
    found = scan_text(line)
    assert [f.kind for f in found] == ["OpenAI API key"]
    assert line[found[0].start: found[0].end].startswith("sk-proj-")
    assert scan_text("plain \x1b[31mred\x1b[0m text, \x1b[1;32mOK\x1b[0m") == []
