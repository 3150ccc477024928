"""The one exception type that user-facing input problems raise."""


class InputError(ValueError):
    """Bad user input (typed, pasted, from a URL or an upload).

    The message is written for the person who typed it: it says what is wrong and where
    (row and column, 1-based) and quotes the offending text.
    """


class BusyError(InputError):
    """The server's heavy-work line cannot take this request now (in it already, full, or too
    long a wait).

    Re-exported as lnlab.labs.gpu.benchmark.BusyError, where the pages catch it.
    """
