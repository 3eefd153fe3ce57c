"""The benchmark runs end to end, writes every figure and prints its table.

No timing assertions: only that each figure exists, is a positive number and is shown.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import random
import sys
from datetime import datetime

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.cli import app as cli
from island_fortress_env.cli import bench, bench_play, bench_report
from island_fortress_env.cli.bench_report import _rate as rate
from island_fortress_env.players.specs import SHIPPED_POLICY

PLAYERS = ("2", "3", "4")
# What each anchor needs, written out here independently of bench.py's own bookkeeping.
ANCHOR_NEEDS = {
    "connect_four_v3": ("pygame",),
    "texas_holdem_no_limit_v6": ("rlcard",),
    "chess_v6": ("chess", "pygame"),
    "openspiel_connect_four": ("pyspiel",),
    "openspiel_chess": ("pyspiel",),
}


def _run(argv: list[str]) -> tuple[dict, str]:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["bench", *argv]) == 0
    out = argv[argv.index("--out") + 1]
    with open(out, encoding="utf-8") as f:
        return json.load(f), stdout.getvalue()


@pytest.fixture(scope="module")
def no_anchors(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "nested" / "bench.json"  # the folder is created
    return _run(["--quick", "--no-anchors", "--out", str(out)])


@pytest.fixture(scope="module")
def with_anchors(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    return _run(["--quick", "--players", "3", "--no-search", "--out", str(out)])


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 and np.isfinite(x)


def _table_row(table: str, figure: str) -> str:
    rows = [line for line in table.splitlines() if line.startswith(figure + " ")]
    assert len(rows) == 1, f"row {figure!r} not printed once in:\n{table}"
    return rows[0]


BACKENDS = ("core", "python") if core.available() else ("python",)


def test_every_island_fortress_figure_is_positive_and_printed(no_anchors):
    results, table = no_anchors
    assert results["settings"]["players"] == [2, 3, 4]
    assert results["settings"]["backends"] == list(BACKENDS)
    for backend in BACKENDS:
        for n in PLAYERS:
            for section, unit in (("engine", "decisions/s"), ("aec", "steps/s")):
                fig = results[section][backend][n]
                for key in ("steps_per_s", "games_per_s", "steps_per_game", "games"):
                    assert _positive(fig[key]), (section, backend, n, key, fig[key])
                label = "engine" if section == "engine" else "AEC"
                assert rate(fig["steps_per_s"]) in _table_row(table, f"{label} {backend} {n}p {unit}")
                assert rate(fig["games_per_s"]) in _table_row(table, f"{label} {backend} {n}p games/s")
            micro = results["micro"][backend][n]
            assert micro["states"] > 0
            items = [
                ("clone", f"clone {backend} {n}p µs"),
                ("encode", f"observation encode {backend} {n}p µs"),
                ("mask", f"action_mask {backend} {n}p µs"),
            ]
            if backend == "python":  # the engine's legal-action memo, which the figure bypasses
                items.append(("legal_actions", f"legal_actions {backend} {n}p µs"))
            for key, row in items:
                assert _positive(micro[key]["us"]) and _positive(micro[key]["best_us"]), (backend, n, key)
                assert f"{micro[key]['us']:.2f}" in _table_row(table, row)
            mem = results["memory"][backend][n]
            assert mem["envs"] == bench.QUICK_MEMORY_ENVS
            for key in ("rss_delta_mb", "kb_per_env", "mb_per_1000_envs"):
                assert _positive(mem[key]), (backend, n, key, mem[key])
            assert f"{mem['mb_per_1000_envs']:.1f}" in _table_row(
                table, f"memory 1,000 envs {backend} {n}p MB"
            )
        heuristic = results["heuristic"][backend]
        assert _positive(heuristic["steps_per_s"]) and heuristic["steps_per_game"] > 100
        assert rate(heuristic["steps_per_s"]) in _table_row(table, f"heuristic {backend} decisions/s")
        evaluation = results["evaluation"][backend]
        assert evaluation["games"] == bench.QUICK_EVAL_GAMES and _positive(evaluation["seconds"])
        assert f"{evaluation['seconds']:.2f}" in _table_row(table, f"evaluate {backend} s")
    stock = results["aec_stock_wrapper"]["3"]  # the same env behind PettingZoo's own wrapper
    assert _positive(stock["steps_per_s"]) and stock["steps_per_game"] > 0
    assert rate(stock["steps_per_s"]) in _table_row(table, "AEC 3p steps/s, stock wrapper")


@pytest.mark.skipif(not core.available(), reason="the batch runs on the C++ core")
def test_the_batch_is_measured_on_one_and_two_threads(no_anchors):
    results, table = no_anchors
    assert sorted(results["batch"]) == ["1", "2"]
    for threads, fig in results["batch"].items():
        assert _positive(fig["steps_per_s"]) and _positive(fig["steps_per_cpu_s"])
        assert f"{fig['steps_per_cpu_s']:,.0f} per CPU-second" in _table_row(
            table, f"batch 3p steps/s, {threads} thread(s)"
        )
        assert fig["steps_per_game"] == bench_play.BATCH_STEPS * bench_play.BATCH_GAMES
        assert rate(fig["steps_per_s"]) in _table_row(table, f"batch 3p steps/s, {threads} thread(s)")


@pytest.mark.skipif(not core.available(), reason="both backends are compared")
def test_both_backends_give_the_same_evaluation(no_anchors):
    results, _table = no_anchors
    assert results["evaluation"]["core"]["wins"] == results["evaluation"]["python"]["wins"]


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def test_the_search_player_is_timed_with_torch_and_with_onnx(no_anchors):
    results, table = no_anchors
    search = results["search"]
    decisions = bench.QUICK_SEARCH_DECISIONS
    assert results["settings"]["search"] is True
    assert (search["players"], search["simulations"], search["decisions"]) == (
        bench.SEARCH_PLAYERS,
        bench.QUICK_SEARCH_SIMULATIONS,
        decisions,
    )
    if not _installed("torch"):
        assert search["torch"]["status"] == "not installed" and search["onnx"]["status"] == "skipped"
        return
    torch_fig = search["torch"]
    assert torch_fig["status"] == "ok" and len(torch_fig["runs_ms"]) == decisions
    assert all(_positive(x) for x in torch_fig["runs_ms"]) and _positive(torch_fig["ms_per_decision"])
    row = _table_row(table, "search torch ms/decision")
    assert f"{torch_fig['ms_per_decision']:.1f}" in row
    assert f"{SHIPPED_POLICY.name}:{search['simulations']}" in row
    onnx = search["onnx"]
    if _installed(*bench.ONNX_MODULES):
        assert onnx["status"] == "ok" and len(onnx["runs_ms"]) == decisions
        assert _positive(search["export_seconds"])
        speedup = torch_fig["ms_per_decision"] / onnx["ms_per_decision"]
        assert search["onnx_speedup"] == pytest.approx(speedup)
        pairs = zip(torch_fig["choices"], onnx["choices"], strict=True)
        assert search["same_choices"] == sum(a == b for a, b in pairs)
        row = _table_row(table, "search onnx ms/decision")
        assert f"{onnx['ms_per_decision']:.1f}" in row and f"{speedup:.2f}x torch's speed" in row
    else:
        assert onnx["status"] == "not installed" and "onnx" in onnx["note"]
        assert "not installed" in _table_row(table, "search onnx ms/decision")


def test_the_search_item_says_what_is_missing_instead_of_failing(monkeypatch):
    monkeypatch.setattr(bench, "ONNX_MODULES", ("numpy", "no_such_module_for_onnx"))
    if _installed("torch"):
        search = bench.measure_search(simulations=2, decisions=1, seed=0)
        assert search["torch"]["status"] == "ok" and "onnx_speedup" not in search
        assert search["onnx"]["status"] == "not installed"
        assert search["onnx"]["missing"] == "no_such_module_for_onnx"
        rows = bench_report._search_rows(search)
        assert rows[1] == ("search onnx ms/decision", "not installed", search["onnx"]["note"])
    monkeypatch.setattr(bench, "_missing", lambda modules: list(modules))
    search = bench.measure_search(simulations=2, decisions=1, seed=0)
    assert search["torch"]["status"] == "not installed" and search["onnx"]["status"] == "skipped"
    assert [row[1] for row in bench_report._search_rows(search)] == ["not installed", "skipped"]


def test_machine_date_and_skipped_anchors_are_recorded(no_anchors):
    results, _table = no_anchors
    machine = results["machine"]
    assert _positive(machine["cpu_count"])
    assert machine["python"] == ".".join(map(str, sys.version_info[:3]))
    assert machine["packages"]["numpy"] == np.__version__
    assert machine["packages"]["pettingzoo"]
    datetime.fromisoformat(results["date"])
    assert set(results["anchors"]) == set(ANCHOR_NEEDS)
    assert all(a["status"] == "skipped (--no-anchors)" for a in results["anchors"].values())
    assert all(row == {} for row in results["ratios"].values())
    assert "anchors" not in results["memory"]


def _status(value: float, goal: float) -> str:
    return "PASS" if value >= goal else "FAIL"


def test_targets_are_reported_not_asserted(no_anchors):
    results, table = no_anchors
    targets = {t["target"]: t for t in results["targets"]}
    assert len(targets) == 9
    against_anchors = [t for name, t in targets.items() if "connect_four" in name]
    assert len(against_anchors) == 3 and all(t["status"] == "N/A" for t in against_anchors)  # no anchors

    def find(prefix: str) -> dict:
        return next(t for name, t in targets.items() if name.startswith(prefix))

    slowest = min(f["steps_per_s"] for f in results["engine"]["python"].values())
    assert find("engine (python)")["status"] == _status(slowest, bench_report.TARGET_ENGINE_DPS)
    worst = max(f["clone"]["us"] for f in results["micro"]["python"].values())
    assert find("State.clone")["status"] == ("PASS" if worst < bench_report.TARGET_CLONE_US else "FAIL")
    memory = find("1,000 envs")
    assert memory["status"] in ("PASS", "FAIL") and "extrapolated from 100 envs" in memory["detail"]
    heuristic, batch, core_memory = find("heuristic"), find("batch"), find("1,000 live 3p core")
    both = len(results["heuristic"]) == 2
    ratio = (
        results["heuristic"]["core"]["steps_per_s"] / results["heuristic"]["python"]["steps_per_s"]
        if both
        else 0
    )
    assert heuristic["status"] == (_status(ratio, bench_report.TARGET_HEURISTIC_RATIO) if both else "N/A")
    best = max((f["steps_per_s"] for f in results["batch"].values()), default=0.0)
    assert batch["status"] == (_status(best, bench_report.TARGET_BATCH_SPS) if results["batch"] else "N/A")
    mb = results["memory"].get("core", {}).get("3", {}).get("mb_per_1000_envs")
    expected = "N/A" if mb is None else ("PASS" if mb <= bench_report.TARGET_CORE_MEM_MB else "FAIL")
    assert core_memory["status"] == expected
    for t in targets.values():
        assert f"{t['status']:<4}  {t['target']}: {t['detail']}" in table.splitlines()


def test_anchors_are_measured_or_reported_not_installed(with_anchors):
    results, table = with_anchors
    assert results["search"] == {"status": "skipped (--no-search)"}
    assert "skipped (--no-search)" in _table_row(table, "search")
    for name, needs in ANCHOR_NEEDS.items():
        fig = results["anchors"][name]
        installed = all(importlib.util.find_spec(m) is not None for m in needs)
        if installed:
            assert fig["status"] == "ok", fig
            for key in ("steps_per_s", "games_per_s", "steps_per_game"):
                assert _positive(fig[key]), (name, key)
            assert rate(fig["steps_per_s"]) in _table_row(table, f"{name} steps/s")
            for backend in BACKENDS:
                for section in ("engine", "aec"):
                    ours = results[section][backend]["3"]
                    ratio = results["ratios"][f"{section}_{backend}_3p"][name]
                    assert ratio["steps_per_s"] == pytest.approx(ours["steps_per_s"] / fig["steps_per_s"])
                    assert ratio["games_per_s"] == pytest.approx(ours["games_per_s"] / fig["games_per_s"])
            if name in bench.PETTINGZOO_ANCHORS:
                assert _positive(results["memory"]["anchors"][name]["mb_per_1000_envs"])
        else:
            assert fig["status"] == "not installed", fig
            assert "not installed" in _table_row(table, name)
            assert name not in results["ratios"][f"aec_{BACKENDS[0]}_3p"]
    c4 = results["anchors"]["connect_four_v3"]
    goals = (("core", bench_report.TARGET_AEC_VS_C4), ("python", bench_report.TARGET_PYTHON_AEC_VS_C4))
    for backend, goal in goals:
        target = next(t for t in results["targets"] if t["target"].startswith(f"AEC API ({backend})"))
        if c4["status"] == "ok" and backend in BACKENDS:
            ratio = results["aec"][backend]["3"]["steps_per_s"] / c4["steps_per_s"]
            assert target["status"] == ("PASS" if ratio >= goal else "FAIL")
            assert "ratio: ours / anchor" in table
        else:
            assert target["status"] == "N/A"
    os_c4 = results["anchors"]["openspiel_connect_four"]
    target = next(t for t in results["targets"] if t["target"].startswith("engine (core"))
    if os_c4["status"] == "ok" and "core" in BACKENDS:
        ratio = results["engine"]["core"]["3"]["steps_per_s"] / os_c4["steps_per_s"]
        assert target["status"] == ("PASS" if ratio >= bench_report.TARGET_ENGINE_VS_OS_C4 else "FAIL")
    else:
        assert target["status"] == "N/A"


def test_missing_anchor_packages_are_reported_not_raised(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes `import pyspiel` fail
    assert bench.measure_anchor("openspiel_chess", 0.01, 1) == {
        "status": "not installed",
        "missing": "open-spiel",
    }
    monkeypatch.setitem(sys.modules, "pygame", None)
    for mod in ("pettingzoo.classic.connect_four_v3", "pettingzoo.classic.connect_four.connect_four"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    assert bench.measure_anchor("connect_four_v3", 0.01, 1) == {
        "status": "not installed",
        "missing": "pygame-ce",
    }


def test_mask_and_list_choosers_make_the_same_draw():
    mask = np.zeros(380, dtype=np.int8)
    mask[[3, 17, 41, 200, 379]] = 1
    a, b = random.Random(5), random.Random(5)
    picks = [bench_play.choose_from_mask(a, mask) for _ in range(200)]
    assert picks == [bench_play.choose_from_list(b, [3, 17, 41, 200, 379]) for _ in range(200)]
    assert set(picks) == {3, 17, 41, 200, 379}
    assert all(type(p) is int for p in picks)


def test_cli_dispatches_bench(tmp_path):
    out = tmp_path / "cli.json"
    stdout = io.StringIO()
    argv = ["bench", "--quick", "--no-anchors", "--no-search", "--players", "2", "--memory-envs", "20"]
    argv += ["--out", str(out)]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(argv) == 0
    results = json.loads(out.read_text(encoding="utf-8"))
    assert list(results["engine"]["python"]) == ["2"] and list(results["aec"]["python"]) == ["2"]
    assert results["memory"]["python"]["2"]["envs"] == 20
    assert f"results written to {out}" in stdout.getvalue()


def test_profile_prints_the_top_functions_by_own_time(capsys):
    assert cli.main(["bench", "--profile", "2", "--seconds", "0.2"]) == 0
    text = capsys.readouterr().out
    assert f"cProfile, AEC 2p random play ({core.default_backend()} backend)" in text
    assert "Ordered by: internal time" in text
    rows = text.split("filename:lineno(function)")[1].strip().splitlines()
    assert len(rows) == 20 and all(len(row.split()) >= 6 for row in rows)


def test_interleaved_runs_record_a_failing_anchor_but_raise_for_our_env():
    calls = []

    def good(i):
        calls.append(("good", i))
        return 7

    def broken(i):
        if i != bench_play.WARMUP_GAME:
            raise RuntimeError("anchor blew up")
        return 1

    out = bench_play.measure_interleaved({"ours": good, "anchor": broken}, 0.02, 2, tolerant=("anchor",))
    assert out["anchor"] == {"status": "error", "error": "RuntimeError: anchor blew up"}
    assert len(out["ours"]["runs"]) == 2 and out["ours"]["steps_per_game"] == 7
    # every timed game has its own index (seed offset): none is replayed
    timed = [i for name, i in calls if i != bench_play.WARMUP_GAME]
    assert timed == list(range(len(timed))) and out["ours"]["games"] == len(timed)
    with pytest.raises(RuntimeError):
        bench_play.measure_interleaved({"ours": broken}, 0.02, 1)
