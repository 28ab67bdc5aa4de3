# The two commands a new machine needs: `make run` and `make test` (`make test-valkey`: the
# suite on Valkey, without the engine-blind browser and bench tiers). For the edit-test loop, `make quick`: lint and the suite without its slow tiers
# (the fault, browser, bench, cluster and fuzz markers; `make test` runs them all).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
PLAYERS ?= 1000000
SOCKETS ?= 10000
# BENCH_ARGS: more options of bench.run, e.g. `--segments` (two dimensions and clans on the board).
BENCH_ARGS ?=
# Where `make test-valkey` finds its Valkey, or starts one (its own port: 6379 is Redis's).
VALKEY_TEST_URL ?= redis://127.0.0.1:6391/0
export HOST PORT

.PHONY: install services setup demo run test test-valkey quick lint clients clients-tools bench chaos clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet -e clients/python
	touch $@

install: $(VENV)/.installed

services: install
	$(BIN)/python scripts/devservices.py

setup: services
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py bootstrap

# A simulated game server posting results to a running `make run` (start that first, in another
# terminal). Options: make demo DEMO_ARGS="--players 5000 --rate 20 --batch 10".
demo: install
	$(BIN)/python -m pages.demo $(DEMO_ARGS)

run: setup
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python scripts/devservices.py --print-urls
	$(BIN)/honcho start --port $(PORT)

# The API's typed clients, regenerated from the code's OpenAPI schema (docs/clients.md):
# clients/openapi.json, the Python package and the TypeScript package's types.
clients: install
	$(BIN)/python -m scripts.clients generate

# The TypeScript client's tools, installed from its lock file (npm ci) when missing or stale; the
# tests compile it and check that both clients match the schema. Says so when npm is missing.
clients-tools: install
	$(BIN)/python -m scripts.clients install

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# The whole suite on one engine: its server found or started at REDIS_URL, and every server the
# tests start themselves of the same engine (REDIS_ENGINE); a test checks that they all are.
define SUITE
	$(BIN)/python scripts/devservices.py
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest -n 2 --maxfail 20 $(SUITE_ARGS)
endef

test: export REDIS_ENGINE := redis
test: install lint clients-tools
	$(SUITE)

# On Valkey, the tiers whose answers do not depend on the engine are left out: the pages in a
# browser and the typed clients (marker browser) and the bench programs' harness (marker bench).
# That keeps CI's two runs within its time.
test-valkey: export REDIS_ENGINE := valkey
test-valkey: export REDIS_URL := $(VALKEY_TEST_URL)
test-valkey: SUITE_ARGS := -m "not (bench or browser)"
test-valkey: install lint clients-tools
	$(SUITE)

# The edit-test loop: the same suite without the slow tiers (markers in pyproject.toml, set in
# tests/conftest.py and tests/fault), a few minutes instead of the whole run. Options: make quick
# QUICK_ARGS="tests/matches -x".
QUICK_MARKERS ?= not (fault or browser or bench or cluster or fuzz)
quick: export REDIS_ENGINE := redis
quick: install lint clients-tools
	$(BIN)/python scripts/devservices.py
	$(BIN)/pytest -n 2 -m "$(QUICK_MARKERS)" $(QUICK_ARGS)

bench: setup
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	$(BIN)/python -m bench.run --players $(PLAYERS) --peak-sockets $(SOCKETS) $(BENCH_ARGS)
	$(BIN)/python -m bench.segments --members $$(( $(PLAYERS) < 10000000 ? $(PLAYERS) : 10000000 ))

# The fault campaign (docs/operations.md, "Fault campaign"): the deployment under load while faults are
# injected, then every invariant checked. Options: make chaos MINUTES=30 CHAOS_ARGS="--cluster
# --seed 7 --rate 1500 --report bench/results/chaos/cluster.json".
MINUTES ?= 30
chaos: install
	$(BIN)/python -m tests.fault.campaign --minutes $(MINUTES) $(CHAOS_ARGS)

clean:
	rm -rf $(VENV) .run
