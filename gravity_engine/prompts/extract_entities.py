"""Entity profiles of one batch: who and what the speakers talk about, with attributes and relations."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from . import _rules
from .base import DATA_NOTE, Messages, PromptTemplate, ReplyModel, extraction_user_message

NAME = "extract_entities"
VERSION = "1"


class ExtractedAttribute(ReplyModel):
    key: str = Field(description="short attribute name, e.g. job, likes, lives_in, plan")
    value: str = Field(description="the value as stated")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances that state it")


class ExtractedRelation(ReplyModel):
    predicate: str = Field(description="short relation, e.g. works_at, friend_of, owns")
    target: str = Field(description="name of the other entity")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances that state it")


class ExtractedEntity(ReplyModel):
    name: str = Field(description="fullest name used in the conversation")
    type: str = Field("other", description="person, pet, organization, place, project, product, artifact or other")
    aliases: list[str] = Field(default_factory=list, description="other names used for the same entity")
    description: str = Field("", description="one sentence on who or what it is")
    attributes: list[ExtractedAttribute] = Field(default_factory=list, description="lasting facts about it")
    relations: list[ExtractedRelation] = Field(default_factory=list, description="links to other entities")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances that mention it")


class EntitiesReply(ReplyModel):
    entities: list[ExtractedEntity] = Field(default_factory=list, description="entities of the transcript")


def render(context: dict[str, Any]) -> Messages:
    system = f"{_rules.COMMON}\n\n{_rules.ENTITIES}\n\n{DATA_NOTE}"
    task = "Extract the entities of this transcript as JSON with the key entities."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, EntitiesReply, "entity profiles of one batch")
