"""Full training on many skills, synthetic: the learned router and a logistic regression where words tell alike skills apart.

    python bench/learning_many_skills.py [--skills 200] [--seed 3]

A stand-in for a tool set of ~200 tools and ~16,000 requests (the shape of a
held-out tool-selection benchmark), built so that what it measures is known:
the skills come in groups of five whose requests' vectors lie close together
(plus each skill's own direction and its description's); every request has
three filler words and, six times in ten, one of its skill's six own words
(each seen ~8 times in all: below a share of all requests, above a share of
one skill's). The requests' vectors are drawn, not embedded (the training's
encoder is replaced), so it runs in a minute or two; the untrained scores are
the vectors' cosines with the skills' embedded descriptions.

Prints the test accuracy of ``semif train``'s router fitted on every request,
the words it learned from and the seconds it took, and scikit-learn's
logistic regression on the same vectors (``bench/learning.py``'s
environment). Run it with the code before a change (``PYTHONPATH``) to
compare.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from learning import PEER, peer_python

from semif_agent.engine import create_engine
from semif_agent.routing.scoring import LeafScorer
from semif_agent.routing.training import TrainingExample, train
from semif_agent.tree import SkillTree
from semif_agent.tree.build import LeafSpec, build_tree

GROUP = 5
TEST_PER_SKILL = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng, pick = np.random.default_rng(args.seed), random.Random(args.seed)

    def word() -> str:
        return "".join(pick.choice("bcdfgklmnprstvz") + pick.choice("aeiou") for _ in range(3))

    names = [f"t{k:03d}" for k in range(args.skills)]
    flat = [LeafSpec(name, f"{word()} {word()} tool") for name in names]
    folder = Path(tempfile.mkdtemp())
    (folder / "tree.json").write_text(json.dumps(build_tree(flat)))
    tree = SkillTree.load(folder / "tree.json", folder)
    engine = create_engine("local")
    index = LeafScorer(tree, engine, examples="off").current()
    column = {name: i for i, name in enumerate(index.names)}
    described = np.asarray(index.vectors, dtype=np.float64)[[column[n] for n in names]]
    described /= np.linalg.norm(described, axis=1, keepdims=True)
    dimension = described.shape[1]

    def directions(count: int) -> np.ndarray:
        drawn = rng.normal(size=(count, dimension))
        return drawn / np.linalg.norm(drawn, axis=1, keepdims=True)

    groups = directions(args.skills // GROUP + 1)
    centers = 0.35 * described + 0.8 * groups[np.arange(args.skills) // GROUP] + 0.3 * directions(args.skills)
    filler = [word() for _ in range(400)]
    own_words = [[word() for _ in range(6)] for _ in range(args.skills)]
    vectors: dict[str, np.ndarray] = {}
    train_rows, test_rows = [], []
    for k, name in enumerate(names):
        size = int(rng.integers(60, 106))
        for j in range(size + TEST_PER_SKILL):
            words = pick.sample(filler, 3) + ([pick.choice(own_words[k])] if pick.random() < 0.6 else [])
            text = f"{' '.join(words)} q{len(vectors)}"
            vector = centers[k] + 0.075 * rng.normal(size=dimension) * np.sqrt(dimension) / 10
            vectors[text] = vector / np.linalg.norm(vector)
            (train_rows if j < size else test_rows).append((text, name))

    def untrained(vector: np.ndarray) -> np.ndarray:
        scores = np.zeros(len(index.names))
        scores[[column[n] for n in names]] = described @ vector
        return scores

    def encoder(texts, progress):
        return np.stack([vectors[t] for t in texts]).astype(np.float32), np.stack(
            [untrained(vectors[t]) for t in texts]
        )

    print(f"{args.skills} skills, {len(train_rows):,} train and {len(test_rows):,} test requests")
    started = time.perf_counter()
    rows = [TrainingExample(text, skill, "dataset") for text, skill in train_rows]
    router, _ = train(tree, rows, engine, encoder=encoder)
    seconds = time.perf_counter() - started
    at = {name: i for i, name in enumerate(router.classes)}
    order = [at[name] for name in names]
    right = 0
    for text, skill in test_rows:
        vector = vectors[text]
        cols, values = router.vocabulary.vector(text)
        learned = router.w @ vector + router.v[:, cols] @ np.asarray(values) + router.b
        logits = learned[order] + router.beta * untrained(vector)[[column[n] for n in names]]
        none = router.none_b + router.beta * router.none_prior
        right += names[int(logits.argmax())] == skill and logits.max() > none
    print(
        f"learned: {right / len(test_rows):.1%} ({len(router.vocabulary.words):,} words, "
        f"{seconds:.0f} s to train, settings {router.meta['settings']})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp) / "data.npz", Path(tmp) / "peer.py"
        np.savez(
            data,
            train_x=np.stack([vectors[t] for t, _ in train_rows]),
            train_y=np.array([names.index(s) for _, s in train_rows]),
            test_x=np.stack([vectors[t] for t, _ in test_rows]),
        )
        script.write_text(PEER)
        out = subprocess.run([str(peer_python()), str(script), str(data)], capture_output=True, text=True, check=True)
    predicted = json.loads(out.stdout.strip().splitlines()[-1])
    share = sum(names[p] == s for p, (_, s) in zip(predicted, test_rows)) / len(test_rows)
    print(f"logistic regression (sklearn, the vectors alone): {share:.1%}")


if __name__ == "__main__":
    main()
