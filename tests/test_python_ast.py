"""Python sources parsed from many threads at once (skill bodies checked by runs in a pool) never fail midway."""

from __future__ import annotations

import gc
import sys
import threading

from semif_agent._python_ast import parse_python

_MANY_FUNCTIONS = "\n".join(f"def f{i}(a, b):\n    return [x + {i} for x in (a, b) if x]\n" for i in range(200))


def test_a_parse_paused_midway_is_not_broken_by_another_threads_parse():
    """Thread A pauses inside its parse (a finalizer run by the garbage collector waits); B parses meanwhile.

    On CPython 3.11 a bare ``ast.parse`` in A then fails with "AST constructor recursion depth mismatch":
    the builder's depth count is shared by all threads. ``parse_python`` lets B's parse wait for A's.
    """
    a_paused = threading.Event()
    b_done = threading.Event()
    results: dict[str, object] = {}

    class PausesInsideTheParse:
        armed = True
        itself: object = None

        def __del__(self) -> None:
            if PausesInsideTheParse.armed and threading.current_thread().name == "A":
                PausesInsideTheParse.armed = False
                a_paused.set()
                b_done.wait(0.5)  # B cannot finish while A holds the parse: A goes on after this wait

    def thread_a() -> None:
        gc.collect()
        threshold = gc.get_threshold()
        gc.set_threshold(100)  # the collector runs while the parse builds its nodes
        try:
            cycle = PausesInsideTheParse()
            cycle.itself = cycle  # a cycle: only the collector frees it
            del cycle
            try:
                results["a"] = len(parse_python(_MANY_FUNCTIONS).body)
            except SystemError as exc:
                results["a"] = exc
        finally:
            gc.set_threshold(*threshold)

    def thread_b() -> None:
        if a_paused.wait(5):
            try:
                results["b"] = len(parse_python("x = [1, (2, 3)]\n" * 5).body)
            except SystemError as exc:
                results["b"] = exc
        b_done.set()

    threads = [threading.Thread(target=thread_a, name="A"), threading.Thread(target=thread_b, name="B")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if sys.version_info < (3, 12):  # 3.12 runs the collector only between bytecodes: no pause inside a parse
        assert a_paused.is_set(), "the scenario did not pause thread A inside its parse"
    assert results.get("a") == 200
    if "b" in results:
        assert results["b"] == 5
