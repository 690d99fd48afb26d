"""The classic extractor's word lists: kin and pet words, nouns for a person, chat words that are not names, time
words, and the head words that type a name by itself ("... Clinic", "Mount ..."). Read by every module of it."""

from __future__ import annotations

KIN = {
    "mom", "mum", "mam", "mother", "dad", "father", "parent", "sister", "brother", "sibling", "husband", "wife",
    "partner", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "son", "daughter", "kid", "child", "baby",
    "grandma", "grandmother", "grandpa", "grandfather", "grandparent", "aunt", "uncle", "cousin", "niece",
    "nephew", "friend", "roommate", "boss", "coworker", "colleague", "mentor", "neighbor", "neighbour",
}

FAMILY = KIN - {"friend", "roommate", "boss", "coworker", "colleague", "mentor", "neighbor", "neighbour"}

PETS = {"dog", "cat", "puppy", "pup", "kitten", "kitty", "pet", "bird", "parrot", "hamster", "rabbit", "bunny",
        "horse", "fish", "turtle", "snake", "lizard", "pony", "guinea",
        # breeds: "my spaniel Bramble", "a beagle called Rufus"
        "beagle", "spaniel", "labrador", "retriever", "terrier", "poodle", "husky", "dachshund", "pug", "corgi",
        "greyhound", "whippet", "lurcher", "schnauzer", "chihuahua", "boxer", "pointer", "setter", "sheepdog",
        "doodle", "labradoodle", "cockapoo", "tabby", "siamese", "persian", "ragdoll", "moggy"}

# Nouns for a person by what they do or are ("a designer called Wojtek", "the trainer, Mathilde"): the name is
# a person; no relation is drawn from them (a service role says little about whose it is).
PERSON_NOUNS = {
    "guy", "girl", "boy", "man", "woman", "lady", "bloke", "lad", "chap", "person", "designer", "trainer",
    "engineer", "developer", "programmer", "nurse", "chef", "cook", "baker", "driver", "accountant", "lawyer",
    "solicitor", "rep", "receptionist", "vet", "dentist", "instructor", "barista", "landlord", "landlady",
    "plumber", "electrician", "builder", "artist", "painter", "writer", "author", "scientist", "professor",
    "consultant", "analyst", "recruiter", "agent", "cleaner", "nanny", "babysitter", "midwife", "pharmacist",
    "surgeon", "gp", "optician", "mechanic", "architect", "photographer", "journalist", "editor", "founder",
    "director", "ceo", "owner", "waiter", "waitress", "bartender", "librarian", "priest", "vicar", "rabbi",
    "imam", "officer", "detective", "volunteer", "musician", "singer", "guitarist", "drummer", "player",
    "runner", "climber", "swimmer", "rower", "hairdresser", "barber", "stylist", "carer", "caregiver"}

# Capitalised words of chat that are not names.
NOT_NAMES = {
    "hey", "hi", "hello", "wow", "thanks", "thank", "omg", "lol", "haha", "yeah", "yes", "no", "oh", "ok", "okay",
    "congrats", "congratulations", "awesome", "great", "cool", "nice", "sure", "bye", "mom", "dad", "god", "gosh",
    "ah", "aww", "aw", "hmm", "um", "btw", "tbh", "i", "im", "me", "you", "we", "they", "good", "love", "xoxo",
    "dear", "sweet", "amazing", "yay", "hooray", "woah", "whoa", "ugh", "yep", "nope", "cheers", "take", "sounds",
    "glad", "wanna", "gonna", "nah", "agreed", "bye", "welcome", "sorry", "please", "ya", "yup", "anyway", "fyi",
    "woohoo", "woo", "yikes", "ooh", "ahh", "phew", "tons", "lots", "kudos", "bravo", "whew", "geez", "damn",
    # titles: "Dr." before a name is part of how the person is called, never an entity of its own
    "dr", "mr", "mrs", "ms", "mx", "prof", "sir", "madam", "professor", "doctor",
    # generic acronyms and words that name a kind of thing, not one thing
    "ml", "ai", "nlp", "llm", "llms", "qa", "ui", "ux", "api", "ceo", "cto", "cfo", "coo", "pm", "phd", "mri", "er",
    "icu", "gpu", "cpu", "auc", "tv", "pc", "faq", "diy", "asap", "lgbtq", "lgbt", "lgbtq+", "rsvp", "ok.", "usd",
    "ha", "hah", "hehe", "haha", "lmao", "rofl", "xd", "classic", "fingers", "bless", "jeez", "gee", "heck",
    "beginner", "noted", "flatterer", "gp", "vat", "hr", "pr", "dm", "dms", "eta", "bbq", "diy", "deal", "done", "true", "exactly", "totally", "same", "wait", "congrats!",
}

# Words a sentence starts with that the tagger glues to the name after them ("First Berlin").
LEAD_WORDS = {"first", "then", "next", "finally", "also", "maybe", "just", "so", "and", "but", "oh", "well", "after",
              "before", "since", "even", "only", "poor", "little", "dear", "sweet", "both", "every", "each", "like",
              "ha", "yes", "no", "hey", "hi", "thanks", "love", "miss", "say", "give", "tell", "meanwhile",
              "leave", "ask", "let", "call", "text", "send", "remind", "wish", "hope", "happy", "sadly", "luckily",
              "apparently", "honestly", "anyway", "okay", "ok", "sorry", "sure", "when", "while", "if", "because",
              "once", "senior", "junior", "deputy", "assistant", "chief", "principal", "did", "does", "has",
              "can", "could", "should", "would", "shall", "might", "must", "congrats", "dear", "via"}

TIME_WORDS = {
    "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "last", "next", "today", "tonight", "yesterday", "tomorrow",
    "weekend", "christmas", "easter", "thanksgiving", "halloween", "summer", "winter", "spring", "fall", "autumn",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "morning",
    "evening", "night", "afternoon", "noon", "midnight", "new year", "eve",
}

ORG_HEADS = {"clinic", "hospital", "institute", "university", "college", "school", "health", "group", "inc",
              "ltd", "llc", "labs", "lab", "analytics", "polytechnic", "academy", "foundation", "bank", "corp",
              "company", "co", "agency", "association", "society", "council", "department", "ministry", "club",
              "center", "centre", "studio", "studios", "church", "gmbh", "partners", "systems", "technologies",
              "striders", "league", "team", "museum", "library", "gallery", "shelter", "charity", "gym", "fitness",
              "pharmacy", "nursery", "vets", "cafe", "café", "bakery", "restaurant", "hotel", "school",
              # trades a business is named after: "... Architects", "... Removals", "... Dairy", "... Games"
              "architects", "solicitors", "accountants", "removals", "roasters", "dairy", "mill", "mills", "brewery",
              "foods", "flour", "motors", "builders", "electrics", "games", "digital", "media", "robotics",
              "software", "consulting", "logistics", "energy", "insurance", "mutual", "press", "publishing",
              "records", "pharma", "dental", "optics", "airlines", "airways", "practice", "surgery", "primary",
              "garage", "salon", "barbers", "kitchen", "bar", "pub", "inn", "works", "supplies", "trust", "fund",
              "capital", "ventures", "holdings", "solutions", "services", "consultancy", "hospital", "university"}

PLACE_HEADS = {"street", "st", "avenue", "ave", "road", "park", "lake", "mountain", "mountains", "hill", "hills",
                "gate", "beach", "river", "trail", "bay", "island", "islands", "valley", "market", "square",
                "bridge", "coast", "city", "county", "village", "town", "falls", "canyon", "forest", "peak", "castle",
                "palace", "tower", "cathedral", "abbey", "harbour", "harbor", "pier", "quay", "lane", "close", "gardens"}

PLACE_LEADS = {"mount", "mt", "lake", "cape", "port", "fort", "san", "santa", "saint", "new"}

EVENT_HEADS = {"challenge", "final", "finals", "qualifier", "open", "show", "marathon", "festival", "conference", "workshop", "summit", "race", "cup", "championship", "fair",
                "expo", "concert", "parade", "gala", "tournament", "olympics", "week", "symposium", "congress",
                "regatta", "derby", "rally", "fest", "carnival", "triathlon", "convention", "hackathon", "meetup"}

# Software people name in chat that NER takes for people ("I've worked with Python and C++"); no first names
# ("Ruby", "Julia") among them
TOOL_NAMES = {"python", "java", "javascript", "typescript", "kotlin", "golang", "c++", "c#", "matlab", "excel",
              "figma", "photoshop", "illustrator", "blender", "django", "flask", "react", "docker", "kubernetes",
              "linux", "tableau", "jira", "powerpoint", "wordpress", "unity", "godot", "arduino", "raspberry pi"}
