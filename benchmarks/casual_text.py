"""A LoCoMo-format file as typed in a chat app: the messages (and, with ``--questions``, the
questions) in lower case. Speaker labels and session dates stay as they are.

    python benchmarks/casual_text.py --data ../shared/benchmarks/locomo/locomo-dev.json \
        --out /tmp/dev-lower.json [--questions]
    linkmem eval locomo --data /tmp/dev-lower.json --k 10,25 --folds

Real chats are often typed without capitals; the extractor's name rules and the time
signal's month names were written against edited text. Write the variant outside the
repository: it is derived from the data and under the data's license.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def lower_case(samples: list[dict[str, Any]], questions: bool) -> list[dict[str, Any]]:
    """``samples`` with every turn's text and photo caption (and each question) lower-cased."""
    out = json.loads(json.dumps(samples))
    for sample in out:
        for turns in sample["conversation"].values():
            if not isinstance(turns, list):
                continue
            for turn in turns:
                turn["text"] = str(turn.get("text", "")).lower()
                if turn.get("blip_caption"):
                    turn["blip_caption"] = str(turn["blip_caption"]).lower()
        if questions:
            for qa in sample.get("qa", []):
                qa["question"] = str(qa["question"]).lower()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", action="store_true", help="lower-case questions too")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found: pass a LoCoMo-format file with --data")
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    args.out.write_text(json.dumps(lower_case(samples, args.questions)), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
