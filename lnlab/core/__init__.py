"""The math and its inputs: Layer, Batch and RMS Norm forward and backward on numpy or torch,
parsing what a user types, number formats and InputError. Imports nothing else of lnlab."""
