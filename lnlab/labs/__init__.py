"""One folder per lab (a page of the app): its lesson, state, link fields, plots, exports and
its own model. A lab builds on lnlab.core, lnlab.teach and lnlab.serving, never on another lab."""
