"""The one exception type that carries a user-facing message."""


class BoilerscopeError(Exception):
    """Bad input or an unusable store.

    The message is one line that says what is wrong and what to do.  The
    command line prints it and exits with status 2; the dashboard shows it in
    an error box.
    """
