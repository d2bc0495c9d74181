"""Crucible: a harness that judges machine-generated GPU kernels honestly.

Importing this package is cheap on purpose: torch, triton, pandas and the LLM SDKs are imported
by the modules that need them, never here.
"""

__version__ = "0.1.0"
