# Every target sets up .venv on first use, so a fresh clone needs only `make <target>`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo serve test-browser train test lint integration-venvs test-wheel bench bench-training bench-gpu bench-learning clean test-integrations test-sb3 test-tianshou test-torchrl test-openspiel test-rllib test-benchmarl test-skrl test-onnx test-textarena test-openenv test-gamearena test-sanitize test-pettingzoo-floor test-agilerl docs

# The core's sources include what its generated headers are written from (core/codegen.py).
CORE_SOURCES := $(wildcard island_fortress_env/core/src/*) island_fortress_env/core/codegen.py \
	$(wildcard island_fortress_env/engine/*.py island_fortress_env/engine/data/*.json)

$(STAMP): pyproject.toml CMakeLists.txt $(CORE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: it takes the CPU build on these machines, never the CUDA one.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[train,test,render,lint,web]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/island-fortress demo --players 3 --seed 7

serve: $(STAMP)
	$(BIN)/island-fortress serve --agents random heuristic checkpoints/policy-2-4p-v3.zip

# The browser tests: the system's chromium and its chromedriver (CI installs Debian's in .ci/run;
# where they are missing the tests skip, saying so in one line), Selenium from PyPI.
test-browser: $(STAMP)
	$(BIN)/python -m pip install --quiet "selenium>=4.20"  # the [browser] extra, without rebuilding the package
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/browser

train: $(STAMP)
	$(BIN)/island-fortress train --config configs/default.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

# ruff (the rule set chosen in pyproject.toml), ruff's formatter and mypy, as CI runs them. mypy
# reads the package as the wheel lays it out (training/ as island_fortress_env/training), from a
# copy in build/typecheck: its messages name the files there.
TYPECHECK := build/typecheck
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)
	cp -r island_fortress_env $(TYPECHECK)/ && cp -r training $(TYPECHECK)/island_fortress_env/training
	cd $(TYPECHECK) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml --cache-dir $(CURDIR)/.mypy_cache

bench-training: $(STAMP)
	$(BIN)/island-fortress bench-training --seconds 150

# The default on a CUDA GPU, alone: its decisions learned from per second (no GPU: one line, exit 2).
bench-gpu: $(STAMP)
	$(BIN)/island-fortress bench-training --seconds 150 --gpu

# The learning race: the default and the previous default, 4 minutes of training each, then each
# greedy policy against the heuristic at 2, 3 and 4 players on the same deals.
bench-learning: $(STAMP)
	$(BIN)/island-fortress bench-training --race 4 --games 96

# The bench extra: the anchors, and onnx for the search player's ONNX side (torch stays pinned).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0 -e ".[bench]"
	$(BIN)/island-fortress bench --out bench-results/bench.json

# The C++ core built with AddressSanitizer and UndefinedBehaviorSanitizer in a venv of its own
# (.venv-sanitize: numpy, gymnasium, pytest, pytest-timeout and hypothesis, no torch) and a build folder of its own
# (build/sanitize), then the core's differential and fuzz tests under it. Python itself is not
# instrumented: the sanitizer runtime is preloaded, and leak checking is off (the interpreter keeps
# its objects to the end). Any error stops the run with a report.
SAN_VENV := .venv-sanitize
SAN_BIN := $(SAN_VENV)/bin
SANITIZER_CXX ?= g++
SANITIZER_ENV = LD_PRELOAD="$$($(SANITIZER_CXX) -print-file-name=libasan.so) $$($(SANITIZER_CXX) -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(SAN_VENV)/.deps-stamp: pyproject.toml Makefile
	$(PYTHON) -m venv $(SAN_VENV)
	$(SAN_BIN)/python -m pip install --quiet --upgrade pip
	$(SAN_BIN)/python -m pip install --quiet numpy gymnasium pytest pytest-timeout hypothesis
	touch $@

$(SAN_VENV)/.build-stamp: $(SAN_VENV)/.deps-stamp CMakeLists.txt $(CORE_SOURCES)
	ISLAND_FORTRESS_SANITIZE=ON CMAKE_BUILD_PARALLEL_LEVEL=2 $(SAN_BIN)/python -m pip install --quiet --no-deps -e . \
		-Cbuild-dir=build/sanitize -Ccmake.build-type=RelWithDebInfo
	touch $@

test-sanitize: $(SAN_VENV)/.build-stamp
	$(SANITIZER_ENV) $(SAN_BIN)/python -m pytest -q -p no:cacheprovider tests/test_core_*.py

# The package's wheel, built once (the core compiled once) for every library's venv and for the
# wheel test; rebuilt when a file that goes in it changes.
WHEELHOUSE := build/wheelhouse
WHEEL_STAMP := $(WHEELHOUSE)/.stamp
WHEEL_SOURCES := $(shell git ls-files island_fortress_env training 2>/dev/null) checkpoints/policy-2-4p-v3.zip
$(WHEEL_STAMP): $(STAMP) pyproject.toml CMakeLists.txt $(WHEEL_SOURCES)
	rm -rf $(WHEELHOUSE)
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip wheel --quiet --no-deps -w $(WHEELHOUSE) . -Cbuild-dir=build/wheel
	touch $@
WHEEL_FILE = $$(ls $(WHEELHOUSE)/island_fortress_env-*.whl)

# One venv per RL library (.venv-<name>): each pins its own dependency ranges, so they are
# installed and tested apart. torch (CPU build) goes in first where the library needs it, then the
# package's dependencies with the library's extras (read from pyproject.toml), side by side under
# `make -j`; then the one wheel above. Their tests run with PYTHONSAFEPATH=1 (`python -P`), for
# every Python process they start: the installed package is what they import, not this source tree.
.venv-%/.deps-stamp: pyproject.toml
	$(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install --quiet --upgrade pip
	if [ -z "$(filter $*,$(NO_TORCH))" ]; then .venv-$*/bin/python -m pip install --quiet torch==2.13.0; fi
	$(PYTHON) -c "$$REQUIREMENTS" $(or $(EXTRAS_$*),test$(comma)$*) > .venv-$*/requirements.txt
	.venv-$*/bin/python -m pip install --quiet -r .venv-$*/requirements.txt
	touch $@

.PRECIOUS: .venv-%/.deps-stamp  # a step of its own, kept: a new wheel reinstalls only the package
.venv-%/.installed-stamp: .venv-%/.deps-stamp $(WHEEL_STAMP)
	.venv-$*/bin/python -m pip install --quiet --no-deps --force-reinstall $(WHEEL_FILE)
	touch $@

# The requirements of the package and of the extras given (comma-separated), one a line.
define REQUIREMENTS
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extras = [r for extra in sys.argv[1].split(",") for r in project["optional-dependencies"][extra]]
print("\n".join(project["dependencies"] + extras))
endef
export REQUIREMENTS

INTEGRATION_VENVS := tianshou torchrl openspiel rllib benchmarl skrl onnx textarena openenv gamearena agilerl pzfloor
integration-venvs: $(foreach v,$(INTEGRATION_VENVS),.venv-$(v)/.installed-stamp)
$(foreach v,$(INTEGRATION_VENVS),test-$(v)): export PYTHONSAFEPATH = 1
test-pettingzoo-floor: export PYTHONSAFEPATH = 1

INTEGRATION_PYTEST = python -m pytest -q -p no:cacheprovider
NO_TORCH := onnx textarena openenv gamearena pzfloor  # the venvs that never get torch (OpenSpiel's has it for OpenSpiel's PyTorch DQN)
comma := ,
# The extras of a library's venv: test + the library's own, and for RLlib the training stack too
# (its backend trains and evaluates like `island-fortress train`).
EXTRAS_rllib := test,train,rllib

test-sb3: $(STAMP)
	$(BIN)/$(INTEGRATION_PYTEST) tests/integrations/test_sb3.py
	$(BIN)/python examples/sb3_maskable_ppo.py --timesteps 1024 --games 2

test-tianshou: .venv-tianshou/.installed-stamp
	.venv-tianshou/bin/$(INTEGRATION_PYTEST) tests/integrations/test_tianshou.py
	.venv-tianshou/bin/python examples/tianshou_dqn.py --epoch 1 --epoch-num-steps 300

test-torchrl: .venv-torchrl/.installed-stamp
	.venv-torchrl/bin/$(INTEGRATION_PYTEST) tests/integrations/test_torchrl.py
	.venv-torchrl/bin/python examples/torchrl_collector.py --frames 600

test-openspiel: .venv-openspiel/.installed-stamp
	.venv-openspiel/bin/$(INTEGRATION_PYTEST) tests/integrations/test_openspiel.py
	.venv-openspiel/bin/$(INTEGRATION_PYTEST) tests/integrations/test_calibrate.py
	.venv-openspiel/bin/python examples/openspiel_mcts.py --games 2 --simulations 10
	.venv-openspiel/bin/python examples/openspiel_dqn.py --episodes 2 --min-buffer 100 --eval-games 2
	.venv-openspiel/bin/island-fortress evaluate mcts:10 random --games 2 --no-progress

test-rllib: .venv-rllib/.installed-stamp
	.venv-rllib/bin/$(INTEGRATION_PYTEST) -p no:xdist tests/integrations/test_rllib.py
	.venv-rllib/bin/python examples/rllib_ppo.py --iterations 2

# The Parallel API's routes (island_fortress_v0.parallel_env): BenchMARL's Experiment, skrl's MAPPO.
test-benchmarl: .venv-benchmarl/.installed-stamp
	.venv-benchmarl/bin/$(INTEGRATION_PYTEST) tests/integrations/test_benchmarl.py
	.venv-benchmarl/bin/python examples/benchmarl_mappo.py --iterations 2 --frames 300

test-skrl: .venv-skrl/.installed-stamp
	.venv-skrl/bin/$(INTEGRATION_PYTEST) tests/integrations/test_skrl.py
	.venv-skrl/bin/python examples/skrl_mappo.py --rollouts 128 --iterations 2

# ONNX: the shipped policy exported in .venv (torch's exporter: the [onnx] extra's packages added
# there without rebuilding the package), checked against torch there (tests/test_onnx.py), then
# played where torch is not installed (.venv-onnx: the package with its onnx and test extras).
ONNX_MODEL := build/onnx/policy-2-4p.onnx
test-onnx: $(STAMP) .venv-onnx/.installed-stamp
	$(BIN)/python -m pip install --quiet torch==2.13.0 "onnx>=1.17" "onnxruntime>=1.20" "onnxscript>=0.5"
	$(BIN)/$(INTEGRATION_PYTEST) tests/test_onnx.py
	mkdir -p $(dir $(ONNX_MODEL))
	$(BIN)/island-fortress export checkpoints/policy-2-4p.zip $(ONNX_MODEL)
	$(BIN)/island-fortress evaluate checkpoints/policy-2-4p.zip heuristic --games 20 --seed 3 --json \
		--no-progress > $(ONNX_MODEL:.onnx=.evaluate.json)
	ONNX_MODEL=$(ONNX_MODEL) ONNX_WITHOUT_TORCH=1 .venv-onnx/bin/$(INTEGRATION_PYTEST) tests/integrations/test_onnx.py

# TextArena: whole games through its own loop and LLMObservationWrapper, scripted agents (no model).
test-textarena: .venv-textarena/.installed-stamp
	.venv-textarena/bin/$(INTEGRATION_PYTEST) tests/integrations/test_textarena.py
	.venv-textarena/bin/python examples/textarena_play.py --games 3

# OpenEnv: the game served by OpenEnv's own server on a loopback port the tests start and stop,
# played with OpenEnv's own client (whole games, hidden-information checks, refused replies).
test-openenv: .venv-openenv/.installed-stamp
	.venv-openenv/bin/$(INTEGRATION_PYTEST) tests/integrations/test_openenv.py
	.venv-openenv/bin/python examples/openenv_play.py --games 2 --players 4

# Game Arena: kaggle-environments' OpenSpiel runner and its LLM harness (core_harness), with
# scripted models reached through litellm (no model, nothing sent).
test-gamearena: .venv-gamearena/.installed-stamp
	.venv-gamearena/bin/$(INTEGRATION_PYTEST) tests/integrations/test_game_arena.py
	.venv-gamearena/bin/python examples/game_arena_play.py --games 1 --players 3

# AgileRL: its own multi-agent algorithms (IPPO) trained over parallel_env through its PettingZoo
# vector env, on the PettingZoo it pins (1.26.1).
test-agilerl: .venv-agilerl/.installed-stamp
	.venv-agilerl/bin/$(INTEGRATION_PYTEST) tests/integrations/test_agilerl.py
	.venv-agilerl/bin/python examples/agilerl_ippo.py --steps 256 --games 2

# The floor of PettingZoo's range (pyproject.toml: pettingzoo>=1.25): the package imports, passes
# PettingZoo's API tests and plays there, in .venv-pzfloor (no torch; the extras `test` only).
PZ_FLOOR := 1.25.0
EXTRAS_pzfloor := test
.venv-pzfloor/.deps-stamp: pyproject.toml
	$(PYTHON) -m venv .venv-pzfloor
	.venv-pzfloor/bin/python -m pip install --quiet --upgrade pip
	$(PYTHON) -c "$$REQUIREMENTS" $(EXTRAS_pzfloor) > .venv-pzfloor/requirements.txt
	.venv-pzfloor/bin/python -m pip install --quiet -r .venv-pzfloor/requirements.txt "pettingzoo==$(PZ_FLOOR)"
	touch $@

test-pettingzoo-floor: .venv-pzfloor/.installed-stamp
	PZ_FLOOR=$(PZ_FLOOR) .venv-pzfloor/bin/$(INTEGRATION_PYTEST) tests/integrations/test_pettingzoo_floor.py

# The documentation site (docs/conf.py; the `docs` extra added to .venv beside pinned torch): every
# page of docs/ read by MyST, the API reference from the docstrings, warnings as errors.
DOCS_OUT := build/docs
docs: $(STAMP)
	$(PYTHON) -c "$$REQUIREMENTS" docs > $(VENV)/docs-requirements.txt
	$(BIN)/python -m pip install --quiet torch==2.13.0 -r $(VENV)/docs-requirements.txt
	rm -rf $(DOCS_OUT)
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs $(DOCS_OUT)

# The wheel, installed in a fresh venv away from the repository, plays the search player over the
# shipped policy (tests/test_packaging.py).
test-wheel: $(STAMP) $(WHEEL_STAMP)
	ISLAND_FORTRESS_TEST_WHEEL=1 ISLAND_FORTRESS_WHEEL=$(WHEEL_FILE) $(BIN)/$(INTEGRATION_PYTEST) tests/test_packaging.py

test-integrations: test-sb3 test-tianshou test-torchrl test-openspiel test-rllib test-benchmarl test-skrl test-onnx test-textarena test-openenv test-gamearena test-agilerl test-pettingzoo-floor test-wheel

clean:
	rm -rf $(VENV) .venv-tianshou .venv-torchrl .venv-openspiel .venv-rllib .venv-benchmarl .venv-skrl .venv-onnx .venv-textarena .venv-openenv .venv-gamearena .venv-agilerl .venv-pzfloor $(SAN_VENV) $(WHEELHOUSE) runs bench-results
