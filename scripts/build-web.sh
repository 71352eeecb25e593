#!/usr/bin/env bash
# Builds the portal (web/, docs/portal.md) into web/dist, which `tessera up` and
# `tessera server` serve at /ui/. `npm ci` installs exactly the committed
# lockfile, and only when it changed; Vite builds only when a source changed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f web/package.json ] || exit 0
cd web
if ! command -v npm >/dev/null 2>&1; then
  echo "build-web: npm is not installed, so the portal (/ui/) is not built; scripts/install-deps.sh installs it" >&2
  exit 0
fi
stamp=node_modules/.tessera-package-lock.json
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
if [ -f dist/index.html ] && [ -z "$(find index.html src public package.json vite.config.ts tsconfig*.json \
      -newer dist/index.html -print -quit 2>/dev/null)" ]; then
  exit 0
fi
npm run --silent build
