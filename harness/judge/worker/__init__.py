"""The worker: the only process that ever imports a candidate. See harness/judge/workers.py for the other side."""
