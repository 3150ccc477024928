"""What every lesson shares: the lesson model, the five steps' text, questions and
misconceptions, LaTeX, links, presets, exports and figure basics. Built on lnlab.core."""
