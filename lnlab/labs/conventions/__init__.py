"""The conventions lab: PyTorch, Keras, BERT, the Annotated Transformer and others side by
side, and the checker of tutorials' numbers."""
