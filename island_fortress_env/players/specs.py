"""Agent specs, parsed once: the text a user writes (``heuristic``, ``sample:policy.zip``,
``search:policy.zip:64``) becomes an ``AgentSpec`` record here, and every command, the web app and
the trainer read that record instead of splitting strings.

``KINDS`` is the registry, one ``KindEntry`` per kind of agent: its syntax (for ``--help``), how
its text is parsed, checked, labelled and made into an agent, the seat policy it plays as in a
batch, whether it plays from the observation alone (so a batch of C++ core games can play it) and
whether a league seat may hold it. The rows are ``players/kinds.py``'s; this module reads them
(``parse_agent_spec``, ``AgentSpec.label``, ``AgentSpec.play_mode``) without importing them.

    spec = parse_agent_spec("search:checkpoints/policy-2-4p.zip:32")
    spec.kind, spec.path, spec.simulations  # AgentKind.SEARCH, Path(...), 32
"""

from __future__ import annotations

import enum
import math
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from island_fortress_env.agents.base import Agent

if TYPE_CHECKING:
    from island_fortress_env.players.runner import SeatPolicy

MAX_SIMULATIONS = 100_000  # simulations a search player may run per decision


class AgentSpecError(ValueError):
    """An AGENT argument that names no usable agent."""


class AgentKind(str):
    """A kind of agent, by the word that starts its spec: one object per word (``AgentKind("search")
    is AgentKind.SEARCH``), so a spec's ``kind`` is compared with ``is``. The built-in kinds are
    the class's attributes; a new kind names its own word where its ``KindEntry`` is written."""

    _known: ClassVar[dict[str, AgentKind]] = {}
    RANDOM: ClassVar[AgentKind]
    HEURISTIC: ClassVar[AgentKind]
    CHECKPOINT: ClassVar[AgentKind]  # a checkpoint file's path, played greedily
    SAMPLE: ClassVar[AgentKind]  # sample:CHECKPOINT, its actions drawn from the policy
    THRESHOLD: ClassVar[AgentKind]  # threshold:P:CHECKPOINT, drawn from the actions of probability >= P
    SEARCH: ClassVar[AgentKind]  # search[:CHECKPOINT][:N], MCTS guided by a native checkpoint
    MCTS: ClassVar[AgentKind]  # mcts[:N], OpenSpiel's IS-MCTS with random rollouts
    REMOTE: ClassVar[AgentKind]  # remote:URL, a bot served over HTTP (players/remote.py)
    MIXTURE: ClassVar[AgentKind]  # mixture:FILE, one member drawn per game
    ONNX: ClassVar[AgentKind]  # onnx:FILE, an exported network played by onnxruntime (no torch):
    # greedy, or as sample:FILE.onnx and threshold:P:FILE.onnx name it, drawn

    def __new__(cls, word: str) -> AgentKind:
        known = cls._known.get(word)
        if known is None:
            known = cls._known[word] = super().__new__(cls, word)
        return known

    @property
    def value(self) -> str:
        """The word, as a plain string."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"AgentKind({self.value!r})"


AgentKind.RANDOM = AgentKind("random")
AgentKind.HEURISTIC = AgentKind("heuristic")
AgentKind.CHECKPOINT = AgentKind("checkpoint")
AgentKind.SAMPLE = AgentKind("sample")
AgentKind.THRESHOLD = AgentKind("threshold")
AgentKind.SEARCH = AgentKind("search")
AgentKind.MCTS = AgentKind("mcts")
AgentKind.REMOTE = AgentKind("remote")
AgentKind.MIXTURE = AgentKind("mixture")
AgentKind.ONNX = AgentKind("onnx")


class Spelling(enum.Enum):
    """How a spec names its kind: the word alone (``random``), the word and its argument after a
    colon (``search:policy.zip:32``; the word alone too, where the kind allows it), or any text that
    names no kind (a checkpoint's path; one kind spells so)."""

    WORD = "word"
    PREFIX = "prefix"
    PATH = "path"


MakeAgent = Callable[[str, int | None], Agent]  # make_agent's shape: (spec, seed) -> agent


def _spec_text(spec: AgentSpec) -> str:
    return spec.text


def _no_play_mode(spec: AgentSpec) -> PlayMode | None:
    return None


def _no_members(spec: AgentSpec) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class KindEntry:
    """One kind of agent, all it does: ``parse`` (the spec's text, its word matched by
    ``spelling``, to an ``AgentSpec``, or an ``AgentSpecError`` of one sentence), ``check`` (the
    files and libraries it needs, before any game: an ``AgentSpecError``), ``make`` (the
    single-game ``Agent``, seeded with the seed given), ``seats`` (its seat policy in a batch,
    agents made by the ``MakeAgent`` given), ``label`` (its display name), ``play_mode`` (how a
    network's policy picks, None for other agents) and ``members`` (the specs it plays through,
    which must play in the core too where it does: a mixture's)."""

    kind: AgentKind
    syntax: str  # as the commands' --help writes it
    parse: Callable[[str], AgentSpec]
    check: Callable[[AgentSpec], None]
    make: Callable[[AgentSpec, int | None], Agent]
    seats: Callable[[AgentSpec, MakeAgent], SeatPolicy]
    in_core: bool  # a batch of core games can seat it (it reads the observation and mask, or a core state)
    league: bool  # may play a league seat in training (a search player is too slow to)
    label: Callable[[AgentSpec], str] = _spec_text
    play_mode: Callable[[AgentSpec], PlayMode | None] = _no_play_mode
    members: Callable[[AgentSpec], Sequence[str]] = _no_members  # the specs it plays through (a mixture's)
    spelling: Spelling = Spelling.PREFIX


KINDS: dict[str, KindEntry] = {}  # by kind, in --help's order: filled by players/kinds.py


def register_kind(entry: KindEntry) -> None:
    """Add ``entry`` to ``KINDS`` (a ``ValueError`` if its word names a kind already)."""
    if entry.kind in KINDS:
        raise ValueError(f"the agent kind {entry.kind.value!r} is registered already")
    KINDS[entry.kind] = entry


DEFAULT_SEARCH_SIMULATIONS = 64  # search[:CHECKPOINT] without :N
DEFAULT_MCTS_SIMULATIONS = 100  # mcts without :N
# The shipped policy (the strongest of the checkpoints/ policies, docs/POLICY.md), the search player's
# and the web app's default: package data in a wheel install (island_fortress_env/checkpoints/),
# else the source checkout's checkpoints/ (an editable install).
SHIPPED_POLICY_FILE = "policy-2-4p-v3.zip"
_PACKAGED_POLICY = Path(__file__).resolve().parents[1] / "checkpoints" / SHIPPED_POLICY_FILE
_CHECKOUT_POLICY = Path(__file__).resolve().parents[2] / "checkpoints" / SHIPPED_POLICY_FILE
SHIPPED_POLICY = _PACKAGED_POLICY if _PACKAGED_POLICY.is_file() else _CHECKOUT_POLICY
# How the shipped policy plays by default where the project chooses (the web app's Strong level, the
# ladder): its actions of probability below 5% dropped, the rest renormalised and drawn (DeepNash's
# post-processing), as strong as its greedy play and harder to exploit (docs/POLICY.md, "Its play
# modes"). A bare checkpoint path stays greedy in every command.
SHIPPED_POLICY_THRESHOLD = 0.05


def shipped_policy_spec(path: str | Path) -> str:
    """The agent spec of the shipped policy at ``path`` in its default play mode."""
    return f"{AgentKind.THRESHOLD.value}:{SHIPPED_POLICY_THRESHOLD:g}:{path}"


CHECKPOINT_KINDS = (AgentKind.CHECKPOINT, AgentKind.SAMPLE, AgentKind.THRESHOLD)  # a checkpoint's play modes


@dataclass(frozen=True)
class PlayMode:
    """How a checkpoint's policy picks its action: ``greedy`` (the most probable legal action), or
    drawn from its probabilities, with ``threshold`` > 0 only from the actions of probability at
    least ``threshold`` (renormalised; the most probable action always stays), DeepNash's
    post-processing of a policy (``thresholded``)."""

    greedy: bool = False
    threshold: float = 0.0


GREEDY = PlayMode(greedy=True)
SAMPLED = PlayMode()


@dataclass(frozen=True)
class AgentSpec:
    """One agent spec, parsed. ``text`` is the spec as written (what records and tables name it
    by); ``path`` the checkpoint, ONNX model or mixture file it reads, if any; ``simulations`` a
    search player's per decision."""

    kind: AgentKind
    text: str
    path: Path | None = None
    simulations: int | None = None
    remote: RemoteTarget | None = None  # a remote agent's URL and options
    threshold: float | None = None  # threshold:P:CHECKPOINT's P
    onnx_mode: PlayMode = GREEDY  # an ONNX model's: sample:FILE.onnx, threshold:P:FILE.onnx

    @property
    def info(self) -> KindEntry:
        """This spec's row of ``KINDS``."""
        return KINDS[self.kind]

    @property
    def checkpoint(self) -> Path | None:
        """The checkpoint whose policy plays this agent, greedy, sampled or thresholded; None for
        any other."""
        return self.path if self.kind in CHECKPOINT_KINDS else None

    @property
    def play_mode(self) -> PlayMode | None:
        """How ``checkpoint`` or an ONNX model plays: greedy, sampled or thresholded; None for any
        other agent."""
        return self.info.play_mode(self)

    @property
    def label(self) -> str:
        """A short display name, the same in every table, record and page: the spec, with a
        checkpoint by its file's name less ``.zip`` and a mixture by its file's name
        (``policy-2-4p``, ``sample:policy-2-4p``, ``threshold:0.05:policy-2-4p``,
        ``mixture:meta.json``), an ONNX model by its file's name less ``.onnx``
        (``onnx:policy-2-4p``, ``sample:onnx:policy-2-4p``, ``threshold:0.05:onnx:policy-2-4p``)."""
        return self.info.label(self)

    def __str__(self) -> str:
        return self.text


def file_name(path: str) -> str:
    """The last part of a path, ``/`` or ``\\`` separated."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def checkpoint_name(path: str) -> str:
    """A checkpoint's display name: its file's name less ``.zip``."""
    return file_name(path).removesuffix(".zip")


def read_simulations(text: str, argument: str, default: int) -> int:
    """The ``N`` of a search spec ("" for ``default``): a whole number in 1..MAX_SIMULATIONS."""
    if argument == "":
        return default
    digits = argument.isascii() and argument.isdigit() and len(argument) <= 6
    if not digits or not 1 <= int(argument) <= MAX_SIMULATIONS:
        raise AgentSpecError(
            f"agent {text!r}: N needs a positive whole number of simulations, 1-{MAX_SIMULATIONS}, "
            f"not {argument!r}"
        )
    return int(argument)


def read_threshold(text: str, argument: str) -> tuple[float, Path]:
    """``threshold:P:CHECKPOINT``'s P (a probability strictly between 0 and 1) and checkpoint."""
    p, colon, path = argument.partition(":")
    try:
        threshold = float(p) if p.strip() == p else math.nan
    except ValueError:
        threshold = math.nan
    if not 0 < threshold < 1:
        raise AgentSpecError(
            f"agent {text!r}: expected threshold:P:CHECKPOINT with P a probability between 0 and 1 "
            f"(such as 0.05), not {p!r}"
        )
    if not colon or not path or names_a_kind(path):
        raise AgentSpecError(
            f"agent {text!r}: expected threshold:P:CHECKPOINT, CHECKPOINT the path to a checkpoint file"
        )
    return threshold, Path(path)


def names_a_kind(text: str) -> bool:
    """Whether ``text`` starts with a kind's word (``search:...``): no checkpoint's path."""
    return text.partition(":")[0] in KINDS


DEFAULT_REMOTE_TIMEOUT = 5.0  # seconds a remote agent has for each answer
MAX_REMOTE_TIMEOUT = 600.0
DEFAULT_GAME_TIMEOUT = 120.0  # seconds of answering a remote agent has in one game, all answers together
MAX_GAME_TIMEOUT = 86_400.0
MAX_URL_CHARS = 2000


@dataclass(frozen=True)
class RemoteTarget:
    """Where a remote agent is served (``url``, http or https, sent nothing of the options) and
    how the client treats it: ``timeout`` seconds for each answer (connecting included),
    ``game_timeout`` seconds for all of a game's answers together (the time the bot's requests
    took, from connecting to the last byte), and the agent spec that plays the seat for the rest
    of a game if the bot fails or spends its game's time (``fallback``; None: a failure ends the
    game with ``RemoteAgentError``)."""

    url: str
    timeout: float = DEFAULT_REMOTE_TIMEOUT
    fallback: str | None = None
    game_timeout: float = DEFAULT_GAME_TIMEOUT


def read_remote_target(text: str, argument: str) -> RemoteTarget:
    """``remote:URL[#timeout=S&game_timeout=S&fallback=AGENT]``: the fragment holds the client's
    options (a URL's fragment is never sent to its server)."""

    def fail(why: str) -> AgentSpecError:
        return AgentSpecError(f"agent {text!r}: {why}")

    url, _, options = argument.partition("#")
    if len(url) > MAX_URL_CHARS or not (url.isascii() and url.isprintable()) or " " in url:
        raise fail(f"expected remote:URL, at most {MAX_URL_CHARS} ASCII characters (%-escape others)")
    split = urllib.parse.urlsplit(url)
    if split.scheme not in ("http", "https") or not split.hostname:
        raise fail("expected remote:URL with an http:// or https:// URL naming a host")
    if split.username is not None or split.password is not None:
        raise fail("a remote agent's URL carries no user name or password")
    try:
        split.port  # noqa: B018 - urllib checks the port when it is read
    except ValueError:
        raise fail(f"the port of {url!r} is not a port (1-65535)") from None
    timeout, game_timeout, fallback = DEFAULT_REMOTE_TIMEOUT, DEFAULT_GAME_TIMEOUT, None
    try:
        pairs = urllib.parse.parse_qsl(options, keep_blank_values=True, strict_parsing=bool(options))
    except ValueError:
        raise fail(f"expected options as #timeout=S&game_timeout=S&fallback=AGENT, not #{options}") from None
    for key, value in pairs:
        if key == "timeout":
            timeout = _seconds(value, MAX_REMOTE_TIMEOUT, fail, key)
        elif key == "game_timeout":
            game_timeout = _seconds(value, MAX_GAME_TIMEOUT, fail, key)
        elif key == "fallback":
            if not value or value.partition(":")[0] == AgentKind.REMOTE.value:
                raise fail("fallback must name an agent of this process, not another remote one")
            fallback = value
        else:
            raise fail(
                f"unknown option {key!r}: a remote agent takes timeout=S, game_timeout=S and fallback=AGENT"
            )
    return RemoteTarget(url, timeout, fallback, game_timeout)


def _seconds(value: str, most: float, fail: Callable[[str], AgentSpecError], key: str) -> float:
    """A remote agent's option of seconds: a number more than 0 and at most ``most``."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= most:
        raise fail(f"{key} must be seconds, more than 0 and at most {most:g}")
    return seconds


def parse_agent_spec(text: str | AgentSpec) -> AgentSpec:
    """``text`` as an ``AgentSpec`` (an ``AgentSpec`` is returned as it is), parsed by the kind
    its first word names (``KINDS``; any other text is a checkpoint's path). Only the syntax is
    read here; whether the files it names exist and fit is ``players.check_agent_spec``'s. A spec
    that cannot be parsed raises ``AgentSpecError`` with one sentence."""
    if isinstance(text, AgentSpec):
        return text
    if not isinstance(text, str) or not text:
        raise AgentSpecError(f"an agent spec is a non-empty string, not {text!r}")
    word, sep, _ = text.partition(":")
    entry = KINDS.get(word)
    if entry is None or entry.spelling is Spelling.PATH or (entry.spelling is Spelling.WORD and sep):
        entry = next(e for e in KINDS.values() if e.spelling is Spelling.PATH)
    return entry.parse(text)


def spec_labels(specs: Sequence[AgentSpec]) -> list[str]:
    """One display name per agent of a table, in order: each spec's ``label``, with ``#2``,
    ``#3``... on repeats; full specs where two different files share a name."""

    def numbered(names: Sequence[str]) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for spec, name in zip(specs, names, strict=True):
            seen[spec.text] = seen.get(spec.text, 0) + 1
            out.append(name if seen[spec.text] == 1 else f"{name}#{seen[spec.text]}")
        return out

    labels = numbered([spec.label for spec in specs])
    if len(set(labels)) != len(labels):  # two checkpoints share a file name: use the full specs
        labels = numbered([spec.text for spec in specs])
    return labels
