import sys

from corral.orchestrator.cli import main

sys.exit(main())
