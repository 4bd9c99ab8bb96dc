"""The memory tools a model uses on a :class:`MemoryManager`: save, search, update and delete facts.

::

    agent = Agent(...).with_memory(memory).with_tools(memory_tools(memory))

``search_facts`` is read-only (it runs concurrently with other reads); the
other three write. An unknown fact id is an error result the model sees.
"""

from __future__ import annotations

from ....errors import ArgumentTypeError
from ...agent_skills.skill import Skill, skill_from_tools
from ...tools import AgentTool, tool
from .manager import MemoryManager

MEMORY_INSTRUCTIONS = (
    "You have a long-term memory of facts that outlives this conversation. Save what is worth remembering "
    "(the user's preferences, names, decisions, commitments) as short self-contained facts with save_fact; "
    "search it with search_facts before answering questions that may depend on earlier conversations; "
    "correct outdated facts with update_fact and remove wrong ones with delete_fact, by their [id]."
)


def memory_tools(memory: MemoryManager) -> list[AgentTool]:
    """The four fact tools over ``memory``: ``save_fact``, ``search_facts``, ``update_fact``, ``delete_fact``."""
    if not isinstance(memory, MemoryManager):
        raise ArgumentTypeError(f"memory_tools needs a MemoryManager, got {type(memory).__name__}")

    @tool(name="save_fact")
    def save_fact(content: str, tags: list[str] | None = None) -> str:
        """Save a fact to long-term memory, to recall it in later conversations.

        Args:
            content: The fact, as one short self-contained sentence.
            tags: Optional labels to find it by (e.g. "preference", "project-x").
        """
        fact = memory.save_fact(content, tags or ())
        return f"Saved fact {fact.render()}"

    @tool(name="search_facts", read_only=True)
    def search_facts(query: str, limit: int = 5) -> str:
        """Search long-term memory for saved facts.

        Args:
            query: Words to look for.
            limit: The most facts to return.
        """
        found = memory.search_facts(query, limit=max(1, min(int(limit), 50)))
        if not found:
            return f"No saved facts match {query!r}."
        return "\n".join(fact.render() for fact in found)

    @tool(name="update_fact")
    def update_fact(fact_id: int, content: str) -> str:
        """Replace the content of a saved fact.

        Args:
            fact_id: The fact's id (the number in [brackets]).
            content: Its new content.
        """
        fact = memory.update_fact(fact_id, content)
        return f"Updated fact {fact.render()}"

    @tool(name="delete_fact")
    def delete_fact(fact_id: int) -> str:
        """Delete a saved fact.

        Args:
            fact_id: The fact's id (the number in [brackets]).
        """
        fact = memory.delete_fact(fact_id)
        return f"Deleted fact {fact.render()}"

    return [save_fact, search_facts, update_fact, delete_fact]


def memory_skill(memory: MemoryManager) -> Skill:
    """The memory tools as an always-on skill named ``memory`` (see :mod:`semif_agent.agent.agent_skills.skill`)."""
    return skill_from_tools(
        "memory",
        "Long-term memory: save, search, update and delete facts that outlive the conversation.",
        memory_tools(memory),
        instructions=MEMORY_INSTRUCTIONS,
        activation="always",
        tags=("memory",),
    )
