"""What a real browser shows of the app's pages, measured the same way by the e2e tests and the benchmarks
(``benchmarks/app.py``, ``benchmarks/explore.py``): boxes on the first screen, the timeline's drawn labels.

Each function takes a Playwright page already on the app; none asserts, callers decide.
"""

from __future__ import annotations

from typing import Any

# Vega's SVG renderer puts a text mark's items in a group of class "mark-text role-mark"; axis labels live elsewhere.
_LABEL_BOXES = """() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] g.mark-text.role-mark text')]
  .filter(t => t.textContent.trim() && t.getAttribute('opacity') !== '0')
  .map(t => { const b = t.getBoundingClientRect(); return {text: t.textContent, x0: b.left, y0: b.top,
                                                          x1: b.right, y1: b.bottom}; })"""


def playground_first_screen(page) -> dict[str, Any]:
    """Where the playground's answer sits: the viewport's height, the bottom of the two verdict badges, the bottom
    of the changes table's third row (its header and rows are 35 px high), and the page's whole height."""
    return page.evaluate("""() => {
      const main = document.querySelector('[data-testid=stMain]');
      const covers = [...document.querySelectorAll('.gs-cover')].map(e => e.getBoundingClientRect().bottom);
      const grid = [...document.querySelectorAll('[data-testid=stDataFrame]')][0];
      const top = grid ? grid.getBoundingClientRect().top : null;
      const scroller = main.querySelector('[data-testid=stMainBlockContainer]') || main;
      return {viewport: window.innerHeight, verdicts: covers.length, verdicts_bottom: Math.max(0, ...covers),
              third_row_bottom: top === null ? null : top + 36 + 3 * 35,
              page_height: Math.max(main.scrollHeight, scroller.scrollHeight)};
    }""")


def timeline_labels(page) -> list[dict[str, Any]]:
    """The timeline's drawn point labels with their boxes in page pixels."""
    return page.evaluate(_LABEL_BOXES)


def overlaps(boxes: list[dict[str, Any]], tolerance: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes meet by more than ``tolerance`` pixels each way."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if (min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > tolerance
                    and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > tolerance):
                out.append((a["text"], b["text"]))
    return out
