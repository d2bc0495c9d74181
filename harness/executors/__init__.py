"""Where a sweep's problems run: ``local`` (this process, one problem after another) or ``ray``
(one Ray task per problem, anywhere on a Ray cluster). Both write the same run file the same way.

Ray is optional: it is imported only when ``--executor ray`` is asked for.
"""

from __future__ import annotations

from harness.errors import UserError

from harness.options import EXECUTORS  # noqa: F401  (the choices live in the option table)


def import_ray():
    """The ``ray`` module, or a UserError that says how to install it."""
    try:
        import ray
    except ImportError as error:
        raise UserError(f"--executor ray needs the ray package, which is not installed here ({error}). "
                        "Install it with: pip install crucible-kernels[ray]  (or: pip install ray), "
                        "or leave out --executor ray to run locally.") from None
    return ray
