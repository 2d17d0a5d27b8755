"""Kiwi in a process of its own, for the terminal app: its loading never stops the screen.

Kiwi's first analysis finishes loading its model in C++ while holding Python's lock for
about two seconds (``Kiwi()`` itself lets go of it): in the app's process that froze the
screen, keys and all, a second after every open of a workspace with a Kiwi retriever.
With :func:`use_kiwi_helper` (the app calls it), :class:`~engine.tokenize.KiwiTokenizer`
asks a helper process instead, ``python -m engine.kiwi_helper``, which loads Kiwi and
tokenizes there: the same code on the same text, so the same tokens (the tests compare
them). The command line keeps Kiwi in its own process: nothing is drawn while it ranks.

The helper reads one request per line on its standard input, a JSON list of texts (made
safe for Kiwi by :func:`~engine.tokenize.kiwi_safe` first), and writes one line back on
its standard output: ``{"tokens": [[...], ...]}``, or ``{"error": "..."}``. It first
writes ``{"ready": true}`` once Kiwi has analysed a text (its model wholly loaded). It
ends when its standard input ends: when the app closes it, or when the app's process
dies, however it dies. What it writes to its standard error (Kiwi's warnings, a
traceback) is read by a thread into memory, never to the app's terminal nor to a file,
and its last line is quoted when the helper fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from engine.helper_process import HelperFailed, HelperProcess, answer_stream


class KiwiHelperFailed(HelperFailed):
    """Kiwi's helper process could not start, or ended, or answered with an error.

    The app reports it as an internal error, with its traceback in a crash log and the
    helper's last words here.
    """


class KiwiHelper(HelperProcess):
    """The parent's side: starts the helper on first use and asks it, one request at a time."""

    module = "engine.kiwi_helper"
    label = "Kiwi's helper process"
    failure = KiwiHelperFailed

    def _answer(self) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        line = proc.stdout.readline()  # blocks this thread only: the lock is let go
        if not line:
            raise self._failed("ended")
        try:
            answer = json.loads(line)
        except ValueError:
            raise self._failed("answered something that is not JSON") from None
        if not isinstance(answer, dict):
            raise self._failed("answered something that is not a JSON object")
        if "error" in answer:
            raise self._failed(f"reported: {answer['error']}")
        return answer

    def _started(self) -> subprocess.Popen[bytes]:
        proc, new = self._spawn()
        if new and not self._answer().get("ready"):
            raise self._failed("did not say it was ready")
        return proc

    def ready(self) -> None:
        """Start the helper, if it is not running, and wait until Kiwi is loaded there."""
        with self._lock:
            self._started()

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's Kiwi tokens (texts already :func:`~engine.tokenize.kiwi_safe`)."""
        with self._lock:
            proc = self._started()
            assert proc.stdin is not None
            request = json.dumps(list(texts)).encode("ascii") + b"\n"  # \u escapes: any text
            try:
                proc.stdin.write(request)
                proc.stdin.flush()
            except OSError:
                raise self._failed("stopped reading") from None
            tokens = self._answer().get("tokens")
            if not isinstance(tokens, list) or len(tokens) != len(texts):
                raise self._failed("answered with the wrong number of token lists")
            return tokens


_HELPER: KiwiHelper | None = None


def use_kiwi_helper() -> KiwiHelper:
    """From now on, this process's Kiwi tokenizers ask one helper process (made once)."""
    global _HELPER
    from engine.tokenize import KiwiTokenizer

    if _HELPER is None:
        _HELPER = KiwiHelper()
        import atexit

        atexit.register(_HELPER.close)
    KiwiTokenizer.helper = _HELPER
    return _HELPER


def main() -> int:
    """The helper's side: load Kiwi, say so, then answer each request line until input ends."""
    from engine.tokenize import KiwiTokenizer

    out = answer_stream()

    def say(answer: dict[str, Any]) -> None:
        out.write(json.dumps(answer).encode("ascii") + b"\n")
        out.flush()

    kiwi = KiwiTokenizer()
    kiwi.helper = None  # this process tokenizes itself
    try:
        kiwi.ready()
    except Exception as exc:  # the parent quotes it; the traceback is in our stderr
        say({"error": f"Kiwi could not load: {type(exc).__name__}: {exc}"})
        raise
    say({"ready": True})
    for line in sys.stdin.buffer:
        try:
            texts = json.loads(line)
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError("a request is a JSON list of texts")
            # one text on this thread: Kiwi's worker threads cost more than it for one
            tokens = [kiwi(texts[0])] if len(texts) == 1 else kiwi.tokenize_many(texts)
            say({"tokens": tokens})
        except Exception as exc:  # one bad request is answered, the next still served
            say({"error": f"{type(exc).__name__}: {exc}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
