#!/bin/sh
# memgit-hook.sh EVENT [OPTION...]: run memgit's agent hook EVENT (session-start, prompt,
# guard or record) with the agent tool's hook JSON on stdin. Options go to
# `memgit agent-hook` (--format claude-code|text, --budget N, --limit N, --path FILE,
# --command CMD). The drive is $MEMGIT_DRIVE, else the drive the session runs in.
# Without memgit on PATH it does nothing: a hook must never break the agent's session.
event="$1"
[ $# -gt 0 ] && shift
command -v memgit >/dev/null 2>&1 || exit 0
if [ "$event" = record ]; then
    # Recording turns needs `memgit observe`; an older memgit without it: do nothing.
    memgit observe --help >/dev/null 2>&1 || exit 0
fi
if [ -n "${MEMGIT_DRIVE:-}" ]; then
    exec memgit -C "$MEMGIT_DRIVE" agent-hook "$event" "$@"
fi
exec memgit agent-hook "$event" "$@"
