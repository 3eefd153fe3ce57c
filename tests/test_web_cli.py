"""``island-fortress serve`` and where the web layer sits among the others."""

from __future__ import annotations

import ast
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette, uvicorn)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (starlette, uvicorn)")

import island_fortress_env.web as web
from island_fortress_env.cli.app import main

PACKAGE = Path(__file__).resolve().parent.parent / "island_fortress_env"


def test_serve_passes_its_options_on(monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(web, "serve", lambda **kwargs: seen.update(kwargs))
    assert (
        main(["serve", "--no-browser", "--port", "8123", "--games", str(tmp_path), "--agents", "random"]) == 0
    )
    assert seen == {
        "host": "127.0.0.1",
        "port": 8123,
        "agents": ["random"],
        "games_dir": str(tmp_path),
        "open_browser": False,
    }
    seen.clear()
    assert main(["serve"]) == 0
    assert seen["agents"] == ["random", "heuristic"] and seen["open_browser"] and seen["games_dir"] == "games"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["serve", "--agents", "alphazero"], "unknown agent 'alphazero'"),
        (["serve", "--port", "0"], "must be an integer >= 1"),
        (["serve", "--port", "http"], "expected an integer"),
        (["serve", "--port", "65536"], "--port must be 1..65535"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


class FakeServer:
    """uvicorn.Server without a socket: records its config, 'starts' at once."""

    made: ClassVar[list[FakeServer]] = []

    def __init__(self, config):
        self.config = config
        self.started = False
        FakeServer.made.append(self)

    def run(self):
        self.started = True


def test_serve_binds_the_loopback_address_and_opens_the_browser(monkeypatch, tmp_path):
    import uvicorn

    opened = threading.Event()
    urls = []
    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    monkeypatch.setattr(web.webbrowser, "open", lambda url: (urls.append(url), opened.set()))
    web.serve(games_dir=tmp_path, open_browser=True)
    config = FakeServer.made[-1].config
    assert (config.host, config.port) == ("127.0.0.1", 8000)
    assert opened.wait(timeout=30)
    assert urls == ["http://127.0.0.1:8000/"]
    middleware = [m.cls.__name__ for m in config.app.user_middleware]
    assert middleware == ["TrustedHostMiddleware"]  # a loopback server answers only its own names


def test_serve_does_not_open_a_browser_when_told_not_to(monkeypatch, tmp_path):
    import uvicorn

    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    monkeypatch.setattr(web.webbrowser, "open", lambda url: pytest.fail("a browser was opened"))
    web.serve(host="0.0.0.0", port=9000, games_dir=tmp_path, open_browser=False)
    config = FakeServer.made[-1].config
    assert (config.host, config.port) == ("0.0.0.0", 9000)
    assert config.app.user_middleware == []


def imports_of(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


@pytest.mark.parametrize("path", sorted((PACKAGE / "web").glob("*.py")), ids=lambda p: p.name)
def test_the_web_layer_imports_neither_training_nor_the_layers_above(path):
    above = ("island_fortress_env.training", "island_fortress_env.research", "island_fortress_env.cli")
    for module in imports_of(path):
        assert not module.startswith(above), module


@pytest.mark.parametrize("path", sorted((PACKAGE / "views").glob("narrate*.py")), ids=lambda p: p.name)
def test_narration_needs_only_the_standard_library_and_the_engine(path):
    """The narrator's modules import the standard library, the engine and one another only."""
    for module in imports_of(path):
        top = module.split(".")[0]
        ok = module.startswith(("island_fortress_env.engine", "island_fortress_env.views.narrate"))
        assert top in sys.stdlib_module_names or ok, module


def test_the_page_and_its_assets_go_in_the_wheel():
    import fnmatch

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    build = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text("utf-8"))["tool"]["scikit-build"]
    assert build["wheel"]["packages"]["island_fortress_env"] == "island_fortress_env"  # every file of it
    static = sorted((PACKAGE / "web" / "static").iterdir())
    assert {"index.html", "app.js", "board.js", "chart.js", "api.js", "dom.js", "style.css"} <= {
        p.name for p in static
    }
    for path in static:
        shipped = f"island_fortress_env/web/static/{path.name}"
        assert not any(fnmatch.fnmatch(shipped, pattern) for pattern in build["wheel"]["exclude"]), shipped
