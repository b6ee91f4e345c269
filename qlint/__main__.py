import sys

from qlint.cli import main

sys.exit(main())
