"""The report at the scale of real metric sets (issue 21: readable at 100 metrics).

A simulated file shaped like HANNA (11 systems x 96 stories, 3 raters, 6 traits, 72
metrics) is reported and rendered in headless Chromium at 1,400 px: every plot's tick
labels must be legible at the scale the browser draws the image (font size and the distance
between neighbouring labels, measured in the figure and multiplied by the rendered/natural
width of the image), and no table may be cut without its full version on the page.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import bayesmeta as bm

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: HANNA's six criteria (Chhun et al. 2022).
HANNA_TRAITS = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
#: The smallest legible label on screen, in CSS pixels (about 6.5 pt).
MIN_FONT_PX = 8.5

#: Injected into a *copy* of the page (the report itself has no script): records each
#: image's drawn and natural width once the page has loaded.
MEASURE_JS = """<script>
window.addEventListener('load', function () {
  for (const img of document.images) {
    img.setAttribute('data-drawn-w', img.clientWidth);
    img.setAttribute('data-natural-w', img.naturalWidth);
  }
  document.body.setAttribute('data-measured', '1');
});
</script>"""


def hanna_shaped(random_seed: int = 4):
    """11 systems x 96 items, 3 raters, HANNA's 6 traits, 72 metrics with long names."""
    corr = np.full((6, 6), 0.6)
    np.fill_diagonal(corr, 1.0)
    ds = bm.datasets.simulated(random_seed=random_seed, n_systems=11, n_items=96,
                               n_metrics=72, trait_corr=corr)
    families = ["bertscore_roberta-large", "bartscore_bart-large-cnn", "rouge", "bleurt",
                "moverscore", "chrf", "meteor", "baryscore", "depthscore"]
    names = [f"{families[k % len(families)]}_{['P', 'R', 'F'][k % 3]}_{k:02d}"
             for k in range(72)]
    traits = dict(zip(ds["trait"].values, HANNA_TRAITS, strict=True))
    return ds.assign_coords(metric=names, trait=[traits[t] for t in ds["trait"].values],
                            trait2=[traits[t] for t in ds["trait2"].values])


def _measured_dom(page, tmp_path):
    copy = tmp_path / "measured.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE_JS +
                                                             "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1400,2000", "--virtual-time-budget=20000"]
    return subprocess.run([CHROMIUM, *flags, "--dump-dom", copy.as_uri()], check=True,
                          capture_output=True, timeout=300, text=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian's "
                                              "`chromium`; .ci/run installs it)")
def test_72_metric_report_is_legible_at_1400_px(tmp_path):
    import matplotlib.image as mpimg

    ds = hanna_shaped()
    rep = bm.report(ds, random_seed=1, resampling={"n_resamples": 20}, budget=0,
                    progress=False)  # its estimate (~170 s) is over the default budget
    failed = {r.key: r.error for r in rep.runs if r.status == "failed"}
    assert not failed, failed
    page = rep.save(tmp_path / "hanna.html")
    html = page.read_text(encoding="utf-8")
    # the screenshot at 1,400 px: something drawn, text on it
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1400,6000", f"--screenshot={shot}",
                    page.as_uri()], check=True, capture_output=True, timeout=300)
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[1] == 1400 and img.std() > 0.02 and (img < 0.5).mean() > 0.001
    dom = _measured_dom(page, tmp_path)
    assert 'data-measured="1"' in dom
    images = re.findall(r"<img [^>]*>", dom)
    plots = [i for i in images if 'class="plot"' in i]
    assert len(plots) == sum(len(r.images) for r in rep.runs) >= 10
    for tag in plots:
        attr = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
        drawn, natural = float(attr["data-drawn-w"]), float(attr["data-natural-w"])
        assert natural == float(attr["data-width-px"]) > 0
        scale = drawn / natural
        n = int(attr["data-labels"])
        if n == 0:
            continue
        font = float(attr["data-font-px"]) * scale
        assert font >= MIN_FONT_PX, (attr["alt"], n, font)
        if n > 1:  # neighbouring labels at least one font size apart: no overlap
            gap = float(attr["data-label-px"]) * scale
            assert gap >= font, (attr["alt"], n, gap, font)
    # every metric is on the page; no table is cut without its full version
    for name in ds["metric"].values:
        assert str(name) in html
    blocks = re.findall(r'<div class="table-block" data-rows="(\d+)"\s+data-shown="(\d+)" '
                        r'data-full="(\d+)">', dom)
    assert blocks
    for rows, shown, full in blocks:
        assert int(shown) == int(rows) or int(full) == int(rows), (rows, shown, full)
    assert dom.count("download this table as CSV") == len(blocks)
