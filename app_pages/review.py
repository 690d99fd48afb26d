"""Review: the anchors most likely wrong, why, their sources, and fixes recorded as edits that outlive rebuilds."""

from __future__ import annotations

import json
from datetime import date

import streamlit as st

from app_services import studio
from gravity_engine.curate import edits as ed
from gravity_engine.curate.review import ReviewItem, gold_miss_lines, review
from gravity_engine.errors import GravityError
from gravity_engine.eval.gold import ENTITY_TYPES, gold_from_dict
from app_pages._ui import load_store, md_escape, quote_table, require_store, store_embedder

st.title("Review anchors")
store = require_store()
anchors = store.anchors
curation = ed.curation_of(store)
MODULE_NAMES = {"entities": "entity", "events": "event", "topics": "topic"}


@st.cache_data(max_entries=8, show_spinner="Ranking the anchors…")
def _queue(path: str, mtime: float, gold_text: str | None):
    s = load_store(path, mtime)
    gold = gold_from_dict(json.loads(gold_text), source="gold file") if gold_text else None
    return review(s, gold)


def _record(edit) -> None:
    """Write the edit beside the store (a shipped sample is copied to the workspace first) and reload."""
    try:
        target = studio.writable_store_dir(store.path)
        outcome = ed.record_edit(target, edit, store_embedder(store))
    except GravityError as err:
        st.error(md_escape(err))
        return
    st.session_state["store_path"] = str(target)
    st.session_state["review_flash"] = f"{edit.id}: {ed.describe(edit)} — {outcome.status}"
    st.rerun()


if flash := st.session_state.pop("review_flash", None):
    st.success(md_escape(flash), icon=":material/check:")

# ---- gold file ------------------------------------------------------------------------------------
with st.sidebar.expander("Gold annotations", expanded=False):
    st.caption("A gold file (docs/gold_format.md) scores the store: entities, types, relations, dates.")
    upload = st.file_uploader("Gold file (.gold.json)", type=["json"], key="review_gold_upload")
gold_text = None
if upload is not None:
    try:
        gold_text = upload.getvalue().decode("utf-8")
        gold_from_dict(json.loads(gold_text), source=upload.name)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        st.error(md_escape(f"{upload.name}: not a JSON gold file ({err})"))
        gold_text = None
    except GravityError as err:
        st.error(md_escape(err))
        gold_text = None

try:
    queue = _queue(str(store.path), studio.store_mtime(store.path), gold_text)
except GravityError as err:
    st.error(md_escape(err))
    st.stop()

m1, m2, m3, m4 = st.columns(4)
m1.metric("To review", len(queue.items), help="anchors with at least one reason")
m2.metric("Edits applied", curation.count("applied") + curation.count("already"))
m3.metric("Stale edits", curation.count("stale"), help="edits whose anchor or field is not in this build")
m4.metric("Undone", curation.count("undone"))

# ---- edits ----------------------------------------------------------------------------------------
if curation.outcomes:
    stale = curation.stale()
    if stale:
        st.warning(f"{len(stale)} edit(s) no longer apply to this build; they are kept and listed below.")
    with st.expander(f"Edits of this store ({len(curation.outcomes)})", expanded=bool(stale)):
        rows = [{"id": o.edit.id, "status": o.status, "edit": o.describe(), "who": o.edit.who, "when": o.edit.at,
                 "why": o.edit.why, "note": o.note} for o in curation.outcomes]
        st.dataframe(rows, hide_index=True, width="stretch", key="review_edits_table")
        live = [o.edit.id for o in curation.outcomes if o.status != "undone"]
        if live:
            c1, c2 = st.columns([3, 1])
            pick = c1.selectbox("Edit", live, key="review_undo_pick",
                                format_func=lambda i: next(o.describe() for o in curation.outcomes if o.edit.id == i))
            if c2.button("Undo", key="review_undo", icon=":material/undo:"):
                try:
                    _, warning = ed.undo_edit(studio.writable_store_dir(store.path), pick, why="undone on the Review page",
                                              embedder=store_embedder(store))
                except GravityError as err:
                    st.error(md_escape(err))
                else:
                    st.session_state["review_flash"] = f"undid {pick}" + (f" — note: {warning}" if warning else "")
                    st.rerun()

# ---- gold score -----------------------------------------------------------------------------------
if queue.gold is not None:
    st.subheader("Gold score", anchor=False)
    g = queue.gold
    cols = st.columns(5)
    for col, (label, rate) in zip(cols * 2, [
        ("Entity recall", g.entity_recall), ("Type accuracy", g.type_accuracy), ("Junk share", g.junk_share),
        ("Relation recall", g.relation_recall), ("Relation precision", g.relation_precision),
        ("Fact recall", g.fact_recall), ("Events dated", g.events_dated), ("Event recall", g.event_recall),
        ("Relative dates right", g.relative_date_accuracy)]):
        col.metric(label, "–" if rate.value is None else f"{rate.value:.0%}", help=f"{rate.hit} of {rate.n}")
    misses = gold_miss_lines(g)
    with st.expander(f"Misses ({len(misses)})", expanded=False):
        st.dataframe([{"miss": k, "what": line} for k, line in misses], hide_index=True, width="stretch",
                     key="review_gold_misses")

# ---- the queue ------------------------------------------------------------------------------------
st.subheader("Most likely wrong", anchor=False)
if not queue.items:
    st.info("Nothing to review: no check flags any anchor of this store.")
    st.stop()
kinds = sorted(queue.counts)
f1, f2 = st.columns(2)
modules = f1.multiselect("Modules", ["entities", "events", "topics"], default=["entities", "events", "topics"],
                         key="review_modules")
# Hide rather than choose: a reason that appears later (a gold file was uploaded) is shown at once.
hidden = f2.multiselect("Hide reasons", kinds, default=[], key="review_hidden",
                        format_func=lambda k: f"{k.replace('_', ' ')} ({queue.counts[k]})")
items = [i for i in queue.items if i.module in modules and any(r.kind not in hidden for r in i.reasons)]
st.dataframe([{"score": i.score, "anchor": f"{MODULE_NAMES[i.module]}: {i.name}", "detail": i.detail,
               "reasons": i.reason_text(), "sources": ", ".join(i.source_ids[:6])} for i in items],
             hide_index=True, width="stretch", key="review_table",
             column_config={"score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0, format="%.2f"),
                            "reasons": st.column_config.TextColumn("reasons", width="large")})

# The queue first, then every other anchor of the chosen modules: a reader may fix what no check flags.
by_id = {i.anchor_id: i for i in items}
for module in modules:
    for a in anchors.module(module):
        if a.id not in by_id:
            by_id[a.id] = ReviewItem(module, a.id, ed.ref_of(module, a).name, "", source_ids=list(a.source_ids))
if not by_id:
    st.stop()
item_id = st.selectbox("Review or edit", list(by_id), key="review_item",
                       format_func=lambda i: f"{by_id[i].score:.2f} · {MODULE_NAMES[by_id[i].module]} · {by_id[i].name[:80]}")
item = by_id[item_id]
anchor = anchors.by_id().get(item_id)
if anchor is None:
    st.stop()
ref = ed.ref_of(item.module, anchor)

with st.container(border=True):
    st.markdown(f"#### {md_escape(item.name)}")
    st.caption(md_escape(f"{MODULE_NAMES[item.module]} {item.anchor_id}" + (f" · {item.detail}" if item.detail else "")
                         + ("" if item.reasons else " · no check flags it")))
    for r in item.reasons:
        st.markdown(f"- **{md_escape(r.kind.replace('_', ' '))}** ({r.weight:.2f}): {md_escape(r.text)}")
    cited = list(dict.fromkeys([s for r in item.reasons for s in r.source_ids] + item.source_ids))
    quote_table(store, cited[:30], key="review_quotes")

    who = st.text_input("Your name (kept with the edit)", value=ed.default_who(), key="review_who")
    why = st.text_input("Why (kept with the edit)", key="review_why", placeholder="e.g. Biscuit is Tom's dog")
    meta = {"who": who or ed.default_who(), "why": why}

    def make(kind: str, **fields):
        try:
            return ed.make_edit(kind, ref, **meta, **fields)
        except GravityError as err:
            st.error(md_escape(err))
            return None

    suggested = [r.fix for r in item.reasons if r.fix and (r.fix["kind"] in ("delete", "delete_field")
                                                          or (r.fix["kind"] == "set_type" and "type" in r.fix))]
    if suggested:
        fix = suggested[0]
        label = {"delete": f"Delete this {MODULE_NAMES[item.module]}",
                 "delete_field": f"Delete {fix.get('field', '')} '{fix.get('key', '')} {fix.get('value', '')}'".strip(),
                 "set_type": f"Set type to {fix.get('type')}"}[fix["kind"]]
        if st.button(f"Suggested fix: {md_escape(label)}", key="review_suggested", type="primary", icon=":material/auto_fix_high:"):
            e = make(fix["kind"], **{k: v for k, v in fix.items() if k != "kind"})
            if e is not None:
                _record(e)

    if item.module == "entities":
        tabs = st.tabs(["Type", "Rename", "Merge", "Split", "Relation", "Delete"])
        with tabs[0], st.form("review_form_type"):
            types = list(dict.fromkeys([anchor.type, *ENTITY_TYPES]))
            new_type = st.selectbox("Type", types, index=0, key="review_type")
            if st.form_submit_button("Change type") and (e := make("set_type", type=new_type)):
                _record(e)
        with tabs[1], st.form("review_form_rename"):
            new_name = st.text_input("New name", value=anchor.name, key="review_new_name")
            keep = st.checkbox("Keep the old name as an alias", value=True, key="review_keep_alias")
            if st.form_submit_button("Rename") and (e := make("rename", name=new_name, keep_alias=keep)):
                _record(e)
        with tabs[2], st.form("review_form_merge"):
            others = [x for x in anchors.entities if x.id != anchor.id]
            into = st.selectbox("Merge into", [x.id for x in others], key="review_merge_into",
                                format_func=lambda i: next(f"{x.name} ({x.type})" for x in others if x.id == i))
            if st.form_submit_button("Merge") and into:
                target = next(x for x in others if x.id == into)
                if e := make("merge", into=ed.ref_of("entities", target).model_dump()):
                    _record(e)
        with tabs[3]:
            names = list(dict.fromkeys([m.alias for m in anchor.merges] + anchor.aliases))
            if names:
                with st.form("review_form_split"):
                    alias = st.selectbox("Name to split off", names, key="review_split_alias")
                    if st.form_submit_button("Split off") and (e := make("split", alias=alias)):
                        _record(e)
            else:
                st.caption("No merged names or aliases to split off.")
        with tabs[4], st.form("review_form_relation"):
            c1, c2 = st.columns(2)
            predicate = c1.text_input("Predicate", key="review_rel_pred", placeholder="e.g. owns_pet, works_at")
            obj = c2.text_input("Target", key="review_rel_obj", placeholder="e.g. Biscuit")
            utterances = [u.id for u in store.conversation.utterances()] if store.conversation else []
            evidence = st.multiselect("Evidence (utterance ids)", utterances, key="review_rel_sources")
            if st.form_submit_button("Add relation") and (
                    e := make("add_relation", predicate=predicate, object=obj, source_ids=evidence)):
                _record(e)
            if anchor.relations:
                st.caption("Or delete one of its relations:")
            drop = st.selectbox("Relation to delete", [None, *range(len(anchor.relations))], key="review_rel_drop",
                                format_func=lambda i: "—" if i is None else
                                f"{anchor.relations[i].predicate} {anchor.relations[i].target}")
            if st.form_submit_button("Delete relation") and drop is not None:
                r = anchor.relations[drop]
                if e := make("delete_field", field="relations", key=r.predicate, value=r.target):
                    _record(e)
        with tabs[5]:
            if st.button(f"Delete {md_escape(repr(anchor.name))}", key="review_delete", icon=":material/delete:") and (e := make("delete")):
                _record(e)
    elif item.module == "events":
        tabs = st.tabs(["Date", "Delete"])
        with tabs[0], st.form("review_form_date"):
            c1, c2, c3 = st.columns(3)
            start = c1.date_input("From", value=date.fromisoformat(anchor.date_start[:10]) if anchor.date_start else None,
                                  key="review_date_start")
            end = c2.date_input("To (inclusive)", value=date.fromisoformat((anchor.date_end or anchor.date_start)[:10])
                                if anchor.date_start else None, key="review_date_end")
            grains = ["day", "week", "month", "season", "year", "range", "before", "after"]
            gran = c3.selectbox("Granularity", grains, key="review_date_gran",
                                index=grains.index(anchor.granularity) if anchor.granularity in grains else 0)
            when = st.text_input("As said", value=anchor.when_text, key="review_when")
            if st.form_submit_button("Set date") and (e := make("set_date", date_start=start, date_end=end or start,
                                                                granularity=gran if start else None, when_text=when)):
                _record(e)
            if anchor.date_start and st.form_submit_button("Clear the date") and (e := make("delete_field", field="date")):
                _record(e)
        with tabs[1]:
            if st.button("Delete this event", key="review_delete", icon=":material/delete:") and (e := make("delete")):
                _record(e)
    else:
        tabs = st.tabs(["Rename", "Delete"])
        with tabs[0], st.form("review_form_topic"):
            label = st.text_input("Label", value=anchor.label, key="review_topic_label")
            if st.form_submit_button("Rename") and (e := make("rename", name=label)):
                _record(e)
        with tabs[1]:
            if st.button("Delete this topic", key="review_delete", icon=":material/delete:") and (e := make("delete")):
                _record(e)

    if item.module == "entities" and st.button("Open in the entity graph", key="review_open_graph",
                                               icon=":material/hub:"):
        st.session_state["focus_entity"] = anchor.id
        st.switch_page("app_pages/graph.py")
