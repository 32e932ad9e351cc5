"""Retry policy: exponential backoff between attempts."""

MAX_ATTEMPTS = 3


def backoff_delay(attempt: int, base: float = 2.0) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based): doubles each time."""
    return base * 2 ** (attempt - 1)


class RetryPolicy:
    """How many times to retry a failed job, and how long to wait in between."""

    def __init__(self, attempts: int = MAX_ATTEMPTS) -> None:
        self.attempts = attempts

    def delays(self) -> list[float]:
        """Every delay of the policy, in order."""
        return [backoff_delay(n) for n in range(1, self.attempts + 1)]
