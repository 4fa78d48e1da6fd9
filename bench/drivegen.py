"""Generate drives for benchmarks: a checkout at the policy's limits, written with plain git."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

WORDS = ("payments launch owner deadline pricing website billing customer dashboard "
         "team product review metrics rollout incident runbook database staging cluster "
         "budget roadmap design feedback migration schema api token rotation policy "
         "meeting weekly quarter contract vendor support escalation release").split()


def entry_line(rng: random.Random, n: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 8)))
    return (f"- {text.capitalize()} number {n} [source: https://example.com/sessions/{n}; "
            f"added: 2026-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}; id: m-{n:026d}]\n")


def topic_files(files: int = 255, file_bytes: int = 8000, seed: int = 7) -> dict[str, str]:
    """``files`` topic files of about ``file_bytes`` each, in folders of 16."""
    rng = random.Random(seed)
    out: dict[str, str] = {}
    n = 0
    for i in range(files):
        lines = [f"# Topic {i}\n\n"]
        size = len(lines[0])
        while True:
            line = entry_line(rng, n)
            if size + len(line) > file_bytes:
                break
            lines.append(line)
            size += len(line)
            n += 1
        out[f"area{i // 16:02}/topic{i:03}.md"] = "".join(lines)
    return out


def make_full_drive(path: Path, files: int = 255, file_bytes: int = 8000) -> Path:
    """A drive checkout with 256 files and about 2 MiB, one commit."""
    from memgit.format import entries as fmt

    path.mkdir(parents=True)
    topics = topic_files(files, file_bytes)
    for name, text in topics.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    memory = fmt.regenerate_index_section("# Memory\n\n## Index\n", list(topics) + ["MEMORY.md"])
    (path / "MEMORY.md").write_text(memory)
    env_args = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", *env_args, "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", *env_args, "commit", "-qm", "full drive"], cwd=path, check=True)
    return path
