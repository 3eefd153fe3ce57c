"""The trainer's thread counts fitted to the CPUs idle at its start (``training/cpus.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from island_fortress_env.training import cpus
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.ppo import fitted_threads

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("available", "idle", "threads"),
    [(2, 2.0, 2), (2, 1.0, 1), (2, 0.1, 1), (4, 2.6, 3), (2, 1.5, 2), (1, 3.0, 1)],
)
def test_the_threads_are_the_idle_cpus_rounded_at_least_one_at_most_those_available(available, idle, threads):
    assert cpus.CpuBudget(available, idle).threads == threads


@pytest.mark.parametrize(
    ("line", "quota"), [("max 100000", None), ("150000 100000", 1.5), ("200000 100000", 2.0), ("junk", None)]
)
def test_a_cgroup_quota_is_read_as_cpus(line, quota):
    assert cpus._quota(line) == quota


def test_the_cgroup_quota_caps_the_cpus_available(tmp_path, monkeypatch):
    limit = tmp_path / "cpu.max"
    limit.write_text("100000 100000\n")
    monkeypatch.setattr(cpus, "CGROUP_V2", limit)
    assert cpus.available_cpus() == 1


def test_a_measure_sees_no_more_idle_cpus_than_it_may_use():
    budget = cpus.measure(0.05)
    assert budget.available >= 1 and 0.0 <= budget.idle <= budget.available
    assert 1 <= budget.threads <= budget.available


def test_without_proc_stat_every_available_cpu_counts_as_idle(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "PROC_STAT", tmp_path / "missing")
    budget = cpus.measure(0.0)
    assert budget.idle == budget.available


def _config(*overrides: str) -> NativeConfig:
    return load_config(ROOT / "configs" / "default.yaml", list(overrides), schema=NativeConfig)


def test_a_busy_machine_gets_fewer_threads_and_the_config_records_the_numbers_used(monkeypatch, capsys):
    monkeypatch.setattr(cpus, "measure", lambda: cpus.CpuBudget(2, 1.0))
    cfg = _config("train.torch_threads=2", "train.core_threads=2")
    assert cfg.train.fit_threads  # the default config fits them
    fitted = fitted_threads(cfg)
    assert (fitted.train.torch_threads, fitted.train.core_threads, fitted.train.fit_threads) == (1, 1, False)
    assert "threads: torch 1, core 1 (1.0 of 2 CPUs idle" in capsys.readouterr().out
    assert fitted.model_dump(exclude={"train"}) == cfg.model_dump(exclude={"train"})


def test_an_idle_machine_keeps_the_configured_threads_and_fixed_ones_are_never_fitted(monkeypatch, capsys):
    monkeypatch.setattr(cpus, "measure", lambda: cpus.CpuBudget(2, 2.0))
    fitted = fitted_threads(_config())
    assert (fitted.train.torch_threads, fitted.train.core_threads) == (2, 2)
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(cpus, "measure", lambda: cpus.CpuBudget(2, 0.0))
    fixed = _config("train.fit_threads=false")
    assert fitted_threads(fixed) is fixed
