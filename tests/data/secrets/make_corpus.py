"""Generate the secret-scanner corpus: positives.jsonl and negatives.jsonl.

    python tests/data/secrets/make_corpus.py

Every secret here is FAKE: random characters (fixed seed) in the documented
format of the provider.  None was ever issued by a provider.  Where the format
allows it the value carries a FAKE / 0000 marker.

positives.jsonl: {"line", "kind", "secret", "start", "doc", "upstream"}
    line      a memory line as memgit stores it (Markdown bullet + metadata)
    kind      the kind memgit.secrets must report for the secret
    secret    the fake secret, line[start:start + len(secret)] (tests check the span)
    doc       where the format is documented (detect-secrets plugin, gitleaks
              rule id in https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml,
              RFC or provider page)
    upstream  the detect-secrets 1.5 plugin that flags this very line, or ""
              when detect-secrets misses it (prose forms, newer formats)
negatives.jsonl: {"line", "category"}  ordinary memory lines that must pass.

ordinary_drive(n) builds the synthetic 15,000-line drive of bench/bench_secrets.py.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

HERE = Path(__file__).resolve().parent
RNG = random.Random(20260903)

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
DIGITS = string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = string.ascii_uppercase + "234567"
ULID = "0123456789abcdefghjkmnpqrstvwxyz"

DS = "detect-secrets "
GL = "gitleaks rule "


def rnd(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def mixed(n: int, alphabet: str = ALNUM) -> str:
    """Random string with at least one upper, one lower and one digit."""
    while True:
        s = rnd(n, alphabet)
        if (
            any(c.isupper() for c in s)
            and any(c.islower() for c in s)
            and any(c.isdigit() for c in s)
        ):
            return s


def hexs(n: int) -> str:
    while True:
        s = rnd(n, HEX)
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def uuid() -> str:
    return "-".join(hexs(n) for n in (8, 4, 4, 4, 12))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


SOURCES = [
    "claude-code:session/{n}",
    "https://github.com/acme/infra/pull/{n}",
    "https://linear.app/acme/issue/OPS-{n}",
    "codex:thread/{n}",
    "https://acme.slack.com/archives/C04QX1Z2A3B/p169374720{n}",
    "cursor:chat/{n}",
]


def meta() -> str:
    src = RNG.choice(SOURCES).format(n=RNG.randint(1, 9999))
    date = f"2026-{RNG.randint(1, 12):02d}-{RNG.randint(1, 28):02d}"
    ident = "m-" + rnd(26, ULID) if RNG.random() < 0.8 else "entry-" + rnd(16, HEX)
    return f"[source: {src}; added: {date}; id: {ident}]"


def mem(text: str) -> str:
    return f"- {text} {meta()}"


POSITIVES: list[dict[str, object]] = []


def pos(kind: str, doc: str, secret: str, template: str, wrap: bool = True) -> None:
    text = template.format(s=secret)
    start = template.format(s="\x00").index("\x00")
    line = mem(text) if wrap else text
    if wrap:
        start += 2  # "- "
    assert line[start : start + len(secret)] == secret
    POSITIVES.append({"line": line, "kind": kind, "secret": secret, "start": start, "doc": doc})


def build_positives() -> None:
    # ---- AWS
    doc = (
        DS
        + "AWSKeyDetector; https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids"
    )
    for prefix, tpl in [
        ("AKIA", "The CI deploy user's access key id is {s} (rotate quarterly)"),
        ("AKIA", "aws_access_key_id = {s}"),
        ("ASIA", "export AWS_ACCESS_KEY_ID={s} for the temporary session"),
        ("AKIA", "Presigned link used X-Amz-Credential={s}/20260903/us-east-1/s3/aws4_request"),
        ("ASIA", "STS handed back {s} for the assumed role"),
        ("AKIA", "Terraform state shows access_key `{s}` for the backup bucket"),
    ]:
        pos("AWS access key ID", doc, prefix + rnd(16, BASE32), tpl)
    doc = (
        DS
        + "AWSKeyDetector; https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html"
    )
    for tpl in [
        "aws_secret_access_key = {s}",
        "export AWS_SECRET_ACCESS_KEY={s}",
        "The AWS secret key for the backup user: {s}",
        'aws_secret = "{s}" in the old deploy script',
    ]:
        pos("AWS secret access key", doc, mixed(40, B64), tpl)
    for _ in range(2):
        key_id = "AKIA" + rnd(16, BASE32)
        secret = mixed(40, B64)
        pos(
            "AWS secret access key",
            doc,
            secret,
            "Backup credentials: " + key_id + " / {s}",
        )

    # ---- GitHub
    doc = (
        DS
        + "GitHubTokenDetector; https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/"
    )
    for prefix, tpl in [
        ("ghp_", "Joe's personal token is {s}, expires in 30 days"),
        ("ghp_", "git remote set-url origin https://x-access-token:{s}@github.com/acme/app.git"),
        ("gho_", "OAuth app returned {s} for the bot account"),
        ("ghu_", "GitHub App user-to-server token: {s}"),
        ("ghs_", "Installation token {s} was logged by the action"),
        ("ghr_", "refresh with {s} when the user token expires"),
        ("ghp_", "GH_TOKEN={s} gh release create v1.4.0"),
        ("ghp_", "`{s}` has repo scope on acme/infra"),
    ]:
        pos("GitHub token", doc, prefix + mixed(36), tpl)
    doc = (
        GL
        + "github-fine-grained-pat; https://github.blog/2022-10-18-introducing-fine-grained-personal-access-tokens-for-github/"
    )
    for tpl in [
        "Fine-grained PAT for the docs repo: {s}",
        "GITHUB_TOKEN={s}",
        "renovate runs with {s} (read-only)",
        "use {s} for the release workflow",
    ]:
        pos("GitHub fine-grained token", doc, "github_pat_" + mixed(22) + "_" + mixed(59), tpl)

    # ---- GitLab
    doc = (
        DS
        + "GitLabTokenDetector; https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes"
    )
    for secret, tpl in [
        ("glpat-" + mixed(20, B64URL), "GitLab PAT {s} belongs to the release bot"),
        ("glpat-" + mixed(20, B64URL), "export GITLAB_TOKEN={s}"),
        ("gldt-" + mixed(20, B64URL), "Deploy token for the registry: {s}"),
        ("glrt-" + mixed(20, B64URL), "Runner registered with {s}"),
        ("glptt-" + hexs(40), "Pipeline trigger token {s} starts nightly builds"),
        ("GR1348941" + mixed(20, B64URL), "Old runner registration token {s} still works"),
        ("glcbt-" + hexs(2) + "_" + mixed(20, B64URL), "CI job token leaked in log: {s}"),
    ]:
        pos("GitLab token", doc, secret, tpl)

    # ---- Slack
    doc = DS + "SlackDetector; https://api.slack.com/authentication/token-types"
    for secret, tpl in [
        (
            f"xoxb-{rnd(12, string.digits)}-{rnd(13, string.digits)}-{mixed(24)}",
            "Slack bot token {s}",
        ),
        (
            f"xoxb-{rnd(11, string.digits)}-{rnd(13, string.digits)}-{mixed(24)}",
            "SLACK_BOT_TOKEN={s}",
        ),
        (
            f"xoxp-{rnd(12, DIGITS)}-{rnd(12, DIGITS)}-{rnd(13, DIGITS)}-{hexs(32)}",
            "user token for the export script: {s}",
        ),
        (
            f"xapp-1-A{rnd(10, UPPER_ALNUM)}-{rnd(13, string.digits)}-{hexs(64)}",
            "Socket mode app token {s}",
        ),
        (f"xoxa-2-{rnd(12, string.digits)}-{mixed(30)}", "workspace token {s} (legacy)"),
        (
            f"xoxs-{rnd(10, DIGITS)}-{rnd(10, DIGITS)}-{rnd(12, DIGITS)}-{hexs(64)}",
            "{s}",
        ),
    ]:
        pos("Slack token", doc, secret, tpl)
    doc = DS + "SlackDetector; https://api.slack.com/messaging/webhooks"
    for tpl in [
        "Alerts post to {s}",
        "SLACK_WEBHOOK_URL={s}",
        "The #deploys webhook is {s}",
        "curl -X POST -d @payload.json {s}",
    ]:
        team, bot = rnd(8, UPPER_ALNUM), rnd(10, UPPER_ALNUM)
        secret = f"https://hooks.slack.com/services/T{team}/B{bot}/{mixed(24)}"
        pos("Slack webhook URL", doc, secret, tpl)

    # ---- Stripe
    doc = DS + "StripeDetector; https://docs.stripe.com/keys"
    for secret, tpl in [
        ("sk_live_" + mixed(24), "Stripe live secret key {s}"),
        ("sk_live_" + mixed(99), "STRIPE_SECRET_KEY={s}"),
        ("sk_test_" + mixed(24), "test-mode key for CI: {s}"),
        ("sk_live_" + mixed(24), "`{s}` is used by the billing worker"),
    ]:
        pos("Stripe secret key", doc, secret, tpl)
    for secret, tpl in [
        ("rk_live_" + mixed(24), "Restricted key (read charges) {s}"),
        ("rk_live_" + mixed(99), "reporting job uses {s}"),
        ("rk_test_" + mixed(24), "rk for the sandbox: {s}"),
    ]:
        pos("Stripe restricted key", doc, secret, tpl)
    for tpl in ["Checkout page embeds {s}", "publishable key {s} (live mode)"]:
        pos("Stripe publishable key", "https://docs.stripe.com/keys", "pk_live_" + mixed(24), tpl)
    doc = "https://docs.stripe.com/webhooks#verify-official-libraries"
    for tpl in ["webhook signing secret {s}", "STRIPE_WEBHOOK_SECRET={s}"]:
        pos("Stripe webhook secret", doc, "whsec_" + mixed(32), tpl)

    # ---- OpenAI / Anthropic / other AI
    doc = DS + "OpenAIDetector; " + GL + "openai-api-key"
    for secret, tpl in [
        ("sk-proj-" + mixed(74, B64URL) + "T3BlbkFJ" + mixed(74, B64URL), "OpenAI project key {s}"),
        ("sk-proj-" + mixed(58, B64URL) + "T3BlbkFJ" + mixed(58, B64URL), "OPENAI_API_KEY={s}"),
        ("sk-" + mixed(20) + "T3BlbkFJ" + mixed(20), "legacy OpenAI key {s} still in the notebook"),
        (
            "sk-svcacct-" + mixed(58, B64URL) + "T3BlbkFJ" + mixed(58, B64URL),
            "service account key {s}",
        ),
        ("sk-admin-" + mixed(58, B64URL) + "T3BlbkFJ" + mixed(58, B64URL), "admin key: {s}"),
        ("sk-" + mixed(48), "the eval harness reads {s}"),
    ]:
        pos("OpenAI API key", doc, secret, tpl)
    doc = GL + "anthropic-api-key; https://docs.anthropic.com/en/api/getting-started"
    for secret, tpl in [
        ("sk-ant-api03-" + mixed(93, B64URL) + "AA", "Anthropic key {s}"),
        ("sk-ant-api03-" + mixed(93, B64URL) + "AA", "ANTHROPIC_API_KEY={s}"),
        ("sk-ant-admin01-" + mixed(93, B64URL) + "AA", "org admin key {s}"),
        ("sk-ant-api03-" + mixed(93, B64URL) + "AA", "x-api-key: {s}"),
    ]:
        pos("Anthropic API key", doc, secret, tpl)
    doc = GL + "huggingface-access-token; https://huggingface.co/docs/hub/security-tokens"
    for tpl in [
        "HF token {s} can read gated models",
        "HF_TOKEN={s}",
        "huggingface-cli login --token {s}",
    ]:
        pos("Hugging Face token", doc, "hf_" + mixed(34, string.ascii_letters + "0"), tpl)
    pos(
        "Hugging Face token",
        doc,
        "api_org_" + mixed(34, string.ascii_letters + "0"),
        "org token {s}",
    )
    doc = GL + "perplexity-api-key"
    for tpl in ["Perplexity key {s}", "PPLX_API_KEY={s}"]:
        pos("Perplexity API key", doc, "pplx-" + mixed(48), tpl)

    # ---- Google / Azure / other clouds
    doc = GL + "gcp-api-key; https://cloud.google.com/docs/authentication/api-keys"
    for tpl in [
        "Maps key {s} is restricted to *.acme.com",
        "GOOGLE_API_KEY={s}",
        "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={s}",
        'Firebase web config apiKey: "{s}"',
        "the YouTube Data API key {s}",
    ]:
        pos("Google API key", doc, "AIzaSy" + mixed(33, B64URL), tpl)
    doc = (
        DS
        + "AzureStorageKeyDetector; https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string"
    )
    for tpl in [
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};EndpointSuffix=core.windows.net",
        "Storage connection string has AccountKey={s}",
        "AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=https;AccountName=acmebk;AccountKey={s}'",
        "accountkey = {s}",
    ]:
        pos("Azure storage account key", doc, mixed(86, B64) + "==", tpl)
    doc = "https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview"
    for _ in range(3):
        sig = mixed(40, ALNUM + "%") + "%3D"
        pos(
            "Azure SAS token",
            doc,
            sig,
            "https://acmelogs.blob.core.windows.net/exports/q3.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
            "&se=2026-10-01T00:00:00Z&spr=https&sig={s}",
        )
    doc = GL + "azure-ad-client-secret"
    for tpl in ["Entra app client secret {s}", "AZURE_CLIENT_SECRET={s}"]:
        pos(
            "Azure AD client secret",
            doc,
            rnd(3, ALNUM) + str(RNG.randint(0, 9)) + "Q~" + mixed(34, ALNUM + "_~.-"),
            tpl,
        )
    doc = (
        GL
        + "digitalocean-pat; https://docs.digitalocean.com/reference/api/create-personal-access-token/"
    )
    for prefix in ("dop_v1_", "doo_v1_", "dor_v1_"):
        pos("DigitalOcean token", doc, prefix + hexs(64), "DigitalOcean token {s}")
    doc = GL + "heroku-api-key-v2; https://devcenter.heroku.com/articles/authentication"
    for tpl in ["heroku authorizations:create gave {s}", "HEROKU_API_KEY={s}"]:
        pos("Heroku API key", doc, "HRKU-AA" + mixed(58, B64URL), tpl)
    doc = GL + "heroku-api-key; https://devcenter.heroku.com/articles/authentication"
    for tpl in ["HEROKU_API_KEY={s}", "heroku api key: {s}"]:
        pos("Heroku API key", doc, uuid(), tpl)
    doc = GL + "alibaba-access-key-id"
    for tpl in ["Alibaba Cloud AccessKey ID {s}", "ALIBABA_CLOUD_ACCESS_KEY_ID={s}"]:
        pos("Alibaba Cloud access key ID", doc, "LTAI" + mixed(20), tpl)

    # ---- dev tooling
    doc = GL + "databricks-api-token; https://docs.databricks.com/en/dev-tools/auth/pat.html"
    for tpl in ["Databricks PAT {s}", "DATABRICKS_TOKEN={s}"]:
        pos("Databricks token", doc, "dapi" + hexs(32), tpl)
    doc = (
        GL
        + "vault-service-token; https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes"
    )
    for tpl in ["VAULT_TOKEN={s}", "root token after unseal: {s}"]:
        pos("HashiCorp Vault token", doc, "hvs." + mixed(95, B64URL), tpl)
    doc = GL + "hashicorp-tf-api-token"
    for tpl in ["TFE token {s}", 'credentials "app.terraform.io" {{ token = "{s}" }}']:
        pos("Terraform Cloud token", doc, mixed(14) + ".atlasv1." + mixed(67, B64URL), tpl)
    doc = (
        GL
        + "grafana-service-account-token; https://grafana.com/docs/grafana/latest/administration/service-accounts/"
    )
    for secret in (
        "glsa_" + mixed(32) + "_" + hexs(8),
        "glc_" + mixed(60, B64) + "==",
        "eyJrIjoi" + mixed(72),
    ):
        pos("Grafana token", doc, secret, "Grafana token {s} for the dashboards bot")
    doc = (
        GL
        + "new-relic-user-api-key; https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"
    )
    for tpl in ["New Relic user key {s}", "NEW_RELIC_API_KEY={s}"]:
        pos("New Relic key", doc, "NRAK-" + rnd(27, UPPER_ALNUM), tpl)
    doc = GL + "sentry-user-token; https://docs.sentry.io/account/auth-tokens/"
    for tpl in ["SENTRY_AUTH_TOKEN={s}", "sentry-cli uses {s}"]:
        pos("Sentry token", doc, "sntryu_" + hexs(64), tpl)
    doc = GL + "postman-api-token"
    for tpl in ["Postman API key {s}", "POSTMAN_API_KEY={s}"]:
        pos("Postman API key", doc, "PMAK-" + hexs(24) + "-" + hexs(34), tpl)
    doc = GL + "linear-api-key"
    for tpl in ["Linear key {s}", "LINEAR_API_KEY={s}"]:
        pos("Linear API key", doc, "lin_api_" + mixed(40), tpl)
    doc = GL + "atlassian-api-token"
    for tpl in ["Jira API token {s}", "JIRA_API_TOKEN={s}"]:
        pos("Atlassian API token", doc, "ATATT3" + mixed(186, B64URL + "="), tpl)
    doc = "https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/"
    pos("Bitbucket app password", doc, "ATBB" + mixed(32), "Bitbucket app password {s}")
    doc = GL + "notion-api-token"
    for secret in ("ntn_" + rnd(11, string.digits) + mixed(35), "secret_" + mixed(43)):
        pos("Notion token", doc, secret, "Notion integration token {s}")
    doc = GL + "doppler-api-token"
    for tpl in ["DOPPLER_TOKEN={s}", "Doppler service token {s}"]:
        pos("Doppler token", doc, "dp.st." + mixed(43), tpl)
    doc = GL + "pulumi-api-token"
    pos("Pulumi token", doc, "pul-" + hexs(40), "PULUMI_ACCESS_TOKEN={s}")
    doc = GL + "planetscale-api-token"
    pos("PlanetScale token", doc, "pscale_tkn_" + mixed(43), "PlanetScale service token {s}")
    pos("PlanetScale token", doc, "pscale_pw_" + mixed(43), "branch password {s}")
    doc = DS + "ArtifactoryDetector; " + GL + "artifactory-api-key"
    pos("Artifactory token", doc, "AKCp" + mixed(69), "Artifactory API key {s}")
    pos("Artifactory token", doc, "cmVmd" + mixed(59), "Artifactory reference token {s}")
    doc = GL + "1password-secret-key"
    pos(
        "1Password secret",
        doc,
        "-".join(["A3"] + [rnd(n, UPPER_ALNUM) for n in (6, 11, 5, 5, 5)]),
        "1Password secret key for the shared vault: {s}",
    )
    doc = GL + "gitlab-session-cookie"
    pos("GitLab session cookie", doc, rnd(32, LOWER_ALNUM), "Cookie: _gitlab_session={s}")

    # ---- registries
    doc = (
        DS
        + "NpmDetector; https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/"
    )
    for tpl in [
        "npm automation token {s}",
        "NPM_TOKEN={s}",
        "//registry.npmjs.org/:_authToken={s}",
        "publish with {s} from CI",
    ]:
        pos("npm token", doc, "npm_" + mixed(36), tpl)
    pos("npm token", DS + "NpmDetector", uuid(), ".npmrc has //registry.npmjs.org/:_authToken={s}")
    doc = DS + "PypiTokenDetector; https://pypi.org/help/#apitoken"
    for prefix, tpl in [
        ("pypi-AgEIcHlwaS5vcmc", "PyPI upload token {s}"),
        ("pypi-AgEIcHlwaS5vcmc", "TWINE_PASSWORD={s}"),
        ("pypi-AgENdGVzdC5weXBpLm9yZw", "TestPyPI token {s}"),
    ]:
        pos("PyPI token", doc, prefix + mixed(120, B64URL), tpl)
    doc = GL + "rubygems-api-token"
    pos("RubyGems API key", doc, "rubygems_" + hexs(48), "GEM_HOST_API_KEY={s}")

    # ---- messaging
    doc = DS + "TwilioKeyDetector; https://www.twilio.com/docs/iam/api-keys"
    for tpl in ["Twilio API key SID {s}", "TWILIO_API_KEY={s}", "{s} is the SMS sender key"]:
        pos("Twilio API key", doc, "SK" + hexs(32), tpl)
    doc = DS + "TwilioKeyDetector; https://www.twilio.com/docs/glossary/what-is-a-sid"
    for tpl in ["Twilio account {s}", "TWILIO_ACCOUNT_SID={s}", "account sid {s} (prod)"]:
        pos("Twilio account SID", doc, "AC" + hexs(32), tpl)
    doc = (
        DS
        + "SendGridDetector; https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys"
    )
    for tpl in [
        "SendGrid key {s}",
        "SENDGRID_API_KEY={s}",
        "mail relay uses {s}",
        "apikey / {s} as SMTP auth",
    ]:
        pos("SendGrid API key", doc, "SG." + mixed(22, B64URL) + "." + mixed(43, B64URL), tpl)
    doc = GL + "sendinblue-api-token"
    pos("Sendinblue API key", doc, "xkeysib-" + hexs(64) + "-" + mixed(16), "Brevo key {s}")
    doc = (
        GL
        + "mailgun-private-api-token; https://documentation.mailgun.com/docs/mailgun/api-reference/authentication/"
    )
    for tpl in [
        "Mailgun private key {s}",
        "MAILGUN_API_KEY={s}",
        "curl -s --user 'api:{s}' https://api.mailgun.net/v3",
    ]:
        pos("Mailgun API key", doc, "key-" + hexs(32), tpl)
    doc = DS + "MailchimpDetector; https://mailchimp.com/developer/marketing/guides/quick-start/"
    for tpl in ["Mailchimp key {s}", "MAILCHIMP_API_KEY={s}", "newsletter sync uses {s}"]:
        pos("Mailchimp API key", doc, hexs(32) + "-us" + str(RNG.randint(1, 21)), tpl)
    doc = (
        DS + "DiscordBotTokenDetector; https://discord.com/developers/docs/reference#authentication"
    )
    for first in ("MT", "Nz", "OD", "MT"):
        secret = first + mixed(24, B64URL) + "." + mixed(6, B64URL) + "." + mixed(27, B64URL)
        pos("Discord bot token", doc, secret, "Discord bot token {s}")
    doc = "https://discord.com/developers/docs/resources/webhook#execute-webhook"
    for _ in range(2):
        secret = f"https://discord.com/api/webhooks/{rnd(18, string.digits)}/{mixed(68, B64URL)}"
        pos("Discord webhook URL", doc, secret, "build alerts go to {s}")
    doc = DS + "TelegramBotTokenDetector; https://core.telegram.org/bots/api#authorizing-your-bot"
    for tpl in [
        "Telegram bot token {s}",
        "TELEGRAM_BOT_TOKEN={s}",
        "https://api.telegram.org/bot{s}/getMe",
        "{s}",
    ]:
        pos("Telegram bot token", doc, f"{rnd(10, string.digits)}:AA{mixed(33, B64URL)}", tpl)
    doc = GL + "microsoft-teams-webhook"
    teams = (
        f"https://acme.webhook.office.com/webhookb2/{uuid()}@{uuid()}/IncomingWebhook/"
        f"{hexs(32)}/{uuid()}"
    )
    pos("Microsoft Teams webhook URL", doc, teams, "Teams channel webhook {s}")

    # ---- commerce
    doc = DS + "SquareOAuthDetector; https://developer.squareup.com/docs/build-basics/access-tokens"
    for secret, tpl in [
        ("sq0atp-" + mixed(22, B64URL), "Square access token {s}"),
        ("sq0csp-" + mixed(43, B64URL), "Square OAuth secret {s}"),
        ("EAAA" + mixed(60, B64URL), "SQUARE_ACCESS_TOKEN={s}"),
        ("EAAA" + mixed(60, B64URL), "production Square token: {s}"),
    ]:
        pos("Square access token", doc, secret, tpl)
    doc = GL + "shopify-access-token"
    for prefix in ("shpat_", "shpca_", "shppa_", "shpss_"):
        pos("Shopify token", doc, prefix + hexs(32), "Shopify admin token {s}")
    doc = GL + "facebook-page-access-token"
    for prefix in ("EAAC", "EAAM"):
        pos("Facebook access token", doc, prefix + mixed(160), "Facebook page token {s}")
    doc = "https://docs.mapbox.com/help/glossary/access-token/"
    mapbox = "sk.eyJ" + mixed(60, B64URL) + "." + mixed(22, B64URL)
    pos("Mapbox secret token", doc, mapbox, "Mapbox secret token {s}")

    # ---- JWT
    doc = DS + "JwtTokenDetector; https://datatracker.ietf.org/doc/html/rfc7519"
    for alg, tpl in [
        ("HS256", "session cookie was {s}"),
        ("RS256", "Authorization: Bearer {s}"),
        ("ES256", "id_token={s}"),
        ("HS512", "JWT for the staging admin: {s}"),
        ("RS256", "https://app.acme.com/magic-login?jwt={s}"),
    ]:
        header = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
        payload = b64url(
            json.dumps(
                {"sub": rnd(8, LOWER_ALNUM), "iat": RNG.randint(1.7e9, 1.8e9), "role": "admin"},
                separators=(",", ":"),
            ).encode()
        )
        pos("JSON Web Token", doc, f"{header}.{payload}.{mixed(43, B64URL)}", tpl)

    # ---- keys
    doc = DS + "PrivateKeyDetector; https://datatracker.ietf.org/doc/html/rfc7468"
    for header in (
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN DSA PRIVATE KEY-----",
    ):
        pos("private key block", doc, header, "{s}", wrap=False)
    pos("private key block", doc, "-----BEGIN OPENSSH PRIVATE KEY-----", "deploy key: {s} b3Blb...")
    pos("private key block", doc, "PuTTY-User-Key-File-3:", "{s} ssh-ed25519", wrap=False)
    doc = "https://datatracker.ietf.org/doc/html/rfc5958; https://datatracker.ietf.org/doc/html/rfc8017"
    for prefix in (
        "MIIEowIBAAKCAQEA",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",
        "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg",
        "MC4CAQAwBQYDK2VwBCIEI",
        "MHcCAQEEI",
    ):
        pos("private key material", doc, prefix + mixed(64, B64), "key body: {s}")
    pos(
        "private key material",
        "https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.key",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + mixed(40, B64),
        "second line of id_ed25519 is {s}",
    )
    doc = GL + "age-secret-key; https://age-encryption.org/v1"
    for _ in range(2):
        pos(
            "age secret key",
            doc,
            "AGE-SECRET-KEY-1" + rnd(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
            "age identity {s}",
        )

    # ---- structural: URLs, headers
    doc = DS + "BasicAuthDetector; https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1"
    for secret, tpl in [
        ("hunter2", "The staging DB is postgres://app:{s}@db.internal/app"),
        ("pass", "postgres://user:{s}@host"),
        ("token", "https://user:{s}@github.com"),
        ("S3cure!pass", "mysql://root:{s}@10.0.4.12:3306/shop"),
        ("p4ssw0rd", "redis://:{s}@cache.internal:6379/0"),
        (mixed(16), "mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/app"),
        ("ftpPass99", "mirror is ftp://deploy:{s}@files.acme.com/pub"),
        ("guest", "RabbitMQ on amqp://guest:{s}@mq.internal:5672/"),
        (mixed(20), "pip index https://__token__:{s}@pypi.acme.com/simple"),
        ("Winter2026!", "SMTP relay smtp://alerts%40acme.com:{s}@smtp.acme.com:587"),
        (mixed(12), "clone https://joe:{s}@gitlab.acme.com/ops/infra.git"),
    ]:
        pos("password in URL", doc, secret, tpl)
    doc = "https://datatracker.ietf.org/doc/html/rfc7617"
    for creds, tpl in [
        ("admin:" + mixed(12), "Authorization: Basic {s}"),
        ("deploy:hunter2", "curl -H 'Authorization: Basic {s}' https://ci.acme.com/api"),
        ("svc-backup:" + mixed(16), "the proxy sends Basic {s}"),
        ("api:" + mixed(20), "header Authorization: basic {s}"),
    ]:
        pos("HTTP Basic credentials", doc, base64.b64encode(creds.encode()).decode(), tpl)
    doc = "https://datatracker.ietf.org/doc/html/rfc6750"
    for secret, tpl in [
        (mixed(40), "Authorization: Bearer {s}"),
        (mixed(32, ALNUM + "._-"), "the webhook expects Bearer {s}"),
        (mixed(24), 'curl -H "Authorization: Bearer {s}" https://api.acme.com/v2/me'),
        (mixed(64, ALNUM + "-_"), "bearer {s} works for the admin API"),
    ]:
        pos("bearer token", doc, secret, tpl)
    doc = "https://datatracker.ietf.org/doc/html/rfc9110#section-11.6.2"
    for secret, tpl in [
        (hexs(40), "Authorization: token {s}"),
        (mixed(32), "Authorization: ApiKey {s}"),
        (mixed(28), "authorization: {s}"),
    ]:
        pos("Authorization header credential", doc, secret, tpl)
    doc = "https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html"
    for secret in ("Zx81!kq0", mixed(14)):
        pos(
            "netrc credentials",
            doc,
            secret,
            "~/.netrc: machine api.acme.com login deploy password {s}",
        )

    # ---- keyword assignments (detect-secrets KeywordDetector, prose-aware)
    doc = DS + "KeywordDetector"
    for secret, tpl in [
        ("hunter2", "password: {s}"),
        ("Tr0ub4dor&3", "passwd={s}"),
        ("s3cr3t-Pa55", "DB_PASSWORD={s}"),
        ("Bl4ckC0ffee!", "The wifi password is {s}"),
        ("correct-horse-9", "**Password**: `{s}`"),
        ("Xk9#mq2vL", "mysql --password={s} -h db.internal"),
        ("Qw3rty!9", "admin password (staging): {s}"),
        ("N0t-S0-S3cret", 'dbPassword: "{s}"'),
        ("hunter22", "PGPASSWORD={s} psql -h db.internal"),
        ("Summer2026", "Joe's Jenkins password was set to {s}"),
        ("letmein", 'passwd="{s}"'),
        ("rootroot1", "the root pw: {s}"),
        ("g8#Lm2qP", "SMTP pass = {s}"),
        ("correct horse battery staple", 'passphrase: "{s}"'),
    ]:
        pos("password assignment", doc, secret, tpl)
    for secret, tpl in [
        (hexs(20), "token = {s}"),
        (mixed(40), "access_token={s}"),
        (mixed(32), "refresh_token: {s}"),
        (mixed(30), "CI_DEPLOY_TOKEN={s}"),
        (mixed(26), "https://app.acme.com/reset?token={s}"),
        (mixed(36), "the deploy token is {s}"),
        (mixed(24), "authToken: '{s}'"),
    ]:
        pos("token assignment", doc, secret, tpl)
    for secret, tpl in [
        (hexs(32), "api_key: {s}"),
        (mixed(32), "X-API-Key: {s}"),
        (hexs(32), "OPENWEATHER_API_KEY={s}"),
        (mixed(28), 'apiKey: "{s}"'),
        (hexs(32), "the API key is {s}"),
        (uuid(), "api-key={s}"),
    ]:
        pos("API key assignment", doc, secret, tpl)
    for secret, tpl in [
        (mixed(40), "client_secret={s}"),
        ("django-insecure-" + mixed(40, ALNUM + "!@#%^&*(-_=+)"), "SECRET_KEY='{s}'"),
        (mixed(24), "secret={s}"),
        (mixed(32), "webhook secret: {s}"),
        (mixed(44, B64) + "=", "JWT_SECRET={s}"),
    ]:
        pos("secret assignment", doc, secret, tpl)
    for secret, tpl in [
        ("svc:" + mixed(14), "credentials: {s}"),
        (mixed(20), "creds={s}"),
    ]:
        pos("credential assignment", doc, secret, tpl)
    for secret, tpl in [
        (mixed(44, B64) + "=", "signing_key: {s}"),
        (mixed(32), "ENCRYPTION_KEY={s}"),
    ]:
        pos("key assignment", doc, secret, tpl)

    # ---- seed phrases
    doc = "https://github.com/bitcoin/bips/blob/master/bip-0039.mediawiki"
    words = (
        "abandon ability able about above absent absorb abstract absurd abuse access accident "
        "account accuse achieve acid acoustic acquire across act action actor actress actual "
        "adapt add addict address adjust admit adult advance advice aerobic affair afford afraid "
        "again age agent agree ahead aim air airport aisle alarm album alcohol alert alien"
    ).split()
    for n, tpl in [
        (12, "seed phrase: {s}"),
        (24, "Ledger recovery phrase is {s}"),
        (12, "wallet mnemonic = {s}"),
    ]:
        pos("seed phrase", doc, " ".join(RNG.sample(words, n)), tpl)


NEGATIVES: list[dict[str, str]] = []
NEGATIVE_TEXTS: list[tuple[str, bool]] = []


def neg(category: str, text: str, wrap: bool = True) -> None:
    NEGATIVES.append({"line": mem(text) if wrap else text, "category": category})
    NEGATIVE_TEXTS.append((text, wrap))


def build_negatives() -> None:
    for text in [
        "Session notes live at https://example.com/sessions/100",
        "Fix landed in https://github.com/acme/infra/pull/1234",
        "See issue https://github.com/acme/app/issues/8812#issuecomment-1702939123",
        "Commit https://github.com/acme/app/commit/3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345",
        "Design doc: https://docs.google.com/document/d/1a2B3cD4eF5gH6iJ7kL8mN9oP0qRsTuVwXyZ0123456/edit",
        "Budget sheet https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit#gid=0",
        "Talk recording https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
        "Runbook https://acme.atlassian.net/wiki/spaces/OPS/pages/2293761/Rotating+credentials",
        "Thread https://acme.slack.com/archives/C04QX1Z2A3B/p1693747200123456",
        "Notion page https://www.notion.so/acme/Onboarding-0123456789abcdef0123456789abcdef",
        "Figma https://www.figma.com/file/AbC123dEf456GhI789/Checkout-v2?node-id=12-345",
        "Drive file https://drive.google.com/file/d/1AbCdEfGhIjKlMnOpQrStUvWxYz012345/view?usp=sharing",
        "Gist https://gist.github.com/joe/8f3b2c1d4e5f60718293a4b5c6d7e8f9",
        "Console https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#Instances:",
        "Dashboard https://grafana.acme.com/d/aBcD1234/api-latency?orgId=1&from=now-6h",
        "Linear ticket https://linear.app/acme/issue/OPS-412/rotate-the-deploy-token",
        "Discord channel https://discord.com/channels/912345678901234567/912345678901234568",
        "arXiv paper https://arxiv.org/abs/2310.06825",
        "S3 object https://acme-exports.s3.amazonaws.com/2026/09/q3-report.csv",
        "Sentry issue https://acme.sentry.io/issues/4512345678/?project=1234567",
        "Stack Overflow answer https://stackoverflow.com/questions/53099434/using-auth-tokens-in-npmrc",
        "Azure portal https://portal.azure.com/#@acme.onmicrosoft.com/resource/subscriptions/"
        "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/resourceGroups/prod",
        "Repo moved to ssh://git@github.com/acme/app.git",
        "Clone with git@github.com:acme/app.git",
        "Local DB is postgres://localhost:5432/app (no auth in dev)",
        "Cache lives at redis://redis:6379/0",
        "Mail Joe at mailto:joe@example.com",
        "Prometheus scrapes http://10.0.4.12:9100/metrics",
        "Web archive copy https://web.archive.org/web/20260101000000*/acme.com",
        "Proxy config http://proxy.internal:3128 for outbound traffic",
    ]:
        neg("url-with-id", text)
    for _ in range(6):
        neg("commit-hash", f"Regression introduced in commit {hexs(40)}")
    for _ in range(6):
        neg("short-hash", f"Reverted {hexs(RNG.randint(7, 12))} after the outage")
    neg("commit-hash", f"git bisect: good {hexs(40)}, bad {hexs(40)}")
    neg("commit-hash", f"Tag v2.3.1 points at {hexs(40)}")
    for _ in range(6):
        neg("uuid", f"Tenant id {uuid()} is the internal test tenant")
    neg("uuid", f"request_id={uuid()} shows the retry storm")
    neg("uuid", f"trace {uuid()} / span {hexs(16)}")
    for text in [
        "Postgres 16.2 is required since 2026-03-01",
        "Upgraded Node from 18.19.0 to 20.11.1 on 2026-02-14",
        "Release 4.12.0-rc.2 ships on 2026-09-15T10:00Z",
        "python>=3.11,<3.14 is the supported range",
        "Kubernetes 1.29.3-gke.1282001 on the prod cluster",
        "The cron runs at 02:30 UTC every day",
        "SLA is 99.95% monthly; p99 latency 250ms",
        "Invoice 2026-0042 was paid on 2026-04-30",
        "The build number 20260903.4 failed on arm64",
        "Ubuntu 24.04.1 LTS image ami-0a1b2c3d4e5f67890 in us-east-1",
    ]:
        neg("date-version", text)
    for text in [
        "SSH key lives at ~/.ssh/id_ed25519 (never copy it)",
        "TLS key is /etc/ssl/private/server.key, owned by root",
        "Secrets are declared in config/secrets.yml.enc",
        "Token refresh logic is in src/auth/token_refresh.py",
        "Copy .env.example to .env and fill it from the vault",
        "The keyring file is ~/.local/share/keyrings/login.keyring",
        "Terraform state in s3://acme-tfstate/prod/terraform.tfstate",
        "Windows path C:\\Users\\joe\\AppData\\Roaming\\npm\\node_modules",
        "Logs under /var/log/nginx/access.log rotate daily",
        "The password reset email template is templates/email/password_reset.html",
    ]:
        neg("file-path", text)
    for text in [
        "Invite link https://app.acme.com/invite?id=aGVsbG8td29ybGQtdGhpcy1pcy1hLXRlc3Q",
        "OAuth redirect carried state=eyJyZXR1cm4iOiIvaG9tZSJ9 back to /home",
        "Image https://cdn.acme.com/img/Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA.png",
        "Pagination uses next_page_token=CiAKGjBpNDd2Nmp2Zml2cXRvMTQ5ZDc0",
        "YouTube playlist https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
        "Shared folder https://www.dropbox.com/scl/fo/abc123def456ghi789jkl/h?rlkey=xyz",
    ]:
        neg("base64-id-in-link", text)
    for _ in range(4):
        neg("metadata-only", meta(), wrap=False)
    for text in [
        "[source: claude-code:session/42; added: 2026-09-03; id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]",
        "id: m-01jd3xk8q7c9v2n4r6t8w0y1z3",
        f"id: entry-{hexs(16)}",
        "source: https://github.com/acme/infra/pull/1234",
        "added: 2026-09-03",
        f"supersedes: m-{rnd(26, ULID)}",
    ]:
        neg("metadata-only", text, wrap=False)
    for text in [
        "Joe rotates the deploy token every Monday",
        "password policy requires 12 characters",
        "token: see the vault entry",
        "password: see 1Password item 'Staging DB'",
        "The API key lives in 1Password under 'Stripe prod'",
        "Use `gh auth token` to print the current token",
        "Secrets are injected via GitHub Actions secrets",
        "We moved from basic auth to OAuth2 in March",
        "Bearer tokens expire after one hour",
        "The Authorization header is set by the proxy, not the app",
        "Seed the database with `make seed` before running e2e tests",
        "BEGIN TRANSACTION is required before COPY in the migration",
        "The private key is in ~/.ssh/id_ed25519 and must stay there",
        "SSH keys are managed by Teleport",
        "api_key: ${OPENAI_API_KEY}",
        "export GITHUB_TOKEN=$(gh auth token)",
        "password=<redacted>",
        "password: ********",
        "DB_PASSWORD is read from AWS Secrets Manager",
        "token_count: 1532",
        "max_tokens=4096, temperature=0.2",
        "The secret sauce is aggressive caching",
        "Keyboard shortcut: Cmd+K opens search",
        "Key insight: retries must be idempotent",
        "Passkeys replaced passwords for staff accounts",
        "The Asia-Pacific region uses ap-southeast-1",
        "The password is rotated every 90 days",
        "Auth is handled by Keycloak; the realm is acme-prod",
        "The Basic plan costs $10/month",
        "Authorization: Bearer <token>",
        "curl -H 'Authorization: Bearer ${API_TOKEN}' https://api.acme.com/v2/me",
        "postgres://user:<password>@localhost:5432/app is the URL shape",
        "Set PGPASSWORD from the vault, never inline it",
        "secret_name: prod/db/credentials in Secrets Manager",
        "api_key_id: 42 identifies the key, not the key itself",
        "The token is valid for 30 days",
        "Passwords must not be reused across environments",
        "The deploy key was regenerated on 2026-09-01",
        "OAuth scopes: repo, read:org, workflow",
        "credentials: stored in the team vault",
        "Token bucket rate limiter allows 100 requests per second",
        "Keycloak client secret rotation is automatic",
        "passwordless login via magic links is enabled",
        "The JWT expiry is 15 minutes; refresh tokens last 7 days",
        "password_hash uses argon2id with m=65536",
        "Use a passphrase of at least 5 words for the GPG key",
        "secretKeyRef: name: db-creds key: password",
        "The auth token header is X-Auth-Token",
        "client_id=acme-web (public, not a secret)",
        "AWS_PROFILE=staging aws s3 ls",
        "Our key metric is weekly active agents",
        "Monkey-patching the token parser broke 3 tests",
        "The bypass flag is --skip-auth (dev only)",
        "Compass: north star metric is recall",
        "The session token is stored in an HttpOnly cookie",
        "token: v2 format since the migration",
        "Password: Disabled for service accounts",
        "The seed round closed in 2025",
        "Mnemonic for the on-call order: alpha, bravo, charlie",
        "Secret Santa exchange is on Dec 18",
        "The API token scope is read-only",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is the token format in docs",
        "sk-ant-api03-... keys go in ANTHROPIC_API_KEY",
        "AWS docs use AKIAIOSFODNN7EXAMPLE as the sample key",
        "The SAS URL must include sv=, sp= and sig= parameters",
        "Run `openssl rand -hex 32` to make a new secret",
        "`kubectl get secret db-creds -o yaml` shows base64 values",
        "docker login ghcr.io -u joe --password-stdin < token.txt",
        "`pip install detect-secrets==1.5.0` pins the scanner",
        "Run ssh-keygen -t ed25519 -C joe@example.com",
        "The Stripe test key starts with sk_test_ and is safe for CI docs",
        "Use pk_test_ keys in the storybook",
        "Our Slack app uses Socket Mode with an xapp- token from the vault",
        "Bearer auth is preferred over query-string tokens",
        "token = the thing the IdP hands back",
        "password = whatever Ops gave you",
        "Authorization: see the gateway docs",
        "Basic auth: disabled on prod",
        "The recovery phrase is kept offline by two officers",
    ]:
        neg("mentions-credential-words", text)
    for text in [
        "Phone bridge +1 415 555 0100, PIN in the calendar invite",
        "Internal DNS 10.0.0.2 and 10.0.0.3",
        "Timestamps like 1693747200 are seconds since epoch",
        "The hex colour #1a2b3c is the brand blue",
        "Pneumonoultramicroscopicsilicovolcanoconiosis is the longest word in the spellchecker",
        "Markdown table: | name | value | has 2 columns",
        "Emoji support: the release notes use 🚀 and ✅",
        "The order ID format is ORD-2026-000123",
        "Docker image ghcr.io/acme/api@sha256:" + hexs(64),
        'SRI hash integrity="sha384-' + mixed(64, B64) + '" on the CDN script',
        "Base64 of 'hello world' is aGVsbG8gd29ybGQ=",
        "GPG key fingerprint 3AA5 C34B 71E0 5F2B 8C1D  9E3F 4A5B 6C7D 8E9F 0A1B",
        "The cron expression is 0 */6 * * *",
        "The regex ^[a-z0-9-]{3,63}$ validates bucket names",
        "Ticket OPS-1234 tracks the migration to Postgres 16",
        "ULID m-01jd3xk8q7c9v2n4r6t8w0y1z3 supersedes m-01jd3xk8q7c9v2n4r6t8w0y1z2",
        "Checksum md5 9e107d9d372bb6826bd81d3542a419d6 matched",
        "The public SSH key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"
        + mixed(43, B64)
        + " joe@laptop",
        "npm package @acme/ui@3.2.1 depends on react@18.3.1",
        "Feature flag new_checkout_v2 is at 25% rollout",
        "Bucket names: acme-logs-prod, acme-logs-staging",
        "HTTP 401 means the token expired; 403 means missing scope",
        "Latency budget: 120ms p50 / 450ms p99",
        "The team uses Conventional Commits (feat:, fix:, chore:)",
        "Slack channel #ops-alerts gets PagerDuty notifications",
        "The model id is claude-sonnet-4-5-20250929",
        "Joe prefers tabs; Ana prefers spaces; we use ruff format",
        "Coverage threshold is 85% for the core package",
        "Wiki page title: How we rotate credentials (2026 edition)",
        "Meeting moved to 2026-09-10 14:00 CET",
    ]:
        neg("misc", text)


def mark_upstream() -> None:
    """Record which positives detect-secrets' own plugin flags (imports detect-secrets)."""

    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    # detect-secrets' own registry of plugin classes, by class name
    plugins = {c.__name__: c for c in get_mapping_from_secret_type_to_class().values()}
    with default_settings():
        for rec in POSITIVES:
            rec["upstream"] = ""
            doc = str(rec["doc"])
            if not doc.startswith(DS):
                continue
            name = doc[len(DS) :].split(";")[0].strip()
            plugin = plugins[name]()
            found = plugin.analyze_line(filename="memory.md", line=rec["line"], line_number=1)
            secret = str(rec["secret"])
            if any(
                f.secret_value and (secret in f.secret_value or f.secret_value in secret)
                for f in found
            ):
                rec["upstream"] = name


def ordinary_drive(n: int = 15_000, seed: int = 1) -> list[str]:
    """A synthetic drive of n ordinary memory lines (about 140 bytes each),
    made of the negative texts with fresh metadata and varied filler."""
    global RNG
    if not NEGATIVE_TEXTS:
        build_negatives()
    saved, RNG = RNG, random.Random(seed)
    try:
        fillers = [
            "",
            "",
            " Confirmed by Ana.",
            " (see the runbook)",
            f" Follow-up in OPS-{RNG.randint(100, 9999)}.",
            " Applies to prod and staging.",
        ]
        lines = []
        for _ in range(n):
            text, wrap = RNG.choice(NEGATIVE_TEXTS)
            text += RNG.choice(fillers)
            lines.append(mem(text) if wrap else text)
        return lines
    finally:
        RNG = saved


def main() -> None:
    build_positives()
    build_negatives()
    mark_upstream()
    with open(HERE / "positives.jsonl", "w", encoding="utf-8") as fh:
        for rec in POSITIVES:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(HERE / "negatives.jsonl", "w", encoding="utf-8") as fh:
        for rec in NEGATIVES:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    kinds = {r["kind"] for r in POSITIVES}
    upstream = sum(1 for r in POSITIVES if r["upstream"])
    print(
        f"{len(POSITIVES)} positives of {len(kinds)} kinds "
        f"({upstream} also flagged by their detect-secrets plugin), {len(NEGATIVES)} negatives"
    )


if __name__ == "__main__":
    main()
