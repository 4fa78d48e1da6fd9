"""memgit serve as a person uses it: real git clone, push and memgit sync through it with
each kind of token, the refusals, /metrics read by Prometheus's parser, bad input."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from tests.serve_support import ServeServer, memgit_cli  # noqa: E402

ENTRY = "- Wrens nest in hedges [source: https://example.com/s/1; added: 2026-01-02; id: m-wren]\n"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeServer]:
    server = ServeServer(tmp_path)
    server.create("joe/notes")
    server.create("ann/plans")
    with server:
        yield server


def _commit_entry(server: ServeServer, work: Path, text: str, name: str = "birds.md") -> None:
    (work / name).write_text(f"# Birds\n\n{text}")
    memory = (work / "MEMORY.md").read_text()
    if f"[[{name[:-3]}]]" not in memory:
        (work / "MEMORY.md").write_text(memory.rstrip("\n") + f"\n- [[{name[:-3]}]]\n")
    server.git("add", "-A", cwd=work)
    server.git("commit", "-q", "-m", "birds", cwd=work)


@pytest.mark.slow
def test_clone_and_push_with_each_kind_of_token(served: ServeServer, tmp_path: Path) -> None:
    write = served.token("joe/notes", "write")["token"]
    read = served.token("joe/notes", "read")["token"]
    other = served.token("ann/plans", "write")["token"]

    # a write token clones and pushes; the push is judged by memgit's hooks and lands
    work = tmp_path / "w"
    served.git("clone", "-q", served.url("joe/notes", write), work)
    _commit_entry(served, work, ENTRY)
    pushed = served.git("push", "origin", "main", cwd=work)
    assert "main -> main" in pushed.stderr
    head = served.git("rev-parse", "HEAD", cwd=work).stdout.strip()
    server_head = served.git("--git-dir", served.root / "joe/notes.git", "rev-parse",
                             "main").stdout.strip()
    assert server_head == head

    # a read token clones (and sees the push) but cannot push: 403 before any pack is sent
    reader = tmp_path / "r"
    served.git("clone", "-q", served.url("joe/notes", read), reader)
    assert "Wrens nest" in (reader / "birds.md").read_text()
    _commit_entry(served, reader, ENTRY.replace("hedges", "walls").replace("m-wren", "m-wall"))
    refused = served.git("push", "origin", "main", cwd=reader, check=False)
    assert refused.returncode != 0
    assert "403" in refused.stderr and "may only read" in refused.stderr

    # a token of another drive: 403, in the same words as a drive that does not exist
    stranger = served.git("clone", "-q", served.url("joe/notes", other), tmp_path / "x",
                          check=False)
    missing = served.git("clone", "-q", served.url("joe/nothing", other), tmp_path / "y",
                         check=False)
    assert stranger.returncode != 0 and missing.returncode != 0
    assert "403" in stranger.stderr and "403" in missing.stderr
    status_a, _h, body_a = served.request("/joe/notes.git/info/refs?service=git-upload-pack",
                                          token=other)
    status_b, _h, body_b = served.request("/joe/nothing.git/info/refs?service=git-upload-pack",
                                          token=other)
    assert (status_a, body_a) == (status_b, body_b) == (403, body_a)

    # no token: 401 with WWW-Authenticate (git then asks its credential helper)
    status, headers, _body = served.request("/joe/notes.git/info/refs?service=git-upload-pack")
    assert status == 401 and headers["www-authenticate"].startswith("Basic realm=")
    anonymous = served.git("clone", "-q", served.url("joe/notes"), tmp_path / "z", check=False)
    assert anonymous.returncode != 0 and "could not read Username" in anonymous.stderr

    # the token kept by a credential helper, as people keep theirs
    store = tmp_path / "credentials"
    store.write_text(f"http://agent:{read}@127.0.0.1:{served.port}\n")
    served.git("-c", f"credential.helper=store --file={store}", "clone", "-q",
               served.url("joe/notes"), tmp_path / "helped")
    assert (tmp_path / "helped" / "birds.md").exists()

    # bearer works as well as basic (git's http.extraHeader)
    served.git("-c", f"http.extraHeader=Authorization: Bearer {read}", "clone", "-q",
               served.url("joe/notes"), tmp_path / "bearer")
    assert (tmp_path / "bearer" / "birds.md").exists()


def test_a_push_the_policy_refuses_is_refused_through_serve(served: ServeServer,
                                                             tmp_path: Path) -> None:
    write = served.token("joe/notes", "write")["token"]
    work = tmp_path / "w"
    served.git("clone", "-q", served.url("joe/notes", write), work)
    _commit_entry(served, work, "- Click here [source: javascript:alert(1); id: m-bad]\n")
    refused = served.git("push", "origin", "main", cwd=work, check=False)
    assert refused.returncode != 0
    assert "MG101" in refused.stderr  # pre-receive's own words, relayed by http-backend
    assert served.git("--git-dir", served.root / "joe/notes.git", "show",
                      "main:MEMORY.md").stdout.count("birds") == 0


@pytest.mark.slow
def test_memgit_clone_remember_and_sync_through_serve(served: ServeServer,
                                                      tmp_path: Path) -> None:
    write = served.token("joe/notes", "write")["token"]
    read = served.token("joe/notes", "read")["token"]
    agent = tmp_path / "agent"
    memgit_cli("clone", served.url("joe/notes", write), str(agent))
    memgit_cli("-C", str(agent), "remember", "The deploy window is Tuesday 10:00 UTC")
    memgit_cli("-C", str(agent), "sync")
    second = tmp_path / "second"
    memgit_cli("clone", served.url("joe/notes", read), str(second))
    found = memgit_cli("-C", str(second), "recall", "deploy", "window").stdout
    assert "Tuesday 10:00 UTC" in found
    # a read-only agent's sync cannot push: it stops with the server's refusal, keeping
    # its commit
    memgit_cli("-C", str(second), "remember", "Staging is frozen in December")
    refused = memgit_cli("-C", str(second), "sync", check=False)
    assert refused.returncode != 0
    assert "403" in refused.stderr or "may only read" in refused.stderr
    assert "frozen in December" in memgit_cli("-C", str(second), "recall", "staging").stdout


def test_a_token_in_the_clone_url_is_never_printed(served: ServeServer,
                                                   tmp_path: Path) -> None:
    """The URL a checkout was cloned from holds its token: clone's line, status (text,
    --json) and the agents' status tool show it masked."""
    from memgit.agents.operations import AgentDrive

    token = served.token("joe/notes", "write")["token"]
    agent = tmp_path / "agent"
    cloned = memgit_cli("clone", served.url("joe/notes", token), str(agent))
    shown = [cloned.stdout + cloned.stderr]
    for args in (("status",), ("status", "--json")):
        proc = memgit_cli("-C", str(agent), *args)
        shown.append(proc.stdout + proc.stderr)
    url = json.loads(shown[-1])["remote_url"]
    assert url.endswith("/joe/notes.git") and ":***@" in url
    tool = AgentDrive(str(agent)).status()
    shown.append(json.dumps(tool))
    assert ":***@" in tool["remote_url"]
    secret = token.split("_", 2)[2]
    for text in shown:
        assert token not in text and secret not in text
    assert "Cloned http://" in shown[0]


def test_no_token_reaches_the_log_http_backend_or_the_hooks(served: ServeServer,
                                                            tmp_path: Path) -> None:
    made = served.token("joe/notes", "write")
    dump = tmp_path / "hook-env"
    hook = served.root / "joe/notes.git/hooks/update"  # a hook memgit does not own
    hook.write_text(f"#!/bin/sh\nenv > {dump}\n")
    hook.chmod(0o755)
    work = tmp_path / "w"
    served.git("clone", "-q", served.url("joe/notes", made["token"]), work)
    _commit_entry(served, work, ENTRY)
    served.git("push", "-q", "origin", "main", cwd=work)
    env = dump.read_text()
    assert f"REMOTE_USER=token-{made['id']}" in env
    assert "HTTP_AUTHORIZATION" not in env
    secret = made["token"].split("_", 2)[2]
    for text in (env, served.log.read_text(), served.out.read_text()):
        assert secret not in text and made["token"] not in text
    assert f"token={made['id']}" in served.log.read_text()
    tokens_db = (served.root / ".memgit-serve" / "tokens.sqlite").read_bytes()
    assert secret.encode() not in tokens_db


def test_revoked_and_expired_tokens_are_refused(served: ServeServer) -> None:
    made = served.token("joe/notes", "read")
    path = "/joe/notes.git/info/refs?service=git-upload-pack"
    assert served.request(path, token=made["token"])[0] == 200
    memgit_cli("token", "revoke", made["id"], "--root", str(served.root))
    status, headers, _ = served.request(path, token=made["token"])
    assert status == 401 and "www-authenticate" in headers
    listed = memgit_cli("token", "list", "--root", str(served.root)).stdout
    assert made["id"] in listed and "revoked" in listed
    # a token whose secret is wrong is refused the same way
    forged = made["token"][:-4] + "AAAA"
    assert served.request(path, token=forged)[0] == 401


@pytest.mark.slow
def test_metrics_parse_with_prometheus_client(served: ServeServer, tmp_path: Path) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from memgit.githooks.post_receive import wait_for_background

    write = served.token("joe/notes", "write")["token"]
    work = tmp_path / "w"
    served.git("clone", "-q", served.url("joe/notes", write), work)
    _commit_entry(served, work, ENTRY)
    served.git("push", "-q", "origin", "main", cwd=work)
    # post-receive counts the push in its detached process, after the client has its answer
    wait_for_background(served.root / "joe/notes.git")
    served.request("/joe/notes.git/info/refs?service=git-upload-pack")  # a refusal: 401
    status, headers, body = served.request("/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    events = {(s.labels["drive"], s.labels["event"]): s.value
              for s in families["memgit_events"].samples}
    assert events[("joe/notes", "push_accepted")] == 1
    assert events[("ann/plans", "push_accepted")] == 0
    requests = families["memgit_serve_requests"]
    assert any(s.labels == {"route": "receive_pack", "code": "200"} and s.value >= 1
               for s in requests.samples)
    histogram = families["memgit_serve_request_duration_seconds"]
    assert histogram.type == "histogram"
    counts = [s for s in histogram.samples if s.name.endswith("_count")
              and s.labels["route"] == "upload_pack"]
    assert counts and counts[0].value >= 1
    refusals = {s.labels["reason"]: s.value for s in families["memgit_serve_refusals"].samples}
    assert refusals["no_token"] >= 2  # git's first request of the clone, and ours
    entries = {s.labels["drive"]: s.value for s in families["memgit_entries"].samples}
    assert entries["joe/notes"] == 1


def test_tokens_cli(tmp_path: Path) -> None:
    server = ServeServer(tmp_path)
    elsewhere = memgit_cli("token", "list", "--root", str(tmp_path))  # not the served root
    assert "which holds no OWNER/DRIVE.git drive: is it the root" in elsewhere.stdout
    server.create("joe/notes")
    made = server.token("joe/notes", "write", "--expires", "30", "--name", "ci runner")
    assert made["token"].startswith(f"mgt_{made['id']}_") and made["expires"]
    db = server.root / ".memgit-serve" / "tokens.sqlite"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    listed = memgit_cli("token", "list", "--root", str(server.root)).stdout
    assert made["id"] in listed and "ci runner" in listed and made["token"] not in listed
    plain = memgit_cli("token", "add", "joe/notes", "--read", "--root", str(server.root))
    assert plain.stdout.startswith("mgt_") and "mgt_" not in plain.stderr
    for args, words in (
        (["joe/nothing", "--read"], "no drive joe/nothing"),
        (["joe/../x", "--read"], "not a drive name"),
        (["joe/notes"], "--read, --write or --metrics"),
        (["joe/notes", "--write", "--expires", "0"], "--expires"),
        (["joe/notes", "--metrics"], "metrics token names no drive"),
    ):
        proc = memgit_cli("token", "add", *args, "--root", str(server.root), check=False)
        assert proc.returncode == 2 and words in proc.stderr, (args, proc.stderr)
    gone = memgit_cli("token", "revoke", "000000000000", "--root", str(server.root),
                      check=False)
    assert gone.returncode == 2 and "no token" in gone.stderr


def test_a_non_loopback_address_is_refused_without_tokens(tmp_path: Path) -> None:
    server = ServeServer(tmp_path)
    server.create("joe/notes")
    proc = memgit_cli("serve", str(server.root), "--host", "0.0.0.0", "--port", "1",
                      check=False)
    assert proc.returncode == 2 and "not a loopback address" in proc.stderr
    made = server.token("joe/notes", "read")
    memgit_cli("token", "revoke", made["id"], "--root", str(server.root))
    proc = memgit_cli("serve", str(server.root), "--host", "0.0.0.0", "--port", "1",
                      check=False)
    assert proc.returncode == 2 and "has no token" in proc.stderr  # a revoked one is none


def test_a_port_in_use_is_a_usage_error_before_the_banner(tmp_path: Path) -> None:
    import socket

    server = ServeServer(tmp_path)
    server.create("joe/notes")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = memgit_cli("serve", str(server.root), "--port", str(port), check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"MG001: cannot listen on 127.0.0.1 port {port}" in proc.stderr
    assert "--port another number" in proc.stderr and "Ctrl-C" not in proc.stderr


def test_serve_create_refuses_bad_names_and_existing_drives(tmp_path: Path) -> None:
    server = ServeServer(tmp_path)
    for bad in ("joe", "joe/../../etc", "../joe/x", "joe/x\x01y", ".hidden/x", "joe/x/y"):
        proc = memgit_cli("serve", str(server.root), "--create", bad, check=False)
        assert proc.returncode == 2 and "not a drive name" in proc.stderr, bad
    server.create("joe/notes")
    again = memgit_cli("serve", str(server.root), "--create", "joe/notes", check=False)
    assert again.returncode == 2 and "there is a drive joe/notes already" in again.stderr
    assert sorted(p.name for p in server.root.iterdir()) == ["joe"]


def test_serve_create_makes_a_missing_root_as_the_docs_show(tmp_path: Path) -> None:
    """docs/serve.md starts with ``memgit serve /srv/memgit --create joe/notes`` on a
    machine where /srv/memgit does not exist yet."""
    root = tmp_path / "srv" / "memgit"
    bad = memgit_cli("serve", str(root), "--create", "joe/../x", check=False)
    assert bad.returncode == 2 and not (tmp_path / "srv").exists()  # nothing made
    made = memgit_cli("serve", str(root), "--create", "joe/notes")
    assert f"Created drive joe/notes in {root / 'joe' / 'notes.git'}" in made.stdout
    assert (root / "joe" / "notes.git" / "hooks" / "pre-receive").is_file()
    token = memgit_cli("token", "add", "joe/notes", "--write", "--root", str(root))
    assert token.returncode == 0
    (tmp_path / "file").write_text("not a folder")
    proc = memgit_cli("serve", str(tmp_path / "file" / "x"), "--create", "joe/notes",
                      check=False)
    assert proc.returncode == 2 and "cannot make the folder" in proc.stderr


# --- bad input ---------------------------------------------------------------------------


def test_paths_out_of_the_root_are_refused_and_nothing_outside_is_touched(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    memgit_cli("init", "--bare", str(outside / "secret.git"))
    before = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    server = ServeServer(tmp_path / "srv")
    server.create("joe/notes")
    (server.root / "joe" / "link.git").symlink_to(outside / "secret.git")
    (server.root / "evil").symlink_to(outside)
    token = server.token("joe/notes", "write")["token"]
    with server:
        for path in ("/joe/link.git/info/refs?service=git-upload-pack",
                     "/evil/secret.git/info/refs?service=git-upload-pack"):
            assert server.request(path, token=token)[0] == 403
        assert server.request("/joe/link")[0] == 404
        assert server.request("/evil/secret")[0] == 404
        assert "evil" not in server.request("/")[2].decode()
        raw = server.raw(b"GET /joe/../evil/secret.git/info/refs?service=git-upload-pack "
                         b"HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert raw.split(b" ", 2)[1] in (b"400", b"403", b"404"), raw[:80]
        for path in ("/joe/%2e%2e/info/refs?service=git-upload-pack",
                     "/joe/no%01tes.git/info/refs?service=git-upload-pack",
                     "/j%0aoe/notes.git/git-upload-pack", "/joe/notes%00.git/git-upload-pack"):
            status = server.request(path, token=token)[0]
            assert status in (400, 404), (path, status)
        # git's dumb protocol is not served, so no file of the drive is read by its path
        assert server.request("/joe/notes.git/HEAD", token=token)[0] == 404
        assert server.request("/joe/notes.git/info/refs", token=token)[0] == 403
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == before
    assert not (outside / "secret.git" / "memgit" / "state.sqlite").exists()


@pytest.mark.slow
def test_an_oversized_body_is_refused(tmp_path: Path) -> None:
    server = ServeServer(tmp_path, args=["--max-body", "1"])
    server.create("joe/notes")
    token = server.token("joe/notes", "write")["token"]
    big = b"0" * (1024 * 1024 + 1)
    with server:
        status, _h, body = server.request(
            "/joe/notes.git/git-receive-pack", method="POST", body=big, token=token,
            headers={"Content-Type": "application/x-git-receive-pack-request"})
        assert status == 413 and b"limit" in body
        # a real push over the limit: git sends it chunked (no Content-Length), so it is
        # cut off while it streams
        work = tmp_path / "w"
        server.git("clone", "-q", server.url("joe/notes", token), work)
        (work / "big.md").write_bytes(os.urandom(1536 * 1024))
        server.git("add", "-A", cwd=work)
        server.git("commit", "-q", "-m", "big", cwd=work)
        pushed = server.git("push", "origin", "main", cwd=work, check=False)
        assert pushed.returncode != 0 and "413" in pushed.stderr, pushed.stderr
        assert server.request("/metrics")[0] == 200
    server_head = server.git("--git-dir", server.root / "joe/notes.git", "rev-list",
                             "--count", "main").stdout.strip()
    assert server_head == "1"


@pytest.mark.slow
def test_a_slow_client_is_timed_out(tmp_path: Path) -> None:
    import socket

    from tests.servers import HOST

    server = ServeServer(tmp_path, args=["--timeout", "1"])
    server.create("joe/notes")
    token = server.token("joe/notes", "write")["token"]
    with server:
        # a head that never ends: 408 and the connection closed
        started = time.monotonic()
        with socket.create_connection((HOST, server.port), timeout=10) as s:
            s.sendall(b"GET /joe/notes.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
                      b"Host: x\r\n")
            answer = s.recv(1000)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - started < 5
        # a body that stops coming: 408, the CGI ended
        with socket.create_connection((HOST, server.port), timeout=10) as s:
            s.sendall(b"POST /joe/notes.git/git-receive-pack HTTP/1.1\r\nHost: x\r\n"
                      + f"Authorization: Bearer {token}\r\n".encode()
                      + b"Content-Type: application/x-git-receive-pack-request\r\n"
                      b"Content-Length: 100000\r\n\r\n" + b"0" * 1000)
            answer = s.recv(1000)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        # the server still answers others
        assert server.request("/metrics")[0] == 200
        metrics = server.request("/metrics")[2].decode()
        assert 'memgit_serve_refusals_total{reason="too_slow"} 1' in metrics


@pytest.mark.slow
def test_beyond_loopback_the_dashboard_and_metrics_need_a_token(tmp_path: Path) -> None:
    """The application as it runs on a non-loopback address (served here on 127.0.0.1,
    the only address tests may use, with the setting the non-loopback bind gives)."""
    import threading

    import uvicorn

    from memgit.serve.app import App, Settings
    from memgit.serve.server import head_deadline
    from tests.servers import free_port

    server = ServeServer(tmp_path)
    server.create("joe/notes")
    server.create("ann/plans")
    joe = server.token("joe/notes", "read")["token"]
    scraper = server.token(None, "metrics")["token"]
    lines: list[str] = []
    app = App(Settings(root=server.root.resolve(), loopback=False, log=lines.append))
    server.port = free_port()
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=server.port,
                                            http=head_deadline(30), lifespan="off",
                                            log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not running.started and time.monotonic() < deadline:
            time.sleep(0.05)
        status, headers, _ = server.request("/")
        assert status == 401 and "www-authenticate" in headers
        status, _h, body = server.request("/", token=joe)
        assert status == 200 and b"joe/notes" in body and b"ann/plans" not in body
        assert server.request("/joe/notes", token=joe)[0] == 200
        assert server.request("/joe/notes/topics/MEMORY.md", token=joe, bearer=True)[0] == 200
        other = server.request("/ann/plans", token=joe)
        nothing = server.request("/ann/nothing", token=joe)
        assert other[0] == nothing[0] == 403 and other[2] == nothing[2]
        assert server.request("/metrics", token=joe)[0] == 403
        assert server.request("/metrics")[0] == 401
        status, _h, body = server.request("/metrics", token=scraper)
        assert status == 200 and b'drive="ann/plans"' in body
        assert server.request("/joe/notes", token=scraper)[0] == 403
    finally:
        running.should_exit = True
        thread.join(10)
    assert all(joe not in line and scraper not in line for line in lines) and lines


def test_a_token_in_a_requested_path_is_not_logged(served: ServeServer) -> None:
    """The access log wrote the path a client asked for as it came: a GitHub or memgit
    token pasted into a remote URL's path landed in the log (hostile sweep, branch
    hostile42). It is redacted now."""
    made = served.token("joe/notes", "read")
    github = "ghp_" + "IAoCLrZ3aWZkSBvrjn9Wvgfygw2wMq4He73R"
    for path in (f"/joe/notes/{github}", f"/{made['token']}/notes.git/info/refs",
                 f"/joe/{github}.git/info/refs?service=git-upload-pack"):
        assert served.request(path)[0] in (401, 403, 404)
    time.sleep(0.2)
    log = served.log.read_text() + served.out.read_text()
    secret = made["token"].split("_", 2)[2]
    assert github[4:16] not in log and secret[:12] not in log
    assert "<redacted: GitHub token>" in log and "<redacted: memgit serve token>" in log
