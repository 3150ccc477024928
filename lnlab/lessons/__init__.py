"""Lessons: what each page teaches, as plain data (no Streamlit).

`model` defines a lesson (an ordered list of sections, each one slide); one module per page
builds its lesson from the page's inputs.
"""
