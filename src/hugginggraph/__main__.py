"""`python -m hugginggraph` is the `hugginggraph` command."""

import sys

from hugginggraph.cli import main

sys.exit(main())
