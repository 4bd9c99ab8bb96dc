"""The Agent's skills: named groups of instructions and tools the model turns on when it needs them.

- :mod:`.skill`: :class:`Skill`, made in Python or read from a SKILL.md folder;
- :mod:`.registry`: :class:`SkillRegistry`, one agent's skills and their activation;
- :mod:`.discovery`: how the model finds them among thousands (listing, shortlist, browse and search tools),
  ranked by :mod:`.chooser` and logged as decisions by :mod:`.choices`;
- :mod:`.meta_tools`: the tools the model activates skills, reads their files and runs their scripts with;
- :mod:`.workspace`: a workspace's skills (code and SKILL.md) on demand, with :mod:`.code_tools` for its
  code skills as tools and :mod:`.chat_agent` for the agent ``semif chat`` talks to;
- :mod:`.runs`: an Agent following a SKILL.md skill the skill loop chose.
"""

from __future__ import annotations

from .discovery import DiscoverySettings
from .registry import SkillRegistry
from .skill import Skill

__all__ = ["Skill", "SkillRegistry", "DiscoverySettings"]
