"""`python -m broker` is the `kafkito` command."""

import sys

from broker.cli import main

sys.exit(main())
