"""A throwaway PostgreSQL server for tests: `initdb` into a temporary folder, started on a free port, stopped and
deleted afterwards. Where no server is installed, the test skips and says what to install."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

DEBIAN_SERVERS = Path("/usr/lib/postgresql")
"""Debian's `postgresql` package installs the server here, one folder per major version, off PATH."""


@contextmanager
def throwaway_server() -> Iterator[str]:
    """A PostgreSQL server on 127.0.0.1 and a free port, its superuser `postgres` with a random password; yields
    its URL without a database."""
    binaries = server_binaries()
    if binaries is None:
        pytest.skip(
            "no PostgreSQL server found (initdb and pg_ctl, on PATH or in /usr/lib/postgresql/*/bin): "
            "install Debian's `postgresql` package (apt-get install postgresql) to run the PostgreSQL tests"
        )
    as_user = unprivileged()
    # In /tmp, not pytest's root-only folder, so the server's user can enter it; short, as a socket path must be.
    home = Path(tempfile.mkdtemp(prefix="hg-pg-"))
    password = secrets.token_urlsafe(12)
    (home / "password").write_text(password)
    if as_user:
        for path in (home, home / "password"):
            os.chown(path, as_user["user"], as_user["group"])
    data = home / "data"
    try:
        initdb = [binaries / "initdb", "-D", data, "-U", "postgres", "--pwfile", home / "password"]
        run_tool([*initdb, "--auth=scram-sha-256", "--locale=C", "-E", "UTF8", "--no-sync"], home, as_user)
        port = free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{home}'\n")
            conf.write("fsync = off\n")  # throwaway data: durability only costs time
        pg_ctl = [binaries / "pg_ctl", "-D", data]
        run_tool([*pg_ctl, "-l", home / "server.log", "-w", "start"], home, as_user)
        try:
            yield f"postgresql://postgres:{password}@127.0.0.1:{port}"
        finally:
            run_tool([*pg_ctl, "-m", "immediate", "stop"], home, as_user)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def server_binaries() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`: the one on PATH, else Debian's newest."""
    on_path = shutil.which("initdb")
    folders = [Path(on_path).resolve().parent] if on_path else []
    folders += sorted(
        DEBIAN_SERVERS.glob("*/bin"), key=lambda folder: [int(n) for n in re.findall(r"\d+", folder.parent.name)]
    )[::-1]
    return next((f for f in folders if (f / "initdb").is_file() and (f / "pg_ctl").is_file()), None)


def unprivileged() -> dict[str, Any]:
    """`subprocess` options that drop root (initdb and postgres refuse to run as root): to the `postgres` user
    Debian's package creates, else `nobody`. Nothing when we are not root."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    pytest.skip("running as root with no unprivileged user (postgres, nobody) to start PostgreSQL as")


def run_tool(command: list[str | Path], home: Path, as_user: dict[str, Any]) -> None:
    """Run a server tool in `home`; if it fails, fail the test with its output and the server's log."""
    done = subprocess.run(command, cwd=home, capture_output=True, text=True, check=False, **as_user)
    if done.returncode != 0:
        log = home / "server.log"
        pytest.fail(f"{command[0]} failed: {done.stdout}{done.stderr}{log.read_text() if log.exists() else ''}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
