"""Date-translation data for mha-lab's date model: human-written dates -> ISO 8601.

Used by scripts/training/train_date_model.py (training, validation, the held-out file, golden
cases).
Pure Python (no numpy, no torch), deterministic for a given random.Random.

Every example is (input, target, format, roles):
  input   the date as a person writes it, e.g. "Nov 30, 2026"
  target  ISO 8601, always 10 characters, e.g. "2026-11-30"
  format  the name of the format that wrote it (FORMATS below)
  roles   one character per input character: 'Y' year, 'M' month (digits or month-name letters),
          'D' day digits, 'W' weekday-name letters, '.' anything else (separators, spaces, commas,
          the ordinal suffix of "30th").

Dates are drawn uniformly (every day equally likely) from 1900-01-01 to 2099-12-31, except in the
one format with a two-digit year ("30.11.26"), which is drawn uniformly from the window
1969-01-01 to 2068-12-31 so that its target is never ambiguous. The century rule is POSIX
strptime's %y (also Python's): 69-99 -> 1969-1999, 00-68 -> 2000-2068.
"""

import datetime

FIRST_DAY = datetime.date(1900, 1, 1)
LAST_DAY = datetime.date(2099, 12, 31)
# Two-digit years: POSIX %y pivot. YY in 69..99 -> 19YY, YY in 00..68 -> 20YY.
TWO_DIGIT_FIRST_DAY = datetime.date(1969, 1, 1)
TWO_DIGIT_LAST_DAY = datetime.date(2068, 12, 31)

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
MONTHS_ABBR = [m[:3] for m in MONTHS]  # Jan Feb ... Sep ... Dec
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WEEKDAYS_ABBR = [w[:3] for w in WEEKDAYS]

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
PAD, BOS, EOS, UNK = 0, 1, 2, 3
# Characters after the specials: separators, digits, every ASCII letter in both cases (so typed
# text maps to real ids even for letters no month or weekday name uses).
CHARS = (
    list(" ,-./")
    + [chr(c) for c in range(ord("0"), ord("9") + 1)]
    + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    + [chr(c) for c in range(ord("a"), ord("z") + 1)]
)
VOCAB = SPECIALS + CHARS
STOI = {s: i for i, s in enumerate(VOCAB)}

TARGET_LEN = 10  # "YYYY-MM-DD"


def ordinal_suffix(day):
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


# Case of month and weekday names, where a person might vary it.
def _title(s):
    return s


def _lower(s):
    return s.lower()


def _upper(s):
    return s.upper()


def _any_case(rng):
    """Title case usually, sometimes all lower or all upper."""
    r = rng.random()
    return _title if r < 0.7 else (_lower if r < 0.85 else _upper)


def _fixed(case):
    return lambda rng: case


# Each format: (name, example for 2026-11-30, case chooser, pieces(date, case) -> [(text, role)],
# two_digit_year). Day-first for all-numeric formats; no month-first numeric format (it would be
# ambiguous with day-first).
def _p_d_month_yyyy(d, c):
    return [
        (str(d.day), "D"),
        (" ", "."),
        (c(MONTHS[d.month - 1]), "M"),
        (" ", "."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_mon_d_comma_yyyy(d, c):
    return [
        (c(MONTHS_ABBR[d.month - 1]), "M"),
        (" ", "."),
        (str(d.day), "D"),
        (", ", ".."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_dd_slash_mm_slash_yyyy(d, c):
    return [
        (f"{d.day:02d}", "D"),
        ("/", "."),
        (f"{d.month:02d}", "M"),
        ("/", "."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_weekday_month_d_yyyy(d, c):
    return [
        (c(WEEKDAYS[d.weekday()]), "W"),
        (", ", ".."),
        (c(MONTHS[d.month - 1]), "M"),
        (" ", "."),
        (str(d.day), "D"),
        (", ", ".."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_dd_dot_mm_dot_yy(d, c):
    return [
        (f"{d.day:02d}", "D"),
        (".", "."),
        (f"{d.month:02d}", "M"),
        (".", "."),
        (f"{d.year % 100:02d}", "Y"),
    ]


def _p_yyyy_mon_d(d, c):
    return [
        (f"{d.year:04d}", "Y"),
        (" ", "."),
        (c(MONTHS_ABBR[d.month - 1]), "M"),
        (" ", "."),
        (str(d.day), "D"),
    ]


def _p_month_d_yyyy_lower(d, c):
    return [
        (MONTHS[d.month - 1].lower(), "M"),
        (" ", "."),
        (str(d.day), "D"),
        (" ", "."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_dd_mon_yyyy_upper(d, c):
    return [
        (f"{d.day:02d}", "D"),
        ("-", "."),
        (MONTHS_ABBR[d.month - 1].upper(), "M"),
        ("-", "."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_wd_d_mon_yyyy(d, c):
    return [
        (c(WEEKDAYS_ABBR[d.weekday()]), "W"),
        (", ", ".."),
        (str(d.day), "D"),
        (" ", "."),
        (c(MONTHS_ABBR[d.month - 1]), "M"),
        (" ", "."),
        (f"{d.year:04d}", "Y"),
    ]


def _p_month_dth_yyyy(d, c):
    suffix = ordinal_suffix(d.day)
    return [
        (c(MONTHS[d.month - 1]), "M"),
        (" ", "."),
        (str(d.day), "D"),
        (c(suffix) if c is _upper else suffix, ".."),
        (", ", ".."),
        (f"{d.year:04d}", "Y"),
    ]


FORMATS = [
    # name, example, case chooser, pieces, two-digit year
    ("d_month_yyyy", "30 November 2026", _any_case, _p_d_month_yyyy, False),
    ("mon_d_comma_yyyy", "Nov 30, 2026", _any_case, _p_mon_d_comma_yyyy, False),
    ("dd/mm/yyyy", "30/11/2026", _fixed(_title), _p_dd_slash_mm_slash_yyyy, False),
    (
        "weekday_month_d_yyyy",
        "Monday, November 30, 2026",
        _any_case,
        _p_weekday_month_d_yyyy,
        False,
    ),
    ("dd.mm.yy", "30.11.26", _fixed(_title), _p_dd_dot_mm_dot_yy, True),
    ("yyyy_mon_d", "2026 Nov 30", _any_case, _p_yyyy_mon_d, False),
    ("month_d_yyyy_lower", "november 30 2026", _fixed(_lower), _p_month_d_yyyy_lower, False),
    ("dd-MON-yyyy", "30-NOV-2026", _fixed(_upper), _p_dd_mon_yyyy_upper, False),
    ("wd_d_mon_yyyy", "Mon, 30 Nov 2026", _any_case, _p_wd_d_mon_yyyy, False),
    ("month_dth_yyyy", "November 30th, 2026", _any_case, _p_month_dth_yyyy, False),
]
FORMAT_NAMES = [f[0] for f in FORMATS]


def _ordinal_range(two_digit):
    if two_digit:
        return TWO_DIGIT_FIRST_DAY.toordinal(), TWO_DIGIT_LAST_DAY.toordinal()
    return FIRST_DAY.toordinal(), LAST_DAY.toordinal()


def render(date, format_index, case=_title):
    """(input, target, format name, roles) for one date in one format with one case."""
    name, _, _, pieces, two_digit = FORMATS[format_index]
    parts = pieces(date, case)
    text = "".join(t for t, _ in parts)
    roles = "".join(r * len(t) if len(r) == 1 else r for t, r in parts)
    # Role strings given per piece are either one character (repeated) or exactly the piece's
    # length.
    assert len(roles) == len(text), (text, roles)
    if two_digit:
        assert TWO_DIGIT_FIRST_DAY <= date <= TWO_DIGIT_LAST_DAY, date
    return text, date.isoformat(), name, roles


def sample(rng, format_index, exclude=None):
    """One example of the given format; the date uniform over the format's range, not in exclude
    (a set of date ordinals)."""
    _, _, chooser, _, two_digit = FORMATS[format_index]
    lo, hi = _ordinal_range(two_digit)
    while True:
        o = rng.randint(lo, hi)
        if exclude is None or o not in exclude:
            break
    case = chooser(rng)
    return render(datetime.date.fromordinal(o), format_index, case)


def balanced_set(rng, count, exclude=None):
    """count examples, count / len(FORMATS) of each format (count must be a multiple), in a
    shuffled order."""
    assert count % len(FORMATS) == 0, count
    order = [i for i in range(len(FORMATS)) for _ in range(count // len(FORMATS))]
    rng.shuffle(order)
    return [sample(rng, i, exclude) for i in order]


def encode_source(text):
    return [STOI.get(ch, UNK) for ch in text]


def encode_target(text):
    return [STOI[ch] for ch in text]


def decode_ids(ids):
    """Characters of a greedy output: stops at <eos>; other special tokens are written as their
    names (e.g. "<unk>"), so a bad output never equals a target."""
    out = []
    for i in ids:
        if i == EOS:
            break
        out.append(VOCAB[i])
    return "".join(out)


def _self_check():
    d = datetime.date(2026, 11, 30)
    want = [f[1] for f in FORMATS]
    got = [render(d, i)[0] for i in range(len(FORMATS))]
    assert got == want, list(zip(got, want))
    assert len(FORMATS) >= 8 and len(set(FORMAT_NAMES)) == len(FORMATS)
    assert render(datetime.date(1969, 1, 1), 4)[0] == "01.01.69"
    assert render(datetime.date(2068, 12, 31), 4)[0] == "31.12.68"
    assert render(d, 3)[3] == "WWWWWW..MMMMMMMM.DD..YYYY", render(d, 3)[3]
    assert render(datetime.date(2026, 11, 1), 9)[0] == "November 1st, 2026"
    assert render(datetime.date(2026, 11, 12), 9)[0] == "November 12th, 2026"
    assert render(datetime.date(2026, 11, 22), 9)[0] == "November 22nd, 2026"
    for ch in "".join(got):
        assert ch in STOI, ch


_self_check()
