# Boilerscope: make install | run | test | e2e | bench | bench-full | install-spark | test-spark
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install run test e2e bench bench-full bench-scale bench-versus browser demo clean install-spark test-spark

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test,bench]'
	$(PY) -m engine.warm
	touch $(STAMP)

# the dashboard on the demo snapshot in data/ (mined on first start)
run: install
	$(VENV)/bin/boilerscope dashboard

test: install
	$(PY) -m pytest -q -m "not e2e and not spark"

# the Spark engine: pyspark (the spark extra) and Debian's Java 17 runtime if no java
install-spark: install
	@command -v java >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null)
	$(PY) -m pip install -q -c constraints.txt -e '.[test,bench,spark]'

test-spark: install-spark
	$(PY) -m pytest -q -m spark

# Debian's chromium for the end-to-end browser test (never playwright's download)
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

e2e: install browser
	$(PY) -m pytest -q -m e2e

# the previous release: the commit whose ingest and whole-process mine the bench
# measures beside this checkout's, in the same run (interleaved, medians)
BASELINE ?= c03d7cc

# kaleido draws the PNG charts with Debian's chromium
bench: install browser
	$(PY) bench/run.py --suite quick
	$(PY) bench/ingest_shards.py --runs 3 --baseline-rev $(BASELINE)
	$(MAKE) bench-versus REV=$(BASELINE)
	$(PY) bench/dedup_eval.py
	$(PY) bench/templates_eval.py --docs 600
	$(PY) bench/app_queries.py --docs 100000
	$(PY) bench/app_latency.py --docs 100000
	$(PY) bench/formats.py ../shared/corpora/webdocs.parquet --runs 3
	$(PY) bench/formats.py ../shared/corpora/webdocs.parquet --repeat 4 --runs 1
	$(PY) bench/warclibs.py --runs 3
	$(PY) bench/templates_corpora.py --runs 3 --warmup 1
	$(PY) bench/targets.py

bench-full: install browser
	$(PY) bench/run.py --suite full
	$(PY) bench/dedup_eval.py
	$(PY) bench/dedup_eval.py --pairs
	$(PY) bench/templates_eval.py --docs 3000
	$(PY) bench/templates_corpora.py --runs 3 --warmup 1
	$(PY) bench/app_queries.py --docs 1000000
	$(PY) bench/app_latency.py --docs 1000000

# this checkout against another commit (REV, default HEAD~1), whole process, interleaved (not in CI)
REV ?= HEAD~1
bench-versus: install
	git worktree remove --force bench/work/prev 2>/dev/null || rm -rf bench/work/prev
	git worktree add --detach bench/work/prev $(REV)
	$(PY) bench/versus.py ../shared/corpora/webdocs.parquet --other bench/work/prev --runs 5

# generated corpora of 100M, 300M and 1B tokens: ingest and mine, time and memory (not in CI)
bench-scale: install
	$(PY) bench/scale.py --sizes 100M 300M 1B

# rebuild data/demo.parquet from ../shared/corpora (maintainers only)
demo: install
	$(PY) data/make_demo.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
