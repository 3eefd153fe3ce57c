"""The documentation site (docs/conf.py, ``make docs``): the pages it includes are the ones its
toctrees name, starting at docs/index.md, and every ``python`` code block on them runs.

A block is run as a script of its own (a fresh namespace, ``__name__`` not ``"__main__"``, in a
temporary folder). The one way to leave a block out is an HTML comment on the line before its
fence, ``<!-- docs-test: not run (why) -->`` (GitHub and the site show nothing of it); at most
``MAX_NOT_RUN`` blocks may carry it. Shell blocks (``bash``) are commands, many of them minutes
or hours of training: they are not run here (the commands' tests are tests/test_cli.py and the
Makefile's targets). The site's build itself (0 warnings) is ``make docs`` in CI; it runs here
too where Sphinx is installed (the ``docs`` extra).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOT_RUN = "<!-- docs-test: not run"
MAX_NOT_RUN = 2
FENCE = re.compile(r"^\s*(`{3,})\s*([^\s`]*)[^`]*$")


def _toctree_entries(text: str) -> list[str]:
    """The documents a page's ``{toctree}`` blocks name (options and captions skipped)."""
    entries: list[str] = []
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```{toctree}"):
            inside = True
        elif inside and stripped.startswith("```"):
            inside = False
        elif inside and stripped and not stripped.startswith(":"):
            entries.append(stripped)
    return entries


def site_pages() -> list[Path]:
    """Every page of the site: docs/index.md and what its toctrees name, recursively."""
    pages: list[Path] = []
    todo = [DOCS / "index.md"]
    while todo:
        page = todo.pop(0)
        if page in pages:
            continue
        pages.append(page)
        todo.extend(
            (page.parent / f"{entry}.md").resolve() for entry in _toctree_entries(page.read_text("utf-8"))
        )
    return pages


def code_blocks(page: Path) -> list[tuple[int, str, str, bool]]:
    """``(line, language, code, not_run)`` for each fenced block of ``page``."""
    lines = page.read_text("utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        found = FENCE.match(lines[i])
        if found:
            fence, language = found.group(1), found.group(2)
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence)
            not_run = i > 0 and lines[i - 1].strip().startswith(NOT_RUN)
            if not language.startswith("{"):  # a directive ({toctree}) is no code
                blocks.append((i + 1, language, "\n".join(lines[i + 1 : end]) + "\n", not_run))
            i = end
        i += 1
    return blocks


PAGES = site_pages()
PYTHON_BLOCKS = [
    pytest.param(code, id=f"{page.relative_to(DOCS)}:{line}")
    for page in PAGES
    for line, language, code, not_run in code_blocks(page)
    if language == "python" and not not_run
]


def test_the_site_holds_every_markdown_page_of_docs():
    every = {p.resolve() for p in DOCS.rglob("*.md")}
    assert every <= set(PAGES), sorted(str(p.relative_to(DOCS)) for p in every - set(PAGES))
    assert (DOCS / "ENVIRONMENT.md").resolve() in PAGES


def test_blocks_left_out_are_few_and_each_says_why():
    left_out = [
        (page.name, line)
        for page in PAGES
        for line, language, _, not_run in code_blocks(page)
        if language == "python" and not_run
    ]
    assert len(left_out) <= MAX_NOT_RUN, left_out
    for page in PAGES:
        for line in page.read_text("utf-8").splitlines():
            if line.strip().startswith(NOT_RUN):
                assert re.fullmatch(r"<!-- docs-test: not run \(.+\) -->", line.strip()), line


def test_the_pages_hold_python_blocks_to_run():
    assert len(PYTHON_BLOCKS) >= 8


@pytest.mark.parametrize("code", PYTHON_BLOCKS)
def test_every_python_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_block"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<docs block>", "exec"), namespace)


def _block_namespace(page: str, contains: str) -> dict:
    (code,) = [c for _, language, c, _ in code_blocks(DOCS / page) if language == "python" and contains in c]
    namespace: dict = {"__name__": "docs_block"}
    exec(compile(code, page, "exec"), namespace)
    return namespace


def test_the_bot_of_the_protocol_page_plays_a_whole_game_as_a_remote_agent():
    from island_fortress_env import island_fortress_v0
    from island_fortress_env.players import make_agent

    handler = _block_namespace("BOT-PROTOCOL.md", "class FirstLegal")["FirstLegal"]
    handler.log_message = lambda *args: None  # quiet
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        agent = make_agent(f"remote:http://127.0.0.1:{server.server_address[1]}")
        env = island_fortress_v0.env(num_players=2)
        env.reset(seed=4)
        agent.reset(seed=4)
        decisions = 0
        for name in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            mask = observation["action_mask"]
            if name == "player_0":
                action = agent.act(observation["observation"], mask, env.unwrapped.game_state)
                assert action == int(np.flatnonzero(mask)[0])  # the first legal action, as it says
                decisions += 1
            else:
                action = int(np.flatnonzero(mask)[-1])
            env.step(action)
        assert decisions > 20 and env.unwrapped.game_state.is_terminal()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(importlib.util.find_spec("sphinx") is None, reason="Sphinx: the docs extra")
@pytest.mark.skipif(importlib.util.find_spec("myst_parser") is None, reason="MyST: the docs extra")
def test_the_site_builds_without_a_warning(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", str(DOCS), str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    page = (tmp_path / "ENVIRONMENT.html").read_text("utf-8")
    for row in ["Import", "Actions", "Parallel API", "Manual Control", "Agents", "Agents count"]:
        assert f"<td><p>{row}</p></td>" in page or f'<th class="head"><p>{row}</p></th>' in page, row
    assert (tmp_path / "site" / "api" / "environments.html").is_file()
