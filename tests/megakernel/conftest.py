import sys
from pathlib import Path

# The hand-built schedules live next to the tests; make them importable as a plain module.
sys.path.insert(0, str(Path(__file__).parent))
