"""The dashboard opened in a real headless Chromium (Debian's chromium and chromium-driver,
driven by selenium), on a drive whose entries landed before memgit's hooks did: a script
tag, an img with onerror, a javascript: source, bidi controls, a credential. Every page's
content is asserted and a screenshot of it kept in ``test-artifacts/serve/`` (or
``$MEMGIT_ARTIFACTS``)."""

from __future__ import annotations

import os
import secrets
import shutil
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")

from tests.conftest import ROOT, commit_all, git  # noqa: E402
from tests.serve_support import ServeServer, memgit_cli  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("MEMGIT_ARTIFACTS", ROOT / "test-artifacts")) / "serve"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--window-size=1280,1000")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                                 reason="needs Debian's chromium and chromium-driver "
                                        "(.ci/install-system-deps.sh)")]


def _fake_token() -> str:
    """A GitHub-style personal token made up here: the gate refuses such a line."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def _hostile_drive(base: Path, secret: str) -> Path:
    """A checkout whose entries would each be refused by memgit's gate, committed with
    plain git (no hooks), as memory kept before memgit was installed."""
    work = base / "before-memgit"
    (work / "people").mkdir(parents=True)
    (work / "MEMORY.md").write_text(
        "# Memory: joe\n\n- Joe leads the payments team [source: https://example.com/s/0; "
        "added: 2026-01-01; id: m-joe]\n\n## Index\n")
    (work / "hostile.md").write_text(
        "# Hostile entries\n\n"
        '- <script>alert("pwned")</script> steals cookies [source: https://example.com/s/1; '
        "added: 2026-01-02; id: m-script]\n"
        "- Click here [source: javascript:alert(document.cookie); added: 2026-01-03; "
        "id: m-jslink]\n"
        "- Pay the \u202eeciovni\u202c today [source: imported:unknown; added: 2026-01-04; "
        "id: m-bidi]\n"
        f"- The deploy token is {secret} [source: imported:unknown; added: 2026-01-05; "
        "id: m-secret]\n"
        "- <img src=x onerror=alert(1)> looks harmless [source: https://example.com/s/2; "
        "added: 2026-01-06; id: m-img]\n")
    (work / "people" / "team.md").write_text(
        "# Team\n\n- Ann owns the billing service [source: https://example.com/s/3; "
        "added: 2026-01-07; id: m-ann]\n"
        "- The on-call rotation changes on Mondays [source: claude-code:session/42; "
        "added: 2026-01-08; id: m-oncall]\n")
    git("init", "-q", "-b", "main", str(work))
    commit_all(work, "memory kept before memgit")
    return work


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _open(driver, url: str, shot: str) -> str:  # type: ignore[no-untyped-def]
    """Open ``url``, check that no script or image runs on it, keep a screenshot; the
    page's visible text."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {  # the whole page
        "width": 1280, "height": max(600, min(int(height), 4000)), "deviceScaleFactor": 1,
        "mobile": False})
    assert driver.save_screenshot(str(ARTIFACTS / f"{shot}.png"))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert driver.find_elements(By.TAG_NAME, "script") == []
    assert driver.find_elements(By.TAG_NAME, "img") == []
    for link in driver.find_elements(By.TAG_NAME, "a"):
        href = link.get_attribute("href") or ""
        assert href.startswith(("http://127.0.0.1", "https://")), href
    text: str = driver.find_element(By.TAG_NAME, "body").text
    return text


def test_every_page_in_a_real_browser(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    secret = _fake_token()
    work = _hostile_drive(tmp_path, secret)
    server = ServeServer(tmp_path / "srv")
    (server.root / "joe").mkdir()
    bare = server.root / "joe" / "notes.git"
    git("clone", "-q", "--bare", str(work), str(bare))
    memgit_cli("install-hooks", "--server", str(bare))
    server.create("ann/plans")
    asked = memgit_cli("-C", str(bare), "ask", "Who approves refunds over 500 EUR?", "--json")
    question = __import__("json").loads(asked.stdout)["added"][0]["id"]
    memgit_cli("-C", str(bare), "answer", question, "Ann does, within a day")
    memgit_cli("-C", str(bare), "edit", "m-oncall", "The on-call rotation changes on Tuesdays")
    memgit_cli("-C", str(bare), "recall", "billing")  # one retrieval for m-ann
    memgit_cli("-C", str(bare), "dream", "--no-model", check=False)
    with server:
        base = server.base_url()
        home = _open(browser, f"{base}/", "home")
        assert "joe/notes" in home and "ann/plans" in home and "personal" in home

        drive = _open(browser, f"{base}/joe/notes", "drive")
        assert "hostile.md" in drive and "people/team.md" in drive
        assert "installed, current" in drive

        hostile = _open(browser, f"{base}/joe/notes/topics/hostile.md", "topic-hostile")
        assert '<script>alert("pwned")</script> steals cookies' in hostile
        assert "<img src=x onerror=alert(1)> looks harmless" in hostile
        assert "javascript:alert(document.cookie)" in hostile  # shown as text, not a link
        assert "\\u202eeciovni\\u202c" in hostile and "\u202e" not in browser.page_source
        assert secret not in browser.page_source and "<redacted: " in hostile

        team = _open(browser, f"{base}/joe/notes/topics/people/team.md", "topic-team")
        assert "Ann owns the billing service" in team and "changes on Tuesdays" in team
        row = [ln for ln in team.splitlines() if "m-ann" in ln][0]
        assert row.rstrip().endswith("1"), row  # its one retrieval

        found = _open(browser, f"{base}/joe/notes/search?q=deploy+token", "search")
        assert "recall mode lexical" in found and "m-secret" in found
        assert secret not in browser.page_source

        history = _open(browser, f"{base}/joe/notes/entries/m-oncall", "history")
        assert "edited" in history and "added" in history
        assert "changes on Mondays" in history and "changes on Tuesdays" in history

        board = _open(browser, f"{base}/joe/notes/questions", "questions")
        assert "Who approves refunds over 500 EUR?" in board and "Ann does" in board

        dreams = _open(browser, f"{base}/joe/notes/dreams", "dreams")
        assert "Dreams" in dreams and ("no_changes" in dreams or "dream undo" in dreams
                                       or "failed" in dreams)
        mounts = _open(browser, f"{base}/joe/notes/mounts", "mounts")
        assert "No shared drive is mounted" in mounts
        assert secret not in server.log.read_text()
    shutil.copy(ARTIFACTS / "drive.png", tmp_path / "kept.png")
