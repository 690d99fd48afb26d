"""Curation: find the anchors most likely wrong (``review``), correct them with edits that outlive a
rebuild (``edits``), and compare two builds of one conversation (``diff``).

Nothing here needs Streamlit; the Review and Compare pages and the CLI's ``review``, ``edit``,
``edits``, ``undo`` and ``diff`` commands only call these modules.
"""
