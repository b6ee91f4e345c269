"""An example qlint plugin: one syntactic rule, EXQ101 print-in-graph-pass."""
