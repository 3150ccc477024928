"""Live class: a teacher starts a class and shows its code and QR code; students join on their
phones and answer the questions the teacher asks from the slides (lnlab.ui.classroom)."""

from __future__ import annotations

import streamlit as st

from lnlab import ui
from lnlab.classroom.asking import class_exports
from lnlab.ui import classroom

ui.page_setup("Live class")
st.title("Live class")
teacher = classroom.teaching()
if teacher is not None:
    if classroom.teacher_view():
        st.header("Present a lesson")
        st.caption(
            "In presenter mode each slide with a question gets an Ask the class button, and "
            "beside it the room's answers, live."
        )
        for page in ui.PAGES:
            if page.lesson and st.button(
                page.title, icon=page.icon, key=f"live_present_{page.path}"
            ):
                st.session_state[ui.PRESENT_KEY] = True
                st.switch_page(page.path)
        ui.exports(class_exports(teacher.code, classroom.counts_csv()))
        st.button("Leave this class on this device", key="live_end", on_click=classroom.end_class)
elif classroom.studying() is not None:
    classroom.student_view()
    st.button("Leave the class", key="live_leave", on_click=classroom.leave_class)
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
