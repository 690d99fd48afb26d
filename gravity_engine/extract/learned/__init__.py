"""The classic extractor's learned heads: entity types, pronoun and kin references, relations between entities.

Small networks over the contextual token vectors of the MiniLM encoder the project ships, trained by
``gravity train`` on conversations the project wrote (``sample_data/train/``); see ``weights/MODEL_CARD.md``.
"""
