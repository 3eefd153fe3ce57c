"""Checkpoints that are too large or too many: every member's declared size, the member count
and the total are checked against the limits (``checkpoint_io.member_limit``, ``MAX_MEMBERS``,
``MAX_TOTAL_BYTES``) before a byte of a member is read or a checksum computed, a member is read no
further than its limit whatever the zip's directory says, and running out of memory is one
``CheckpointError`` naming the file. The shipped checkpoints sit far inside the limits."""

from __future__ import annotations

import os
import struct
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from tiny_runs import SMALL

from island_fortress_env.agents import checkpoint_io
from island_fortress_env.agents.checkpoint import (
    META_MEMBER,
    WEIGHTS_MEMBER,
    CheckpointAgent,
    CheckpointError,
    load_policy,
    read_metadata,
    save_policy,
)
from island_fortress_env.agents.network import ActorCritic

ROOT = Path(__file__).resolve().parents[1]


def native_checkpoint(path: Path) -> Path:
    """A small native checkpoint with its training state (the optimizer's)."""
    net = ActorCritic(**SMALL)
    state = {"optimizer": torch.optim.Adam(net.parameters()).state_dict()}
    return save_policy(path, net, SMALL, {}, training_state=state)


ZEROS = 3 * 2**30  # 3 GB of zeros inside a 3 MB zip
ZEROS_CRC = 0x480BBE37  # zlib.crc32 of those 3 GB


def _zeros_deflated(megabytes: int) -> bytes:
    """A raw deflate stream of ``megabytes`` MB of zeros, made from one compressed megabyte
    repeated (each ends with a full flush, so it stands alone), then an empty final block."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = compressor.compress(bytes(2**20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return one * megabytes + b"\x03\x00"


def _raw_zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> Path:
    """A zip written byte by byte: each member (name, deflated data, crc, declared size)."""
    out, directory = bytearray(), bytearray()
    for name, data, crc, size in members:
        fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0, crc, len(data), size)
        head = fields + struct.pack("<HH", len(name), 0) + name.encode()
        directory += b"PK\x01\x02" + struct.pack("<H", 20) + head[: -len(name)]
        directory += struct.pack("<HHHII", 0, 0, 0, 0, len(out)) + name.encode()
        out += b"PK\x03\x04" + head + data
    end = struct.pack("<4H2LH", 0, 0, len(members), len(members), len(directory), len(out), 0)
    path.write_bytes(bytes(out + directory + b"PK\x05\x06" + end))
    return path


@pytest.fixture(scope="module")
def zeros_zip(tmp_path_factory) -> Path:
    """A native checkpoint whose weights member is 3 GB of zeros (a 3 MB file)."""
    good = native_checkpoint(tmp_path_factory.mktemp("zeros") / "good.zip")
    with zipfile.ZipFile(good) as z:
        meta = z.read(META_MEMBER)
    deflated = zlib.compressobj(9, zlib.DEFLATED, -15)
    meta_data = deflated.compress(meta) + deflated.flush()
    members = [(META_MEMBER, meta_data, zlib.crc32(meta), len(meta))]
    members.append((WEIGHTS_MEMBER, _zeros_deflated(ZEROS >> 20), ZEROS_CRC, ZEROS))
    return _raw_zip(good.with_name("zeros.zip"), members)


def _peak(call: Callable[[], Any]) -> tuple[int, str]:
    """The most memory Python allocated while ``call()`` raised ``CheckpointError``."""
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as error:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "zeros.zip" in str(error.value) or "many.zip" in str(error.value)
    return peak, str(error.value)


@pytest.mark.parametrize("load", [read_metadata, load_policy, lambda path: CheckpointAgent(path)])
def test_a_member_declaring_gigabytes_is_refused_before_it_is_read(zeros_zip, load):
    assert zeros_zip.stat().st_size < 4 * 2**20
    peak, message = _peak(lambda: load(zeros_zip))
    assert f"member 'actor_critic.pt' declares {ZEROS} bytes; at most 64 MB" in message
    assert peak < 8 * 2**20


@pytest.mark.parametrize("read", ["checksum", "bytes"])
def test_a_member_is_read_no_further_than_its_limit_whatever_it_declares(zeros_zip, monkeypatch, read):
    monkeypatch.setattr(checkpoint_io, "_check_directory", lambda path, infos: None)  # a lying directory
    monkeypatch.setitem(checkpoint_io._MEMBER_LIMITS, WEIGHTS_MEMBER, 2**20)
    if read == "checksum":  # every member's checksum, read through without keeping it
        peak, message = _peak(lambda: read_metadata(zeros_zip))
    else:
        peak, message = _peak(lambda: checkpoint_io._members(zeros_zip, (WEIGHTS_MEMBER,)))
    assert "member 'actor_critic.pt' holds more than 1 MB" in message
    assert peak < 8 * 2**20


def test_too_many_members_are_refused_before_any_checksum(tmp_path, monkeypatch):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(400):
            z.writestr(f"m{i}", b"x")
    data = path.read_bytes()
    end = data.rindex(b"PK\x05\x06")
    lying = data[: end + 8] + struct.pack("<HH", 2, 2) + data[end + 12 :]  # its end record says 2
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: pytest.fail("a member was read"))
    for load in (read_metadata, load_policy):
        path.write_bytes(data)
        assert "holds 400 members; a checkpoint has at most 32" in _peak(lambda load=load: load(path))[1]
        path.write_bytes(lying)  # zipfile finds all 400 in the directory
        assert "holds 400 members; a checkpoint has at most 32" in _peak(lambda load=load: load(path))[1]


def test_a_member_named_twice_and_a_pipe_are_refused(tmp_path):
    twice = native_checkpoint(tmp_path / "twice.zip")
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(twice, "a") as z:
        z.writestr(WEIGHTS_MEMBER, b"other weights")
    with pytest.raises(CheckpointError, match=r"twice\.zip'.*'actor_critic\.pt'\] more than once"):
        read_metadata(twice)
    pipe = tmp_path / "pipe.zip"
    os.mkfifo(pipe)
    with pytest.raises(CheckpointError, match=r"pipe\.zip'.*not a regular file"):
        read_metadata(pipe)


def test_running_out_of_memory_is_a_checkpoint_error_naming_the_file(tmp_path, monkeypatch):
    path = native_checkpoint(tmp_path / "good.zip")

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(torch, "load", no_memory)
    with pytest.raises(CheckpointError, match=r"good\.zip'.*actor_critic\.pt does not fit in memory"):
        load_policy(path)


@pytest.mark.parametrize("shipped", sorted((ROOT / "checkpoints").glob("*.zip")), ids=lambda p: p.name)
def test_the_shipped_checkpoints_are_far_inside_the_limits(shipped):
    with zipfile.ZipFile(shipped) as z:
        infos = z.infolist()
    assert len(infos) * 4 <= checkpoint_io.MAX_MEMBERS
    for info in infos:
        assert info.file_size * 8 <= checkpoint_io.member_limit(info.filename), info.filename
    assert sum(i.file_size for i in infos) * 8 <= checkpoint_io.MAX_TOTAL_BYTES
    read_metadata(shipped)
