"""A person at ``island-fortress play``'s prompts, for the tests: answers from what the
console shows, and fails the test (never loops) when the game keeps asking."""

from __future__ import annotations

import io
import re

from rich.console import Console

MAX_PROMPTS = 5000  # a whole game asks a few hundred times; more means an answer keeps being refused

FIRST = "first"  # Person's answer: the number the first choice is listed by


class Person:
    """Answers ``play``'s prompts from what the console shows: ``bid`` at a petition bid (or
    each digit of a bid entered in base-101 digits), ``other`` at anything else (``FIRST``: the
    number the first choice is listed by; a count is listed by itself, so it is not always 1)."""

    def __init__(self, bid: str = "2", other: str = FIRST, first: tuple[str, ...] = ()) -> None:
        self.out = io.StringIO()
        self.console = Console(file=self.out, soft_wrap=True, width=200)
        self.bid, self.other = bid, other
        self.first = list(first)
        self.asked: list[str] = []  # the decision each prompt was for
        self.read = 0

    def __call__(self, prompt: str) -> str:
        text = self.out.getvalue()
        shown, self.read = text[self.read :], len(text)
        decisions = re.findall(r"A \(you\) to decide: (.+)", shown)
        decision = decisions[-1] if decisions else self.asked[-1]
        self.asked.append(decision)
        if len(self.asked) > MAX_PROMPTS:
            refused = shown[-600:]
            raise AssertionError(f"play asked {MAX_PROMPTS} times; the last answers were refused:\n{refused}")
        if self.first:
            return self.first.pop(0)
        if decision == "petition bid":
            return self.bid
        if self.other == FIRST:
            menu = shown[shown.rindex("to decide: ") :] if "to decide: " in shown else ""
            listed = re.search(r"^ +(\d+)\. ", menu, re.MULTILINE)
            self.listed = listed.group(1) if listed else getattr(self, "listed", "1")
            return self.listed
        return self.other
