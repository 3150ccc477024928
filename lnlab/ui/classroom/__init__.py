"""A live class, split by who sees it; pages/class.py and lnlab.ui.page use the names below.

- `common`: who this session is (teaching, studying; its ClassSession), a class link
  or the browser's claim followed on every page, the student's `join` kept in the URL,
  Start a live class, the class's problem messages, and what the other modules share;
- `teacher`: the teacher's Class page: how to join, End class, the question asked now, who
  joined, the answer counts, the teacher link to copy, Present from the first question, the
  browser's other open classes to teach instead; and the home page's line for the teacher's
  browser (running_class);
- `slide`: the teacher's panel on a question's slide (ask -> answer -> reveal), the lesson's
  hooks (LESSON_HOOKS, lnlab.ui.lesson_hooks), and presenter mode's Start a class / Show how
  to join, its Class menu (another lesson, End class) and join line with the joined count;
- `phone`: the student's device: the join form, the question to answer, Leave the class,
  and the end screen;
- `report`: the teacher's report of an ended class, and their past classes' reports.
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
from lnlab.ui.classroom.phone import join_form, student_page
from lnlab.ui.classroom.report import past_classes, report_view
from lnlab.ui.classroom.report import reading as reading_report
from lnlab.ui.classroom.slide import HOOKS as LESSON_HOOKS
from lnlab.ui.classroom.slide import join_line, presenter_buttons
from lnlab.ui.classroom.teacher import (
    class_info_line,
    class_question,
    counts_csv,
    end_button,
    ended_notice,
    join_card,
    other_classes,
    present_from_first_question,
    roster,
    running_class,
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
    "other_classes",
    "past_classes",
    "present_from_first_question",
    "presenter_buttons",
    "reading_report",
    "report_view",
    "roster",
    "running_class",
    "sidebar_start",
    "start_class",
    "start_problem",
    "student_page",
    "studying",
    "take_link",
    "teacher_link_copy",
    "teacher_view",
    "teaching",
    "url_params",
]
