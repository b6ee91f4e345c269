"""qlint: static analysis, codemods and runtime confirmation for PyTorch PT2E quantization code."""

__version__ = "0.1.0"
