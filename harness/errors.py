"""The one exception type for errors a user can cause and fix."""


class UserError(Exception):
    """A problem with the user's input or environment: the message says what failed, why, and the fix.

    Raised for bad options, missing files and unusable problems; never for what a candidate does
    (that becomes a verdict) and never for bugs (those keep their tracebacks).
    """
