"""Where a pre-receive spends its time: ``MEMGIT_HOOK_TIMING=1`` adds one ``memgit: timing
ms:`` line to its output (bench/bench_receive.py reads it)."""

from __future__ import annotations

import os


class _Timing:
    """Where a hook run spends its time; off unless MEMGIT_HOOK_TIMING=1."""

    def __init__(self) -> None:
        import time

        self.clock = time.perf_counter
        self.on = os.environ.get("MEMGIT_HOOK_TIMING") == "1"
        self.last = self.clock()
        self.phases: dict[str, float] = {}

    def mark(self, phase: str) -> None:
        if self.on:
            now = self.clock()
            self.phases[phase] = self.phases.get(phase, 0.0) + now - self.last
            self.last = now

    def line(self) -> list[str]:
        if not self.on:
            return []
        parts = [f"{k}={v * 1000:.1f}" for k, v in self.phases.items()]
        return ["memgit: timing ms: " + " ".join(parts)]


TIMING = _Timing()


def reset_timing() -> None:
    """Time a new run from now, on or off by this process's MEMGIT_HOOK_TIMING (a child
    of the warm judge takes on its hook's environment after this module was imported)."""
    TIMING.__init__()  # type: ignore[misc]
