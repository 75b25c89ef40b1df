"""Freeze irrCAC's chance-corrected coefficients as reference values (issue 24).

Run ONLY in a throwaway venv (irrCAC pins an old SciPy; the package and its tests never
import it):

    python -m venv /tmp/irr && /tmp/irr/bin/pip install --no-deps irrcac "pandas<3" numpy scipy \
        python-dateutil pytz tzdata six
    /tmp/irr/bin/python tests/results/make_irrcac_reference.py [SUMMEVAL_CSV_FOLDER]

Each entry is ``irrCAC.raw.CAC(ratings, weights=W, digits=15, N=N).METHOD()["est"]`` for
irrCAC's bundled raw datasets (string categories coded 1..q in sorted order), a simulated
panel with 30% missing ratings (written beside this script) and, when a folder of
``summeval_<TRAIT>.csv`` files (1,700 outputs x 3 experts, exported from
``bm.datasets.summeval()``) is given, SummEval. Output: ``irrcac_reference.json``.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from irrCAC import datasets
from irrCAC.raw import CAC

HERE = Path(__file__).resolve().parent
METHODS = {"gwet": "gwet_ac", "fleiss": "fleiss_kappa", "conger": "conger_kappa",
           "bp": "brennan_prediger", "krippendorff": "krippendorff_weighted"}
WEIGHTS = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular",
           "bipolar")


def _coded(df: pd.DataFrame) -> pd.DataFrame:
    cats = sorted(df.stack().dropna().unique().tolist())
    return df.apply(lambda col: col.map({c: float(i + 1) for i, c in enumerate(cats)}))


def panels(summeval: Path | None) -> dict[str, pd.DataFrame]:
    out = {
        "cac_raw4raters": datasets.raw_4raters().astype(float),
        "cac_raw5observers": datasets.raw_5observers().astype(float),
        "cac_ben_gerry": _coded(datasets.raw_ben_gerry()),
        "cac_raw_g1g2": _coded(datasets.raw_g1g2()),
    }
    rng = np.random.default_rng(24)
    latent = rng.normal(size=(200, 1)) + rng.normal(scale=0.8, size=(200, 4))
    y = np.clip(np.round(3 + latent + [0, 0.3, -0.2, 0.1]), 1, 5)
    y[rng.random(y.shape) < 0.3] = np.nan
    missing = pd.DataFrame(y, columns=[f"R{g + 1}" for g in range(4)])
    missing.to_csv(HERE / "agreement_missing30.csv", index=False)
    out["missing30"] = missing
    if summeval is not None:
        for path in sorted(summeval.glob("summeval_*.csv")):
            out[path.stem] = pd.read_csv(path).astype(float)
    return out


def main() -> None:
    summeval = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    rows = []
    frozen = {}
    for name, df in panels(summeval).items():
        if not name.startswith("summeval"):
            frozen[name] = [[None if np.isnan(v) else float(v) for v in row]
                            for row in df.to_numpy(dtype=float)]
        data = df.reset_index(drop=True)
        for weights in WEIGHTS:
            if weights == "ratio" and (data == 0).any().any():
                continue
            for N in (np.inf, 2 * len(data)):
                for method, coefficient in METHODS.items():
                    est = getattr(CAC(data, weights=weights, digits=15, N=N), method)()["est"]
                    rows.append({
                        "panel": name, "coefficient": coefficient, "weights": weights,
                        "population": None if np.isinf(N) else int(N),
                        "value": float(est["coefficient_value"]), "se": float(est["se"]),
                        "low": float(est["confidence_interval"][0]),
                        "high": float(est["confidence_interval"][1]),
                        "pa": float(est["pa"]), "pe": float(est["pe"]),
                        "call": f"CAC(data, weights={weights!r}, digits=15, N={N}).{method}()",
                    })
    meta = {"irrcac_version": version("irrcac"), "numpy": np.__version__,
            "pandas": pd.__version__, "confidence_level": 0.95,
            "note": "pandas < 3 (irrCAC 0.4.4 takes its categories from DataFrame.stack(), "
                    "which keeps NaN under pandas 3 and then counts NaN as a category); "
                    "string categories coded 1..q in sorted order; units with no rating "
                    "dropped by irrCAC; krippendorff_weighted is irrCAC's alpha with these "
                    "weights (identity = nominal, quadratic = interval, ratio = ratio)"}
    (HERE / "irrcac_reference.json").write_text(json.dumps({"meta": meta, "panels": frozen,
                                                            "rows": rows},
                                                           indent=1) + "\n")
    print(f"{len(rows)} reference rows")


if __name__ == "__main__":
    main()
