"""Evaluation: the LLM-free measures (``measure``: the coverage rule, grounding; ``measure_hosts``: several hosts),
the LLM-judged benchmark runs (``evaluate``), the gold annotations and their scorer (``gold``), and the learned
heads' trainer, which picks its thresholds by those scores (``train``)."""
