"""A LoCoMo-format file as typed in a chat app: the messages (and, with ``--questions``, the
questions) in lower case; or, with ``--shorthand SEED``, as a phone types them, capitals kept
but a share of messages opened with chat shorthand ("Lol", "Ngl", "Yesss") and closed with an
emoji. Speaker labels and session dates stay as they are.

    python benchmarks/casual_text.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --out /tmp/dev-lower.json [--questions]
    python benchmarks/casual_text.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --out /tmp/dev-shorthand.json --shorthand 1
    linkmem eval locomo --data /tmp/dev-lower.json --k 10,25 --folds

Real chats are often typed without capitals; the extractor's name rules and the time
signal's month names were written against edited text. Write the variant outside the
repository: it is derived from the data and under the data's license.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

#: Openers and emoji of the phone-typed variant (a third of messages get an opener, a fifth
#: an emoji).
SHORTHAND = "Lol Omg Haha Hahaha Tbh Ngl Idk Lmao Yesss Ugh Hmm Btw Aww Oof Heyyy".split()
EMOJI = "😂 🔥 😍 🙏 😅 🎉 🥺 👍".split()
OPENER_SHARE, EMOJI_SHARE = 1 / 3, 1 / 5


def _turns(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        turn
        for sample in samples
        for turns in sample["conversation"].values()
        if isinstance(turns, list)
        for turn in turns
    ]


def shorthand(samples: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """``samples`` with a seeded share of messages opened with chat shorthand ("Lol That's
    great!") and a share closed with an emoji."""
    out = json.loads(json.dumps(samples))
    rng = random.Random(seed)
    for turn in _turns(out):
        text = str(turn.get("text", ""))
        if text and rng.random() < OPENER_SHARE:
            text = f"{rng.choice(SHORTHAND)} {text}"  # first word as written: it may be a name
        if text and rng.random() < EMOJI_SHARE:
            text = f"{text} {rng.choice(EMOJI)}"
        turn["text"] = text
    return out


def lower_case(samples: list[dict[str, Any]], questions: bool) -> list[dict[str, Any]]:
    """``samples`` with every turn's text and photo caption (and each question) lower-cased."""
    out = json.loads(json.dumps(samples))
    for turn in _turns(out):
        turn["text"] = str(turn.get("text", "")).lower()
        if turn.get("blip_caption"):
            turn["blip_caption"] = str(turn["blip_caption"]).lower()
    for qa in (qa for sample in out for qa in sample.get("qa", []) if questions):
        qa["question"] = str(qa["question"]).lower()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", action="store_true", help="lower-case questions too")
    parser.add_argument(
        "--shorthand", type=int, metavar="SEED", help="phone-typed instead of lower case"
    )
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found: pass a LoCoMo-format file with --data")
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.shorthand is not None:
        samples = shorthand(samples, args.shorthand)
    else:
        samples = lower_case(samples, args.questions)
    args.out.write_text(json.dumps(samples), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
