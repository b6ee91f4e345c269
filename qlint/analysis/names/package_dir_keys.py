"""The package a `package_dir` key names, as setuptools installs it.

A key is `""` (the root the packages sit under), a package (`gtl`), or a subpackage mapped
onto a directory of its own (`torch_tensorrt.fx`; ExecuTorch's `setup.py` before its
`src/executorch` links spelled `"executorch/backends": "backends"`). setuptools' explicit
layout finds the packages under each mapped directory and names them after the key
(`executorch/backends.qualcomm`), and `build_py` writes a package to the build directory by
its dotted parts, the slash left as a path separator (`executorch/backends/qualcomm/`): the
installed module is `executorch.backends.qualcomm`, whichever separator the key spells.
"""

from __future__ import annotations


def package_key(name: str) -> str | None:
    """The dotted package `name` maps (`""` for the root), or None when it names none (a
    part that is not an identifier)."""
    if name == "":
        return ""
    parts = name.replace("/", ".").split(".")
    return ".".join(parts) if all(p.isidentifier() for p in parts) else None


__all__ = ["package_key"]
