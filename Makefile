# Set-up lives here and in pyproject.toml, nowhere else.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch lies on this machine's disk; any other spec pulls a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/xlingua demo

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) build *.egg-info
