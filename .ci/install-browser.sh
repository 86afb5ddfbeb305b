#!/usr/bin/env bash
# Install what tests/report/test_html_browser.py needs: Debian's Chromium and the playwright Python package (the
# driver only: it launches /usr/bin/chromium; `playwright install` is never run, it would download a browser).
# Quick when both are already there. Called from .ci/run.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "install-browser: no apt-get here; the HTML browser test will be skipped" >&2
  fi
fi
if ! python3 -c "import playwright" >/dev/null 2>&1; then
  python3 -m pip install -q "playwright>=1.40"
fi
command -v chromium >/dev/null 2>&1 && echo "install-browser: $(chromium --version 2>/dev/null | head -1)" || true
