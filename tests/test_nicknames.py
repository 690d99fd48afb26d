"""What one speaker calls the other ("Hey Jo!" to Joanna): merged into the speaker when only the other speaker says
it, always to address someone, and it starts as the speaker's name starts; otherwise left alone."""

from __future__ import annotations

import pytest

from gravity_engine.anchors import AnchorSet, Entity
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.extract.classic.nicknames import merge_speaker_nicknames
from gravity_engine.merging import unmerge


def _chat(turns: list[tuple[str, str]], speakers: list[str]) -> Conversation:
    utts = [Utterance(id=f"u{i}", speaker=s, text=t, session_id="s1") for i, (s, t) in enumerate(turns)]
    return Conversation(id="c", sessions=[Session(id="s1", index=0, utterances=utts)], speakers=speakers)


def _anchors(*names: str) -> AnchorSet:
    return AnchorSet(entities=[Entity(id=n.lower(), name=n, type="person", source_ids=["u0"]) for n in names])


def test_a_name_only_the_other_speaker_says_to_address_them_is_theirs_and_can_be_undone():
    chat = _chat([("Nate", "Hey Jo, guess what? I dyed my hair."), ("Joanna", "No way! Pics or it didn't happen."),
                  ("Nate", "Sounds great, Jo!"), ("Joanna", "Haha"), ("Nate", "Wow Jo, you're killing it!")],
                 ["Joanna", "Nate"])
    anchors = _anchors("Joanna", "Nate", "Jo")
    assert merge_speaker_nicknames(anchors, chat) == 1
    joanna = next(e for e in anchors.entities if e.name == "Joanna")
    assert [e.name for e in anchors.entities] == ["Joanna", "Nate"] and "Jo" in joanna.aliases
    assert joanna.merges[-1].reason == "what Nate calls them"
    restored = unmerge(anchors, "joanna", "Jo")
    assert sorted(e.name for e in restored.entities) == ["Jo", "Joanna", "Nate"]


@pytest.mark.parametrize("turns, speakers", [
    ([("Nate", "Jo said she'd come to the gig."), ("Joanna", "Great.")], ["Joanna", "Nate"]),  # about, not to
    ([("Nate", "Hey Jo!"), ("Joanna", "Jo is my sister's name too, ha.")], ["Joanna", "Nate"]),  # both say it
    ([("Nate", "Hey Elin!"), ("Wanjiru", "Hi.")], ["Wanjiru", "Nate"]),  # starts unlike the listener's name
    ([("Nate", "Hey Jo!"), ("Joanna", "Hi!"), ("Kim", "Hi both.")], ["Joanna", "Nate", "Kim"]),  # whose, of three?
])
def test_a_name_said_about_someone_by_both_or_unlike_the_listeners_stays_its_own(turns, speakers):
    name = "Elin" if "Wanjiru" in speakers else "Jo"
    anchors = _anchors(*speakers, name)
    assert merge_speaker_nicknames(anchors, _chat(turns, speakers)) == 0
    assert name in [e.name for e in anchors.entities]
