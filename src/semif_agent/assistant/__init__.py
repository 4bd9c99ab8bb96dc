"""What is built on an :class:`~semif_agent.agent.Agent` rather than part of it.

- :mod:`.chat`: :func:`~.chat.skill_agent`, the agent ``semif chat`` talks to (a workspace's skills on demand);
- :mod:`.skill_runs`: :class:`~.skill_runs.AgentSkillExecutor`, an Agent following the SKILL.md skill the skill
  loop chose (``semif run`` uses it when a model is configured).

It sits above :mod:`semif_agent.agent` in the layers: the agent never imports it.
"""
