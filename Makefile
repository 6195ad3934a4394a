# Two commands: `make run` starts the product on the bundled data; `make test` runs the whole test suite.
# `make run` serves a debug build, as `swift run` does: on a fresh machine it is ready in about half the time of an
# optimised build, and it shares `make test`'s build. `make run-release` serves the optimised build (what the
# benchmarks measure and what production runs).
# Both first run scripts/setup.sh, which installs what is missing and does nothing when all is present: `make run`
# only what building and serving need (`scripts/setup.sh serve`), `make test` the test tools too.

SWIFT ?= swift
RELEASE_BIN = .build/release/poi

.PHONY: setup setup-serve build release test run run-release bench clean-var format lint

setup:
	@scripts/setup.sh test

setup-serve:
	@scripts/setup.sh serve

build: setup
	$(SWIFT) build

release: setup-serve
	$(SWIFT) build -c release --product poi

# The committed .swift-format (Hummingbird's: 4 spaces, 150 columns, ordered imports); `make format` applies it.
lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift

format:
	$(SWIFT) format --in-place --recursive --parallel Sources Tests Package.swift

# The test tools' Python is the project's virtualenv (scripts/setup.sh makes it): first on PATH for every step.
test: export PATH := $(CURDIR)/.venv/bin:$(PATH)
test: setup lint
	$(SWIFT) build --build-tests
	scripts/postgres/with-server scripts/test/swift-tests $(SWIFT)
	scripts/contract/run .build/debug/poi
	scripts/browser/run .build/debug/poi
	scripts/compat/run .build/debug/poi
	scripts/cluster/run --poi .build/debug/poi --records 2000 --duration 60 --clients 3 --work $$(mktemp -d /tmp/poi-cluster.XXXXXX)

run: setup-serve
	$(SWIFT) build --product poi
	scripts/run.sh .build/debug/poi

run-release: release
	scripts/run.sh $(RELEASE_BIN)

bench: export PATH := $(CURDIR)/.venv/bin:$(PATH)
bench: setup release
	benchmarks/run

clean-var:
	rm -rf var
