"""The skill tree: categories and code-skill manifests, bodies, and navigation."""

from .bodies import load_body
from .manifests import Category, SkillManifest, body_path_for, load_manifests
from .router import Route, RoutedDecision, TreeWalker
from .tree import SkillTree

__all__ = [
    "Category",
    "SkillManifest",
    "SkillTree",
    "Route",
    "RoutedDecision",
    "TreeWalker",
    "load_body",
    "load_manifests",
    "body_path_for",
]
