"""add_batch of 20,000 memories on the embedded default stays within the peak RSS bound
(issue 15: 500 MB), with its scope cached (searched) before, as in a server, and searchable
after. In a subprocess, so the peak (``VmHWM``) is this batch's alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

BOUND_MB = 500

SCRIPT = textwrap.dedent(
    """
    import json, sys, tempfile
    from linkmem import Memory

    def mb(key):
        line = next(l for l in open("/proc/self/status") if l.startswith(key))
        return int(line.split()[1]) // 1024

    memory = Memory(tempfile.mkdtemp() + "/m.db")
    memory.add("Ana met Bo in Porto.", user_id="u")
    memory.search("Who did Ana meet?", user_id="u")  # models loaded, scope cached
    warm = mb("VmRSS:")
    texts = [f"{['Ana', 'Bo', 'Cy'][i % 3]} visited Lisbon with friend number {i}." for i in
             range(20000)]
    memory.add_batch(texts, user_id="u")
    peak = mb("VmHWM:")
    hits = memory.search("Cy visited Lisbon with friend number 19997", user_id="u")["results"]
    print(json.dumps({"warm": warm, "peak": peak, "after_search": mb("VmHWM:"),
                      "count": memory.count(user_id="u"), "top": hits[0]["memory"]}))
    """
)


@pytest.mark.slow
def test_add_batch_of_20k_stays_under_the_memory_bound() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["count"] == 20001
    assert found["top"] == "Cy visited Lisbon with friend number 19997."
    assert found["peak"] <= BOUND_MB, f"peak RSS {found} (bound {BOUND_MB} MB)"
    assert found["after_search"] <= BOUND_MB, f"peak RSS {found} (bound {BOUND_MB} MB)"
