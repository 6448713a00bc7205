"""Calls into the C++ module with option errors named by the Python keyword arguments."""

from __future__ import annotations

from . import _ltsim


def call(function, names: dict, *args):
    """function(*args); an InputError about an option of the C++ library (which names it by
    its field, e.g. `epsilon`) is raised again naming the keyword (`names`: field → keyword),
    as the command line names its flag."""
    try:
        return function(*args)
    except _ltsim.InputError as error:
        option = getattr(error, "option", None)
        if option is None:
            raise
        keyword = names.get(option, option)
        value = getattr(error, "value", "")
        message = f"{keyword}{' ' + value if value else ''}: {error.rule}"
        raise _ltsim.InputError(message) from None
