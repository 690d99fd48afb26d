// The entity graph of app_pages/graph.py, drawn as plain SVG from gravity_engine.viz.graph.graph_view():
// no chart library to load, so a tab opened on the graph page draws it as soon as the data arrives.
// Conversation text (names, predicates, statements) is only ever set as textContent or an attribute value.
// A click sends {kind: "node" | "edge", id} as the trigger "click"; wheel zooms, drag pans, double-click fits.

const NS = "http://www.w3.org/2000/svg";
const MIN_ZOOM = 0.25;
const MAX_ZOOM = 12;

function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  parent.appendChild(e);
  return e;
}

function htmlEl(tag, className, parent, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e);
  return e;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  // Called again whenever the data changes: rebuild inside one root, keep the view for the same nodes.
  let root = parentElement.querySelector(".eg-root");
  if (!root) root = htmlEl("div", "eg-root", parentElement);
  const state = root.egState || (root.egState = { view: { k: 1, tx: 0, ty: 0 }, key: null, observer: null });
  if (state.observer) state.observer.disconnect();
  if (state.key !== data.view_key) state.view = { k: 1, tx: 0, ty: 0 };
  state.key = data.view_key;
  root.replaceChildren();

  const nodes = data.nodes || [];
  const edges = data.edges || [];
  const height = data.height || 600;

  const legend = htmlEl("div", "eg-legend", root);
  for (const item of data.legend || []) {
    const entry = htmlEl("span", "eg-legend-item", legend);
    htmlEl("span", "eg-swatch", entry).style.background = item.color;
    htmlEl("span", "", entry, item.type);
  }
  const controls = htmlEl("div", "eg-controls", root);
  const stage = htmlEl("div", "eg-stage", root);
  stage.style.height = `${height}px`;
  const svg = svgEl("svg", { class: "eg-svg", width: "100%", height: String(height), role: "group",
                             "aria-label": "entity graph" }, stage);
  const tip = htmlEl("div", "eg-tip", stage);

  // Data space -> pixels: the layout's bounds fill the box (labels get room left and right), then the view.
  const xs = nodes.map((n) => n.x);
  const ys = nodes.map((n) => n.y);
  const x0 = (xs.length ? Math.min(...xs) : 0) - 1.6;
  const x1 = (xs.length ? Math.max(...xs) : 1) + 1.6;
  const y0 = (ys.length ? Math.min(...ys) : 0) - 0.6;
  const y1 = (ys.length ? Math.max(...ys) : 1) + 0.6;
  let width = stage.clientWidth || 800;
  const CHAR_PX = 7; // the mean width of a 13 px label character, to fit labels without measuring them
  const px = (x, y) => {
    const v = state.view;
    const bx = ((x - x0) / (x1 - x0)) * width;
    const by = ((y1 - y) / (y1 - y0)) * height;
    return [v.k * bx + v.tx, v.k * by + v.ty];
  };

  const neighbours = new Map(nodes.map((n) => [n.id, new Set([n.id])]));
  for (const e of edges) {
    neighbours.get(e.source)?.add(e.target);
    neighbours.get(e.target)?.add(e.source);
  }

  const showTip = (evt, rows) => {
    tip.replaceChildren();
    for (const [key, value] of rows) {
      const line = htmlEl("div", "eg-tip-row", tip);
      htmlEl("b", "", line, `${key}: `);
      htmlEl("span", "", line, value);
    }
    const box = stage.getBoundingClientRect();
    tip.style.left = `${Math.min(evt.clientX - box.left + 14, box.width - 300)}px`;
    tip.style.top = `${evt.clientY - box.top + 14}px`;
    tip.style.display = "block";
  };
  const hideTip = () => {
    tip.style.display = "none";
  };
  const activate = (target, send) => {
    target.addEventListener("click", (evt) => {
      evt.stopPropagation();
      send();
    });
    target.addEventListener("keydown", (evt) => {
      if (evt.key === "Enter" || evt.key === " ") {
        evt.preventDefault();
        send();
      }
    });
  };

  const lines = [];
  const gEdges = svgEl("g", { class: "eg-edges" }, svg);
  for (const e of edges) {
    const line = svgEl("line", { class: `eg-edge eg-${e.kind}`, "data-id": e.id }, gEdges);
    if (e.width) line.style.strokeWidth = `${e.width}px`; // a co-mention: thicker when said together more often
    lines.push([line, e]);
  }
  const circles = [];
  const labels = [];
  const gNodes = svgEl("g", { class: "eg-nodes" }, svg);
  for (const n of nodes) {
    const c = svgEl("circle", {
      class: n.focus ? "eg-node eg-focus" : "eg-node", r: String(n.r), fill: n.color, tabindex: "0",
      role: "button", "aria-label": n.tip.map(([k, v]) => `${k}: ${v}`).join("; "), "data-id": n.id,
    }, gNodes);
    activate(c, () => setTriggerValue("click", { kind: "node", id: n.id }));
    c.addEventListener("mousemove", (evt) => showTip(evt, n.tip));
    c.addEventListener("mouseenter", () => highlight(n.id));
    c.addEventListener("mouseleave", () => {
      hideTip();
      highlight(null);
    });
    circles.push([c, n]);
    if (n.label) {
      // A big node (a speaker) carries its name inside, smaller when it must (down to 9 px: a hub has
      // neighbours on every side, so a name beside it lies across an edge); the others beside, away from
      // their neighbours.
      const fit = Math.min(13, (13 * (2 * n.r - 6)) / (n.label.length * CHAR_PX));
      const inside = n.r >= 12 && fit >= 9;
      const anchor = inside ? "middle" : n.side === "left" ? "end" : "start";
      const t = svgEl("text", { class: inside ? "eg-label eg-inside" : "eg-label", "text-anchor": anchor,
                                "dominant-baseline": "middle", "data-id": n.id }, gNodes);
      if (inside && fit < 13) t.style.fontSize = `${fit.toFixed(1)}px`;
      t.textContent = n.label;
      labels.push([t, { ...n, inside }]);
    }
  }
  const edgeTexts = [];
  const diamonds = [];
  const gMarks = svgEl("g", { class: "eg-edge-marks" }, svg);
  for (const e of edges) {
    if (data.edge_labels && e.label) {
      const t = svgEl("text", { class: "eg-edge-label", "text-anchor": "middle" }, gMarks);
      t.textContent = e.label;
      edgeTexts.push([t, e]);
    }
    const d = svgEl("path", { class: "eg-diamond", d: "M0,-6L6,0L0,6L-6,0Z", tabindex: "0", role: "button",
                              "aria-label": e.tip.map(([k, v]) => `${k}: ${v}`).join("; "), "data-id": e.id },
                    gMarks);
    activate(d, () => setTriggerValue("click", { kind: "edge", id: e.id }));
    d.addEventListener("mousemove", (evt) => showTip(evt, e.tip));
    d.addEventListener("mouseleave", hideTip);
    diamonds.push([d, e]);
  }

  function highlight(id) {
    const near = id === null ? null : neighbours.get(id);
    svg.classList.toggle("eg-dim", near !== null);
    for (const [el, n] of [...circles, ...labels]) el.classList.toggle("eg-hot", near !== null && near.has(n.id));
    for (const [el, e] of lines) el.classList.toggle("eg-hot", id !== null && (e.source === id || e.target === id));
  }

  function place() {
    for (const [el, e] of lines) {
      const [ax, ay] = px(e.x, e.y);
      const [bx, by] = px(e.x2, e.y2);
      el.setAttribute("x1", ax);
      el.setAttribute("y1", ay);
      el.setAttribute("x2", bx);
      el.setAttribute("y2", by);
    }
    for (const [el, n] of circles) {
      const [cx, cy] = px(n.x, n.y);
      el.setAttribute("cx", cx);
      el.setAttribute("cy", cy);
    }
    // An unconnected entity's label gets the room to the next one in its grid row: cut at first, whole
    // once zoomed in enough (the full name is in the tooltip).
    const slot = (data.grid_step / (x1 - x0)) * width * state.view.k;
    for (const [el, n] of labels) {
      const [cx, cy] = px(n.x, n.y);
      const gap = n.r + 4;
      el.setAttribute("x", n.inside ? cx : n.side === "left" ? cx - gap : cx + gap);
      el.setAttribute("y", cy);
      if (n.grid) {
        const fits = Math.max(3, Math.floor((slot - 2 * n.r - 10) / CHAR_PX));
        const text = n.label.length <= fits ? n.label : `${n.label.slice(0, fits - 1)}…`;
        if (el.textContent !== text) el.textContent = text;
      }
    }
    for (const [el, e] of edgeTexts) {
      const [mx, my] = px(e.mx, e.my);
      el.setAttribute("x", mx);
      el.setAttribute("y", my - 9);
    }
    for (const [el, e] of diamonds) {
      const [mx, my] = px(e.mx, e.my);
      el.setAttribute("transform", `translate(${mx},${my})`);
    }
  }
  let pending = false;
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        place();
      });
    }
  };

  const zoomAt = (factor, cx, cy) => {
    const v = state.view;
    const k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, v.k * factor));
    v.tx = cx - (cx - v.tx) * (k / v.k);
    v.ty = cy - (cy - v.ty) * (k / v.k);
    v.k = k;
    schedule();
  };
  const fit = () => {
    state.view = { k: 1, tx: 0, ty: 0 };
    schedule();
  };
  svg.addEventListener("wheel", (evt) => {
    evt.preventDefault();
    const box = svg.getBoundingClientRect();
    zoomAt(Math.exp(-evt.deltaY * 0.0015), evt.clientX - box.left, evt.clientY - box.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (evt) => {
    if (evt.target !== svg) return; // a node or a diamond takes its own click
    drag = { x: evt.clientX, y: evt.clientY, tx: state.view.tx, ty: state.view.ty };
    svg.setPointerCapture(evt.pointerId);
    svg.classList.add("eg-panning");
  });
  svg.addEventListener("pointermove", (evt) => {
    if (!drag) return;
    state.view.tx = drag.tx + evt.clientX - drag.x;
    state.view.ty = drag.ty + evt.clientY - drag.y;
    schedule();
  });
  const endDrag = () => {
    drag = null;
    svg.classList.remove("eg-panning");
  };
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  svg.addEventListener("dblclick", (evt) => {
    if (evt.target === svg) fit();
  });
  for (const [text, title, act] of [
    ["+", "Zoom in", () => zoomAt(1.4, width / 2, height / 2)],
    ["−", "Zoom out", () => zoomAt(1 / 1.4, width / 2, height / 2)],
    ["⤢", "Fit the whole graph", fit],
  ]) {
    const b = htmlEl("button", "eg-button", controls, text);
    b.type = "button";
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", act);
  }

  place();
  state.observer = new ResizeObserver(() => {
    const w = stage.clientWidth;
    if (w && w !== width) {
      width = w;
      place();
    }
  });
  state.observer.observe(stage);
  return () => state.observer && state.observer.disconnect();
}
