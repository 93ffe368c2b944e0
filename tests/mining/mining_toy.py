"""A toy corpus with a known answer for the mining tests: 12 source sentences, 10 of which
have a lightly edited copy hidden, shuffled, among 6 unrelated target sentences."""
from __future__ import annotations

import random

SUBJECTS = ["the old fisherman", "my younger sister", "a tired student", "our new neighbour",
            "the village baker", "an angry driver", "the quiet librarian", "a small child",
            "the football coach", "her grandmother", "the night nurse", "a famous painter"]
ACTIONS = ["repaired the blue boat", "planted tomatoes in spring", "missed the last train",
           "painted the kitchen yellow", "baked bread before dawn", "honked at every cyclist",
           "sorted books about volcanoes", "lost a red balloon", "shouted at the referee",
           "knitted a warm scarf", "checked every patient twice", "sold a portrait of horses"]
DISTRACTORS = ["quantum computers factor integers", "stock markets closed higher on friday",
               "penguins huddle during polar storms", "the recipe needs three eggs",
               "volcanic ash grounded many flights", "jazz musicians improvise melodies"]


def toy_corpus():
    src = [f"{s} {a}" for s, a in zip(SUBJECTS, ACTIONS)]
    hidden = [(i, src[i].replace("the ", "teh ", 1) + "!") for i in range(10)]
    rows = [text for _, text in hidden] + DISTRACTORS
    order = list(range(len(rows)))
    random.Random(0).shuffle(order)
    tgt = [rows[j] for j in order]
    truth = {(i, order.index(n)) for n, (i, _) in enumerate(hidden)}  # (src row, tgt row)
    return src, tgt, truth


def write_lines(path, lines, ids=None):
    with open(path, "w", encoding="utf-8") as f:
        for n, line in enumerate(lines):
            f.write(f"{ids[n]}\t{line}\n" if ids else f"{line}\n")
    return path
