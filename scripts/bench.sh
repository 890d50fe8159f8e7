#!/usr/bin/env bash
# Benchmarks: remixproxy side by side with a direct connection and (when installed) mitmproxy,
# then the injector and leaf-certificate micro-benchmarks, then remixlets in real Chromium (dom
# round trip, keep-repair latency, memory of 50 page sessions). Figures go to the README by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mitmdump >/dev/null 2>&1 || echo "bench.sh: mitmdump not installed (apt-get install -y mitmproxy); measuring without it" >&2
go run ./e2e/bench --goproxy-bare "$@"
go test -run '^$' -bench . -benchmem ./rewrite/ ./certs/ ./sandbox/
go test -run '^$' -bench CorpusPageLoad -benchtime 1x ./e2e/  # corpus page loads in Chromium, direct vs through the proxy
go run ./e2e/benchremixlet
go run ./e2e/outlinebench  # outline vs Playwright ariaSnapshot on ../shared/corpus/pages (cd e2e/outlinebench && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core)
go run ./e2e/agentbench  # Act tasks with scripted personas: loops, false "done", tokens (a real model: --model-url URL --model-api API --model NAME)
