"""The embedded store's cross-process lock: a writer holds it alone, readers share it, per call."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from gateway.knowledge.embedded import LOCK_FILE, Locked, StoreLock, locked


def test_a_reader_waits_for_a_writer_and_readers_share(tmp_path: Path) -> None:
    lock = StoreLock(tmp_path / LOCK_FILE)
    entered = threading.Event()

    def read() -> None:
        with lock.hold(exclusive=False):
            entered.set()

    with lock.hold(exclusive=True):
        reader = threading.Thread(target=read)
        reader.start()
        assert not entered.wait(0.3)  # blocked while the write lasts
    assert entered.wait(10)
    reader.join(10)
    entered.clear()
    with lock.hold(exclusive=False):  # a second reader is not held back by the first
        reader = threading.Thread(target=read)
        reader.start()
        assert entered.wait(10)
        reader.join(10)


def test_another_process_writing_holds_this_one_back(tmp_path: Path) -> None:
    path = tmp_path / LOCK_FILE
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.readline()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    assert holder.stdout.readline().strip() == "held"
    entered = threading.Event()

    def read() -> None:
        with StoreLock(path).hold(exclusive=False):
            entered.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert not entered.wait(0.3)
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait(10) == 0
    assert entered.wait(10)
    reader.join(10)


@pytest.mark.slow  # opens an embedded Chroma store
def test_the_client_and_its_collections_are_wrapped(tmp_path: Path) -> None:
    settings = ChromaSettings(anonymized_telemetry=False)
    client = locked(tmp_path, lambda: chromadb.PersistentClient(str(tmp_path), settings))
    collection = client.get_or_create_collection("leaflets")
    assert isinstance(collection, Locked)
    collection.upsert(ids=["a"], documents=["one"], embeddings=[[0.1, 0.2, 0.3]])
    assert collection.get(ids=["a"])["documents"] == ["one"]
    assert collection.name == "leaflets"
    assert (tmp_path / LOCK_FILE).is_file()
