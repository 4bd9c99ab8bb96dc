"""Compatibility layers: other libraries' APIs served by semif-agent.

- :mod:`semif_agent.compat.skills_ref`: the Agent Skills reference library (``skills-ref`` 0.1.1).
"""
