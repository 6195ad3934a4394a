# Two commands: `make run` starts the product on the bundled data; `make test` runs the whole test suite.
# Both first run scripts/setup.sh, which installs missing system packages and does nothing when all are present.

SWIFT ?= swift
RELEASE_BIN = .build/release/poi

.PHONY: setup build release test run bench clean-var

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --product poi

test: setup
	$(SWIFT) build --build-tests
	scripts/postgres/with-server $(SWIFT) test
	scripts/contract/run .build/debug/poi
	scripts/browser/run .build/debug/poi
	scripts/compat/run .build/debug/poi

run: release
	scripts/run.sh $(RELEASE_BIN)

bench: release
	benchmarks/run

clean-var:
	rm -rf var
