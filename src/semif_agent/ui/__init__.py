"""``semif ui``: a local web view of a workspace's runs, decisions, tree and quality, where people label runs.

Needs the ``ui`` extra (Starlette, uvicorn, Jinja2). :func:`~.app.create_app`
builds the application; :func:`~.server.serve` runs it on loopback unless told
otherwise. The decision log is indexed once (:mod:`.index`) and kept up to
date by reading only what is appended.
"""
