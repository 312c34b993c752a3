"""``linkmem.ids``: ids that sort in the order they were made (UUID version 7)."""

from __future__ import annotations

import threading
import uuid

from watchdog import run_threads

from linkmem.ids import new_id, new_ids


def test_ids_are_uuid7_and_ascend_across_calls():
    first = new_ids(5)
    later = new_ids(3) + [new_id()]
    made = first + later
    assert made == sorted(made) and len(set(made)) == len(made)
    for value in made:
        parsed = uuid.UUID(value)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == value


def test_more_ids_than_the_counter_holds_still_ascend():
    made = new_ids(10_000)
    assert made == sorted(made) and len(set(made)) == 10_000
    assert new_ids(0) == []


def test_threads_draw_distinct_ascending_runs():
    runs: list[list[str]] = []
    lock = threading.Lock()

    def draw() -> None:
        mine = [i for _ in range(200) for i in new_ids(7)]
        with lock:
            runs.append(mine)

    run_threads([draw] * 8, timeout=30)
    assert all(run == sorted(run) for run in runs)
    every = [i for run in runs for i in run]
    assert len(set(every)) == len(every) == 8 * 200 * 7
