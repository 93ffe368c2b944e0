# Set-up lives here and in pyproject.toml, nowhere else.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
# The models ship as packages of their own, built from src/xlingua/models/ (packages/README.md):
# reinstalled when a package or a model file changes (a new `xlingua ship` into the source tree).
MODEL_PACKAGES := $(sort $(wildcard packages/xlingua-models-*))
MODELS_STAMP   := $(VENV)/.installed-models
MODEL_FILES    := $(shell find $(MODEL_PACKAGES) src/xlingua/models -type f ! -path '*/__pycache__/*' 2>/dev/null)

.PHONY: setup browser demo docs test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch lies on this machine's disk; any other spec pulls a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# pip builds each with hatchling, fetched as the build backend; nothing of it is installed.
$(MODELS_STAMP): $(STAMP) $(MODEL_FILES)
	$(PY) -m pip install -q --force-reinstall --no-deps $(addprefix ./,$(MODEL_PACKAGES))
	touch $(MODELS_STAMP)

setup: $(STAMP) $(MODELS_STAMP)

demo: setup
	$(VENV)/bin/xlingua demo

# The page's browser test drives Debian's chromium through chromium-driver.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  ($(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium chromium-driver) || \
	  echo "could not install chromium: the page test skips (and fails under CI=true)"

# The docs build strictly: a broken link or anchor, or a page left out of the nav, fails the test.
# Not -q: mkdocs then drops the warnings that --strict counts, and passes. Its log shows on failure.
# Then the installed wheels, in a fresh venv outside the checkout (scripts/installed-wheel-test.sh).
DOCS_LOG := build/mkdocs.log
test: setup browser
	@mkdir -p build
	@NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -d build/site >$(DOCS_LOG) 2>&1 || \
	  (grep -v '^INFO' $(DOCS_LOG); echo "mkdocs build --strict failed: $(DOCS_LOG)"; exit 1)
	$(PY) -m pytest -q -p no:cacheprovider
	bash scripts/installed-wheel-test.sh

# The documentation site at http://127.0.0.1:8000/, rebuilt on every change.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

clean:
	rm -rf $(VENV) build *.egg-info
