"""Loading sqlite-vec into Python's sqlite3 connections.

Python's ``sqlite3`` module can only load extensions when it was built with
``enable_load_extension``; pyenv's and Apple's builds are not. On those we register the
extension's entry point with SQLite's own ``sqlite3_auto_extension`` through ctypes,
so every connection opened afterwards in this process gets sqlite-vec.
"""

import contextlib
import ctypes
import ctypes.util
import sqlite3
import threading

from django.core.exceptions import ImproperlyConfigured

_lock = threading.Lock()
_auto_registered = False
# The registered entry point lives in this library: keep it mapped for the process.
_loaded_libraries: list[ctypes.CDLL] = []

HOW_TO_FIX = (
    "MemoryHub needs the sqlite-vec extension in SQLite. Install the pinned 'sqlite-vec' "
    "package into the virtualenv (make run / make test do), and use a Python whose sqlite3 "
    "module is linked to a shared libsqlite3 (most Linux and Homebrew builds), or set "
    "DATABASE_URL to a PostgreSQL server with pgvector."
)


class VecUnavailable(ImproperlyConfigured):
    """sqlite-vec could not be loaded; the message says what to do."""


def _extension_path() -> str:
    try:
        import sqlite_vec
    except ImportError as exc:
        raise VecUnavailable(f"The sqlite-vec package is not installed. {HOW_TO_FIX}") from exc
    return sqlite_vec.loadable_path()


def _sqlite_library() -> ctypes.CDLL:
    """The libsqlite3 that Python's sqlite3 module itself uses."""
    import _sqlite3

    candidates = [_sqlite3.__file__, ctypes.util.find_library("sqlite3")]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            lib = ctypes.CDLL(candidate)
            lib.sqlite3_auto_extension  # noqa: B018 - probe the symbol
        except (OSError, AttributeError):
            continue
        return lib
    raise VecUnavailable(f"Could not find SQLite's C library to register sqlite-vec. {HOW_TO_FIX}")


def _register_auto_extension() -> None:
    global _auto_registered
    with _lock:
        if _auto_registered:
            return
        path = _extension_path()
        try:
            extension = ctypes.CDLL(
                path if path.endswith((".so", ".dylib", ".dll")) else path + _suffix()
            )
            entry = extension.sqlite3_vec_init
        except (OSError, AttributeError) as exc:
            raise VecUnavailable(
                f"Could not open sqlite-vec at {path}: {exc}. {HOW_TO_FIX}"
            ) from exc
        lib = _sqlite_library()
        lib.sqlite3_auto_extension.argtypes = [ctypes.c_void_p]
        lib.sqlite3_auto_extension.restype = ctypes.c_int
        rc = lib.sqlite3_auto_extension(ctypes.cast(entry, ctypes.c_void_p))
        if rc != 0:
            raise VecUnavailable(f"sqlite3_auto_extension failed with code {rc}. {HOW_TO_FIX}")
        _loaded_libraries.append(extension)
        _auto_registered = True


def _suffix() -> str:
    import sys

    if sys.platform == "darwin":
        return ".dylib"
    if sys.platform == "win32":
        return ".dll"
    return ".so"


def prepare_process() -> None:
    """Make sure connections opened from now on can use sqlite-vec.

    Where ``enable_load_extension`` exists, extensions are loaded per connection in
    :func:`load_into`, so nothing is needed up front.
    """
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        _register_auto_extension()


def load_into(connection: sqlite3.Connection) -> str:
    """Ensure sqlite-vec is available on ``connection``; return ``vec_version()``."""
    if hasattr(connection, "enable_load_extension") and not _auto_registered:
        try:
            connection.enable_load_extension(True)
            connection.load_extension(_extension_path())
        except sqlite3.Error:
            # Some builds expose the method but refuse; fall back to auto-extension,
            # which only applies to connections opened after registration.
            _register_auto_extension()
            raise VecUnavailable(
                "sqlite-vec was registered after this connection opened; reconnect. " + HOW_TO_FIX
            ) from None
        finally:
            with contextlib.suppress(sqlite3.Error):
                connection.enable_load_extension(False)
    try:
        return connection.execute("select vec_version()").fetchone()[0]
    except sqlite3.OperationalError as exc:
        raise VecUnavailable(
            f"sqlite-vec is not loaded on this connection ({exc}). {HOW_TO_FIX}"
        ) from exc
