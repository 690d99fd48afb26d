"""What the rules say two speakers are to each other, on 80 messages written blind (``sample_data/gold/speaker_ties``):
each message is a two-turn chat (the message, then the listener's "ok") read by the classic rules alone, and any
relation they write between the speaker and the listener is its answer. Prints a table, asserts nothing.

Usage: python benchmarks/speaker_ties.py [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.conversation import Conversation, Session, Utterance  # noqa: E402
from gravity_engine.extract.base import make_batches  # noqa: E402
from gravity_engine.extract.classic import ClassicExtractor  # noqa: E402
from gravity_engine.extract.learned.features import canonical_predicate  # noqa: E402

DATA = ROOT / "sample_data" / "gold" / "speaker_ties" / "utterances.jsonl"
SAME = {"neighbor_of": "neighbour_of", "roommate_of": "flatmate_of"}


def said_between(extractor: ClassicExtractor, speaker: str, listener: str, text: str) -> set[str]:
    """The predicates the rules write between the two for one message."""
    utts = [Utterance(id="u0", speaker=speaker, text=text, session_id="s1"),
            Utterance(id="u1", speaker=listener, text="ok", session_id="s1")]
    conv = Conversation(id="tie", sessions=[Session(id="s1", index=0, utterances=utts)], speakers=[speaker, listener])
    out = set()
    for _, result in extractor.extract_batches(make_batches(conv)):
        if isinstance(result, Exception):
            raise result
        for e in result.entities:
            for r in e.relations:
                if {e.name, r.target} == {speaker, listener}:
                    c = canonical_predicate(r.predicate)
                    name = c[0] if c else r.predicate
                    out.add(SAME.get(name, name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--show", action="store_true", help="print every miss and every wrong tie")
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    extractor = ClassicExtractor(learned=False)
    per = Counter()
    for row in rows:
        gold = SAME.get(row["label"], row["label"])
        got = said_between(extractor, row["speaker"], row["listener"], row["text"])
        per[(gold, "n")] += 1
        if gold == "none":
            per[(gold, "found")] += not got
            if got and args.show:
                print(f"  wrong  {sorted(got)}: {row['text']}")
        else:
            per[(gold, "found")] += gold in got
            per[("wrong", "n")] += bool(got - {gold})
            if gold not in got and args.show:
                print(f"  missed {gold} ({sorted(got) or 'nothing'}): {row['text']}")
    labels = sorted({k for k, _ in per if k not in ("none", "wrong")})
    print(f"\nSpeaker ties on {len(rows)} messages written blind (classic rules)\n")
    print(f"{'label':14} | {'n':>3} | {'right':>5}")
    for label in [*labels, "none"]:
        print(f"{label:14} | {per[(label, 'n')]:3} | {per[(label, 'found')]:5}")
    ties = sum(per[(lab, "n")] for lab in labels)
    found = sum(per[(lab, "found")] for lab in labels)
    false = per[("none", "n")] - per[("none", "found")] + per[("wrong", "n")]
    print(f"\nrecall {found / ties:.2f} ({found} of {ties}); precision {found / max(1, found + false):.2f} "
          f"({false} wrong: {per[('none', 'n')] - per[('none', 'found')]} of {per[('none', 'n')]} with no tie related, "
          f"{per[('wrong', 'n')]} with another predicate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
