"""Freeze R psych::ICC's six ICC forms (Shrout & Fleiss) on SummEval's expert ratings (each
trait: 1,700 outputs x 3 experts) and on the complete outputs of the 30%-missing panel of
``irrcac_reference.json`` into ``tests/results/icc_psych_reference.csv``.

Run outside the tests (needs R with psych; Debian: ``apt-get install r-cran-psych``)::

    python tests/results/make_icc_reference.py

The R call, per panel: ``psych::ICC(y, alpha = 0.05, lmer = FALSE)`` on an outputs x
raters matrix without missing values; the csv records the R and psych versions.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import bayesmeta as bm

HERE = Path(__file__).resolve().parent
R_CODE = r"""
args <- commandArgs(trailingOnly = TRUE)
out <- NULL
for (f in args[-1]) {
  y <- as.matrix(read.csv(f, check.names = FALSE))
  r <- psych::ICC(y, alpha = 0.05, lmer = FALSE)$results
  out <- rbind(out, data.frame(panel = sub("[.]csv$", "", basename(f)), type = r$type,
                               ICC = r$ICC, F = r$F, df1 = r$df1, df2 = r$df2,
                               lower = r$`lower bound`, upper = r$`upper bound`))
}
out$R <- R.version.string
out$psych <- as.character(packageVersion("psych"))
write.csv(out, args[1], row.names = FALSE)
"""


def panels() -> dict[str, np.ndarray]:
    data = bm.datasets.summeval()
    out = {}
    for t in data["trait"].values:
        out[f"summeval_{t}"] = data["rating"].sel(trait=t).stack(
            u=("system", "item")).transpose("u", "rater").values
    ref = json.loads((HERE / "irrcac_reference.json").read_text())
    y = np.array([[np.nan if v is None else v for v in row]
                  for row in ref["panels"]["missing30"]], dtype=float)
    out["missing30_complete"] = y[~np.isnan(y).any(axis=1)]
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, y in panels().items():
            f = Path(tmp) / f"{name}.csv"
            pd.DataFrame(y, columns=[f"r{j}" for j in range(y.shape[1])]).to_csv(
                f, index=False)
            files.append(str(f))
        script = Path(tmp) / "icc.R"
        script.write_text(R_CODE)
        target = HERE / "icc_psych_reference.csv"
        subprocess.run(["Rscript", str(script), str(target), *files], check=True)
    print(pd.read_csv(target).to_string())


if __name__ == "__main__":
    main()
