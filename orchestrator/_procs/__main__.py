"""`python -m corral.orchestrator._procs FD`: a fan-out's worker process (see `_child`)."""

import sys

from ._child import main

if __name__ == "__main__":
    main(int(sys.argv[1]))
