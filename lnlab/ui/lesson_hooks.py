"""What a lesson asks of a live class, so that the lesson renderer imports no class.

lnlab.ui.lesson draws a question's slide differently while this session teaches a class: it
asks the hooks registered here (`use`). The class package registers its own on every page's
set-up (lnlab.ui.page.page_setup: lnlab.ui.classroom.LESSON_HOOKS); until one is registered
(a lesson drawn on its own), NO_CLASS answers that no class is taught.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lnlab.teach.lesson import Section
from lnlab.teach.quiz import Question


class ClassSlide(Protocol):
    """A question's slide while a class is taught: where the class is with its question."""

    @property
    def asked(self) -> bool:
        """The class is answering: the slide is the question itself (its text waits)."""
        ...

    @property
    def held(self) -> bool:
        """Not asked yet: the section's result is held (a "?") until the reveal."""
        ...

    @property
    def revealed(self) -> bool:
        """Revealed: the result shows, and the panel stands in the navigation row."""
        ...

    def panel(self) -> None:
        """What the slide shows of the class: Ask; the count and Reveal; or the answer."""


class ClassHooks(Protocol):
    """The operations a lesson needs of a live class."""

    def teaching(self) -> bool:
        """Whether this session teaches a class."""
        ...

    def keep_open(self) -> None:
        """The teacher moved through the slides: their class stays open."""

    def first_question(self, sections: Sequence[Section], page: str) -> int | None:
        """The section to open the lesson at, once, when the class asked for its first
        question (None: stay where it is)."""
        ...

    def slide(self, question: Question, page: str, context: str = "") -> ClassSlide | None:
        """The slide of `question` in this session's class (None when it teaches none);
        `context`: its lesson's line of the example (Lesson.context), which the class's
        phones get with the question."""
        ...


class NoClass:
    """No class: what a lesson gets when no class package registered its hooks."""

    def teaching(self) -> bool:
        return False

    def keep_open(self) -> None:
        pass

    def first_question(self, sections: Sequence[Section], page: str) -> int | None:
        return None

    def slide(self, question: Question, page: str, context: str = "") -> ClassSlide | None:
        return None


NO_CLASS: ClassHooks = NoClass()
_hooks: ClassHooks = NO_CLASS


def use(hooks: ClassHooks) -> None:
    """The class a lesson asks from now on (the same for every session of this process)."""
    global _hooks
    _hooks = hooks


def live_class() -> ClassHooks:
    """The registered class's hooks (NO_CLASS when none was)."""
    return _hooks
