"""The Agent's skills: named groups of instructions and tools the model turns on when it needs them.

- :mod:`.skill`: :class:`Skill`, made in Python or read from a SKILL.md folder;
- :mod:`.registry`: :class:`SkillRegistry`, one agent's skills and their activation;
- :mod:`.discovery`: how the model finds them among thousands (listing, shortlist, browse and search tools),
  ranked by :mod:`.chooser` and logged as decisions by :mod:`.choices`;
- :mod:`.meta_tools`: the tools the model activates skills, reads their files and runs their scripts with;
- :mod:`.workspace`: a workspace's skills (code and SKILL.md) on demand, with :mod:`.code_tools` for its
  code skills as tools.

The kernel's skill contract (what a skill's code imports) is :mod:`semif_agent.skills`; what only uses an
:class:`~semif_agent.agent.Agent` (``semif chat``'s agent, the Agent following a SKILL.md skill) is in
:mod:`semif_agent.assistant`.
"""

from __future__ import annotations

from .discovery import DiscoverySettings
from .registry import SkillRegistry
from .skill import Skill

__all__ = ["Skill", "SkillRegistry", "DiscoverySettings"]
