# Every target sets up .venv on first use, so a fresh clone needs only `make <target>`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo train test bench clean

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

clean:
	rm -rf $(VENV) runs bench-results
