"""Where the PT2E API that torch removed from `torch.ao.quantization` lives now.

Reads `qlint/data/pt2e_moves.json`, which `scripts/generate_pt2e_moves.py` builds by
importing the installed torch, torchao and executorch (the linter never imports them).
QL401 asks one question of it: "what became of this dotted name?".
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from qlint.value_classes import value_class

OLD_PACKAGE = "torch.ao.quantization"
# The packages that took the code over. Their own files are the successor: QL401 does not
# rewrite their deliberate references to the legacy API.
SUCCESSOR_PACKAGES = ("torchao.quantization.pt2e", "executorch.backends.xnnpack.quantizer")
# Destinations whose API takes observer constructors (quantizers, QuantizationSpec,
# prepare_pt2e): moving a file there while it keeps torch.ao observers breaks it quietly.
OBSERVER_CONSUMERS = (
    "torchao.quantization.pt2e.quantize",  # quantize_pt2e, quantizer.*
    "torchao.quantization.pt2e.prepare",
    "executorch.backends.xnnpack.quantizer",
)
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "data" / "pt2e_moves.json"
# Fix levels in the data, mildest first.
FIX_ORDER = ("safe", "unsafe", "display")


@value_class(frozen=True)
class Move:
    """What became of `old`: a module (`name is None`) or a name in `module`.

    `module is None` means no successor was found. `known` is False for a name torch's
    history does not list under a removed module: qlint then only points at the module.
    """

    old: str
    module: str | None
    name: str | None
    fix: str  # "safe" | "unsafe" | "display"
    prerelease: bool = False
    known: bool = True

    @property
    def is_module(self) -> bool:
        return self.name is None

    @property
    def new(self) -> str | None:
        if self.module is None:
            return None
        return self.module if self.name is None else f"{self.module}.{self.name}"


def worst(*fixes: str) -> str:
    return max(fixes, key=FIX_ORDER.index, default="safe")


class Moves:
    def __init__(self, data: dict):
        self.versions: dict[str, str] = data.get("versions", {})
        self._modules: dict[str, dict] = data.get("modules", {})
        self._names: dict[str, dict] = data.get("names", {})
        self._twins: dict[str, str] = data.get("twins", {})
        self._surveyed: tuple[str, ...] = tuple(data.get("surveyed", ()))
        self._surfaces: dict[str, list[str] | None] = data.get("surfaces", {})

    def exact(self, qualified: str) -> Move | None:
        """The move recorded for exactly this module or name, if any."""
        entry = self._names.get(qualified)
        if entry is not None:
            parent = self._modules.get(qualified.rpartition(".")[0], {})
            return Move(
                qualified,
                entry["module"],
                entry["name"],
                entry["fix"],
                prerelease=parent.get("status") == "prerelease",
            )
        mod = self._modules.get(qualified)
        if mod is not None:
            prerelease = mod["status"] == "prerelease"
            fix = "display" if prerelease or mod["new"] is None else "safe"
            return Move(qualified, mod["new"], None, fix, prerelease=prerelease)
        return None

    def removed_module(self, qualified: str) -> str | None:
        """The longest removed module that `qualified` is, or lies under."""
        parts = qualified.split(".")
        for end in range(len(parts), 3, -1):
            prefix = ".".join(parts[:end])
            if prefix in self._modules:
                return prefix
        return None

    def find(self, qualified: str) -> Move | None:
        """The move for a name, or a display-only pointer for an unlisted name under a removed module."""
        move = self.exact(qualified)
        if move is not None:
            return move
        removed = self.removed_module(qualified)
        if removed is None:
            return None
        parent = self.exact(removed)
        return Move(qualified, parent.module, None, "display", parent.prerelease, known=False)

    def mentioned(self, text: str) -> bool:
        """Whether `text` holds a word any finding needs: a removed module's first component
        under `torch.ao.quantization` (`quantize_pt2e`, `pt2e`, `quantizer`, ...) or a moved
        top-level name, as a whole word. Most files that mention torch.ao (eager quantization)
        have none.

        Each word is found with `str.find` and its two boundaries checked there: an
        alternation of the words gives `re` no literal to skip to, and it tried the pattern
        at every position (4 ms on torch's observer.py, which QL401 checks anyway)."""
        find, end = text.find, len(text)
        for word in self._words:
            i = find(word)
            while i >= 0:
                before = text[i - 1] if i else " "
                after = i + len(word)
                if not (before.isalnum() or before == "_") and (
                    after == end or not (text[after].isalnum() or text[after] == "_")
                ):
                    return True
                i = find(word, i + 1)
        return False

    @functools.cached_property
    def _words(self) -> tuple[str, ...]:
        """The words `mentioned` looks for: identifiers (module components, top-level names)."""
        prefix = OLD_PACKAGE + "."
        words = {m[len(prefix) :].split(".")[0] for m in self._modules}
        words |= {n[len(prefix) :] for n in self._names if "." not in n[len(prefix) :]}
        return tuple(sorted(w for w in words if w))

    def lacks(self, module: str, name: str | None = None) -> bool:
        """Does importing `module` (or `name` from it) fail with the torchao and executorch the
        table was built from? Known only under the packages it surveys (every module listed,
        with its names); anywhere else, and for a module answering names through its own
        `__getattr__`, nothing is known and the answer is False."""
        if not any(module == root or module.startswith(root + ".") for root in self._surveyed):
            return False
        if module not in self._surfaces:
            return True
        names = self._surfaces[module]
        return name is not None and name != "*" and names is not None and name not in self._name_sets[module]

    @functools.cached_property
    def _name_sets(self) -> dict[str, frozenset[str]]:
        return {module: frozenset(names or ()) for module, names in self._surfaces.items()}

    def twin(self, qualified: str) -> str | None:
        """torchao's copy of a torch.ao observer / fake-quantize name torch still ships."""
        return self._twins.get(qualified)

    def describe_versions(self) -> str:
        v = self.versions
        return f"torchao {v.get('torchao', '?')} / executorch {v.get('executorch', '?')}"


@functools.lru_cache(maxsize=4)
def load_moves(path: str | None = None) -> Moves:
    with open(path or DEFAULT_PATH, encoding="utf-8") as fh:
        return Moves(json.load(fh))


def names_a_moved_api(text: str) -> bool:
    """QL401's `triggered_by` (its `text_trigger`): the old package spelled, and a word of
    what moved from it (`Moves.mentioned`)."""
    return _old_spelling(text) and load_moves().mentioned(text)


def _old_spelling(text: str) -> bool:
    """A trigger substring, except that `torchao.quantization` (the successor, named by most
    files that mention quantization at all) is no spelling of the old package."""
    if "torch.ao" in text or "import ao" in text:
        return True
    return text.count("ao.quantization") > text.count("torchao.quantization")
