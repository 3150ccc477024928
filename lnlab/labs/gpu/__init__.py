"""The GPU lab: torch on a GPU (or the CPU) beside float64, its memory traffic and a benchmark."""
