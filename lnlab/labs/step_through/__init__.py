"""The step-through lab: Layer Norm's five steps on one token, then its backward pass."""
