from qlint.cli import run

run()
