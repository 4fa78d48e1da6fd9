"""Structural credential forms as their tools document them, with synthetic values.

Each form is the shape of an example in the tool's own manual (the URL is kept
as the line's origin); the values are random, drawn per line. These cover the
families that provider fixtures do not: command lines, connection strings,
Authorization headers, crypt hashes, encoded PEM and user:pass, and passwords
stated in prose and Markdown, the way agents write them in notes. Negatives of
the same shapes (placeholders, references, labels without values) are listed
with them.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
from collections.abc import Iterator

_A = string.ascii_letters + string.digits


def _rng(key: str) -> random.Random:
    return random.Random(hashlib.sha256(("forms:" + key).encode()).digest())


def pw(r: random.Random, n: int = 14, symbols: str = "!@#%^&*-_") -> str:
    chars = [r.choice(_A) for _ in range(n - 2)] + [r.choice(string.digits), r.choice(symbols)]
    r.shuffle(chars)
    return "".join(chars)


def tok(r: random.Random, n: int = 32, alphabet: str = _A) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


# unit -> (doc URL, positive templates, negative templates); {p} password, {t} token,
# {u} user, {b} base64 user:pass, {pem} base64 of a PEM header, {h} crypt hash
FORMS: dict[str, tuple[str, list[str], list[str]]] = {
    "mysql-cli": ("https://dev.mysql.com/doc/refman/8.0/en/connecting.html", [
        "mysql -u root -p{p} shop", "mysqldump -u backup -p{p} --all-databases > all.sql",
        "- connect with `mysql -h db.internal -u app -p{p}`",
        "mysqladmin -u root -p{p} status", "- prod DB: mysql --user=admin --password={p} prod",
        "mariadb -uroot -p{p} -e 'show databases'",
    ], [
        "mysql -u root -p shop", "- connect with `mysql -h db.internal -u app -p` and type it",
        "mysqldump -u backup -p --all-databases > all.sql", "mysql --password (prompts)",
    ]),
    "curl-cli": ("https://curl.se/docs/manpage.html#-u", [
        "curl -u deploy:{p} https://ci.internal/api/jobs", "- `curl --user admin:{p} http://localhost:9200`",
        "curl -s -u svc-bot:{p} -X POST https://jira.acme.io/rest/api/2/issue",
        "wget --user=mirror --password={p} https://repo.internal/pkg.tgz",
        "- use `curl -H 'Authorization: Bearer {t}' https://api.acme.io/v1/me`",
        "curl -H \"X-Api-Key: {t}\" https://api.acme.io/v2/items",
    ], [
        "curl -u $USER:$TOKEN https://ci.internal/api/jobs", "curl -u \"${USER}:${PASS}\" https://x",
        "curl --user <user>:<password> https://example.com", "curl -H 'Authorization: Bearer $TOKEN' https://api",
        "- wget --user=mirror --ask-password https://repo.internal/pkg.tgz",
    ]),
    "cli-options": ("https://docs.oracle.com/en/java/javase/21/docs/specs/man/keytool.html", [
        "keytool -importkeystore -srckeystore a.p12 -srcstorepass {p} -deststorepass {p}",
        "sshpass -p '{p}' ssh ops@10.0.3.7", "psql \"postgresql://app:{p}@db:5432/app\"",
        "- `vault login -method=userpass username=ops password={p}`",
        "docker login -u robot -p {p} registry.acme.io",
        "gh auth login --with-token <<< {t}", "- ran `openssl pkcs12 -export -passout pass:{p} -out c.p12`",
        "az login --service-principal -u 0d9f2b1e-8f3a-4c2e-9b6d-1a2b3c4d5e6f -p {p} --tenant acme",
    ], [
        "docker login -u robot --password-stdin registry.acme.io < token.txt",
        "sshpass -f ~/.pw ssh ops@10.0.3.7", "keytool -list -keystore a.p12 (prompts for the password)",
        "- `vault login -method=userpass username=ops` prompts for the password",
    ]),
    "ado-odbc": ("https://learn.microsoft.com/en-us/dotnet/framework/data/adonet/connection-string-syntax", [
        "Server=tcp:sql.acme.net,1433;Database=shop;User ID=app;Password={p};Encrypt=True;",
        "Data Source=db01;Initial Catalog=crm;User Id=crm_app;Pwd={p};",
        "- conn string: `Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={p};`",
        "Host=pg.internal;Port=5432;Username=svc;Password={p};Database=events",
        "\"ConnectionStrings\": {{ \"Default\": \"Server=.;Database=App;User Id=sa;Password={p};\" }}",
    ], [
        "Server=tcp:sql.acme.net,1433;Database=shop;Authentication=Active Directory Default;",
        "Data Source=db01;Initial Catalog=crm;Integrated Security=True;",
        "Server=db;Database=app;User Id=sa;Password=<your-password>;",
    ]),
    "jdbc-dsn": ("https://jdbc.postgresql.org/documentation/use/", [
        "jdbc:postgresql://db:5432/app?user=app&password={p}&ssl=true",
        "jdbc:mysql://db.internal:3306/shop?user=shop&password={p}",
        "- DSN `postgres://reporting:{p}@warehouse.internal:5432/dw`",
        "DATABASE_URL=mysql://app:{p}@127.0.0.1:3306/app",
        "dsn: \"host=pg dbname=app user=app password={p} sslmode=require\"",
        "redis://:{p}@cache.internal:6379/0", "amqps://svc:{p}@mq.acme.io/vhost",
    ], [
        "jdbc:postgresql://db:5432/app?user=app&ssl=true",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
        "dsn: \"host=pg dbname=app user=app sslmode=require\"", "redis://cache.internal:6379/0",
    ]),
    "http-headers": ("https://datatracker.ietf.org/doc/html/rfc9110#section-11.6.2", [
        "Authorization: Basic {b}", "- header `Authorization: Bearer {t}`",
        "Proxy-Authorization: Basic {b}", "\"auths\": {{\"registry.acme.io\": {{\"auth\": \"{b}\"}}}}",
        "- the webhook sends `X-Api-Key: {t}`", "Authorization: token {t}",
    ], [
        "Authorization: Basic <base64 of user:password>", "Authorization: Bearer ${TOKEN}",
        "- send the `Authorization: Bearer` header with the user's token",
        "Proxy-Authorization: Basic", "- the API answers 401 without an Authorization header",
    ]),
    "crypt-hashes": ("https://man7.org/linux/man-pages/man5/crypt.5.html", [
        "- admin hash in /etc/shadow: {h}", "root:{h}:19000:0:99999:7:::",
        "htpasswd entry: deploy:{h}", "- the seeded user has password_hash `{h}`",
    ], [
        "- shadow entries look like $6$salt$hash", "root:*:19000:0:99999:7:::",
        "- bcrypt hashes start with $2b$ and a cost such as 12",
    ]),
    "encoded-pem": ("https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets", [
        "  tls.key: {pem}", "SSH_PRIVATE_KEY_B64={pem}", "- the CI variable DEPLOY_KEY holds {pem}",
    ], [
        "  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJJakFOQmdrcWhraUc5dzBCQVFFRkFBT0NBUThB",
        "- the CI variable DEPLOY_KEY holds the base64 of the key (see the vault entry)",
    ]),
    "markdown-notes": ("https://github.github.com/gfm/", [
        "- **Password:** {p}", "- Password: {p}", "* **API key**: `{t}`", "- **Token**: {t}",
        "| staging | admin | {p} |", "- Admin login: `admin` / `{p}`",
        "**Password**: `{p}`", "- __password__: {p}", "- Login: ops, Password - {p}",
        "1. **DB password:** {p}", "- [Password]: {p}",
    ], [
        "- **Password:** stored in 1Password (Staging DB)", "- Password: see the vault entry",
        "* **API key**: `$OPENAI_API_KEY`", "- **Token**: <redacted>", "| staging | admin | (in vault) |",
        "- **Password:** ********", "- Password reset link expires after 24 hours",
        "- The **Password** field is required on the login form",
    ]),
    "prose-notes": ("https://docs.anthropic.com/en/docs/claude-code/memory", [
        "- the password for user deploy is {p}", "- Joe said the staging password is {p}",
        "- wifi password: {p}", "- the admin console password is now {p} (changed Monday)",
        "- use {p} as the password for the test account", "- root password on db01 = {p}",
        "- API token for the bot: {t}", "- the passphrase is {p}",
    ], [
        "- the password for user deploy lives in the team vault",
        "- Joe rotates the staging password every quarter",
        "- use your SSO password for the test account", "- the admin console password was reset today",
        "- passwords must be at least 12 characters", "- the API token is passed as an env var",
    ]),
    "generic-assign": ("https://12factor.net/config", [
        "STRIPE_KEY={t}", "export SERVICE_TOKEN={t}", "app_secret: {t}",
        "\"signing_key\": \"{t}\"", "- CLIENT_SECRET={t}", "webhook_secret = \"{t}\"",
        "SENTRY_AUTH_KEY={t}", "encryption_key: {t}",
    ], [
        "STRIPE_KEY=${STRIPE_KEY}", "export SERVICE_TOKEN=$(vault read -field=token secret/svc)",
        "app_secret: !vault |", "\"signing_key\": \"\"", "- CLIENT_SECRET is set in the CI settings",
        "primary_key = \"id\"", "sort_key: created_at", "cache_key = \"user:42:profile\"",
        "GITHUB_API_KEY= DYNATRACE_API_KEY=", "passwordLabel:\"Password:\"",
        "api_key: your_api_key_here", "token: sha256~XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "ACCESS_KEY=abcdefghijklmnopqrst", "SECRET=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ]),
}


def _crypt(r: random.Random) -> str:
    salt = tok(r, 16, string.ascii_letters + string.digits + "./")
    kind = r.choice(["$6$", "$5$", "$1$", "$2b$12$", "$argon2id$v=19$m=65536,t=3,p=4$", "$y$j9T$"])
    if kind == "$2b$12$":
        return kind + tok(r, 53, string.ascii_letters + string.digits + "./")
    if kind.startswith("$argon2"):
        return kind + tok(r, 22, _A + "+/") + "$" + tok(r, 43, _A + "+/")
    if kind == "$1$":
        return kind + salt[:8] + "$" + tok(r, 22, _A + "./")
    return kind + salt + "$" + tok(r, 86 if kind == "$6$" else 43, _A + "./")


def _pem(r: random.Random) -> str:
    body = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + tok(r, 40, _A + "+/") + "\n"
    return base64.b64encode(body.encode()).decode()


def forms() -> Iterator[dict]:
    for unit, (doc, pos, neg) in FORMS.items():
        for label, templates in (("pos", pos), ("neg", neg)):
            for i, template in enumerate(templates):
                r = _rng(f"{unit}:{label}:{i}")
                values = {"p": pw(r), "t": tok(r, r.choice([24, 32, 40])), "u": "deploy",
                          "b": base64.b64encode(f"deploy:{pw(r)}".encode()).decode(),
                          "pem": _pem(r), "h": _crypt(r)}
                line = re.sub(r"\{(p|t|u|b|pem|h)\}", lambda m, v=values: v[m.group(1)], template)
                line = line.replace("{{", "{").replace("}}", "}")
                rec = {"line": line, "label": label, "family": unit, "kind": unit,
                       "source": "documented forms (synthetic values)",
                       "origin": f"{doc} (form); memgit tests/data/secrets/corpus_tools/documented_forms.py",
                       "unit": "forms:" + unit}
                if label == "pos":
                    secret = next((v for k, v in values.items() if k != "u" and v in line), "")
                    rec["secret"] = secret
                    rec["start"] = line.index(secret) if secret else 0
                yield rec
