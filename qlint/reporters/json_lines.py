"""One JSON object per line (same objects as `json`), for streaming consumers."""

from __future__ import annotations

import json

from qlint.diagnostic import Diagnostic
from qlint.reporters import ReportOptions
from qlint.reporters.json import to_json


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    return "".join(json.dumps(to_json(d), ensure_ascii=False) + "\n" for d in diagnostics)
