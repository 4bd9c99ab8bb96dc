"""What the encoder is tuned on: pairs of a request and a text of its skill, weighed and capped as in training."""

from __future__ import annotations

from semif_agent.engine.registry import create_engine
from semif_agent.routing._fitting import CLIENT_SHARE
from semif_agent.routing.create import create_strategy
from semif_agent.routing.encoder.pairs import confusions, skill_text, training_pairs
from semif_agent.routing.training import WEIGHTS, TrainingExample
from semif_agent.tree.manifests import Category, SkillManifest
from semif_agent.tree.tree import SkillTree

SKILLS = {
    "email.compose": "Write an email draft to a contact",
    "notes.add": "Save a personal note",
    "notes.search": "Search saved notes by keyword",
    "todos.add": "Add a task to the to-do list",
}


def tree(learned: dict[str, tuple[str, ...]] | None = None) -> SkillTree:
    """Four skills without examples of their own; ``learned`` gives some learned examples (from runs)."""
    learned = learned or {}
    skills = {
        name: SkillManifest(
            name,
            name.split(".")[0],
            description,
            examples=learned.get(name, ()),
            learned_examples=learned.get(name, ()),
        )
        for name, description in SKILLS.items()
    }
    categories = {name: Category(name, f"{name} things") for name in ("email", "notes", "todos")}
    return SkillTree(categories, skills)


def example(text: str, skill: str | None) -> TrainingExample:
    return TrainingExample(text, skill, "examples", WEIGHTS["examples"])


def test_a_persons_label_weighs_more_than_an_example() -> None:
    rows = [
        example("write to Bob about the launch", "email.compose"),
        TrainingExample("send Alice the budget", "email.compose", "label", WEIGHTS["label"], run_id="r1"),
    ]
    pairs = training_pairs(tree(), rows)
    weight = {(p.anchor, p.positive): p.weight for p in pairs}
    text = skill_text(tree(), "email.compose")
    assert weight["send Alice the budget", text] > weight["write to Bob about the launch", text]
    assert weight["send Alice the budget", text] == WEIGHTS["label"]
    assert {p.group for p in pairs} == {"email.compose"}


def test_a_skill_with_several_requests_pairs_request_with_request_and_a_lone_one_only_with_its_text() -> None:
    rows = [
        example("write to Bob about the launch", "email.compose"),
        example("send Alice the budget", "email.compose"),
        example("remember that the wifi password is on the fridge", "notes.add"),
    ]
    pairs = training_pairs(tree(), rows)
    compose = skill_text(tree(), "email.compose")
    assert {(p.anchor, p.positive) for p in pairs} == {
        ("write to Bob about the launch", compose),
        ("write to Bob about the launch", "send Alice the budget"),
        ("send Alice the budget", compose),
        ("send Alice the budget", "write to Bob about the launch"),
        ("remember that the wifi password is on the fridge", skill_text(tree(), "notes.add")),
    }
    assert skill_text(tree(), "notes.add") == "notes add: Save a personal note"


def test_none_rows_failures_and_unknown_skills_make_no_pair() -> None:
    rows = [
        example("what is the capital of Mongolia", None),
        TrainingExample("mark the laundry as done", None, "failure", WEIGHTS["failure"], wrong="todos.add"),
        example("play some jazz", "music.play"),  # a skill the tree no longer has
        example("add buy milk to my list", "todos.add"),
    ]
    pairs = training_pairs(tree(), rows)
    assert [(p.anchor, p.group) for p in pairs] == [("add buy milk to my list", "todos.add")]


def test_one_clients_pairs_weigh_at_most_a_small_share_of_the_workspaces_own() -> None:
    own = [example(f"write to contact number {i} about the launch", "email.compose") for i in range(6)]
    own += [example(f"note number {i} to keep", "notes.add") for i in range(4)]
    theirs = [
        TrainingExample(f"add task {i} to my list", "todos.add", "implicit", WEIGHTS["implicit"], client="some-client")
        for i in range(40)
    ]
    pairs = training_pairs(tree(), own + theirs)
    first = {}  # each request's pair with its skill's text: one per request, at its row's weight
    for pair in pairs:
        if pair.positive == skill_text(tree(), pair.group):
            first[pair.anchor] = pair.weight
    client_total = sum(w for text, w in first.items() if text.startswith("add task"))
    own_total = sum(w for text, w in first.items() if not text.startswith("add task"))
    assert own_total == len(own)  # the workspace's own rows are not scaled
    assert 0 < client_total <= CLIENT_SHARE * (own_total + len(SKILLS)) + 1e-9
    assert client_total < 40 * WEIGHTS["implicit"]  # capped, not as given
    assert len([text for text in first if text.startswith("add task")]) == 40  # every request still pairs


def test_a_confused_skill_is_the_hard_negative_and_a_skills_own_name_never_is() -> None:
    rows = [example("note that the meeting moved to Friday", "notes.add")]
    pairs = training_pairs(tree(), rows, confusions={"notes.add": ["notes.add", "todos.add"]})
    assert [p.negative for p in pairs] == [skill_text(tree(), "todos.add")]
    only_itself = training_pairs(tree(), rows, confusions={"notes.add": ["notes.add", "music.play"]})
    assert [p.negative for p in only_itself] == [None]  # itself never; a skill the tree lacks neither


def test_learned_examples_of_the_tree_count_as_examples() -> None:
    learned = tree({"notes.search": ("find my note about the wifi", "look up the plumber's number in my notes")})
    pairs = training_pairs(learned, [])
    search = skill_text(learned, "notes.search")
    assert {(p.anchor, p.positive, p.weight) for p in pairs} == {
        ("find my note about the wifi", search, WEIGHTS["examples"]),
        ("find my note about the wifi", "look up the plumber's number in my notes", WEIGHTS["examples"]),
        ("look up the plumber's number in my notes", search, WEIGHTS["examples"]),
        ("look up the plumber's number in my notes", "find my note about the wifi", WEIGHTS["examples"]),
    }
    # a learned example that a row already holds (a person's label on it) pairs once, at the row's weight
    labelled = TrainingExample("find my note about the wifi", "notes.search", "label", WEIGHTS["label"], run_id="r")
    weights = [p.weight for p in training_pairs(learned, [labelled]) if p.anchor == labelled.text]
    assert weights == [WEIGHTS["label"]] * 2


def test_confusions_name_the_skills_a_real_strategy_routed_requests_to_instead() -> None:
    skills = tree()
    strategy = create_strategy("examples", skills, create_engine("lexical"))
    rows = [
        example("save a personal note", "todos.add"),  # worded as notes.add's description: routed there
        example("search saved notes by keyword", "notes.search"),  # routed right: no confusion
        example("what is the capital of Mongolia", None),  # no skill known: not counted
    ]
    found = confusions(strategy, rows)
    assert found == {"todos.add": ["notes.add"]}
    pairs = training_pairs(skills, rows, confusions=found)
    assert [(p.anchor, p.negative) for p in pairs] == [
        ("save a personal note", skill_text(skills, "notes.add")),
        ("search saved notes by keyword", None),
    ]


def test_held_out_requests_are_never_tuned_on_and_learned_examples_never_measured_on() -> None:
    from semif_agent.routing.encoder.workspace_tuning import split_pairs

    held_text = "look up the plumber's number in my notes"
    learned = tree({"notes.search": ("find my note about the wifi", held_text)})
    rows = [
        example("save the gate code", "notes.add"),
        example("remember that the plumber comes on Monday", "notes.add"),
        TrainingExample(held_text, "notes.search", "label", WEIGHTS["label"], run_id="r"),
    ]
    pairs, held = split_pairs(learned, rows, {2}, {})
    assert all(held_text not in (p.anchor, p.positive) for p in pairs)
    assert ("find my note about the wifi", skill_text(learned, "notes.search")) in {
        (p.anchor, p.positive) for p in pairs
    }
    assert {p.anchor for p in held} == {held_text}
    assert {p.positive for p in held} == {skill_text(learned, "notes.search")}


def test_without_held_out_rows_a_share_of_requests_is_measured_on_and_never_tuned_on() -> None:
    from semif_agent.routing.encoder.workspace_tuning import split_pairs

    rows = [example(f"save note number {n} about the garden", "notes.add") for n in range(60)]
    pairs, held = split_pairs(tree(), rows, set(), {})
    measured = {p.anchor for p in held}
    assert 0 < len(measured) < 20
    assert all(p.anchor not in measured and p.positive not in measured for p in pairs)
    assert {p.anchor for p in pairs} | measured == {row.text for row in rows}
