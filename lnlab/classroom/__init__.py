"""Live classes: the class store (a database) and the questions posed to a class. No Streamlit."""
