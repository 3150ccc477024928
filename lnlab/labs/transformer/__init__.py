"""The Transformer lab: where Layer Norm sits in a block (Add & Norm, post-norm and pre-norm)."""
