"""The dream: section of memgit.yaml, parsed by the policy (policy.SECTIONS["dream"])."""

from __future__ import annotations

import datetime as _dt

import pytest

from memgit.errors import PolicyFileError
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy, policy_from_mapping


def test_the_policy_keeps_the_section_as_a_hashable_config() -> None:
    policy = policy_from_mapping({"dream": {
        "model": "openai", "base_url": "http://127.0.0.1:11434/v1", "model_name": "qwen",
        "timeout": 90, "window": "23:30-04:00",
        "options": {"extra_body": {"max_tokens": 4096, "stop": ["\n\n"]}}}})
    config = policy.dream()
    assert config.model == "openai" and config.timeout == 90.0
    assert config.window == (23 * 60 + 30, 4 * 60)
    settings = config.plugin_settings()
    assert settings["extra_body"] == {"max_tokens": 4096, "stop": ["\n\n"]}  # nested, intact
    assert settings["base_url"] == "http://127.0.0.1:11434/v1"
    assert hash(policy) != hash(Policy()) and policy == policy_from_mapping(
        {"dream": {"model": "openai", "base_url": "http://127.0.0.1:11434/v1",
                   "model_name": "qwen", "timeout": 90, "window": "23:30-04:00",
                   "options": {"extra_body": {"stop": ["\n\n"], "max_tokens": 4096}}}})
    assert Policy().dream() == DreamConfig() and policy_from_mapping({"dream": None}).dream() == \
        DreamConfig()


def test_options_must_be_plain_values() -> None:
    with pytest.raises(PolicyFileError, match="dream.options must hold plain values"):
        policy_from_mapping({"dream": {"options": {"since": _dt.date(2026, 1, 2)}}})


def test_parsing_the_section_loads_nothing_the_hooks_may_not() -> None:
    """pre-receive and pre-commit read the policy, dream: included: parsing it loads no
    pygit2, click or plugin (the hooks' lean paths, tests/test_architecture.py)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    src = str(ROOT / "src")
    probe = "\n".join([
        f"import sys; sys.path[:0] = [{src!r}]",
        "from memgit.policy.settings import policy_from_mapping",
        "p = policy_from_mapping({'dream': {'model': 'openai', 'window': '01:00-05:00'}})",
        "assert p.setting('dream').window == (60, 300)",
        "print(sorted(m for m in sys.modules if m.startswith(('pygit2', 'click', "
        "'memgit.plugins', 'memgit.dream.run', 'memgit.write.writer'))))"])
    proc = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
