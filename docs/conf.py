"""The documentation site: Sphinx with the furo theme, MyST reading the Markdown pages of docs/
(the same files GitHub shows), the API reference from the package's docstrings (autodoc).

Build it with ``make docs`` (into build/docs, warnings as errors). tests/test_docs_site.py runs
every ``python`` code block of the pages listed here.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from myst_parser.parsers.sphinx_ import MystParser
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the package from this tree where it is not installed editable

project = "Island Fortress"
author = "Island Fortress contributors"
copyright = "the Island Fortress contributors"
version = release = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
]

# The site's pages are docs/*.md themselves; what only the site needs lives in docs/site/.
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/__pycache__"]
templates_path: list[str] = []

# MyST: heading anchors for the pages' links to sections (SPACES.md#game-options), and the
# fenced-block directives the site's own pages use ({toctree}, {eval-rst}).
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]
myst_links_external_new_tab = False

# autodoc: the documented modules import without the optional libraries (no torch for the
# engine and the envs); signatures show the types the code declares.
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autosummary_generate = False  # the reference pages are written out; nothing is generated into docs/

# The experiment logs' entries are H3 sections under the page's title (a log, not a book).
suppress_warnings = ["myst.header"]

html_theme = "furo"
html_title = "Island Fortress"
html_static_path: list[str] = []
html_theme_options = {"source_repository": "", "navigation_with_keys": True}
pygments_style = "sphinx"
pygments_dark_style = "monokai"


# The package's docstrings are written as Markdown reads (``code``, indented examples, "* " lists),
# not as reStructuredText: each one is parsed by MyST, as the pages are.


class MarkdownDocstring(SphinxDirective):
    """``.. markdown-docstring::``: its content parsed as MyST Markdown, in place."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        document = new_document(self.env.docname, self.state.document.settings)
        document.reporter = self.state.document.reporter  # warnings keep their file and line
        MystParser().parse("\n".join(self.content), document)
        return list(document.children)


class ExamplesList(SphinxDirective):
    """``{examples-list}``: each script of examples/, from its docstring: what it shows, the line
    that installs what it needs and the line that runs it (read when the site is built, so the
    page lists every example there is)."""

    def run(self) -> list[nodes.Node]:
        parts = []
        for path in sorted((ROOT / "examples").glob("*.py")):
            self.env.note_dependency(str(path))
            lines = (ast.get_docstring(ast.parse(path.read_text("utf-8"))) or path.name).splitlines()
            commands = [line.strip() for line in lines if line.strip().startswith(("pip ", "python "))]
            rest = [line for line in lines[1:] if line.strip() not in commands]
            shell = "\n".join(commands)
            parts.append(f"**`{path.name}`**: {lines[0]}\n\n```bash\n{shell}\n```\n\n" + "\n".join(rest))
        document = new_document(self.env.docname, self.state.document.settings)
        document.reporter = self.state.document.reporter
        MystParser().parse("\n\n".join(parts), document)
        return list(document.children)


def _markdown_docstring(
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    if any(line.strip() for line in lines):
        lines[:] = [".. markdown-docstring::", "", *(f"   {line}" if line else "" for line in lines)]


def setup(app: Sphinx) -> dict[str, bool]:
    app.add_directive("markdown-docstring", MarkdownDocstring)
    app.add_directive("examples-list", ExamplesList)
    app.connect("autodoc-process-docstring", _markdown_docstring)
    return {"parallel_read_safe": True}
