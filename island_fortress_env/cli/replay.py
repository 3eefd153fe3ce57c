"""``island-fortress replay FILE``: step through a game record, or write it as a video.

In a terminal the game is shown one decision at a time (the text board, then the action taken
and what it caused, in words: ``views.narrate``, every seat named "A (name)" as in ``play``):
the right arrow, ``n`` or Enter steps forward, the left arrow or ``b`` back, a number
and Enter jumps to that step, ``e`` goes to the end, ``q`` quits (single key presses, through
prompt_toolkit). When standard input is not a terminal the whole game is printed. The final
scores, with where each seat's points came from, close the replay.

``--video out.mp4`` (or ``.gif``) writes the game from the picture render instead: one frame
per decision, or with ``--per turn`` one frame each time the player to move changes. The path is
checked before any frame is drawn, and the video is written to a temporary file beside it and
renamed when complete, so a failed write leaves no partial video.

Text from the record (agent names) and the file's own name are printed with their control
characters escaped (``records.printable``): a record cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from island_fortress_env.cli.arguments import output_path, positive_float
from island_fortress_env.cli.entries import read_number, shown
from island_fortress_env.env.records import (
    GameRecord,
    RecordError,
    check_output_file,
    load,
    printable,
    printable_lines,
    states,
    temporary_path,
)
from island_fortress_env.views.narrate import Narrator, action_words, final_score_lines, seat_name
from island_fortress_env.views.text import render_text

if TYPE_CHECKING:
    from island_fortress_env.engine import State

VIDEO_SUFFIXES = (".mp4", ".gif")
PER_CHOICES = ("decision", "turn")
HELP = "→, n or Enter: next · ←, b: back · NUMBER Enter: go to step · e: end · q: quit"


def frame_states(all_states: Sequence[State], per: str = "decision") -> list[State]:
    """The states to draw: all of them, or (``per="turn"``) the first state of each run of
    decisions by one player, plus the final state."""
    if per not in PER_CHOICES:
        raise ValueError(f"per must be one of {PER_CHOICES}, not {per!r}")
    if per == "decision":
        return list(all_states)
    picked = [
        s
        for i, s in enumerate(all_states)
        if i == 0
        or s.is_terminal()
        or s.current_player() != all_states[i - 1].current_player()
        or s.round != all_states[i - 1].round
    ]
    return picked


def check_video_path(path: str | Path) -> Path:
    """A video path that can be written: ends in ``VIDEO_SUFFIXES``, names no directory, and
    its folder exists or can be created and is writable (an existing video is replaced);
    otherwise a ``RecordError`` naming it."""
    path = check_output_file(path, "video", overwrite=True)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise RecordError(f"video {str(path)!r}: the name must end in one of {VIDEO_SUFFIXES}")
    return path


def write_video(
    record: GameRecord,
    path: str | Path,
    per: str = "decision",
    fps: float | None = None,
    scale: float | None = None,
) -> int:
    """Write the record as a video from the spectator's picture: ``.mp4`` (H.264 through
    imageio's ffmpeg, frames streamed) or ``.gif`` (Pillow, frames reduced to a palette and
    held until written). Returns the number of frames."""
    from PIL import Image

    from island_fortress_env.views.picture import HEIGHT, WIDTH, render_image

    path = check_video_path(path)
    suffix = path.suffix.lower()
    if scale is None:
        scale = 0.5 if suffix == ".gif" else 1.0
    if not 0.1 <= scale <= 2.0:
        raise RecordError(f"video scale must be within 0.1-2.0, not {scale}")
    fps = fps or (4.0 if per == "decision" else 2.0)
    size = (round(WIDTH * scale / 16) * 16, round(HEIGHT * scale / 16) * 16)  # codec-friendly
    frames = frame_states(states(record), per)

    def pictures() -> Iterator[Image.Image]:
        for state in frames:
            image = render_image(state, None, record.agents)
            yield (
                image
                if image.size == size
                else image.resize(size, Image.Resampling.LANCZOS, reducing_gap=2.0)
            )

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)  # the same suffix: ffmpeg and Pillow pick the format by it
    try:
        if suffix == ".mp4":
            import imageio.v2 as imageio
            import numpy as np

            writer: Any = imageio.get_writer(
                tmp, fps=fps, codec="libx264", quality=7, macro_block_size=16, ffmpeg_log_level="error"
            )
            with writer:  # imageio's ffmpeg writer (typed as its generic base class)
                for image in pictures():
                    writer.append_data(np.asarray(image))
        else:
            palette = [image.quantize(colors=128, method=Image.Quantize.FASTOCTREE) for image in pictures()]
            palette[0].save(tmp, save_all=True, append_images=palette[1:], duration=round(1000 / fps), loop=0)
        os.replace(tmp, path)
    except OSError as exc:  # ffmpeg's broken pipe included (its message holds the whole command)
        why = exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RecordError(f"video {str(path)!r}: cannot be written ({why})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return len(frames)


@dataclass(frozen=True)
class Told:
    """A record in words: the seats' names, the events of the deal and each step's."""

    names: tuple[str, ...]  # printable
    opening: tuple[str, ...]  # before the first decision
    steps: tuple[tuple[str, ...], ...]  # steps[i]: what action i caused


def tell(record: GameRecord, all_states: Sequence[State]) -> Told:
    names = tuple(printable(name) for name in record.agents)
    narrator = Narrator(names, all_states[0].game.deck.cards)
    logs = [len(s.log) for s in all_states]
    final_log = all_states[-1].log
    said = [tuple(line.text for line in narrator.lines(final_log[: logs[0]]))]
    for i in range(len(record.actions)):
        said.append(tuple(line.text for line in narrator.lines(final_log[logs[i] : logs[i + 1]])))
    return Told(names, said[0], tuple(said[1:]))


def _step_text(record: GameRecord, all_states: Sequence[State], told: Told, i: int) -> str:
    """Step ``i`` (1-based): the board before the action, the action and what it caused."""
    state = all_states[i - 1]
    p = state.current_player()
    action = record.actions[i - 1]
    before = "".join(f"\n{line}" for line in told.opening) if i == 1 else ""
    caused = "".join(f"\n  {line}" for line in told.steps[i - 1])
    return (
        f"{render_text(state, 0, told.names)}\n{before}\n"
        f"step {i}/{len(record.actions)}: {seat_name(told.names, p)} chooses: "
        f"{action_words(state, action)}{caused}"
    )


def _end_text(told: Told, final: State) -> str:
    return f"{render_text(final, 0, told.names)}\n\n" + "\n".join(final_score_lines(final, told.names))


def key_reader() -> Callable[[str], str]:
    """Read one key press in a terminal (prompt_toolkit): right arrow, ``n`` or Enter steps
    forward, left arrow or ``b`` back, ``e``/End to the end, ``q`` quits; digits then Enter
    jump to a step. Falls back to line input without prompt_toolkit."""
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings
    except ImportError:
        return input
    bindings = KeyBindings()
    for keys, result in ((("right", "n"), "n"), (("left", "b"), "b"), (("e", "end"), "e"), (("q",), "q")):
        for key in keys:
            bindings.add(key)(lambda event, result=result: event.app.exit(result=result))
    session: PromptSession[str] = PromptSession(key_bindings=bindings)
    return session.prompt


def say(text: str, out: TextIO) -> None:
    """Print ``text`` with its control characters escaped, its line breaks kept
    (``printable_lines``): a favor card's name or an agent's cannot drive the terminal."""
    print(printable_lines(text), file=out)


def run_replay(
    path: str | Path,
    interactive: bool | None = None,
    out: TextIO | None = None,
    ask: Callable[[str], str] | None = None,
) -> GameRecord:
    """Show a record in the terminal (interactive when stdin is a terminal). ``ask`` reads a
    key (default: ``key_reader()``)."""
    out = out or sys.stdout
    record = load(path)
    all_states = states(record)
    total = len(record.actions)
    final = all_states[-1]
    told = tell(record, all_states)
    agents = ", ".join(seat_name(told.names, p) for p in range(record.num_players))
    say(
        f"{printable(path)}: {record.num_players} players ({agents}), seed {record.seed}, {total} decisions",
        out,
    )
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        for i in range(1, total + 1):
            say(f"\n{_step_text(record, all_states, told, i)}", out)
        say(f"\n{_end_text(told, final)}", out)
        return record
    ask = ask or key_reader()
    say(HELP, out)
    i = 1
    while True:
        if i > total:
            say(f"\n{_end_text(told, final)}", out)
        else:
            say(f"\n{_step_text(record, all_states, told, i)}", out)
        try:
            key = ask(f"[{min(i, total)}/{total}] > ")
        except EOFError:
            return record
        move = next_step(key, i, total)
        if move.step is None:
            return record
        if move.message:
            say(move.message, out)
        i = move.step


@dataclass(frozen=True)
class Move:
    """Where a key takes the viewer: ``step`` (``total + 1`` is the final scores; None quits),
    and ``message`` for a key that does nothing (the step stays)."""

    step: int | None
    message: str = ""


def next_step(key: str, i: int, total: int) -> Move:
    """The viewer at step ``i`` of ``total`` (``total + 1``: the end) reads ``key``: Enter or
    ``n`` steps forward (and quits at the end), ``b`` back, ``e`` to the end, ``q`` quits, a
    number goes to that step; anything else is explained, the step unchanged."""
    word = key.strip().lower()
    if word in ("", "n"):
        return Move(None if i > total else i + 1)
    if word == "b":
        return Move(max(1, i - 1))
    if word == "e":
        return Move(total + 1)
    if word == "q":
        return Move(None)
    number = read_number(word, 1, total, "step")
    if number is not None:
        return Move(i, number.message) if number.value is None else Move(number.value)
    return Move(i, f"'{shown(key.strip())}' is not a key here. {HELP}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Step through a game record (right arrow/n/Enter next, left arrow/b back, a number and "
        "Enter to jump, e end, q quit); "
        "prints the whole game when stdin is not a terminal. With --video, write it as .mp4 or .gif."
    )
    parser.add_argument("file", metavar="FILE", help="a game record (.json)")
    parser.add_argument(
        "--video", default=None, type=output_path(check_video_path), metavar="OUT",
        help="write out.mp4 or out.gif instead",
    )  # fmt: skip
    parser.add_argument(
        "--per", default="decision", choices=("decision", "turn"),
        help="one frame per decision (default), or per turn: each time the player to move changes",
    )  # fmt: skip
    parser.add_argument("--fps", type=positive_float, default=None, help="frames per second (default 4 / 2)")
    parser.add_argument(
        "--scale", type=positive_float, default=None, help="picture scale (default 1 for mp4, 0.5 for gif)"
    )


def run(args: argparse.Namespace) -> int:
    if args.video is None:
        run_replay(args.file)
        return 0
    frames = write_video(load(args.file), args.video, per=args.per, fps=args.fps, scale=args.scale)
    print(f"{args.video}: {frames} frames, one per {args.per}")
    return 0
