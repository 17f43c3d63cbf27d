#!/usr/bin/env bash
# The interactive-mode tests drive `hands` in a pseudo-terminal through tmux: install it when
# missing (as root, with apt), so a fresh machine or CI run has it.
set -euo pipefail
if command -v tmux >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-env: installing tmux for the interactive tests" >&2
  (apt-get install -y -qq tmux >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq tmux >/dev/null 2>&1; }) || true
fi
command -v tmux >/dev/null 2>&1 || echo "test-env: tmux is not installed; the interactive tests will fail (apt-get install tmux)" >&2
