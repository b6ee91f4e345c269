"""Edits: text edits of import statements, and where removed PT2E APIs moved."""
