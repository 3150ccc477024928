"""How often one session may run the page: a token bucket.

A bucket holds up to `burst` tokens and gains `rate` a second; every run takes one. A run
that finds the bucket empty waits until its token has been earned, at most `max_wait_s`
(the debt it may run up). While a run waits, the requests that arrive are merged by
Streamlit into one rerun, so a flood of rerun requests costs the server about `rate` runs a
second, not one run per request; a visitor clicking as fast as a person does never waits.
"""

from __future__ import annotations

from dataclasses import dataclass

RATE = 10.0  # runs a second, kept up for ever
BURST = 10.0  # runs at once: two seconds of a teacher pressing Next five times a second
MAX_WAIT_S = 1.0


@dataclass
class Pace:
    """A session's bucket; `take(now)` for every run (`now` in seconds, monotonic)."""

    rate: float = RATE
    burst: float = BURST
    max_wait_s: float = MAX_WAIT_S
    tokens: float = BURST
    stamp: float | None = None

    def take(self, now: float) -> float:
        """Take a run's token; the seconds the run should wait first (0 if none).

        tokens' = min(burst, tokens + rate * (now - stamp)) - 1, kept >= -rate * max_wait_s;
        the wait is the debt over the rate, -tokens' / rate.
        """
        if self.stamp is not None:
            self.tokens = min(self.burst, self.tokens + self.rate * max(0.0, now - self.stamp))
        self.stamp = now
        self.tokens = max(self.tokens - 1.0, -self.rate * self.max_wait_s)
        return max(0.0, -self.tokens / self.rate)
