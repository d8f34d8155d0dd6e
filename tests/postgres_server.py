"""A throwaway PostgreSQL server for tests, run by pytest-postgresql's `PostgreSQLExecutor`: initdb into a temporary
folder, started on a free port of 127.0.0.1, stopped and deleted afterwards. Where no server is installed, the test
skips and says what to install; one that is installed but does not start fails the test, with the server's log.

pytest-postgresql runs `pg_ctl` as whoever runs the tests, and initdb and postgres refuse root, which is how CI runs.
So as root the executor's `pg_ctl` is a script that drops to an unprivileged user first, and the server's folder is
one that user owns. Its `postgresql_proc` factory cannot be used as root for the same reason: it puts the server's
folder under pytest's root-only temporary folder, and gives initdb the password in a file only root may read. Hence,
too, the server trusts local connections instead of asking for a password.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import port_for
import pytest
from mirakuru.exceptions import ExecutorError
from pytest_postgresql.executors import PostgreSQLExecutor

DEBIAN_SERVERS = Path("/usr/lib/postgresql")
"""Debian's `postgresql` package installs the server here, one folder per major version, off PATH."""


@contextmanager
def throwaway_server() -> Iterator[PostgreSQLExecutor]:
    """A PostgreSQL server on 127.0.0.1 and a free port, its superuser `postgres`; yields its executor, whose `user`,
    `host` and `port` say how to reach it."""
    pg_ctl = server_control()
    if pg_ctl is None:
        pytest.skip(
            "no PostgreSQL server found (pg_ctl, on PATH or in /usr/lib/postgresql/*/bin): "
            "install Debian's `postgresql` package (apt-get install postgresql) to run the PostgreSQL tests"
        )
    # In /tmp, not pytest's root-only folder, so the server's user can enter it; short, as a socket path must be.
    scratch = Path(tempfile.mkdtemp(prefix="hg-pg-"))
    home = scratch / "server"
    home.mkdir()
    try:
        server = PostgreSQLExecutor(
            executable=str(unprivileged(pg_ctl, scratch, home)),
            host="127.0.0.1",
            port=port_for.select_random(),
            datadir=str(home / "data"),
            unixsocketdir=str(home),
            logfile=str(home / "server.log"),
            startparams="-w",
            dbname="postgres",
        )
        try:
            server.start()
        except (subprocess.CalledProcessError, ExecutorError) as error:
            log = home / "server.log"
            pytest.fail(f"PostgreSQL did not start ({error}): {log.read_text() if log.exists() else 'no log'}")
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def server_control() -> Path | None:
    """`pg_ctl`: the one on PATH, else Debian's newest."""
    on_path = shutil.which("pg_ctl")
    found = [Path(on_path).resolve()] if on_path else []
    found += sorted(
        DEBIAN_SERVERS.glob("*/bin/pg_ctl"),
        key=lambda pg_ctl: [int(n) for n in re.findall(r"\d+", pg_ctl.parent.parent.name)],
        reverse=True,
    )
    return next((pg_ctl for pg_ctl in found if pg_ctl.is_file()), None)


def unprivileged(pg_ctl: Path, scratch: Path, home: Path) -> Path:
    """`pg_ctl` as it must run: as root, a script beside `home` that runs it as the `postgres` user Debian's package
    creates (else `nobody`), who is given `home`. The script stays root's, in a folder that user may only pass
    through, so the server's user cannot change what root runs."""
    if os.geteuid() != 0:
        return pg_ctl
    account = next((found for name in ("postgres", "nobody") if (found := _account(name))), None)
    if account is None:
        pytest.fail("running as root with no unprivileged user (postgres, nobody) to start PostgreSQL as")
    os.chown(home, account.pw_uid, account.pw_gid)
    scratch.chmod(0o711)
    script = scratch / "pg_ctl"
    script.write_text(
        f"#!/bin/sh\nexec setpriv --reuid={account.pw_uid} --regid={account.pw_gid} --clear-groups "
        f'{shlex.quote(str(pg_ctl))} "$@"\n'
    )
    script.chmod(0o755)
    return script


def _account(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None
