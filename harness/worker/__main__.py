import sys

from harness.worker.main import main

sys.exit(main(int(sys.argv[1])))
