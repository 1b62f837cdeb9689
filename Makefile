# The README's two commands: `make samples` and `make test`. Each installs what it needs.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PYTEST_ARGS ?=

.PHONY: install samples test test-fast test-deps

install:
	$(PIP) install -q -e .

samples: install
	$(PYTHON) -m runner run tests/data/samples -o samples-out
	@echo "results: samples-out/results.jsonl, samples-out/*.md, samples-out/*.txt"

test-deps:
	bash tests/install_test_deps.sh

# The whole suite, slow tests included (what CI runs).
test: test-deps
	$(PYTHON) -m pytest -m "slow or not slow" $(PYTEST_ARGS)

# The fast suite only.
test-fast: install
	$(PIP) install -q -e '.[test]'
	$(PYTHON) -m pytest $(PYTEST_ARGS)
