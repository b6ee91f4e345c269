"""qlint: static analysis, codemods and runtime confirmation for PyTorch PT2E quantization code."""

__version__ = "0.1.0"
# The name to `pip install` (`qlint` on the package index is another project).
DISTRIBUTION = "qlint-pt2e"
