# Every target sets up .venv on first use, so a fresh clone needs only `make <target>`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo train test bench clean test-rllib

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: it takes the CPU build on these machines, never the CUDA one.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[train,test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/island-fortress demo --players 3 --seed 7

train: $(STAMP)
	$(BIN)/island-fortress train --config configs/default.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/island-fortress bench --out bench-results/bench.json

# Ray RLlib in a venv of its own (a large dependency tree): its tests and its example.
RLLIB_VENV := .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed-stamp

$(RLLIB_STAMP): pyproject.toml
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RLLIB_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(RLLIB_VENV)/bin/python -m pip install --quiet -e ".[test,train,rllib]" torch==2.13.0
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m pytest -q -p no:xdist tests/integrations/test_rllib.py
	$(RLLIB_VENV)/bin/python examples/rllib_ppo.py --iterations 2

clean:
	rm -rf $(VENV) $(RLLIB_VENV) runs bench-results
