# The whole set-up is these two targets: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The demo trains every model, so it needs the neural extra (torch, pinned to the local CPU wheel).
# Right after installing, `ranklearn warm-up` compiles the numba kernels into their cache (in two
# processes, saying so), so that no later command starts with a silent half-minute of compiling.
# It only saves time: if it fails, the kernels compile on first use and the install goes on.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -qq -e '.[neural]'
	$(BIN)/ranklearn warm-up || echo 'ranklearn: warm-up failed; kernels will compile on first use'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -qq -e '.[dev,neural,plot]'
	$(BIN)/ranklearn warm-up || echo 'ranklearn: warm-up failed; kernels will compile on first use'
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/ranklearn demo

test: $(VENV)/.dev-installed
	$(BIN)/python -m pytest -q

bench: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
