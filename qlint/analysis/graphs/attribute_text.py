"""How an attribute is written after its object in a module's text, for the text-level
prefilters of insertions (`insertions`) and of wrapper candidates (`module_text`), which
the helper search (`forwarding`) reads too: kept apart so none of them imports another in a
circle."""

from __future__ import annotations

from qlint.lazy_patterns import lazy

# Only a dot, blanks, line continuations and (within brackets) comments between the dot
# and the attribute's name (a comment is split at each `#`: one way to match, no backtracking); not an
# ellipsis (`...     target=f` in a doctest). The dot leads, its look-behind follows: a pattern
# led by a literal is searched for it (`(?<!\.)\.` was tried at each of the window's 200
# positions: 0.1 s of the wrapper index's build over ExecuTorch's 1,126 insertions).
AFTER_DOT = lazy(r"\.(?<!\.\.)(?:\s|\\|#[^\n#]*)*\Z")
