"""Kernel generators. Each module registers its generator with ``@register("generator", name)``."""
