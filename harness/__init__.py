"""What the tests, checks/ and bench/ share: how Chromium is launched, a browser tab as the
server sees it (Streamlit's websocket protocol, no rendering), students and floods through the
local cluster's proxy. Nothing here imports bench/ or tests/: the tests and checks/ run without
the benchmarks, and the benchmarks import from here."""
