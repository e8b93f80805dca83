"""Where requests' work is done off the message loop: a lane is one thread that does the work given to it in turn.

A request's work waits in its lane's queue until the work before it is done.
Work whose request is cancelled before it starts is dropped without running
(the loop answers the cancellation at once); work that has started runs to
its end, unheard of, and the lane's next work waits for it, so abandoned
requests never pile up in threads of their own. Work given with a key
supersedes the queued work of the same key: its request is answered
`ContentModified` (a newer formatting of the same document).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException

T = TypeVar("T")


class Lane:
    """One daemon thread and its queue (the thread starts with the first work): `exit` does not wait for it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: deque[tuple[Future[Any], Callable[[], Any], Hashable | None]] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, work: Callable[[], T], key: Hashable | None = None) -> Future[T]:
        """`work`, done after the work queued before it; cancel the future to drop it before it starts."""
        done: Future[T] = Future()
        with self._ready:
            if key is not None:
                for item in [item for item in self._queue if item[2] == key]:
                    self._queue.remove(item)
                    _superseded(item[0])
            self._queue.append((done, work, key))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._ready.notify()
        return done

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: bool(self._queue))
                done, work, _ = self._queue.popleft()
            if not done.set_running_or_notify_cancel():
                continue  # cancelled before it started
            try:
                done.set_result(work())
            except Exception as failure:  # answered as the request's error, as on the loop
                done.set_exception(failure)


def _superseded(done: Future[Any]) -> None:
    if done.set_running_or_notify_cancel():
        message = "a newer request for the same document replaced this one"
        done.set_exception(JsonRpcException(message, code=types.LSPErrorCodes.ContentModified))
