"""`python -m kafkito` is the `kafkito` command."""

import sys

from kafkito.broker.cli import main

sys.exit(main())
