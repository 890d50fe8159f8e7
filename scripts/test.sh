#!/usr/bin/env bash
# Runs every test of remixproxy: vet, unit tests (with the race detector), and the end-to-end suite
# in real headless Chromium through the real proxy. Installs what the tests need when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v certutil >/dev/null 2>&1 || need+=(libnss3-tools)
command -v node >/dev/null 2>&1 || need+=(nodejs)
if [ ${#need[@]} -gt 0 ]; then
  echo "test.sh: installing ${need[*]} (needed by the tests)"
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "test.sh: gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...

# The shared test corpus (../shared/corpus, never copied into this tree: see its README). Where it
# is on the machine the corpus tests must run — a test that cannot read it fails instead of
# skipping; where it is not, they skip and say so here.
corpus=$(cd .. && pwd)/shared/corpus
if [ -d "$corpus" ]; then
  export REMIXPROXY_CORPUS="$corpus" REMIXPROXY_REQUIRE_CORPUS=1
else
  echo "test.sh: no shared corpus at $corpus: TestCorpus, TestHostileSweep's XSS part and TestRemixletSetHTMLWithEveryDOMPurifyVector will skip" >&2
fi

# Unit and integration packages with the race detector; the browser suite without it (it is
# dominated by Chromium, and the race detector would double its time on two cores).
go test -race -count=1 $(go list ./... | grep -v '/e2e')
go test -count=1 -timeout 20m ./e2e/...
