"""Run test workers in threads under a watchdog: a hang fails the test instead of the run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WATCHDOG_SECONDS = 60.0


def run_threads(workers: list[Callable[[], None]], timeout: float = WATCHDOG_SECONDS) -> None:
    """Run each worker in its own thread; fail (instead of hanging) when one does not finish
    in ``timeout`` seconds, and re-raise the first error a worker hit."""
    errors: list[BaseException] = []

    def guarded(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [t for t in threads if t.is_alive()]
    assert not stuck, f"{len(stuck)} thread(s) still running after {timeout:.0f}s: a deadlock"
    if errors:
        raise errors[0]
