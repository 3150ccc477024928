"""The tutorials this project grew from (shared/seeds/), named by their own titles.

The app names a tutorial by its first heading, never by its file: a short name for a case's
title, the full title wherever a source is cited.
"""

ACTION = "Layer Normalization in Action"
ADD_NORM = "Add and Norm in the Attention Architecture"
EXPLAINED = "Layer Normalization Explained"
WHY_NOT_BN = "Why Not Batch Normalization?"
LECTURE_5 = "Lecture 5 Transformer"
TITLES = {  # short name -> the tutorial's own title, its first heading
    ACTION: "Layer Normalization in Action: A Step-by-Step Computational Walkthrough",
    ADD_NORM: "Add and Norm in the Attention Architecture",
    EXPLAINED: "Layer Normalization Explained: A Beginner's Guide",
    WHY_NOT_BN: "Layer Normalization in Transformers: Why Not Batch Normalization?",
    LECTURE_5: "Lecture 5 Transformer - Layer Normalization",
}
