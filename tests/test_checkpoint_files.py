"""Damaged checkpoint files are refused with one CheckpointError that names the file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

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

NETWORK = {"cnn_channels": 4, "hidden": 16}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "good.zip", ActorCritic(**NETWORK), NETWORK, {"num_timesteps": 1})


def _rewrite(src: Path, dst: Path, **replace: bytes) -> Path:
    with zipfile.ZipFile(src) as zin:
        members = {n: zin.read(n) for n in zin.namelist()}
    members.update(replace)
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for name, data in members.items():
            zout.writestr(name, data)
    return dst


def _flip_member_byte(path: Path, member: str) -> None:
    """Damage ``member``'s stored bytes; the zip's directory stays intact."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    data = bytearray(path.read_bytes())
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    for i in range(start + info.compress_size // 3, start + info.compress_size // 3 + 8):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert member in z.namelist()  # still an intact zip


def test_a_good_checkpoint_loads(good):
    net, meta = load_policy(good)
    assert meta["num_timesteps"] == 1 and net.torso.features_dim == 32


def test_metadata_that_is_not_json_is_refused(good, tmp_path):
    bad = _rewrite(good, tmp_path / "notjson.zip", **{META_MEMBER: b"{not json"})
    with pytest.raises(CheckpointError, match=r"notjson\.zip.*not valid JSON"):
        CheckpointAgent(bad)


def test_metadata_that_is_a_list_is_refused(good, tmp_path):
    bad = _rewrite(good, tmp_path / "list.zip", **{META_MEMBER: json.dumps([1, 2]).encode()})
    with pytest.raises(CheckpointError, match=r"list\.zip.*JSON object, not a list"):
        read_metadata(bad)


@pytest.mark.parametrize("member", [WEIGHTS_MEMBER, META_MEMBER])
def test_a_corrupted_member_inside_an_intact_zip_is_refused(good, member):
    _flip_member_byte(good, member)
    with pytest.raises(CheckpointError, match=rf"good\.zip.*{member.replace('.', '[.]')}.*corrupted"):
        CheckpointAgent(good)


def test_weights_that_do_not_fit_the_network_are_refused(good, tmp_path):
    other = save_policy(
        tmp_path / "other.zip", ActorCritic(cnn_channels=8, hidden=16), {"cnn_channels": 8, "hidden": 16}, {}
    )
    with zipfile.ZipFile(other) as z:
        weights = z.read(WEIGHTS_MEMBER)
    bad = _rewrite(good, tmp_path / "mixed.zip", **{WEIGHTS_MEMBER: weights})
    with pytest.raises(CheckpointError, match=r"mixed\.zip.*weights cannot be loaded"):
        load_policy(bad)
