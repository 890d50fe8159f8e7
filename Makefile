# The two commands a newcomer needs are `go run ./cmd/remixproxy` and `make test`.
.PHONY: test run bench build

test:
	./scripts/test.sh

run:
	go run ./cmd/remixproxy

build:
	go build -o bin/remixproxy ./cmd/remixproxy

bench:
	./scripts/bench.sh
