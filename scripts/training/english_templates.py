"""Templated pronoun stories mixed into the English model's training text, so that the data asks for
coreference (a small model learns it when it must; Adhikari 2025, arXiv:2510.25013). Written for
this project; no published data set is used.

A story introduces two people of different gender, each with an occupation in front of a title and
an invented name, then a pronoun whose next words are the antecedent's occupation's action:

    the baker mrs. kolba and the pilot mr. dentor met in varnu. she baked the bread.

To predict "baked" from "she" the model has to find the person the pronoun refers to (the only
woman) and read her occupation, which only the tokens of her title and name have seen (the model is
causal). The antecedent is the first person half the time and the second half the time, so the
nearer name is right half the time.

Names and places are invented strings of syllables that are not words of the corpus; they are split
by a fixed seed into a training pool and a held-out pool. evaluate_english_lm.py measures the
coreference heads on the head report card's pronoun probe (cpp/analysis/mha/probes.cpp, five
templates of its own, whose verbs — dined, phoned, searched, sailed, called — no training story
uses) filled only with held-out names and places.
"""

import numpy as np

TITLES = {"she": "mrs.", "he": "mr."}
# occupation -> its action (what follows the pronoun)
OCCUPATIONS = {
    "baker": "baked the bread",
    "pilot": "flew the plane",
    "singer": "sang a song",
    "painter": "painted the wall",
    "farmer": "fed the cows",
    "doctor": "helped the patient",
    "teacher": "taught the class",
    "driver": "drove the bus",
    "writer": "wrote a letter",
    "cook": "made the soup",
    "guard": "locked the gate",
    "fisher": "caught a fish",
    "tailor": "sewed a coat",
    "gardener": "watered the roses",
    "judge": "read the verdict",
    "nurse": "checked the chart",
}
# verbs of the training stories (the held-out probes use others)
TRAINING_VERBS = ["met", "talked", "walked", "sat", "worked", "lived", "waited", "stayed"]
FRAMES = [
    "the {o1} {t1} {n1} and the {o2} {t2} {n2} {v} in {p}. {pron} {act}.",
    "in {p}, the {o1} {t1} {n1} and the {o2} {t2} {n2} {v} together, and then {pron} {act}.",
    "one day the {o1} {t1} {n1} {v} with the {o2} {t2} {n2} in {p}. later {pron} {act}.",
]
ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kl"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]
CODAS = ["", "", "n", "r", "l", "s", "m", "k", "x"]


def invented_words(rng, count, known, syllables=(2, 3)):
    """count distinct invented lower-case words of 2-3 syllables, none in known."""
    out = set()
    while len(out) < count:
        k = rng.integers(syllables[0], syllables[1] + 1)
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(k)) + rng.choice(CODAS)
        if w not in known:
            out.add(w)
    return sorted(out)


def pools(known_words, seed=47, names=3000, places=600):
    """{"train": {"names", "places"}, "held_out": {"names", "places"}}: invented names and places
    (not in known_words), four fifths for training, one fifth held out."""
    rng = np.random.default_rng(seed)
    n = list(rng.permutation(invented_words(rng, names, known_words)))
    p = list(rng.permutation(invented_words(rng, places, set(known_words) | set(n))))
    cut_n, cut_p = names * 4 // 5, places * 4 // 5
    return {
        "train": {"names": n[:cut_n], "places": p[:cut_p]},
        "held_out": {"names": n[cut_n:], "places": p[cut_p:]},
    }


def story(rng, names, places, verbs=TRAINING_VERBS):
    """One story (lower-case running text) from the given pools, as a dict: text; pronoun, the
    character offset where the pronoun starts; mentions, the character spans [begin, end) of the
    two people's title and name, in order; antecedent, 0 or 1 (which mention the pronoun refers
    to)."""
    n1, n2 = rng.choice(names, 2, replace=False)
    o1, o2 = rng.choice(list(OCCUPATIONS), 2, replace=False)
    g1 = rng.choice(["she", "he"])
    g2 = "he" if g1 == "she" else "she"
    ante = 0 if rng.random() < 0.5 else 1
    pron = (g1, g2)[ante]
    act = OCCUPATIONS[(o1, o2)[ante]]
    frame = FRAMES[rng.integers(len(FRAMES))]
    m1, m2 = f"{TITLES[g1]} {n1}", f"{TITLES[g2]} {n2}"
    text = frame.format(
        o1=o1,
        o2=o2,
        t1=TITLES[g1],
        t2=TITLES[g2],
        n1=n1,
        n2=n2,
        v=rng.choice(verbs),
        p=rng.choice(places),
        pron="\0",
        act=act,
    )
    at = text.index("\0")
    text = text.replace("\0", pron)
    b1 = text.index(m1)
    b2 = text.index(m2, b1 + len(m1))
    return dict(
        text=text,
        pronoun=at,
        mentions=[(b1, b1 + len(m1)), (b2, b2 + len(m2))],
        antecedent=ante,
    )
