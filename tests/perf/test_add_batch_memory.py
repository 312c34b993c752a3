"""add_batch of 20,000 memories on the embedded default stays within the peak RSS bound."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import sys, tempfile
    from linkmem import Memory
    memory = Memory(tempfile.mkdtemp() + "/m.db")
    memory.add("warm up", user_id="w")
    texts = [f"{['Ana', 'Bo', 'Cy'][i % 3]} visited Lisbon with friend number {i}." for i in
             range(20000)]
    memory.add_batch(texts, user_id="u")
    assert memory.count(user_id="u") == 20000
    peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    print(int(peak.split()[1]) // 1024)
    """
)


@pytest.mark.slow
def test_add_batch_of_20k_stays_under_the_memory_bound() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-2000:]
    peak_mb = int(done.stdout.split()[-1])
    assert peak_mb <= 600, f"peak RSS {peak_mb} MB (bound 500 MB, 600 with margin)"
