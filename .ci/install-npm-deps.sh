#!/usr/bin/env bash
# Install the npm packages memgit's agent tests use (tests/agents/test_mcp_clients.py,
# tests/agents/test_agent_tools.py): Claude Code's CLI (`claude mcp`, `claude plugin`), the
# MCP Inspector's CLI, Gemini CLI (`gemini extensions`, `gemini mcp`) and Codex (`codex mcp`),
# at pinned versions, into .npm-tools/ at the top of the project (MEMGIT_NPM_TOOLS
# overrides), where the tests look for them. npm itself comes from Debian's nodejs/npm
# when it is missing. Idempotent: does nothing when the pinned versions are there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
    "@anthropic-ai/claude-code@2.1.332"
    "@modelcontextprotocol/inspector@2.12.0"
    "@google/gemini-cli@0.61.0"
    "@openai/codex@0.171.0"
)
DIR="${MEMGIT_NPM_TOOLS:-$PWD/.npm-tools}"

if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=(); elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo); else SUDO=(); fi
    echo "install-npm-deps: installing nodejs and npm"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends nodejs npm
fi

wanted="$(printf '%s\n' "${PACKAGES[@]}")"
if [ -f "$DIR/.installed" ] && [ "$(cat "$DIR/.installed")" = "$wanted" ]; then
    echo "install-npm-deps: already installed in $DIR"
    exit 0
fi
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-save --no-audit --no-fund --loglevel=error "${PACKAGES[@]}"
for exe in claude mcp-inspector gemini codex; do
    [ -x "$DIR/node_modules/.bin/$exe" ] \
        || { echo "install-npm-deps: $exe missing after npm install" >&2; exit 1; }
done
printf '%s\n' "$wanted" > "$DIR/.installed"
echo "install-npm-deps: done ($DIR)"
