# ruff: noqa: E501, E731, E701, E702
"""Credential forms written from the tools' manuals and the formats' specifications,
generated with seeded random values, and what each family's detectors find of them
(issue 29, round 8): a probe of the scanner on forms nobody here collected, never the
corpus. Lines are synthetic (no real credential); nothing of a line is printed but its
family's counts, and the forms missed as their index.

    python bench/probe_secret_forms.py                            # this tree
    PYTHONPATH=/tmp/main/src python bench/probe_secret_forms.py   # another tree's scanner

Families: provider formats in seven contexts (bare, a list item, prose, JSON, an
environment line, a call, a code span), prose and assignments, password hashes, prose
logins and "password" in other languages, command lines (database clients, curl/wget,
registries, cloud CLIs, PuTTY, FreeRDP, Net-SNMP, Java properties...), connection
strings, credential names crossed with value shapes, provider token variants,
configuration and code syntaxes; then benign lines in the same families (references,
options, paths, words) that must pass.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
import uuid
from collections.abc import Callable


def provider_formats_in_seven_contexts() -> list[str]:
    """provider formats in seven contexts."""
    R = random.Random(29)
    AN = string.ascii_letters + string.digits
    def rs(n: int, alpha: str = AN) -> str:
        return "".join(R.choice(alpha) for _ in range(n))
    HEX = "0123456789abcdef"
    B64 = AN + "+/"
    URLB = AN + "-_"
    def b64u(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    tok = {
     "slack-bot": "xoxb-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24),
     "slack-user": "xoxp-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(32, HEX),
     "slack-app": "xapp-1-A" + rs(10, string.ascii_uppercase+string.digits) + "-" + rs(13, string.digits) + "-" + rs(64, HEX),
     "slack-rotating": "xoxe.xoxp-1-" + rs(140, AN),
     "slack-refresh": "xoxe-1-" + rs(140, AN),
     "slack-config": "xoxe.xoxb-1-" + rs(120, AN),
     "slack-legacy-ws": "xoxa-2-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(12,string.digits) + "-" + rs(64, HEX),
     "slack-xoxr": "xoxr-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24),
     "slack-xoxs": "xoxs-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(64, HEX),
     "slack-webhook": "https://hooks.slack.com/services/T" + rs(8, string.ascii_uppercase+string.digits) + "/B" + rs(10, string.ascii_uppercase+string.digits) + "/" + rs(24),
     "slack-workflow": "https://hooks.slack.com/workflows/T" + rs(10, string.ascii_uppercase+string.digits) + "/A" + rs(10, string.ascii_uppercase+string.digits) + "/" + rs(18, string.digits) + "/" + rs(24),
     "slack-trigger": "https://hooks.slack.com/triggers/T" + rs(10, string.ascii_uppercase+string.digits) + "/" + rs(13, string.digits) + "/" + rs(32, HEX),
     "aws-akia": "AKIA" + rs(16, string.ascii_uppercase + "234567"),
     "aws-asia": "ASIA" + rs(16, string.ascii_uppercase + "234567"),
     "aws-abia": "ABIA" + rs(16, string.ascii_uppercase + "234567"),
     "aws-acca": "ACCA" + rs(16, string.ascii_uppercase + "234567"),
     "aws-secret": rs(40, B64),
     "aws-session": "IQoJb3JpZ2luX2VjE" + rs(300, B64) + "==",
     "aws-session-fwo": "FwoGZXIvYXdzE" + rs(250, B64),
     "gcp-api": "AIza" + rs(35, URLB),
     "gcp-oauth-secret": "GOCSPX-" + rs(28, URLB),
     "gcp-refresh": "1//0" + rs(100, URLB),
     "gcp-access": "ya29." + rs(150, URLB),
     "gcp-sa-json-key": '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEv' + rs(60, B64) + '\\n"',
     "anthropic-api": "sk-ant-api03-" + rs(93, URLB) + "AA",
     "anthropic-admin": "sk-ant-admin01-" + rs(93, URLB) + "AA",
     "anthropic-oat": "sk-ant-oat01-" + rs(93, URLB) + "AA",
     "openai-proj": "sk-proj-" + rs(74, URLB) + "T3BlbkFJ" + rs(74, URLB),
     "openai-svc": "sk-svcacct-" + rs(74, URLB) + "T3BlbkFJ" + rs(74, URLB),
     "openai-admin": "sk-admin-" + rs(74, URLB) + "T3BlbkFJ" + rs(74, URLB),
     "openai-legacy": "sk-" + rs(20) + "T3BlbkFJ" + rs(20),
     "openai-none": "sk-None-" + rs(74, URLB) + "T3BlbkFJ" + rs(74, URLB),
     "azure-storage": rs(86, B64) + "==",
     "azure-aad-secret": rs(3, AN) + "8Q~" + rs(34, URLB + "~."),
     "azure-sas": "sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2025-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig=" + rs(43, B64).replace("+","%2B").replace("/","%2F") + "%3D",
     "azure-conn": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + rs(86, B64) + "==;EndpointSuffix=core.windows.net",
     "azure-sb": "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + rs(43, B64) + "=",
     "azure-cosmos": "AccountEndpoint=https://x.documents.azure.com:443/;AccountKey=" + rs(86, B64) + "==;",
     "azure-func-key": rs(44, URLB) + "AzFu" + rs(5, URLB) + "A==",
     "azure-appinsights-ikey": "InstrumentationKey=" + "-".join(rs(n, HEX) for n in (8,4,4,4,12)),
     "jwt-hs256": b64u({"alg":"HS256","typ":"JWT"}) + "." + b64u({"sub":"1234","name":"x","iat":1516239022}) + "." + rs(43, URLB),
     "jwt-rs256": b64u({"alg":"RS256","kid":"abc"}) + "." + b64u({"iss":"https://a.b","exp":1716239022,"aud":"x"}) + "." + rs(342, URLB),
     "jwt-none": b64u({"alg":"none"}) + "." + b64u({"sub":"1234","admin":True}) + ".",
     "bcrypt": "$2b$12$" + rs(53, AN + "./"),
     "bcrypt-2y": "$2y$10$" + rs(53, AN + "./"),
     "argon2": "$argon2id$v=19$m=65536,t=3,p=4$" + rs(22, B64) + "$" + rs(43, B64),
     "sha512crypt": "$6$" + rs(16, AN + "./") + "$" + rs(86, AN + "./"),
     "sha256crypt": "$5$rounds=5000$" + rs(16, AN + "./") + "$" + rs(43, AN + "./"),
     "md5crypt": "$1$" + rs(8, AN + "./") + "$" + rs(22, AN + "./"),
     "apr1": "$apr1$" + rs(8, AN + "./") + "$" + rs(22, AN + "./"),
     "yescrypt": "$y$j9T$" + rs(22, AN + "./") + "$" + rs(43, AN + "./"),
     "django-pbkdf2": "pbkdf2_sha256$600000$" + rs(22, AN) + "$" + rs(43, B64) + "=",
     "mysql41": "*" + rs(40, "0123456789ABCDEF"),
     "ldap-ssha": "{SSHA}" + rs(32, B64),
     "htpasswd-sha": "{SHA}" + rs(27, B64) + "=",
     "github-pat": "ghp_" + rs(36),
     "github-fine": "github_pat_11" + rs(20, string.ascii_uppercase+string.digits) + "_" + rs(59),
     "gitlab-pat": "glpat-" + rs(20, URLB),
     "stripe": "sk_live_" + rs(99),
     "sendgrid": "SG." + rs(22, URLB) + "." + rs(43, URLB),
     "npm": "npm_" + rs(36),
     "hf": "hf_" + rs(34, string.ascii_letters),
     "twilio-sk": "SK" + rs(32, HEX),
     "twilio-ac-auth": "AC" + rs(32, HEX) + ":" + rs(32, HEX),
     "discord-bot": rs(24, AN) + "." + rs(6, URLB) + "." + rs(27, URLB),
     "telegram": rs(10, string.digits) + ":AA" + rs(33, URLB),
     "mailgun": "key-" + rs(32, HEX),
     "mailchimp": rs(32, HEX) + "-us" + rs(2, string.digits),
     "shopify": "shpat_" + rs(32, HEX),
     "doppler": "dp.st." + rs(43, AN),
     "pulumi": "pul-" + rs(40, HEX),
     "databricks": "dapi" + rs(32, HEX),
     "digitalocean": "dop_v1_" + rs(64, HEX),
     "linear": "lin_api_" + rs(40),
     "postman": "PMAK-" + rs(24, HEX) + "-" + rs(34, HEX),
     "vault": "hvs." + rs(90, URLB),
     "tfc": rs(14) + ".atlasv1." + rs(67),
     "age": "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
     "groq": "gsk_" + rs(52),
     "replicate": "r8_" + rs(37),
     "perplexity": "pplx-" + rs(48),
     "xai": "xai-" + rs(80),
     "deepseek": "sk-" + rs(32, HEX),
     "mistral-ctx": "MISTRAL_API_KEY=" + rs(32),
     "cohere-ctx": "co_api_key: " + rs(40),
    }
    contexts = [
     ("bare", "{}"),
     ("bullet", "- {}"),
     ("prose", "I used {} to call it yesterday"),
     ("json-other", '{{"value": "{}"}}'),
     ("env-generic", "VALUE={}"),
     ("quoted-code", 'client = Client("{}")'),
     ("md-code", "`{}`"),
    ]
    return [c.format(t) for t in tok.values() for _name, c in contexts]


def prose_and_assignments() -> list[str]:
    """prose and assignments."""
    R = random.Random(7)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    pw = lambda: rs(4, string.ascii_lowercase) + rs(3, string.digits) + rs(3, string.ascii_uppercase) + "!"
    lines = [
     "discord: MT" + rs(22) + "." + rs(6) + "." + rs(38, AN+"-_"),
     "MT" + rs(22) + "." + rs(6) + "." + rs(38, AN+"-_"),
     "Bot token MTA" + rs(21) + "." + rs(6) + "." + rs(27, AN+"-_"),
     # prose
     f"The password is {pw()}", f"password: {pw()}", f"pw: {pw()}", f"pwd {pw()}",
     f"creds: admin / {pw()}", f"login with admin and {pw()}", f"use admin/{pw()} to log in",
     f"user admin pass {pw()}", f"the db password for staging is {pw()}",
     f"Root password was changed to {pw()} yesterday", f"- staging login: admin:{pw()}",
     f"Password for the VPN: {pw()}", f"wifi password {pw()}", f"WiFi: HomeNet / {pw()}",
     f"El password es {pw()}", f"La contraseña es {pw()}", f"Le mot de passe est {pw()}",
     f"Das Passwort ist {pw()}", f"A senha é {pw()}", f"Пароль: {pw()}", f"パスワード: {pw()}", f"密码是{pw()}",
     f"Het wachtwoord is {pw()}", f"Hasło: {pw()}", f"Şifre: {pw()}", f"lösenord: {pw()}",
     f"API key is {rs(32)}", f"my token: {rs(40)}", f"secret = {rs(24)}",
     f"Remember: the admin password is {pw()}.", f"Logged in as root with password {pw()}",
     f"ssh root@10.0.0.1 (password {pw()})", f"The API key for OpenWeather is {rs(32,'0123456789abcdef')}",
     f"passphrase for the key: {pw()}", "PIN: 4821", f"the master password: {pw()}",
     # assignments
     f"password={pw()}", f'PASSWORD="{pw()}"', f"db.password = {pw()}", f"<password>{pw()}</password>",
     f'"password": "{pw()}"', f"password: '{pw()}'", f'$password = "{pw()}";', f'password := "{pw()}"',
     f'let password = "{pw()}";', f'String password = "{pw()}";', f'var password = "{pw()}";',
     f'export DB_PASS={pw()}', f'set PASSWORD={pw()}', f'$env:API_TOKEN = "{rs(32)}"', f'ENV API_SECRET={rs(32)}',
     f'client_secret = "{rs(32)}"', f'clientSecret: "{rs(32)}"', f'"client-secret": "{rs(32)}"',
     f'app_secret={rs(32)}', f'jwt_secret: {rs(40)}', f'signing_key = "{rs(40)}"', f'encryption_key={rs(32)}',
     f'private_token = "{rs(20)}"', f'access_token: {rs(40)}', f'refresh_token={rs(50)}', f'auth_token = "{rs(32)}"',
     f'api_key: {rs(32)}', f'apiKey = "{rs(32)}"', f'x-api-key: {rs(32)}', f'SECRET_KEY = "{rs(50, AN+"!@#$%^&*(-_=+)")}"',
     f'passwd = {pw()}', f'pass: {pw()}', f'pwd={pw()}', f'db_pass = "{pw()}"', f'mysql_pwd={pw()}',
     f'password_hash: "$2b$12${rs(53, AN+"./")}"', f'stringData:\n  password: {pw()}',
     f'  password: {rs(16)}', f'webhook_secret: whsec_{rs(32)}', f'credentials: {rs(40)}',
     f"{{'user': 'admin', 'password': '{pw()}'}}", f"auth=('admin', '{pw()}')", f"HTTPBasicAuth('admin', '{pw()}')",
     f'requests.get(url, auth=("admin", "{pw()}"))', f'new NetworkCredential("admin", "{pw()}")',
     f'DriverManager.getConnection(url, "admin", "{pw()}")', f'psycopg2.connect(host="db", user="app", password="{pw()}")',
     f'mysql.createConnection({{host: "db", user: "root", password: "{pw()}"}})',
     f'Password={pw()};', f'spring.datasource.password: {pw()}', f'PGPASSWORD={pw()} psql -h db -U app',
     f'MYSQL_PWD={pw()} mysql -u root', f'sqlcmd -S srv -U sa -P {pw()}', f'psql "postgresql://app:{pw()}@db/app"',
     f'mongodb+srv://app:{pw()}@cluster0.abcde.mongodb.net/db', f'redis://:{pw()}@cache:6379/0', f'amqp://guest:{pw()}@mq:5672/',
     f'smtp://mailer:{pw()}@smtp.example.org:587', f'Server=db;Database=app;User Id=sa;Password={pw()};',
     f'jdbc:mysql://db:3306/app?user=root&password={pw()}', f'Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={pw()};',
     f'host=db port=5432 dbname=app user=app password={pw()}', f'ftp://user:{pw()}@ftp.example.org/', f'https://admin:{pw()}@jenkins.example.org',
    ]
    return lines


def password_hashes_and_other_credential_formats() -> list[str]:
    """password hashes and other credential formats."""
    R = random.Random(11)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    C = AN + "./"; B = AN + "+/"; H="0123456789abcdef"
    hashes = {
     "phpass-P": "$P$B" + rs(30, C), "phpass-H": "$H$9" + rs(30, C), "drupal7": "$S$D" + rs(52, C),
     "django-sha1": "sha1$" + rs(5, AN) + "$" + rs(40, H), "django-md5": "md5$" + rs(5,AN) + "$" + rs(32,H),
     "django-bcrypt": "bcrypt_sha256$$2b$12$" + rs(53, C), "django-argon2": "argon2$argon2id$v=19$m=102400,t=2,p=8$" + rs(22,B) + "$" + rs(22,B),
     "passlib-pbkdf2": "$pbkdf2-sha256$29000$" + rs(22, C) + "$" + rs(43, C), "scrypt-7": "$7$C6..../....$" + rs(43, C),
     "cisco8": "$8$" + rs(14, C) + "$" + rs(43, C), "cisco9": "$9$" + rs(14, C) + "$" + rs(43, C),
     "cisco-type5": "enable secret 5 $1$" + rs(4, C) + "$" + rs(22, C), "cisco-type7": "password 7 " + rs(22, "0123456789ABCDEF"),
     "pg-md5": "md5" + rs(32, H), "pg-scram": "SCRAM-SHA-256$4096:" + rs(24, B) + "$" + rs(44, B) + ":" + rs(44, B),
     "atlassian": "{PKCS5S2}" + rs(64, B), "ssha512": "{SSHA512}" + rs(88, B), "crypt-ldap": "{CRYPT}$6$" + rs(16,C) + "$" + rs(86,C),
     "jenkins": "#jbcrypt:$2a$10$" + rs(53, C), "mssql2012": "0x0200" + rs(136, "0123456789ABCDEF"),
     "oracle12": "S:" + rs(60, "0123456789ABCDEF"), "nt-hex-ctx": "NTLM hash: " + rs(32, H),
     "shadow": "root:$6$" + rs(16, C) + "$" + rs(86, C) + ":19000:0:99999:7:::",
     "htpasswd-bcrypt": "admin:$2y$05$" + rs(53, C), "htpasswd-apr1": "admin:$apr1$" + rs(8, C) + "$" + rs(22, C),
     "mysql41-ctx": "IDENTIFIED BY PASSWORD '*" + rs(40, "0123456789ABCDEF") + "'",
     "mysql41-bare": "*" + rs(40, "0123456789ABCDEF"),
     "krb5tgs": "$krb5tgs$23$*user$REALM$spn*$" + rs(32, H) + "$" + rs(200, H),
     "netntlmv2": "admin::DOMAIN:" + rs(16, H) + ":" + rs(32, H) + ":" + rs(100, H),
     "bcrypt-bare": "$2a$10$" + rs(53, C), "yescrypt": "$y$j9T$" + rs(22, C) + "$" + rs(43, C),
     "sha1crypt": "$sha1$40000$" + rs(8, C) + "$" + rs(28, C), "macos-pbkdf2": "$ml$35460$" + rs(64, H) + "$" + rs(128, H),
     "wpa-psk-hex": "psk=" + rs(64, H), "grub-pbkdf2": "password_pbkdf2 root grub.pbkdf2.sha512.10000." + rs(128, "0123456789ABCDEF") + "." + rs(128, "0123456789ABCDEF"),
     "keepass-ish": "$keepass$*2*60000*0*" + rs(64, H),
     "bitcoin-wallet": "$bitcoin$64$" + rs(64, H),
     "ethereum-pk": "0x" + rs(64, H), "eth-pk-ctx": "private key: 0x" + rs(64, H),
     "ssh-ed25519-priv-line": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" + rs(10, B),
     "pgp-priv": "-----BEGIN PGP PRIVATE KEY BLOCK-----", "putty": "PuTTY-User-Key-File-3: ssh-ed25519",
     "openssh-priv": "-----BEGIN OPENSSH PRIVATE KEY-----", "enc-priv": "-----BEGIN ENCRYPTED PRIVATE KEY-----",
     "age-id": "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
     "wg-privkey": "PrivateKey = " + rs(43, B) + "=", "tailscale": "tskey-auth-" + rs(12, AN) + "CNTRL-" + rs(33, AN),
     "ngrok": "ngrok config add-authtoken " + rs(27, AN) + "_" + rs(21, AN),
     "rclone-obscured": "pass = " + rs(40, AN+"-_"),
     "bip39": "seed phrase: abandon ability able about above absent absorb abstract absurd abuse access accident",
     "basic-auth-hdr": "Authorization: Basic " + "YWRtaW46" + rs(16, B),
     "bearer-hdr": "Authorization: Bearer " + rs(40, AN),
     "cookie": "Cookie: session=" + rs(40, AN),
     "dotnet-machinekey": '<machineKey validationKey="' + rs(128, "0123456789ABCDEF") + '" decryptionKey="' + rs(64, "0123456789ABCDEF") + '" />',
     "rails-master": "RAILS_MASTER_KEY=" + rs(32, H), "laravel": "APP_KEY=base64:" + rs(43, B) + "=",
     "nextauth": "NEXTAUTH_SECRET=" + rs(43, B) + "=", "flask": "app.secret_key = '" + rs(32, H) + "'",
     "jwt-secret-hex": "JWT_SECRET=" + rs(64, H), "fernet": "FERNET_KEY=" + rs(43, AN+"-_") + "=",
     "k8s-secret-data": "  password: " + "cGFzc3dvcmQx" + rs(8, B) + "=",
     "gh-app-key-ctx": "GITHUB_APP_PRIVATE_KEY=\"-----BEGIN RSA PRIVATE KEY-----\\nMIIE" + rs(40, B),
    }
    return list(hashes.values())


def prose_logins_verbs_languages() -> list[str]:
    """prose: logins, verbs, languages."""
    R = random.Random(3)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    SYM = lambda: R.choice(["", "!", "#", "@", "$", "%", "&", "*", "?", "-", "."])
    pw = lambda: rs(3, string.ascii_lowercase) + rs(1, string.ascii_uppercase) + rs(2, string.ascii_lowercase) + rs(2, string.digits) + SYM()
    lines = [
     f"user admin pass {pw()}", f"username: admin, password: {pw()}", f"admin / {pw()} for the staging dashboard",
     f"Login: admin Password: {pw()}", f"credentials are admin:{pw()}", f"log in as admin with {pw()}",
     f"The Grafana login is admin/{pw()}", f"use `{pw()}` as the password", f"password for prod db -> {pw()}",
     f"db pw is {pw()}", f"PW: {pw()}", f"passwd {pw()}", f"root pw {pw()}", f"set the password to {pw()}",
     f"I changed the router password to {pw()}", f"new password: {pw()} (rotated 2024-05-01)",
     f"Jenkins: admin / {pw()}", f"VPN creds - user: jdoe pass: {pw()}", f"MySQL root / {pw()}",
     f"The user's password is '{pw()}'", f'Password is "{pw()}"', f"password={pw()} (don't share)",
     f"* **Password**: `{pw()}`", f"| admin | {pw()} |", f"| Password | {pw()} |", f"Pass: {pw()}",
     f"key: {rs(32)}", f"The token {rs(40)} expires tomorrow", f"token → {rs(40)}", f"Bearer {rs(40)}",
     f"secret: {rs(30)}", f"our Stripe key is {rs(32)}", f"OpenAI key: {rs(48)}", f"API-Key {rs(32)}",
     f"the api token for sentry is {rs(64, '0123456789abcdef')}", f"access key {rs(20, string.ascii_uppercase+string.digits)} secret {rs(40, AN+'+/')}",
     f"Passwort lautet {pw()}", f"mot de passe : {pw()}", f"contraseña: {pw()}", f"senha: {pw()}", f"wachtwoord: {pw()}",
     f"パスワードは{pw()}です", f"비밀번호: {pw()}", f"пароль {pw()}", f"parola: {pw()}", f"salasana: {pw()}", f"heslo: {pw()}",
     f"adgangskode: {pw()}", f"passord: {pw()}", f"jelszó: {pw()}", f"κωδικός: {pw()}", f"mật khẩu: {pw()}", f"kata sandi: {pw()}",
     f"रहस्य शब्द: {pw()}", f"كلمة المرور: {pw()}", f"סיסמה: {pw()}", f"รหัสผ่าน: {pw()}", f"şifre: {pw()}", f"lozinka: {pw()}",
    ]
    return lines


def command_lines() -> list[str]:
    """command lines."""
    R = random.Random(3)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    pw = lambda: rs(3, string.ascii_lowercase) + rs(2, string.ascii_uppercase) + rs(3, string.digits) + rs(2, string.ascii_lowercase)
    T = lambda: rs(40)
    lines = [
     f'psql "host=db user=app password={pw()}"', f'PGPASSWORD={pw()} pg_dump -h db app', f'pg_dump postgresql://app:{pw()}@db/app',
     f'mongodump --uri "mongodb://u:{pw()}@h/db"', f'mongoexport -u admin -p {pw()} --db app', f'sqlplus scott/{pw()}@orcl',
     f'bcp dbo.t out t.dat -S srv -U sa -P {pw()}', f'isql -U sa -P {pw()}', f'influx -username admin -password {pw()}',
     f'influx auth list --token {T()}', f'cqlsh -u cassandra -p {pw()}', f'clickhouse-client --password {pw()}',
     f'neo4j-admin dbms set-initial-password {pw()}', f'cypher-shell -u neo4j -p {pw()}', f'rabbitmqctl add_user app {pw()}',
     f'rabbitmqctl change_password app {pw()}', f'mosquitto_pub -h broker -u dev -P {pw()} -t x -m y',
     f'curl -u deploy:{pw()} https://x', f'curl --user deploy:{pw()} https://x', f'curl -H "Authorization: token {T()}" https://api.github.com',
     f'curl -H "PRIVATE-TOKEN: {rs(20)}" https://gitlab.example.com/api/v4', f'curl -H "X-Auth-Token: {T()}" https://x',
     f'curl "https://api.example.com/v1/data?api_key={rs(32)}"', f'wget --header="Authorization: Bearer {T()}" https://x',
     f'helm repo add priv https://charts.x --username u --password {pw()}', f'helm registry login r.x -u u -p {pw()}',
     f'skopeo copy --src-creds u:{pw()} docker://a docker://b', f'crane auth login r.x -u u -p {pw()}', f'oras login r.x -u u -p {pw()}',
     f'doctl auth init -t {rs(64, "0123456789abcdef")}', f'vercel --token {rs(24)}', f'netlify deploy --auth {rs(43)}',
     f'echo {T()} | gh auth login --with-token', f'glab auth login --token {rs(20)}', f'yarn config set npmAuthToken {T()}',
     f'pip install --index-url https://u:{pw()}@pypi.example.com/simple pkg', f'cargo login {rs(32)}',
     f'dotnet nuget add source https://x/index.json -n x -u u -p {pw()} --store-password-in-clear-text',
     f'nuget setapikey {rs(46, string.ascii_lowercase+string.digits)}', f'dotnet nuget push x.nupkg --api-key {rs(46, string.ascii_lowercase+string.digits)}',
     f'mvn deploy -Dpassword={pw()}', f'gradle publish -PmavenPassword={pw()}', f'vault login {rs(26)}',
     f'vault kv put secret/app password={pw()}', f'consul kv get -token={rs(8,"0123456789abcdef")}-{rs(4,"0123456789abcdef")}-{rs(4,"0123456789abcdef")}-{rs(4,"0123456789abcdef")}-{rs(12,"0123456789abcdef")} x',
     f'kubectl --token={T()} get pods', f'kubectl create secret generic db --from-literal=password={pw()}',
     f'kubectl config set-credentials admin --password={pw()}', f'openssl rsa -in k.pem -passin pass:{pw()}',
     f'keytool -genkey -keystore k.jks -storepass {pw()} -keypass {pw()}', f'jarsigner -storepass {pw()} app.jar alias',
     f'unrar x -p{pw()} a.rar', f'plink -ssh root@h -pw {pw()}', f'pscp -pw {pw()} f root@h:/tmp', f'xfreerdp /u:admin /p:{pw()} /v:h',
     f'rdesktop -u admin -p {pw()} h', f'mount -t cifs //srv/s /mnt -o username=u,password={pw()}', f'net use Z: \\\\srv\\share {pw()} /user:dom\\u',
     f'wmic /node:h /user:admin /password:{pw()} process list', f'psexec \\\\h -u admin -p {pw()} cmd', f'ncftp -u u -p {pw()} ftp.x',
     f'RSYNC_PASSWORD={pw()} rsync -av rsync://u@h/m .', f'ldappasswd -x -D cn=admin -w {pw()} -s {pw()} uid=u', f'ipmitool -I lanplus -H h -U admin -P {pw()} power status',
     f'snmpwalk -v3 -u user -l authPriv -a SHA -A {pw()} -x AES -X {pw()} h', f'wpa_passphrase HomeNet {pw()}', f'nmcli dev wifi connect HomeNet password {pw()}',
     f'sqlcmd -S tcp:srv,1433 -U sa -P "{pw()}"', f'mysql -h db -u root --password="{pw()}"', f'redis-cli -u redis://default:{pw()}@h:6379',
     f'sshpass -p"{pw()}" ssh u@h', f'gpg --batch --passphrase "{pw()}" -d f.gpg', f'7z x -p"{pw()}" a.7z',
     f'az storage blob list --account-key {rs(86, AN+"+/")}== -c x', f'az storage blob upload --sas-token "sv=2021&sig={rs(43, AN)}%3D" -f x',
     f'gcloud auth print-access-token # ya29.{rs(100, AN+"-_")}', f'aws s3 ls --profile x # AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjE{rs(200, AN+"+/")}',
     f'heroku config:set API_KEY={rs(32)}', f'fly secrets set DATABASE_URL=postgres://u:{pw()}@h/db', f'railway variables set SECRET={rs(32)}',
     f'firebase deploy --token "1//{rs(100, AN+"-_")}"', f'sentry-cli --auth-token {rs(64, "0123456789abcdef")} releases list',
     f'terraform apply -var "db_password={pw()}"', f'ansible-playbook site.yml -e "ansible_password={pw()}"', f'ansible-vault decrypt --vault-password-file x # pw {pw()}',
     f'docker run -e POSTGRES_PASSWORD={pw()} postgres', f'docker run -e "API_KEY={rs(32)}" app', f'docker exec -it db mysql -uroot -p{pw()}',
     f'git remote set-url origin https://x-access-token:{rs(36)}@github.com/o/r.git', f'git clone https://oauth2:{rs(20)}@gitlab.com/g/p.git',
     f'git config --global url."https://{rs(36)}:x-oauth-basic@github.com/".insteadOf "https://github.com/"',
    ]
    return lines


def connection_strings_and_urls() -> list[str]:
    """connection strings and URLs."""
    R = random.Random(8)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    pw = lambda: rs(3, string.ascii_lowercase) + rs(2, string.ascii_uppercase) + rs(3, string.digits) + rs(2, string.ascii_lowercase)
    lines = [
     f"Server=tcp:srv.database.windows.net,1433;Initial Catalog=db;Persist Security Info=False;User ID=app;Password={pw()};MultipleActiveResultSets=False;Encrypt=True;",
     f"Data Source=srv;Initial Catalog=db;User Id=sa;Pwd={pw()};", f"Provider=SQLOLEDB;Data Source=srv;User ID=sa;Password={pw()}",
     f"Host=db;Port=5432;Database=app;Username=app;Password={pw()}", f"Server=db;Port=3306;Database=app;Uid=root;Pwd={pw()};",
     f"jdbc:postgresql://db:5432/app?user=app&password={pw()}", f"jdbc:sqlserver://srv:1433;databaseName=db;user=sa;password={pw()};",
     f"jdbc:oracle:thin:scott/{pw()}@//db:1521/orcl", f"jdbc:mysql://root:{pw()}@db:3306/app", f"jdbc:db2://db:50000/app:user=u;password={pw()};",
     f"DRIVER={{PostgreSQL Unicode}};SERVER=db;DATABASE=app;UID=app;PWD={pw()}", f"Dsn=prod;Uid=u;Pwd={pw()};",
     f"dbname=app host=db user=app password={pw()} sslmode=require", f"postgres://app:{pw()}@db:5432/app?sslmode=require",
     f"postgresql+psycopg2://app:{pw()}@db/app", f"mysql+pymysql://root:{pw()}@db/app", f"mssql+pyodbc://sa:{pw()}@dsn",
     f"mongodb://app:{pw()}@h1:27017,h2:27017/app?replicaSet=rs0&authSource=admin", f"mongodb+srv://app:{pw()}@c.x.mongodb.net/?retryWrites=true",
     f"redis://default:{pw()}@redis-123.c1.cloud.redislabs.com:12345", f"rediss://:{pw()}@cache.x:6380/0", f"amqps://u:{pw()}@b-1.mq.x.amazonaws.com:5671",
     f"smtp://apikey:SG.{rs(22, AN+'-_')}.{rs(43, AN+'-_')}@smtp.sendgrid.net:587", f"smtps://u%40x.com:{pw()}@smtp.gmail.com:465",
     f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={rs(43, AN+'+/')}=;EntityPath=q",
     f"HostName=hub.azure-devices.net;DeviceId=d1;SharedAccessKey={rs(43, AN+'+/')}=", f"AccountEndpoint=https://x.documents.azure.com:443/;AccountKey={rs(86, AN+'+/')}==;",
     f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={rs(86, AN+'+/')}==;EndpointSuffix=core.windows.net",
     f"BlobEndpoint=https://x.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&ss=b&srt=sco&sp=rl&se=2030-01-01&sig={rs(43, AN)}%3D",
     f"Server=db;Database=app;Trusted_Connection=False;User Id=sa;Password='{pw()}';", f'"ConnectionStrings": {{ "Default": "Server=db;User Id=sa;Password={pw()};" }}',
     f"neo4j+s://neo4j:{pw()}@x.databases.neo4j.io", f"bolt://neo4j:{pw()}@db:7687", f"clickhouse://default:{pw()}@ch:9000/db",
     f"cassandra://u:{pw()}@c:9042", f"couchbase://u:{pw()}@cb", f"elasticsearch://elastic:{pw()}@es:9200", f"https://elastic:{pw()}@es.x.cloud.es.io:9243",
     f"kafka: sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"{pw()}\";",
     f"ldap://cn=admin,dc=x:{pw()}@ldap.x", f"ldaps://ldap.x:636 bind_dn=cn=admin bind_pw={pw()}", f"sftp://deploy:{pw()}@files.x:22/upload",
     f"ftp://anonymous:{pw()}@ftp.x", f"ssh://git:{pw()}@git.x:2222/r.git", f"svn+ssh://u:{pw()}@svn.x/repo", f"socks5://u:{pw()}@proxy.x:1080",
     f"http://proxyuser:{pw()}@proxy.corp:8080", f"HTTPS_PROXY=http://u:{pw()}@proxy:3128", f"nats://u:{pw()}@nats:4222", f"mqtt://u:{pw()}@broker:1883",
     f"sqlserver://sa:{pw()}@localhost:1433?database=app", f"oracle://scott:{pw()}@db:1521/orcl", f"snowflake://u:{pw()}@acct/db/schema?warehouse=wh",
     f"databricks://token:dapi{rs(32, '0123456789abcdef')}@adb-1.2.azuredatabricks.net:443/default", f"trino://u:{pw()}@trino:443/hive",
     f"webdav: https://u:{pw()}@dav.x/remote.php/webdav", f"git+https://u:{pw()}@git.x/r.git", f"s3://AKIA{rs(16, string.ascii_uppercase+'234567')}:{rs(40, AN+'+/')}@bucket/path",
     f"Url=https://x.crm.dynamics.com;Username=u@x.com;Password={pw()};AuthType=OAuth", f"User ID=u;Password={pw()};Data Source=orcl",
    ]
    return lines


def _names_x_value_shapes(names: list[str]) -> list[str]:
    """Each name in ten assignment syntaxes with fourteen shapes of value (seed 12)."""
    R = random.Random(12)
    AN = string.ascii_letters + string.digits
    H = "0123456789abcdef"
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    vals = {
     "hex16": lambda: rs(16, H), "hex32": lambda: rs(32, H), "hex40": lambda: rs(40, H), "hex64": lambda: rs(64, H),
     "lower20": lambda: rs(20, string.ascii_lowercase+string.digits), "alnum24": lambda: rs(24), "b64pad": lambda: rs(30, AN+"+/") + "==",
     "uuid": lambda: str(uuid.UUID(int=R.getrandbits(128))), "upper20": lambda: rs(20, string.ascii_uppercase+string.digits),
     "urlsafe43": lambda: rs(43, AN+"-_"), "dash-groups": lambda: "-".join(rs(5, string.ascii_uppercase+string.digits) for _ in range(5)),
     "special16": lambda: rs(16, AN+"!@#$%^&*()-_=+"), "short8": lambda: rs(8), "digits12": lambda: rs(12, string.digits),
    }
    forms = ['{n}={v}', '{n} = "{v}"', '{n}: {v}', '"{n}": "{v}"', "{n}: '{v}'", 'export {n}="{v}"', '<{n}>{v}</{n}>', '{n} := "{v}"', "const {n} = '{v}';", '- {n}: `{v}`']
    return [f.format(n=n, v=vf()) for vf in vals.values() for n in names for f in forms]


def credential_names_x_value_shapes() -> list[str]:
    """credential names x value shapes."""
    return _names_x_value_shapes(
        ["api_key", "API_KEY", "apiKey", "secret", "client_secret", "SECRET_TOKEN", "auth_token", "access_token", "token",
         "private_key", "secretKey", "app_secret", "webhook_secret", "STRIPE_SECRET", "GITHUB_TOKEN", "slack_token", "encryption_key", "signing_secret",
         "x-api-key", "license_key", "session_secret", "cookie_secret", "jwt_key", "hmac_key", "master_key", "service_key", "consumer_secret", "bearer"])


def password_names_x_value_shapes() -> list[str]:
    """password names x value shapes."""
    return _names_x_value_shapes(
        ["password", "PASSWORD", "db_password", "dbPassword", "passwd", "pwd", "DB_PASS", "admin_password", "root_password",
         "POSTGRES_PASSWORD", "mysql_root_password", "password_prod"])


def provider_token_variants() -> list[str]:
    """provider token variants."""
    R = random.Random(21)
    AN = string.ascii_letters + string.digits
    D = string.digits; H = "0123456789abcdef"
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    toks = {
     "xoxc": "xoxc-" + rs(12, D) + "-" + rs(12, D) + "-" + rs(13, D) + "-" + rs(64, H),
     "xoxd": "xoxd-" + rs(60, AN) + "%2F" + rs(20, AN) + "%3D",
     "xoxd-plain": "xoxd-" + rs(80, AN+"/+") + "=",
     "xoxb-short": "xoxb-" + rs(11, D) + "-" + rs(11, D) + "-" + rs(24),
     "xoxb-legacy": "xoxb-" + rs(12, D) + "-" + rs(24),
     "xoxp-3seg": "xoxp-" + rs(11, D) + "-" + rs(11, D) + "-" + rs(12, D) + "-" + rs(32, H),
     "xoxa": "xoxa-" + rs(11, D) + "-" + rs(12, D) + "-" + rs(32, H),
     "xoxo": "xoxo-" + rs(11, D) + "-" + rs(12, D) + "-" + rs(32, H),
     "xoxs-short": "xoxs-" + rs(10, D) + "-" + rs(10, D) + "-" + rs(10, D) + "-" + rs(10, H),
     "slack-api-url": "https://slack.com/api/chat.postMessage?token=xoxp-" + rs(11, D) + "-" + rs(11, D) + "-" + rs(12, D) + "-" + rs(32, H) + "&channel=C1",
     "slack-webhook-short": "https://hooks.slack.com/services/T" + rs(8, string.ascii_uppercase+D) + "/B" + rs(8, string.ascii_uppercase+D) + "/" + rs(24),
     "slack-webhook-old": "https://hooks.slack.com/services/T" + rs(8, string.ascii_uppercase+D) + "/B" + rs(8, string.ascii_uppercase+D) + "/" + rs(24) + "/",
     "slack-webhook-encoded": "https:\\/\\/hooks.slack.com\\/services\\/T" + rs(8, string.ascii_uppercase+D) + "\\/B" + rs(10, string.ascii_uppercase+D) + "\\/" + rs(24),
     "slack-app-config": "xoxe.xoxp-1-Mi0yLTE" + rs(120, AN),
     "slack-signing-secret": "SLACK_SIGNING_SECRET=" + rs(32, H),
     "slack-client-secret": "slack_client_secret: " + rs(32, H),
     "slack-verification": "SLACK_VERIFICATION_TOKEN=" + rs(24),
     "anthropic-short": "sk-ant-api03-" + rs(40, AN+"-_"),
     "anthropic-sid": "sk-ant-sid01-" + rs(93, AN+"-_") + "AA",
     "anthropic-bare": "sk-ant-" + rs(95, AN+"-_"),
     "openai-org": "OPENAI_ORG=org-" + rs(24),
     "openai-sess": "sess-" + rs(40),
     "openai-48": "sk-" + rs(48),
     "azure-openai": "AZURE_OPENAI_API_KEY=" + rs(32, H),
     "azure-openai-84": "AZURE_OPENAI_KEY=" + rs(84, AN),
     "gcp-sa-json-pkid": '"private_key_id": "' + rs(40, H) + '"',
     "gcp-oauth-client-old": '"client_secret": "' + rs(24, AN+"-_") + '"',
     "gcp-api-in-url": "https://maps.googleapis.com/maps/api/js?key=AIza" + rs(35, AN+"-_") + "&callback=init",
     "aws-akid-ctx": "aws_access_key_id = AKIA" + rs(16, string.ascii_uppercase+"234567"),
     "aws-secret-ctx-nospace": "aws_secret_access_key=" + rs(40, AN+"+/"),
     "aws-creds-json": '{"AccessKeyId": "ASIA' + rs(16, string.ascii_uppercase+"234567") + '", "SecretAccessKey": "' + rs(40, AN+"+/") + '"}',
     "aws-secret-bare-after-id": "AKIA" + rs(16, string.ascii_uppercase+"234567") + " " + rs(40, AN+"+/"),
     "aws-secret-csv": "AKIA" + rs(16, string.ascii_uppercase+"234567") + "," + rs(40, AN+"+/"),
     "jwt-in-url": "https://x/cb#access_token=" + "eyJhbGciOiJSUzI1NiJ9." + base64.urlsafe_b64encode(json.dumps({"sub":"x","exp":1}).encode()).decode().rstrip("=") + "." + rs(86, AN+"-_"),
     "jwt-es": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(json.dumps({"iss":"a"}).encode()).decode().rstrip("=") + "." + rs(86, AN+"-_"),
     "jwt-no-typ-short": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + rs(43, AN+"-_"),
     "jwe": "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ." + rs(342, AN+"-_") + "." + rs(16, AN+"-_") + "." + rs(100, AN+"-_") + "." + rs(22, AN+"-_"),
    }
    return [c.format(v) for v in toks.values() for c in ("{}", "- {}", "note: {} (prod)")]


def configuration_and_code_syntaxes() -> list[str]:
    """configuration and code syntaxes."""
    R = random.Random(77)
    AN = string.ascii_letters + string.digits
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    pw = lambda: rs(3, string.ascii_lowercase) + rs(2, string.ascii_uppercase) + rs(3, string.digits) + rs(2, string.ascii_lowercase)
    L = [
     f"<password_prod>{pw()}</password_prod>", f"<db_password>{pw()}</db_password>", f"<DbPassword>{pw()}</DbPassword>", f"<ns:password>{pw()}</ns:password>",
     f'<add key="Password" value="{pw()}"/>', f'<add name="Db" connectionString="Server=db;User Id=sa;Password={pw()};"/>', f'<entry key="db.password">{pw()}</entry>',
     f'<property name="hibernate.connection.password" value="{pw()}"/>', f'<Password>{pw()}</Password>', f'<password encrypted="false">{pw()}</password>',
     f"[database]\npassword = {pw()}", f"password = {pw()} ; prod", f"db.password={pw()} # prod", f'password = "{pw()}" # TOML',
     f'variable "db_password" {{ default = "{pw()}" }}', f'  default     = "{pw()}"', f'resource "aws_db_instance" "x" {{ password = "{pw()}" }}',
     f'master_password = "{pw()}"', f'admin_password  = "{pw()}"', f"jdbc.password: {pw()}", f"spring.datasource.password = {pw()}",
     f"DB_PASSWORD={pw()}  # do not commit", f"export MYSQL_PWD='{pw()}'", f"PGPASSWORD='{pw()}'", f"set -gx DB_PASSWORD {pw()}",
     f"$env:DB_PASSWORD = '{pw()}'", f"[System.Environment]::SetEnvironmentVariable('DB_PASSWORD', '{pw()}')", f'ConvertTo-SecureString "{pw()}" -AsPlainText -Force',
     f'$password = ConvertTo-SecureString "{pw()}" -AsPlainText -Force', f"New-Object PSCredential('admin', (ConvertTo-SecureString '{pw()}' -AsPlainText -Force))",
     f"password: !!str {pw()}", f"  - name: DB_PASSWORD\n    value: {pw()}", f'{{"name": "DB_PASSWORD", "value": "{pw()}"}}', f"  DB_PASSWORD: \"{pw()}\"",
     f"environment:\n  - DB_PASSWORD={pw()}", f"  - POSTGRES_PASSWORD={pw()}", f"      - MYSQL_ROOT_PASSWORD={pw()}",
     f'self.password = "{pw()}"', f'this.password = "{pw()}";', f'user.password = "{pw()}"', f'cfg["password"] = "{pw()}"', f"config['db']['password'] = '{pw()}'",
     f'os.environ["DB_PASSWORD"] = "{pw()}"', f'process.env.DB_PASSWORD = "{pw()}"', f'ENV["DB_PASSWORD"] = "{pw()}"', f'System.setProperty("db.password", "{pw()}");',
     f'props.put("password", "{pw()}");', f'props.setProperty("mail.smtp.password", "{pw()}");', f'ds.setPassword("{pw()}");', f'conn_params = {{"password": "{pw()}"}}',
     f"def connect(password='{pw()}'):", f'func connect(password string = "{pw()}")', f'public const string Password = "{pw()}";', f'private String password = "{pw()}";',
     f'@Value("${{db.password:{pw()}}}")', f'val password = "{pw()}"', f'let password: &str = "{pw()}";', f'password := os.Getenv("X") // was {pw()}',
     f'define("DB_PASSWORD", "{pw()}");', f"define('DB_PASSWORD', '{pw()}');", f'$cfg["password"] = "{pw()}";', f"'password' => '{pw()}',",
     f':password => "{pw()}"', f'password: "{pw()}",', f'PASSWORD = b"{pw()}"', f'password = r"{pw()}"', f"password = f'{pw()}'",
     f'Password: {pw()}', f'password:{pw()}', f'password={pw()}&user=admin', f"--password {pw()}", f'"password":"{pw()}"',
     f"db_password = {pw()}  ", f"dbpass={pw()}", f"db_pw: {pw()}", f"mysql_pass = '{pw()}'", f"smtp_pass={pw()}", f"redis_auth={pw()}", f"passphrase: {pw()}",
     f"keystore.password={pw()}", f"truststorePassword={pw()}", f"ssl_key_password = {pw()}", f"bind_password: {pw()}", f"ldap.bindCredential={pw()}",
     f"sasl.password={pw()}", f"proxy_pass_word={pw()}", f"http.proxyPassword={pw()}", f"rootPassword: {pw()}", f"adminPass: {pw()}", f"userPass={pw()}",
    ]
    return L


def prose_in_agent_notes() -> list[str]:
    """prose in agent notes: sentences that state a credential."""
    AN = string.ascii_letters + string.digits
    R = random.Random(404)
    def rs(n: int, a: str = AN) -> str:
        return "".join(R.choice(a) for _ in range(n))
    def pw() -> str:
        return R.choice([rs(4, string.ascii_lowercase).capitalize() + rs(4, string.digits) + R.choice("!#$%&*"), rs(12), rs(3,string.ascii_lowercase)+"-"+rs(4,string.ascii_lowercase)+"-"+rs(2,string.digits), rs(10, string.ascii_lowercase+string.digits)])
    tok = lambda: rs(32)
    L = [
     f"The staging DB password is {pw()} (rotate after the demo).", f"User said their GitHub token is {tok()} — store it in the vault later.",
     f"Remember: prod admin creds are ops@example.com / {pw()}", f"SSH into the box as deploy with password {pw()}",
     f"We're using the API key {tok()} for the weather service.", f"Temporary password for Alice: {pw()}", f"The wifi at the office is 'AcmeGuest' and the password is {pw()}",
     f"Vault unseal key: {rs(44, AN+'+/')}", f"Root token for vault is hvs.{rs(24)}", f"my password is {pw()}", f"pass is {pw()}", f"the pw is {pw()}",
     f"Credentials: username=admin password={pw()}", f"login admin pw {pw()}", f"admin:{pw()} works on the router", f"Router admin password {pw()}",
     f"Here's the key you asked for: {tok()}", f"Use token {tok()} for the staging API.", f"API secret = {tok()}", f"The secret is {pw()}",
     f"Passcode for the door is {rs(6, string.digits)}", f"PIN is {rs(4, string.digits)}", f"Access code: {rs(8, string.ascii_uppercase+string.digits)}",
     f"Got the Stripe key from Bob: {tok()}", f"Bob's password: {pw()}", f"the database's password ({pw()}) is in .env", f"password -> {pw()}",
     f"pwd: {pw()}", f"P/W: {pw()}", f"pass: {pw()}", f"Password = {pw()}", f"password was reset to {pw()} by IT", f"new password is {pw()}, old one was {pw()}",
     f"Account: jdoe | Password: {pw()}", f"* Username: `jdoe` * Password: `{pw()}`", f"**Creds**: jdoe / {pw()}", f"login: jdoe, pass: {pw()}",
     f"The master key {tok()} decrypts the backups", f"Encryption passphrase: {pw()} {pw()}", f"recovery codes: {rs(5,string.ascii_lowercase+string.digits)}-{rs(5,string.ascii_lowercase+string.digits)} {rs(5,string.ascii_lowercase+string.digits)}-{rs(5,string.ascii_lowercase+string.digits)}",
     f"2FA backup code {rs(8, string.digits)}", f"TOTP secret {rs(32, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}", f"otpauth://totp/Acme:jdoe?secret={rs(32, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}&issuer=Acme",
    ]
    return L


def benign() -> list[str]:
    """Lines of the same families that hold no credential."""
    return [
        "admin / settings page moved", "root / home / user layout", "I set the password to expire in 90 days",
         "changed the password to something stronger", "set the password to `$DB_PASSWORD`", "reset the password to the default (see docs)",
         "user admin pass through the proxy", "The user account password should be changed yearly", "login admin, then open settings",
         "key 7 days before expiry", "password 7 characters minimum", "see `std::vector<int>` and `foo::bar::baz`",
         "IPv6 fe80::1ff:fe23:4567:890a is link-local", "Use `admin / admin` for the local demo only", "guest / guest is RabbitMQ's default",
         "MySQL root / (empty password on the dev box)", "0x0100 is the version byte", "*Note*: the digest is shown in bold",
         "**1B8CC88B**", "the token expires; set TOKEN_TTL=3600", "mvn -DskipTests=true -Dmaven.test.failure.ignore=true",
         "gradle -Pversion=1.2.3 -PbuildNumber=42", "java -Dfile.encoding=UTF-8 -Dspring.profiles.active=prod -jar app.jar",
         "snmpwalk -v2c -c public 10.0.0.1", "plink -ssh root@host -i key.ppk", "xfreerdp /u:admin /v:host /cert:ignore",
         "net use Z: \\\\srv\\share /persistent:yes", "wpa_passphrase HomeNet", "unrar x archive.rar", "doctl auth init",
         "neo4j-admin dbms set-initial-password $NEO4J_PASSWORD", "sshpass -p \"$SSHPASS\" ssh u@h", "sshpass -f pwfile ssh u@h",
         "mysqldump -u root -p shop > dump.sql", "mysql -u root -p'' shop", "curl -d '{\"a\":1}' https://x", "docker run -d -p 8080:80 nginx",
         "A bearer token goes in the Authorization header", "bearer: see vault", "the bearer of this note", "<bearer>${TOKEN}</bearer>",
         "κωδικός: <your password>", "lozinka: ********", "kata sandi: (lihat 1Password)", "סיסמה: ראה בכספת",
         "SECRET_KEY = os.environ.get('SECRET_KEY')", "password = getpass.getpass('Password: ')", "token = JWT.sign(payload, secret)",
         "password = \"\" + getPassword() + \"\"", "apiKey: \"${API_KEY}\"", "password: \"{{ vault('db/pw') }}\"", "secret: \"%env(APP_SECRET)%\"",
         "password: \"%s\" % pw", "path: /var/lib/secrets/token", "key: /etc/ssl/private/server.key", "token_file: /run/secrets/gh_token",
         "The wifi is HomeNet / guest network", "Jenkins: admin / see 1Password", "admin / changeme", "root / toor",
         "IDENTIFIED BY PASSWORD '*THIS_IS_NOT_HEX_AT_ALL_0000000000000000'", "$krb5tgs$ format is used by hashcat mode 13100",
         "user::domain is the NetNTLM layout", "set the root password to P@ssw0rd",
        "bypass=true", "bypass: cache2024", "compass=north", "trespass=no", "encompass=all", "surpass=x1",
         "bypassToken=false", "sshpass=/usr/bin/sshpass", "userpass=${USER_PASS}", "dbpass=<db password>", "dbpass=changeme",
         "http.proxyPasswordFile=/etc/proxy.pw", "ssl.keyPassword=${KEY_PW}", "spring.datasource.hikari.maxLifetime=1800000",
         "app.jwtSecretName=jwt-secret-v2", "ldap.bindCredentialRef=vault:ldap/bind", "auth.tokenTtlSeconds=3600", "server.ssl.keyStoreType=PKCS12",
         "oauth.clientSecretEnv=OAUTH_SECRET", "mail.smtp.authMechanisms=PLAIN", "db.passwordMinLength=12", "security.passwordEncoder=bcrypt2",
         "kafka.sasl.jaasConfigPasswordKey=pw", "management.endpoint.tokenUri=https://x/token", "cache.keyPrefix=app_v2_",
         "process.env.DB_PASSWORD = process.env.DB_PASSWORD_OVERRIDE", "process.env.API_KEY ??= 'test'", "import.meta.env.VITE_API_KEY",
         "const apiKey = process.env.API_KEY", "os.environ.get('DB_PASSWORD', 'dev')", "env.DB_PASSWORD = secrets.DB_PASSWORD",
         'password = b""', 'token = r"^[A-Za-z0-9]{20}$"', 'password = f"{prefix}-{suffix}"', "password = f'{os.environ[\"PW\"]}'", 'key = b"\\x00\\x01"',
         'regex = r"password=(\\S+)"', 'PASSWORD_RE = re.compile(r"(?i)password\\s*=\\s*(\\S+)")', 'token = u"none"', 'secret = rb"abc"',
         "userPass: ${USER_PASS}", "adminPass: !vault |", "rootPassword: \"{{ root_pw }}\"", "smtppass: see secrets.yaml",
         "passOn=3", "passThrough=true", "passCount=12", "firstPass=9f2c", "dataPass2=off",
        "fingerprint SHA256:6ypS+bW3Ohzqp2aoqyrCGcShfzeyCABax7H8TUSRFLc",
        "kid: zoSXPCFgqGYvaROyWI_wvchteNT8shrKTHFOEhFG3ok",
        "next_page_token: iJXVDIw7WEWpYGM3g4ie35PekMp43HiHLAWQsZbsylQx45MdeMmWGVqxi8jO",
        "nextToken: eyJ2IjoxLCJjIjoiQUJDIiwibyI6MTAwfQ7xK2pQ9vLm3RtZ8wYb",
        "creds are in the vault / see docs", "**Creds**: see 1Password", "password was reset to default by IT",
        "the password was reset to the initial value", "creds are admin / admin on the demo box",
        "password was updated to meet the policy",
    ]


def prose_how_people_state_it() -> list[str]:
    """Round 17: how people state a password or a key in a sentence or a list, in English
    and sixteen other languages, with a generated value and one holding symbols."""
    forms = [
        "the password for the router: {x}", "the wifi code is {x}", "my password = {x}", "passwd {x}",
        "Password \u2192 {x}", "password (prod): {x}", "admin password {x}", "the API key I generated: {x}",
        "here is the token: {x}", "token -> {x}", "secret key {x}", "connect as root/{x}",
        "ssh root@10.0.0.5, password {x}", "user: admin, pass: {x}", "username admin password {x}",
        "u: admin p: {x}", "login admin / {x}", "Login: admin Password: {x}", "account admin@x.com / {x}",
        "email: a@b.com pw: {x}", "It's {x} (the password)", "the password was changed to {x}",
        "new password: {x}", "temp password {x}", "Passwort ist {x}", "le mot de passe est {x}",
        "la contrase\u00f1a es {x}", "a senha \u00e9 {x}", "\u043f\u0430\u0440\u043e\u043b\u044c {x}",
        "\u5bc6\u7801\u662f{x}", "\u30d1\u30b9\u30ef\u30fc\u30c9\u306f{x}",
        "\ube44\ubc00\ubc88\ud638\ub294 {x}", "wachtwoord: {x}", "has\u0142o: {x}", "l\u00f6senord: {x}",
        "salasana: {x}", "parola: {x}", "jelsz\u00f3: {x}", "heslo: {x}", "kodeord: {x}", "passord: {x}",
        "m\u1eadt kh\u1ea9u: {x}", "kata sandi: {x}", "\u03ba\u03c9\u03b4\u03b9\u03ba\u03cc\u03c2: {x}",
        "the db pass is {x}", "DB creds -> admin:{x}", "root pw {x}", "sudo password: {x}",
        "Remember: password {x} for staging", "- staging: admin / {x}", "* prod db: `postgres` / `{x}`",
        "| prod | admin | {x} |", "1Password says {x}", "got the key {x} from Bob", "api key = {x}",
        "apikey {x}", "the key is {x}", "The token I used was {x}", "Bearer token: {x}", "access token {x}",
        "set PGPASSWORD to {x}", "I changed it to {x} yesterday (the db password)", "mot de passe : {x}",
        "contrase\u00f1a: {x}", "senha: {x}", "Passwort: {x}", "\u015fifre: {x}", "sifre: {x}",
        "parol\u0103: {x}", "geslo: {x}", "lozinka: {x}", "Parol\u0103 este {x}", "kodeordet er {x}",
    ]
    return [f.format(x=x) for f in forms for x in ("Tq9vLm2Xw8Rb", "k7#Rpz!2mQ")]


FAMILIES: dict[str, Callable[[], list[str]]] = {
    "provider formats in seven contexts": provider_formats_in_seven_contexts,
    "prose and assignments": prose_and_assignments,
    "password hashes and other credential formats": password_hashes_and_other_credential_formats,
    "prose: logins, verbs, languages": prose_logins_verbs_languages,
    "command lines": command_lines,
    "connection strings and URLs": connection_strings_and_urls,
    "credential names x value shapes": credential_names_x_value_shapes,
    "password names x value shapes": password_names_x_value_shapes,
    "provider token variants": provider_token_variants,
    "configuration and code syntaxes": configuration_and_code_syntaxes,
    "prose in agent notes": prose_in_agent_notes,
    "prose: how people state it (round 17)": prose_how_people_state_it,
}


def main() -> None:
    from memgit.secrets import scan_text

    total = found = 0
    for family, make in FAMILIES.items():
        lines = make()
        missed = [i for i, line in enumerate(lines) if not scan_text(line)]
        total += len(lines)
        found += len(lines) - len(missed)
        print(f"{family:46s} {len(lines) - len(missed):5d} / {len(lines):5d} found"
              + (f"  (missed #{', #'.join(map(str, missed[:12]))}{' ...' if len(missed) > 12 else ''})" if missed else ""))
    lines = benign()
    flagged = [i for i, line in enumerate(lines) if scan_text(line)]
    print(f"{'all families':46s} {found:5d} / {total:5d} found")
    print(f"{'benign lines of the same families':46s} {len(flagged):5d} / {len(lines):5d} flagged"
          + (f"  (#{', #'.join(map(str, flagged))})" if flagged else ""))
    sys.exit(0)


if __name__ == "__main__":
    main()
