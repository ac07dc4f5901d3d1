"""Entry point of the frozen app: the same `numi` as the installed console script."""
import multiprocessing
import sys

from desktop.main import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
