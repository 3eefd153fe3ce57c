"""``island-fortress bench``'s report: the machine, the ratios to the anchors, the targets as
PASS/FAIL lines and the printed table, from the results ``tools/bench.py`` measured."""

from __future__ import annotations

import os
import platform
from typing import Any

BACKENDS = ("core", "python")
# Anchors, in table order.
PETTINGZOO_ANCHORS = ("connect_four_v3", "texas_holdem_no_limit_v6", "chess_v6")
OPENSPIEL_ANCHORS = ("openspiel_connect_four", "openspiel_chess")
ANCHORS = PETTINGZOO_ANCHORS + OPENSPIEL_ANCHORS
SHORT_NAME = {
    "connect_four_v3": "connect_four_v3", "texas_holdem_no_limit_v6": "holdem_nl_v6", "chess_v6": "chess_v6",
    "openspiel_connect_four": "os_connect_four", "openspiel_chess": "os_chess",
}  # fmt: skip
VERSION_PACKAGES = (
    "island-fortress-env", "numpy", "gymnasium", "pettingzoo", "open-spiel", "rlcard", "chess",
    "pygame-ce", "torch", "onnxruntime",
)  # fmt: skip

# The targets (informative only).
TARGET_AEC_VS_C4 = 4.0  # AEC 3p steps/s (the default, C++ core) >= 4x connect_four_v3 steps/s
TARGET_PYTHON_AEC_VS_C4 = 3.0  # the same on the Python engine (the target before the core)
TARGET_ENGINE_VS_OS_C4 = 2.0  # core states through Python >= 2x OpenSpiel connect_four through pyspiel
TARGET_BATCH_SPS = 1_000_000.0  # batch, 3 players, obs + mask every step: steps/s
TARGET_HEURISTIC_RATIO = 30.0  # heuristic decisions/s on the core / on the Python engine
TARGET_CORE_MEM_MB = 30.0  # 1,000 live 3-player core envs
TARGET_ENGINE_DPS = 50_000.0  # Python engine decisions/s (slowest table size)
TARGET_CLONE_US = 20.0  # µs, Python engine State.clone()
TARGET_MEM_MB = 200.0  # MB for 1,000 environments (largest of any table size and backend)


# ---------------------------------------------------------------------------- report


def machine_info() -> dict:
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in VERSION_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    cpu_model = platform.processor() or None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": versions,
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["loadavg_at_start"] = list(os.getloadavg())
    return info


def compute_ratios(results: dict) -> dict:
    """ratios[f"{section}_{backend}_{n}p"][anchor] = our steps/s (and games/s) / the anchor's, for
    the engine and the AEC figures of every backend and table size."""
    ok = {a: r for a, r in results["anchors"].items() if r.get("status") == "ok"}
    ratios: dict[str, dict] = {}
    for section in ("engine", "aec"):
        for backend, figures in results[section].items():
            for n, fig in figures.items():
                row = {}
                for anchor, ref in ok.items():
                    row[anchor] = {
                        "steps_per_s": fig["steps_per_s"] / ref["steps_per_s"],
                        "games_per_s": fig["games_per_s"] / ref["games_per_s"],
                    }
                ratios[f"{section}_{backend}_{n}p"] = row
    return ratios


def _figure(results: dict, section: str, backend: str, n: int = 3) -> dict | None:
    return results[section].get(backend, {}).get(str(n))


def _anchor(results: dict, name: str) -> dict | None:
    ref = results["anchors"].get(name, {})
    return ref if ref.get("status") == "ok" else None


def evaluate_targets(results: dict) -> list[dict]:
    targets = []

    def add(name: str, status: str, detail: str) -> None:
        targets.append({"target": name, "status": status, "detail": detail})

    def versus(name: str, ours: dict | None, what: str, anchor: str, goal: float, extra: str = "") -> None:
        ref = _anchor(results, anchor)
        if ours is None:
            add(name, "N/A", f"{what} not measured (--players / --backends)")
        elif ref is None:
            add(name, "N/A", f"{anchor} {results['anchors'].get(anchor, {}).get('status', 'not measured')}")
        else:
            ratio = ours["steps_per_s"] / ref["steps_per_s"]
            detail = f"{ratio:.2f}x ({ours['steps_per_s']:,.0f} vs {ref['steps_per_s']:,.0f} steps/s){extra}"
            add(name, "PASS" if ratio >= goal else "FAIL", detail)

    stock = results.get("aec_stock_wrapper", {}).get("3")
    c4 = _anchor(results, "connect_four_v3")
    extra = ""
    if stock is not None and c4 is not None:
        ratio = stock["steps_per_s"] / c4["steps_per_s"]
        extra = f"; raw_env in PettingZoo's stock wrapper instead: {ratio:.2f}x"
    versus(
        f"AEC API (core) 3p steps/s >= {TARGET_AEC_VS_C4:g}x connect_four_v3",
        _figure(results, "aec", "core"), "AEC core 3p", "connect_four_v3", TARGET_AEC_VS_C4, extra,
    )  # fmt: skip
    versus(
        f"AEC API (python) 3p steps/s >= {TARGET_PYTHON_AEC_VS_C4:g}x connect_four_v3",
        _figure(results, "aec", "python"), "AEC python 3p", "connect_four_v3", TARGET_PYTHON_AEC_VS_C4,
    )  # fmt: skip
    versus(
        f"engine (core, through Python) 3p decisions/s >= {TARGET_ENGINE_VS_OS_C4:g}x OpenSpiel connect_four",
        _figure(results, "engine", "core"), "engine core 3p", "openspiel_connect_four",
        TARGET_ENGINE_VS_OS_C4,
    )  # fmt: skip

    name = f"batch 3p steps/s (obs + mask every step) >= {TARGET_BATCH_SPS:,.0f}"
    if results["batch"]:
        threads, fig = max(results["batch"].items(), key=lambda kv: kv[1]["steps_per_s"])
        value = fig["steps_per_s"]
        detail = f"{value:,.0f} ({threads} thread(s)); {fig['steps_per_cpu_s']:,.0f} per CPU-second"
        add(name, "PASS" if value >= TARGET_BATCH_SPS else "FAIL", detail)
    else:
        add(name, "N/A", "the core is not measured (--backends)")

    name = f"heuristic decisions/s, core >= {TARGET_HEURISTIC_RATIO:g}x python"
    heuristic = results["heuristic"]
    if "core" in heuristic and "python" in heuristic:
        ratio = heuristic["core"]["steps_per_s"] / heuristic["python"]["steps_per_s"]
        detail = (
            f"{ratio:.1f}x ({heuristic['core']['steps_per_s']:,.0f} vs "
            f"{heuristic['python']['steps_per_s']:,.0f} decisions/s)"
        )
        add(name, "PASS" if ratio >= TARGET_HEURISTIC_RATIO else "FAIL", detail)
    else:
        add(name, "N/A", "both backends are needed (--backends)")

    name = f"1,000 live 3p core envs <= {TARGET_CORE_MEM_MB:g} MB"
    fig = results["memory"].get("core", {}).get("3")
    if fig is None:
        add(name, "N/A", "3-player core envs not measured")
    else:
        value = fig["mb_per_1000_envs"]
        extrapolated = "" if fig["envs"] == 1000 else f" (extrapolated from {fig['envs']} envs)"
        add(name, "PASS" if value <= TARGET_CORE_MEM_MB else "FAIL", f"{value:.1f} MB{extrapolated}")

    name = f"engine (python) >= {TARGET_ENGINE_DPS:,.0f} decisions/s"
    if results["engine"].get("python"):
        n, fig = min(results["engine"]["python"].items(), key=lambda kv: kv[1]["steps_per_s"])
        value = fig["steps_per_s"]
        add(name, "PASS" if value >= TARGET_ENGINE_DPS else "FAIL", f"slowest: {n}p {value:,.0f} decisions/s")

    name = f"State.clone() (python) < {TARGET_CLONE_US:g} µs"
    if results["micro"].get("python"):
        n, fig = max(results["micro"]["python"].items(), key=lambda kv: kv[1]["clone"]["us"])
        value = fig["clone"]["us"]
        add(name, "PASS" if value < TARGET_CLONE_US else "FAIL", f"slowest: {n}p {value:.1f} µs")

    name = f"1,000 envs < {TARGET_MEM_MB:g} MB"
    ours = [(f"{b} {n}p", f) for b in BACKENDS for n, f in results["memory"].get(b, {}).items()]
    if ours:
        label, fig = max(ours, key=lambda kv: kv[1]["mb_per_1000_envs"])
        value = fig["mb_per_1000_envs"]
        extrapolated = "" if fig["envs"] == 1000 else f" (extrapolated from {fig['envs']} envs)"
        add(
            name,
            "PASS" if value < TARGET_MEM_MB else "FAIL",
            f"largest: {label} {value:.1f} MB{extrapolated}",
        )
    return targets


def _ratio(x: float) -> str:
    return f"{x:.1f}x" if x >= 10 else f"{x:.2f}x" if x >= 0.1 else f"{x:.3f}x"


def _rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.2f}"


def _throughput_rows(label: str, fig: dict, unit: str) -> list[tuple[str, str, str]]:
    """An item's two table rows: ``unit``s per second (and per game), games per second."""
    return [
        (f"{label} {unit}/s", _rate(fig["steps_per_s"]), f"{fig['steps_per_game']:.0f} {unit}/game"),
        (f"{label} games/s", _rate(fig["games_per_s"]), f"{fig['games']} games"),
    ]


def _search_rows(search: dict) -> list[tuple[str, str, str]]:
    """The search player's rows: ms per decision with torch and with ONNX, or why not measured."""
    if "status" in search:  # --no-search
        return [("search", search["status"], "")]
    rows = []
    for name in ("torch", "onnx"):
        fig = search.get(name)
        if fig is None:
            continue
        label = f"search {name} ms/decision"
        if fig.get("status") != "ok":
            rows.append((label, fig["status"], fig.get("note", "")))
        elif name == "torch":
            rows.append((
                label, f"{fig['ms_per_decision']:.1f}",
                f"search:{search['checkpoint']}:{search['simulations']}, {search['players']} players, "
                f"median of {len(fig['runs_ms'])} decisions",
            ))  # fmt: skip
        else:
            rows.append((
                label, f"{fig['ms_per_decision']:.1f}",
                f"the same network in ONNX (onnxruntime): {search['onnx_speedup']:.2f}x torch's speed, "
                f"the same move in {search['same_choices']} of {len(fig['runs_ms'])}",
            ))  # fmt: skip
    batched = search.get("batched")
    if batched is not None:
        label = "batched search decisions/s"
        if batched.get("status") != "ok":
            rows.append((label, batched["status"], ""))
        else:
            rows.append((
                label, f"{batched['decisions_per_second']:.0f}",
                f"the same network and simulations, {batched['batch']} games at once in the core: "
                f"{batched['speedup']:.1f}x the one-game player's decisions/s, "
                f"{batched['rows'] / batched['network_calls']:.0f} rows a network call",
            ))  # fmt: skip
    return rows


def format_report(results: dict) -> str:
    s = results["settings"]
    m = results["machine"]
    rows: list[tuple[str, str, str]] = []  # (figure, value, detail)
    for backend, figures in results["engine"].items():
        for n, fig in figures.items():
            rows += _throughput_rows(f"engine {backend} {n}p", fig, "decisions")
    for backend, figures in results["aec"].items():
        for n, fig in figures.items():
            rows += _throughput_rows(f"AEC {backend} {n}p", fig, "steps")
            engine = results["engine"].get(backend, {}).get(n)
            if engine is not None:
                rows.append((
                    f"AEC {backend} {n}p µs/step", f"{1e6 / fig['steps_per_s']:.1f}",
                    f"engine alone {1e6 / engine['steps_per_s']:.1f} µs/decision",
                ))  # fmt: skip
    for n, fig in results.get("aec_stock_wrapper", {}).items():
        rows.append((
            f"AEC {n}p steps/s, stock wrapper", _rate(fig["steps_per_s"]),
            f"raw_env ({s['default_backend']}) in PettingZoo's own OrderEnforcingWrapper, for comparison",
        ))  # fmt: skip
    for threads, fig in results["batch"].items():
        rows.append((
            f"batch 3p steps/s, {threads} thread(s)", _rate(fig["steps_per_s"]),
            f"{s['batch_games']} games per call, random actions, obs + mask every step; "
            f"{fig['steps_per_cpu_s']:,.0f} per CPU-second",
        ))  # fmt: skip
    for backend, fig in results["heuristic"].items():
        rows.append((
            f"heuristic {backend} decisions/s", _rate(fig["steps_per_s"]),
            f"3 HeuristicAgent seats, {fig['games']} games",
        ))  # fmt: skip
    for backend, fig in results["evaluation"].items():
        rows.append((
            f"evaluate {backend} s", f"{fig['seconds']:.2f}",
            f"{fig['games']} heuristic-vs-heuristic games, 3 players ({fig['games_per_s']:,.1f} games/s)",
        ))  # fmt: skip
    rows += _search_rows(results.get("search", {}))
    for backend, figures in results["micro"].items():
        for n, fig in figures.items():
            detail = f"{fig['states']} sampled states"
            rows.append((f"clone {backend} {n}p µs", f"{fig['clone']['us']:.2f}", detail))
            rows.append((f"observation encode {backend} {n}p µs", f"{fig['encode']['us']:.2f}", detail))
            rows.append(
                (f"action_mask {backend} {n}p µs", f"{fig['mask']['us']:.2f}", "legal ids already cached")
            )
            if "legal_actions" in fig:
                rows.append(
                    (f"legal_actions {backend} {n}p µs", f"{fig['legal_actions']['us']:.2f}", "uncached")
                )
    for kind, figures in results["memory"].items():
        for key, fig in figures.items():
            label = f"{kind} {key}p" if kind in BACKENDS else key
            if "mb_per_1000_envs" in fig:
                rows.append((
                    f"memory 1,000 envs {label} MB", f"{fig['mb_per_1000_envs']:.1f}",
                    f"{fig['kb_per_env']:.1f} KB/env, RSS delta of {fig['envs']} envs",
                ))  # fmt: skip
            else:
                rows.append((f"memory 1,000 envs {label} MB", "-", fig.get("status", "")))
    for name, fig in results["anchors"].items():
        if fig.get("status") == "ok":
            rows.append(
                (f"{name} steps/s", _rate(fig["steps_per_s"]), f"{fig['steps_per_game']:.0f} steps/game")
            )
            rows.append((f"{name} games/s", _rate(fig["games_per_s"]), f"{fig['games']} games"))
        elif fig.get("status") == "not installed":
            rows.append((name, "not installed", f"pip install {fig['missing']}"))
        else:
            rows.append((name, fig.get("status", "?"), fig.get("error", "")))

    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    lines = [
        f"Island Fortress benchmark, {results['date']}",
        f"python {m['python']}, {m['cpu_count']} cpus ({m.get('cpu_model') or '?'}), "
        f"{s['seconds']:g} s per item, median of {s['repeats']} repeats"
        + (" [quick]" if s["quick"] else "")
        + (f"; load average {m['loadavg_at_start'][0]:.1f} at the start" if "loadavg_at_start" in m else ""),
        "-" * (width + vwidth + 40),
        f"{'figure':<{width}}  {'value':>{vwidth}}  detail",
        "-" * (width + vwidth + 40),
    ]
    lines += [f"{a:<{width}}  {b:>{vwidth}}  {c}" for a, b, c in rows]
    lines.append("-" * (width + vwidth + 40))
    anchors = [a for a in ANCHORS if any(a in row for row in results["ratios"].values())]
    if anchors:
        heads = [SHORT_NAME[a] for a in anchors]
        lwidth = max(len("ratio: ours / anchor"), width)
        lines.append(
            f"{'ratio: ours / anchor':<{lwidth}}" + "".join(f"  {h:>{max(len(h), 7)}}" for h in heads)
        )
        for key, row in results["ratios"].items():
            section, backend, n = key.split("_")
            for unit in ("steps_per_s", "games_per_s"):
                name = (
                    "decisions/s"
                    if section == "engine" and unit == "steps_per_s"
                    else unit.replace("_per_", "/")
                )
                label = f"{'engine' if section == 'engine' else 'AEC'} {backend} {n} {name}"
                cells = "".join(
                    f"  {_ratio(row[a][unit]) if a in row else '-':>{max(len(h), 7)}}"
                    for a, h in zip(anchors, heads, strict=False)
                )
                lines.append(f"{label:<{lwidth}}{cells}")
        legend = ", ".join(f"{SHORT_NAME[a]} = {a}" for a in anchors if SHORT_NAME[a] != a)
        if legend:
            lines.append(f"({legend})")
        lines.append("-" * (width + vwidth + 40))
    for t in results["targets"]:
        lines.append(f"{t['status']:<4}  {t['target']}: {t['detail']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main
