"""Figures sized by their data for the report page (issue 21: readable at 100 metrics).

Every figure a section returns passes through :func:`figure_png` before it reaches the page:
its tick labels get one fixed font size, its height grows with the number of labels (one
:data:`PER_LABEL_IN` per label) and its width is capped so the PNG is shown unscaled in the
page's column; a colour bar keeps a fixed height instead of running the figure's length; a
numeric axis with more ticks than fit is thinned. The function also *measures* the result:
the tick labels' font size and the smallest distance between neighbouring labels, in the
PNG's pixels, so a test can check legibility at the page's rendered scale.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

__all__ = ["DPI", "FONT_PT", "MAX_WIDTH_IN", "PER_LABEL_IN", "figure_png", "fit_figure"]

#: Resolution of every PNG on the page.
DPI = 110
#: Font size of tick labels (points): 7.5 pt is 11.5 px at :data:`DPI`.
FONT_PT = 7.5
#: Vertical room per tick label (inches): 0.16 in is 17.6 px, above the label's height.
PER_LABEL_IN = 0.16
#: The widest figure (inches): 9.4 in is 1,034 px, inside the page's 1,068 px column.
MAX_WIDTH_IN = 9.4
#: The tallest colour bar (inches).
COLORBAR_IN = 3.0


def _is_colorbar(ax: Any) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _named(labels: list[Any]) -> list[Any]:
    return [t for t in labels if t.get_text()]


def _numeric(labels: list[Any]) -> bool:
    try:
        [float(t.get_text().replace("\u2212", "-")) for t in labels]
    except ValueError:
        return False
    return True


def fit_figure(fig: Any) -> None:
    """Resize ``fig`` to its labels (in place): fixed tick-label font, height per label,
    width capped at :data:`MAX_WIDTH_IN`, numeric x ticks thinned to fit, colour bars at
    most :data:`COLORBAR_IN` tall."""
    axes = [ax for ax in fig.axes if not _is_colorbar(ax)]
    if not axes:
        return
    w, h = (float(v) for v in fig.get_size_inches())
    need_h, need_w = 0.0, w
    for ax in axes:
        ys, xs = _named(ax.get_yticklabels()), _named(ax.get_xticklabels())
        for t in ys + xs:
            t.set_fontsize(FONT_PT)
        if ax.get_title():
            ax.title.set_fontsize(10)
        need_h = max(need_h, len(ys) * PER_LABEL_IN + 1.8)
        vertical = xs and abs(xs[0].get_rotation() % 180 - 90) < 1
        if vertical and not _numeric(xs):
            need_w = max(need_w, len(xs) * PER_LABEL_IN + 3.0)
    n_max = max(len(_named(ax.get_yticklabels())) for ax in axes)
    # many labels: the height is the labels' (a plot's own guess may be much taller);
    # few: the plot's own height, at least the labels'
    height = need_h if n_max >= 10 else max(h, need_h)
    fig.set_size_inches(min(need_w, MAX_WIDTH_IN), height)
    w = min(need_w, MAX_WIDTH_IN)
    for ax in axes:  # a numeric axis (ranks) keeps every k-th tick when they crowd
        xs = _named(ax.get_xticklabels())
        room = w * ax.get_position().width
        if xs and _numeric(xs) and len(xs) * FONT_PT / 72 * 1.8 > room:
            step = int(np.ceil(len(xs) * FONT_PT / 72 * 1.8 / max(room, 0.5)))
            ticks = ax.get_xticks()
            keep = [(p, t.get_text()) for k, (p, t) in enumerate(zip(ticks,
                                                                     ax.get_xticklabels(),
                                                                     strict=False))
                    if k % step == 0]
            ax.set_xticks([p for p, _ in keep], [s for _, s in keep], fontsize=FONT_PT)
    try:
        fig.tight_layout()
    except Exception:  # a layout that cannot be tightened is still drawn
        pass
    fig_h = float(fig.get_size_inches()[1])
    for cax in fig.axes:
        if _is_colorbar(cax):
            pos = cax.get_position()
            new_h = min(pos.height, COLORBAR_IN / fig_h)
            cax.set_position([pos.x0, pos.y1 - new_h, pos.width, new_h])


def _measure(fig: Any, scale: float) -> dict[str, Any]:
    """Tick-label count, font size and the smallest distance between neighbouring labels,
    in the saved PNG's pixels (``scale``: PNG pixels per display pixel)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    n, font, gap = 0, [], []
    for ax in fig.axes:
        if _is_colorbar(ax):
            continue
        for labels, axis in ((_named(ax.get_yticklabels()), 1),
                             (_named(ax.get_xticklabels()), 0)):
            if not labels:
                continue
            n = max(n, len(labels))
            font += [t.get_fontsize() * DPI / 72 for t in labels]
            if len(labels) > 1:
                boxes = [t.get_window_extent(renderer) for t in labels]
                centres = np.sort([(b.y0 + b.y1) / 2 if axis else (b.x0 + b.x1) / 2
                                   for b in boxes])
                gap.append(float(np.diff(centres).min()) * scale)
    return {"n_labels": n, "font_px": float(min(font)) if font else float("nan"),
            "label_px": float(min(gap)) if gap else float("nan")}


def figure_png(fig: Any) -> tuple[str, dict[str, Any]]:
    """A figure, fitted to its labels (:func:`fit_figure`), as a base64 PNG data URI and
    its measured labels (``n_labels``, ``font_px``, ``label_px``, ``width_px``,
    ``height_px``); the figure is closed afterwards."""
    import matplotlib.pyplot as plt

    fit_figure(fig)
    info = _measure(fig, DPI / fig.dpi)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    data = buf.getvalue()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    info.update(width_px=width, height_px=height)
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), info
