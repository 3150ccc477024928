"""Live class: a teacher starts a class and shows its code and QR code; students join on their
phones and answer the questions the teacher asks from the slides (lnlab.ui.classroom). After
End, the teacher gets the class's report (and their past classes' reports), each phone its
final score and answers."""

from __future__ import annotations

import streamlit as st

from lnlab import ui
from lnlab.classroom.asking import class_exports
from lnlab.ui import classroom

ui.page_setup("Live class")
ui.title("Live class")
classroom.ended_notice()
teacher = classroom.teaching()
if teacher is not None and classroom.teacher_view():
    # the code on one line and the QR code whole, beside the lessons: no scroll at 1024 x 768
    join_col, lessons_col = st.columns([3, 2], gap="medium")
    with join_col:
        classroom.join_card(teacher.code)
    with lessons_col, st.container(key="live_lessons"):
        st.header("Present a lesson")
        st.caption("Opens in presenter mode, at its first question.")
        for page in ui.PAGES:
            if page.lesson and st.button(
                page.title, icon=page.icon, key=f"live_present_{page.path}", width="stretch"
            ):
                classroom.present_from_first_question()
                st.switch_page(page.path)
        classroom.class_info_line()
        classroom.end_button()
    st.header("The question asked now")
    classroom.class_question(teacher)
    classroom.roster()
    classroom.teacher_link_copy()
    classroom.other_classes()
    ui.exports(class_exports(teacher.code, classroom.counts_csv()))
elif classroom.studying() is not None:
    classroom.student_page()
elif classroom.reading_report() is not None:
    classroom.report_view()
else:
    st.markdown(
        "A teacher starts a class and shows its code; students join on their phones or "
        "laptops and answer the questions the teacher asks from the slides. Nothing personal "
        "is stored: a student is an anonymous id, with a nickname only if they type one."
    )
    join_col, teach_col = st.columns(2, gap="large")
    with join_col:
        st.header("Join a class")
        classroom.join_form()
    with teach_col:
        st.header("Teach a class")
        st.caption("You get a join code, a join link and a QR code to show the room.")
        st.button(
            "Start a class",
            key="live_start",
            icon=":material/groups:",
            on_click=classroom.start_class,
        )
        classroom.start_problem()
        classroom.other_classes(subheading=True)
    classroom.past_classes()
