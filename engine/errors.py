"""The one exception type that carries a user-facing message."""
from __future__ import annotations


class BoilerscopeError(Exception):
    """Bad input or an unusable store.

    The message is one line that says what is wrong and what to do.  The
    command line prints it and exits with status 2; the dashboard shows it in
    an error box.

    A message that names a parameter writes it as a placeholder, ``{name}``
    with the API's name (``{max_slot}``), and lists it in ``params``: each
    front end shows the parameter as its users know it (the command line as
    its flag, ``--max-slot``; ``str()`` as the API's name, ``max_slot``), so
    no flag is spelled outside the command line.
    """

    def __init__(self, message: str, *params: str):
        super().__init__(message)
        self.message = message
        self.params = params

    def render(self, name=None) -> str:
        """The message with each parameter shown as ``name(param)`` (default:
        the API's name)."""
        text = self.message
        for p in self.params:
            text = text.replace("{" + p + "}", name(p) if name else p)
        return text

    def __str__(self) -> str:
        return self.render()


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The first non-blank line of an exception's message (a library's error
    can run over many lines), at most ``limit`` characters; the type's name
    when the message is empty."""
    lines = [x for x in str(exc).strip().splitlines() if x.strip()]
    return lines[0][:limit] if lines else type(exc).__name__
