"""Git LFS pointers in place of a notebook or module: still QL001 (a file qlint could not check
never passes as clean), but named for what they are, with the way to fetch the content; files
that only look like a pointer keep their own report."""

from __future__ import annotations

import json

import pytest

from qlint.engine import check_source
from qlint.lfs_pointer import is_lfs_pointer
from qlint.notebook import check_notebook
from tests.conftest import settings_for

OID = "oid sha256:" + "4d7a" * 16
POINTER = f"version https://git-lfs.github.com/spec/v1\n{OID}\nsize 169723\n"


@pytest.mark.parametrize(
    "text",
    [
        POINTER,
        POINTER.replace("\n", "\r\n"),
        POINTER.replace("git-lfs.github.com", "hawser.github.com"),
        POINTER.replace("oid", "ext-0-foo sha256:" + "0" * 64 + "\noid"),  # an extension, before `oid`
        POINTER.rstrip("\n"),
    ],
)
def test_pointers_are_recognised(text):
    assert is_lfs_pointer(text) and is_lfs_pointer(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        POINTER.replace("4d7a", "4D7A"),  # git-lfs writes lowercase digests
        POINTER.replace(OID, OID[:-1]),  # 63 digits
        POINTER.replace(OID, OID.replace("sha256", "md5")),
        POINTER.replace("size 169723\n", ""),
        POINTER.replace(OID + "\n", "") + OID + "\n",  # keys out of order
        POINTER.replace("size 169723", "size big"),
        POINTER + "print('and then some code')\n",
        POINTER + "#" * 1024 + "\n",  # git-lfs reads no pointer of 1024 bytes or more
        "# see version https://git-lfs.github.com/spec/v1\n" + POINTER,
        "version https://git-lfs.github.com/spec/v2\n" + POINTER.split("\n", 1)[1],
    ],
)
def test_look_alikes_are_not_pointers(text):
    assert not is_lfs_pointer(text)


def test_a_pointer_notebook_is_ql001_named_as_a_pointer():
    (d,) = check_notebook(POINTER.encode(), "nb.ipynb", settings_for()).diagnostics
    assert d.code == "QL001" and d.range.start.row == 1
    assert "Git LFS pointer, not the notebook" in d.message and "not valid JSON" not in d.message
    assert "git lfs pull" in d.help


def test_a_broken_notebook_that_starts_like_a_pointer_keeps_its_json_error():
    raw = (POINTER + '{"cells": []}\n').encode()
    (d,) = check_notebook(raw, "nb.ipynb", settings_for()).diagnostics
    assert d.code == "QL001" and "not valid JSON" in d.message


def test_a_notebook_quoting_a_pointer_is_checked_as_a_notebook():
    cell = {"cell_type": "markdown", "metadata": {}, "source": POINTER.splitlines(keepends=True)}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert check_notebook(json.dumps(nb).encode(), "nb.ipynb", settings_for()).diagnostics == []


def test_a_pointer_module_is_ql001_named_as_a_pointer_when_parsed():
    # Parsed only when an enabled rule asks for every file (`--select QL001`): a pointer holds
    # no rule's trigger, so a run of the other rules reads nothing in it, as before.
    (d,) = check_source(POINTER.encode(), "model.py", settings_for(select=("QL001",))).diagnostics
    assert d.code == "QL001" and "Git LFS pointer, not the module" in d.message and d.range.start.row == 1
    assert check_source(POINTER.encode(), "model.py", settings_for()).diagnostics == []


def test_a_module_that_only_starts_like_a_pointer_keeps_its_syntax_error():
    text = POINTER + "x = node.target == torch.ops.aten.relu\n"
    (d,) = check_source(text.encode(), "model.py", settings_for(select=("QL001",))).diagnostics
    assert d.code == "QL001" and d.message.startswith("SyntaxError")
