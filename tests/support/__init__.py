"""Test support shared by the test suites (import it as ``support``).

``tests/`` is not a package; a suite that uses this adds ``tests/`` to
``sys.path`` in its ``conftest.py`` (see ``tests/llm/conftest.py``), then::

    from support.wire_server import WireReply, WireServer
"""
