"""An intent tree (terse intent names in scenarios) routes untrained at least as well as a flat argmax over the same
texts, whichever walk of the tree is asked for, and its ``none`` still catches requests no intent serves."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import ScriptedEngine, create_engine
from semif_agent.routing import create_strategy
from semif_agent.routing.evaluate import Example, route_all, summarize
from semif_agent.tree import SkillTree

# What an intent benchmark's tree looks like: scenarios as categories, each intent described by its name in words.
INTENTS = {
    "alarm": ["alarm set", "alarm remove", "alarm query"],
    "audio": ["volume up", "volume down", "volume mute"],
    "calendar": ["calendar set", "calendar remove", "calendar query"],
    "music": ["play music", "music likeness", "music settings"],
    "weather": ["weather query"],
    "transport": ["transport ticket", "transport taxi", "transport traffic"],
    "lists": ["lists create", "lists add item", "lists remove item"],
    "cooking": ["cooking recipe"],
}
REQUESTS = [
    ("wake me up at six tomorrow", "alarm.alarm_set"),
    ("cancel my seven o'clock alarm", "alarm.alarm_remove"),
    ("what alarms do I have", "alarm.alarm_query"),
    ("make it louder", "audio.volume_up"),
    ("turn the sound down a bit", "audio.volume_down"),
    ("be quiet for a while", "audio.volume_mute"),
    ("put lunch with Sam on my schedule for Friday", "calendar.calendar_set"),
    ("delete the dentist appointment from my calendar", "calendar.calendar_remove"),
    ("what is on my calendar tomorrow", "calendar.calendar_query"),
    ("play some jazz", "music.play_music"),
    ("I really like this song", "music.music_likeness"),
    ("turn on shuffle", "music.music_settings"),
    ("will it rain this afternoon", "weather.weather_query"),
    ("book me a train ticket to Leeds", "transport.transport_ticket"),
    ("get me a cab to the airport", "transport.transport_taxi"),
    ("how bad is traffic on the way to work", "transport.transport_traffic"),
    ("start a new shopping list", "lists.lists_create"),
    ("put eggs on the shopping list", "lists.lists_add_item"),
    ("take milk off my list", "lists.lists_remove_item"),
    ("how do I make pancakes", "cooking.cooking_recipe"),
]
UNSERVED = ["who wrote war and peace", "what is the boiling point of tungsten"]


@pytest.fixture
def intent_tree(tmp_path: Path) -> SkillTree:
    skills = [
        {"name": f"{scenario}.{intent.replace(' ', '_')}", "category": scenario, "description": intent}
        for scenario, intents in INTENTS.items()
        for intent in intents
    ]
    categories = [{"name": s, "description": f"{s}: {', '.join(i)}"} for s, i in INTENTS.items()]
    path = tmp_path / "tree.json"
    path.write_text(json.dumps({"version": 1, "categories": categories, "skills": skills}))
    return SkillTree.load(path, tmp_path)


def flat_right(tree: SkillTree, engine) -> int:
    """How many requests a flat cosine over the intents' descriptions routes right (it never says none)."""
    names = list(tree.skills)
    matrix = np.asarray(engine.embed([tree.skills[n].description for n in names]))
    queries = np.asarray(engine.embed([text for text, _ in REQUESTS]))
    chosen = (queries @ (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).T).argmax(axis=1)
    return sum(names[i] == skill for i, (_, skill) in zip(chosen, REQUESTS))


@pytest.mark.parametrize("name", ["chain", "beam", "shortlist", "best_leaf"])
def test_every_walk_of_an_intent_tree_routes_as_well_as_a_flat_argmax(intent_tree: SkillTree, name: str) -> None:
    engine = create_engine("local")
    flat = flat_right(intent_tree, engine)
    strategy = create_strategy(name, intent_tree, engine)
    routed = run_sync(route_all(strategy, [Example(text, skill) for text, skill in REQUESTS]))
    right = sum(o.correct for o in routed)
    # measured: flat 18 of 20; before, chain 7 (its category decisions read the scenarios' summaries and cut none
    # at the engine's raw 0.35), beam 14 and shortlist 13 (the engine's cut inside); after, each 18, as best_leaf
    assert right >= flat, f"{name} routed {right} of {len(REQUESTS)} right, a flat cosine {flat}"
    assert strategy.name == name
    unserved = run_sync(route_all(strategy, [Example(text, None) for text in UNSERVED]))
    assert summarize(unserved, intent_tree)["out_of_scope_recall"] == 1.0


def test_a_model_still_makes_the_walks_decisions(intent_tree: SkillTree) -> None:
    """Only an engine that scores options by their text has its decisions derived from the leaves: a model's stand."""
    engine = ScriptedEngine(["music", "music.music_settings"])
    route = run_sync(create_strategy("chain", intent_tree, engine).aroute("turn on shuffle"))
    assert route.skill is not None and route.skill.name == "music.music_settings"
    assert [d.result.selected for d in route.decisions] == ["music", "music.music_settings"]


# Two example requests per intent, and requests no intent serves written close to the intents (as people write them).
EXAMPLES = {
    "alarm.alarm_set": ["set an alarm for 7 am", "wake me at half past five"],
    "alarm.alarm_remove": ["remove my morning alarm", "turn off the alarm for tomorrow"],
    "alarm.alarm_query": ["is my alarm set", "when does my alarm go off"],
    "audio.volume_up": ["volume up please", "I can't hear it, louder"],
    "audio.volume_down": ["lower the volume", "too loud, turn it down"],
    "audio.volume_mute": ["mute the speaker", "silence please"],
    "calendar.calendar_set": ["add a meeting on Monday at ten", "schedule a call with Anna tomorrow"],
    "calendar.calendar_remove": ["cancel my meeting on Monday", "remove the call with Anna"],
    "calendar.calendar_query": ["what meetings do I have today", "am I free on Thursday"],
    "music.play_music": ["play my workout playlist", "put on some Beatles"],
    "music.music_likeness": ["I love this track", "save this song to my favourites"],
    "music.music_settings": ["repeat this song", "turn off shuffle"],
    "weather.weather_query": ["what's the weather like", "do I need an umbrella today"],
    "transport.transport_ticket": ["buy a bus ticket to Bath", "book a flight to Rome"],
    "transport.transport_taxi": ["call me a taxi", "order an uber home"],
    "transport.transport_traffic": ["is the motorway busy", "any traffic jams on my route"],
    "lists.lists_create": ["make a new to-do list", "create a packing list"],
    "lists.lists_add_item": ["add bread to my list", "put batteries on the to-do list"],
    "lists.lists_remove_item": ["remove bread from the list", "cross eggs off my list"],
    "cooking.cooking_recipe": ["give me a recipe for lasagne", "how long do I boil an egg"],
}
NONE_EXAMPLES = [
    "what's the alarm code for the office",
    "how loud is a jet engine",
    "what calendar did the Romans use",
    "who composed this symphony",
    "what causes thunderstorms",
    "how much does a taxi licence cost",
    "list the planets of the solar system",
    "who invented the microwave oven",
    "translate good morning into Spanish",
    "what is the capital of Peru",
]


def test_examples_of_what_no_intent_serves_send_none_of_the_intents_own_requests_to_none(
    intent_tree: SkillTree,
) -> None:
    """A tree given ``none_examples`` routes its own requests as it does without them (before, the route's ``none``
    cut was raised to shut those examples out by their best score alone: on HWU64 with 16 intents held out, 10 shots,
    that sent 2 in-scope requests in 100 to ``none`` for 1 in 10 out-of-scope ones caught, and the walks that do not
    fold the examples into their leaves routed 39% right where a flat cosine routes 52%)."""
    engine = create_engine("local")
    skills = {n: replace(s, examples=tuple(EXAMPLES.get(n, ()))) for n, s in intent_tree.skills.items()}
    with_examples = SkillTree(intent_tree.categories, skills)
    told = replace(with_examples, none_examples=tuple(NONE_EXAMPLES))
    dataset = [Example(text, skill) for text, skill in REQUESTS]
    flat = flat_right(intent_tree, engine)
    for name in ("best_leaf", "examples"):
        without = sum(o.correct for o in run_sync(route_all(create_strategy(name, with_examples, engine), dataset)))
        routed = run_sync(route_all(create_strategy(name, told, engine), dataset))
        right = sum(o.correct for o in routed)
        sent_to_none = [o.example.text for o in routed if o.predicted is None]
        assert right >= min(without, flat), (
            f"{name}: {right} right with none_examples, {without} without: {sent_to_none}"
        )
