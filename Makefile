# MemoryHub: `make run` serves web + worker + beat; `make test` runs the whole suite.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
NODE_CLIENT := tests/mcp_node
A11Y := tests/a11y
VENDOR := vendor
# The browser libraries the dashboard serves: the built file of each locked package in
# $(VENDOR)/, as committed under static/vendor/ (so running the server needs no npm).
VENDORED := chart.js/dist/chart.umd.min.js:chart.js/chart.umd.min.js chart.js/LICENSE.md:chart.js/LICENSE.md cytoscape/dist/cytoscape.min.js:cytoscape/cytoscape.min.js cytoscape/LICENSE:cytoscape/LICENSE

# First interpreter that is Python >= 3.12 and actually runs: python3.13 / python3.12 /
# python3 on PATH, then any pyenv-installed version (its shims only run when selected).
define find_python
ok() { "$$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }; \
for c in "$$PYTHON" python3.13 python3.12 python3; do \
  [ -n "$$c" ] && command -v "$$c" >/dev/null 2>&1 && ok "$$c" && { command -v "$$c"; exit 0; }; \
done; \
if command -v pyenv >/dev/null 2>&1; then \
  root="$$(pyenv root)"; \
  for v in $$(ls "$$root/versions" 2>/dev/null | sort -rV); do \
    p="$$root/versions/$$v/bin/python3"; [ -x "$$p" ] && ok "$$p" && { echo "$$p"; exit 0; }; \
  done; \
fi; \
exit 1
endef
export find_python

.PHONY: run test test-sqlite test-postgres lint format bench venv vendor clean

$(PY):
	@py="$$(bash -c "$$find_python")" || { \
	  echo "MemoryHub needs Python 3.12 or newer and none was found (tried python3.13, python3.12, python3 and pyenv)."; \
	  echo "Install one (e.g. 'pyenv install 3.12') or point PYTHON=/path/to/python3.12 at it."; exit 1; }; \
	echo "Creating $(VENV) with $$py ($$($$py --version))"; \
	"$$py" -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[test,postgres]"
	@touch $@ $(VENV)/.installed-run

# axe-core, which the accessibility test runs in every page, from its lock file.
$(A11Y)/node_modules/.installed: $(A11Y)/package.json $(A11Y)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix $(A11Y) --no-audit --no-fund --loglevel=error && touch $@; \
	else \
	  echo "npm not found: the accessibility test needs axe-core and will fail"; \
	fi

# The browser libraries, from their lock file: the tests check that the files committed
# under static/vendor/ are the locked packages' own.
$(VENDOR)/node_modules/.installed: $(VENDOR)/package.json $(VENDOR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix $(VENDOR) --no-audit --no-fund --loglevel=error && touch $@; \
	else \
	  echo "npm not found: the check of the files under static/vendor/ will be skipped"; \
	fi

# After a version change in vendor/package.json (and npm install --prefix vendor, which
# updates the lock): copy the locked packages' built files under static/vendor/.
vendor: $(VENDOR)/node_modules/.installed
	@for pair in $(VENDORED); do \
	  from="$(VENDOR)/node_modules/$${pair%%:*}"; to="static/vendor/$${pair##*:}"; \
	  mkdir -p "$$(dirname "$$to")" && cp "$$from" "$$to" && echo "$$to"; \
	done

# The tests' second MCP client (the TypeScript SDK's, run with Node.js), from its lock file.
$(NODE_CLIENT)/node_modules/.installed: $(NODE_CLIENT)/package.json $(NODE_CLIENT)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix $(NODE_CLIENT) --no-audit --no-fund --loglevel=error && touch $@; \
	else \
	  echo "npm not found: the tests that drive /mcp with the Node.js client will be skipped"; \
	fi

venv: $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(PY) manage.py migrate --noinput
	$(PY) manage.py rebuild_fact_keys --if-stale
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) manage.py ensure_admin
	$(PY) manage.py runall

# The whole suite on both engines at once: SQLite in the foreground, and PostgreSQL
# (a throwaway server with pgvector from the test extras, on Redis database 14 so the two
# runs never share a queue) with its output kept and shown when it ends. The test process
# serves live servers, in-process endpoints and search threads of hundreds of tests from
# one pool of connections: a larger pool than a server process needs.
PG_TEST_LOG ?= $(VENV)/test-postgres.log
PG_TEST_POOL ?= 40
test: $(VENV)/.installed-test $(NODE_CLIENT)/node_modules/.installed $(A11Y)/node_modules/.installed $(VENDOR)/node_modules/.installed
	@MEMORYHUB_TEST_REDIS_URL=redis://127.0.0.1:6379/14 DB_POOL_MAX_SIZE=$(PG_TEST_POOL) \
	  $(PY) -m memoryhub.engine.db.embedded_postgres -- $(PY) -m pytest $(PYTEST_ARGS) \
	  > $(PG_TEST_LOG) 2>&1 & pg=$$!; \
	echo "== SQLite (PostgreSQL runs beside it, into $(PG_TEST_LOG))"; \
	$(PY) -m pytest $(PYTEST_ARGS); lite=$$?; \
	wait $$pg; post=$$?; \
	echo "== PostgreSQL"; cat $(PG_TEST_LOG); \
	echo "== SQLite: exit $$lite; PostgreSQL: exit $$post"; \
	[ $$lite -eq 0 ] && [ $$post -eq 0 ]

test-sqlite: $(VENV)/.installed-test $(NODE_CLIENT)/node_modules/.installed $(A11Y)/node_modules/.installed $(VENDOR)/node_modules/.installed
	$(PY) -m pytest $(PYTEST_ARGS)

test-postgres: $(VENV)/.installed-test $(NODE_CLIENT)/node_modules/.installed $(A11Y)/node_modules/.installed $(VENDOR)/node_modules/.installed
	DB_POOL_MAX_SIZE=$(PG_TEST_POOL) $(PY) -m memoryhub.engine.db.embedded_postgres -- $(PY) -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-test
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.installed-test
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

bench: $(VENV)/.installed-test
	@for b in bench/[!_]*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(NODE_CLIENT)/node_modules $(A11Y)/node_modules $(VENDOR)/node_modules
