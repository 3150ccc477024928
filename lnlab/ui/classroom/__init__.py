"""A live class, split by who sees it; pages/class.py and lnlab.ui.page use the names below.

- `common`: who this session is (teaching, studying; its ClassSession), a class link
  or the browser's claim followed on every page, the student's `join` kept in the URL,
  Start a live class, the class's problem messages, and what the other modules share;
- `teacher`: the teacher's Class page: how to join, End class, the question asked now, who
  joined, the answer counts, the teacher link to copy, Present from the first question;
- `slide`: the teacher's panel on a question's slide (ask -> answer -> reveal), the lesson's
  hooks (LESSON_HOOKS, lnlab.ui.lesson_hooks), and presenter mode's Start a class / Show how
  to join and join line;
- `phone`: the student's device: the join form, the question to answer, Leave the class.
"""

from lnlab.ui.classroom.common import (
    ClassSession,
    keep_in_url,
    sidebar_start,
    start_class,
    start_problem,
    studying,
    take_link,
    teaching,
    url_params,
)
from lnlab.ui.classroom.phone import join_form, leave_button, student_view
from lnlab.ui.classroom.slide import HOOKS as LESSON_HOOKS
from lnlab.ui.classroom.slide import join_line, presenter_buttons
from lnlab.ui.classroom.teacher import (
    class_info_line,
    class_question,
    counts_csv,
    end_button,
    ended_notice,
    join_card,
    present_from_first_question,
    roster,
    teacher_link_copy,
    teacher_view,
)

__all__ = [
    "LESSON_HOOKS",
    "ClassSession",
    "class_info_line",
    "class_question",
    "counts_csv",
    "end_button",
    "ended_notice",
    "join_card",
    "join_form",
    "join_line",
    "keep_in_url",
    "leave_button",
    "present_from_first_question",
    "presenter_buttons",
    "roster",
    "sidebar_start",
    "start_class",
    "start_problem",
    "student_view",
    "studying",
    "take_link",
    "teacher_link_copy",
    "teacher_view",
    "teaching",
    "url_params",
]
