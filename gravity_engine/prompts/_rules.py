"""Instruction text shared by the separate extraction prompts and the fused one, so the fused call asks
for exactly what the three separate calls ask for. Kept terse: it is paid for on every batch."""

COMMON = (
    "Extract structured memory from a dialogue. Record only what speakers state or clearly imply; never guess. "
    "Keep specifics as said (names, numbers, titles, places, dates). Each item cites in source_ids the ids of "
    "the utterances stating it. Third person, names not pronouns."
)

ENTITIES = (
    "entities: people, pets, organizations, places, projects, products, named things. type: person, pet, "
    "organization, place, project, product, artifact or other. name: fullest form; other names in aliases. "
    "attributes: lasting facts (key e.g. job, likes, lives_in, plan; value as said). relations: predicate "
    "(e.g. works_at, owns, friend_of) and target entity name."
)

EVENTS = (
    "events: things done, experienced, decided or planned. when_text: the time expression as said, or empty. "
    "date_start/date_end: YYYY-MM-DD resolved against the session date (\"yesterday\" said on 2023-05-08 is "
    "2023-05-07; a month or year spans its first to last day), null if unknown. granularity: day, week, month, "
    "season, year, range or unknown. follows/causes: 0-based indexes of events in your list it comes after / "
    "leads to."
)

TOPICS = (
    "topics: one to three themes. label: short, specific; keywords: distinctive words; summary: one or two "
    "sentences keeping names and dates; key_facts: specific facts with ids; state: where the theme stands now."
)
