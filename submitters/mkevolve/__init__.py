"""MKEvolve: modular decomposition co-evolved with LLM-written sub-kernels (see docs/MKEVOLVE.md).

Importing this package registers the ``mkevolve`` generator.
"""

from submitters.mkevolve.generator import MKEvolve

__all__ = ["MKEvolve"]
