"""The classic extractor's word lists: kin and pet words, nouns for a person, chat words that are not names, time
words, and the head words that type a name by itself ("... Clinic", "Mount ..."). Read by every module of it."""

from __future__ import annotations

from .wordlists import word_list

KIN = set(word_list("lexicon", "KIN"))

FAMILY = KIN - {"friend", "roommate", "boss", "coworker", "colleague", "mentor", "neighbor", "neighbour"}

PETS = set(word_list("lexicon", "PETS"))
PET_MODIFIERS = set(word_list("lexicon", "PET_MODIFIERS"))

# Nouns for a person by what they do or are ("a designer called Wojtek", "the trainer, Mathilde"): the name is
# a person; no relation is drawn from them (a service role says little about whose it is).
PERSON_NOUNS = set(word_list("lexicon", "PERSON_NOUNS"))

# Capitalised words of chat that are not names.
NOT_NAMES = set(word_list("lexicon", "NOT_NAMES"))

# Words a sentence starts with that the tagger glues to the name after them ("First Berlin").
LEAD_WORDS = set(word_list("lexicon", "LEAD_WORDS"))

TIME_WORDS = set(word_list("lexicon", "TIME_WORDS"))

ORG_HEADS = set(word_list("lexicon", "ORG_HEADS"))

PLACE_HEADS = set(word_list("lexicon", "PLACE_HEADS"))

PLACE_LEADS = set(word_list("lexicon", "PLACE_LEADS"))

EVENT_HEADS = set(word_list("lexicon", "EVENT_HEADS"))

# Software people name in chat that NER takes for people ("I've worked with Python and C++"); no first names
# ("Ruby", "Julia") among them
TOOL_NAMES = set(word_list("lexicon", "TOOL_NAMES"))
