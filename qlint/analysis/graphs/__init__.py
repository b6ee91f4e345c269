"""Graphs and ops: what FX graphs a module handles and which expressions are node targets."""
