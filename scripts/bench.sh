#!/usr/bin/env bash
# Benchmarks: remixproxy side by side with a direct connection, bare goproxy, remixproxy with
# injection switched off and (when installed) mitmproxy — throughput and each proxy's own CPU time
# per request; then the injector and leaf-certificate micro-benchmarks; then real Chromium: corpus
# page loads direct vs through the proxy, the page agent's main-thread time before the load and
# the floor under it (its capture's first touch of interfaces), when remixlets take effect (frames
# painted without a stylesheet, a script's run time and first visible change, the first page after
# a start), the dom round trip, keep-repair latency and memory of 50 page sessions. Each prints
# Markdown tables; figures go to the README by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mitmdump >/dev/null 2>&1 || echo "bench.sh: mitmdump not installed (apt-get install -y mitmproxy); measuring without it" >&2
go run ./e2e/bench --goproxy-bare "$@"  # throughput and CPU per request (issue 14: injection adds ≤ 15% to the relay's CPU)
go test -run '^$' -bench . -benchmem ./rewrite/ ./certs/ ./sandbox/
go test -run '^$' -bench RunAtReadyToOps ./proxy/remixlet/  # issue 14: the proxy's and sandbox's share of a document_end script's start
go test -run '^$' -bench CorpusPageLoad -benchtime 1x ./e2e/  # corpus page loads in Chromium, direct vs through the proxy
go test -run '^$' -bench CorpusMainThread -benchtime 1x ./e2e/  # issue 14: the page agent's main-thread time before the load, traced
go test -run '^$' -bench AgentCaptureFirstTouch -benchtime 1x ./e2e/  # issue 14: the first touch of the interfaces the agent captures
go run ./e2e/firstframe  # issue 14: when remixlets take effect (built-in page, <h1> after 25 KiB, streamed and whole)
go run ./e2e/firstframe --only script --delivery stream --h1-at 61  # the same script remixlet with the <h1> at the corpus's upper quartile
go run ./e2e/benchremixlet
go run ./e2e/outlinebench  # outline vs Playwright ariaSnapshot on ../shared/corpus/pages (cd e2e/outlinebench && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core)
go run ./e2e/agentbench  # Act tasks with scripted personas: loops, false "done", tokens (a real model: --model-url URL --model-api API --model NAME)
