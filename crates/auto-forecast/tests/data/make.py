"""Writes the accuracy test's series with statsforecast's forecasts of their last points.

Run with statsforecast and statsmodels installed (pip install statsforecast statsmodels):
    python3 crates/auto-forecast/tests/data/make.py
Each <name>.json holds the whole series, its season, period and horizon, the held-out actuals, and
the forecasts of statsforecast's models fitted on the series less its last `horizon` points.
"""

import json
import pathlib

import numpy as np
import pandas as pd
import statsmodels.datasets as datasets
from statsforecast import StatsForecast
from statsforecast.models import AutoARIMA, AutoETS, AutoTheta, SeasonalNaive

HERE = pathlib.Path(__file__).parent

AIR_PASSENGERS = [
    112, 118, 132, 129, 121, 135, 148, 148, 136, 119, 104, 118, 115, 126, 141, 135, 125, 149,
    170, 170, 158, 133, 114, 140, 145, 150, 178, 163, 172, 178, 199, 199, 184, 162, 146, 166,
    171, 180, 193, 181, 183, 218, 230, 242, 209, 191, 172, 194, 196, 196, 236, 235, 229, 243,
    264, 272, 237, 211, 180, 201, 204, 188, 235, 227, 234, 264, 302, 293, 259, 229, 203, 229,
    242, 233, 267, 269, 270, 315, 364, 347, 312, 274, 237, 278, 284, 277, 317, 313, 318, 374,
    413, 405, 355, 306, 271, 306, 315, 301, 356, 348, 355, 422, 465, 467, 404, 347, 305, 336,
    340, 318, 362, 348, 363, 435, 491, 505, 404, 359, 310, 337, 360, 342, 406, 396, 420, 472,
    548, 559, 463, 407, 362, 405, 417, 391, 419, 461, 472, 535, 622, 606, 508, 461, 390, 432,
]


def series():
    yield "air_passengers", AIR_PASSENGERS, 12, 12, "P1M"
    co2 = datasets.co2.load_pandas().data["co2"].resample("MS").mean().interpolate()
    yield "co2", list(co2.values[-240:]), 12, 24, "P1M"
    sunspots = datasets.sunspots.load_pandas().data["SUNACTIVITY"]
    yield "sunspots", list(sunspots.values), None, 10, "P1Y"
    gdp = datasets.macrodata.load_pandas().data["realgdp"]
    yield "realgdp", list(gdp.values), 4, 8, "P3M"
    elnino = datasets.elnino.load_pandas().data.drop(columns="YEAR").values.flatten()
    yield "elnino", list(elnino[-240:]), 12, 12, "P1M"


def main():
    for name, ys, season, horizon, period in series():
        ys = [float(y) for y in ys]
        train = ys[:-horizon]
        frame = pd.DataFrame(
            {"unique_id": name, "ds": np.arange(len(train)), "y": train}
        )
        m = season or 1
        models = [AutoETS(season_length=m), AutoARIMA(season_length=m),
                  AutoTheta(season_length=m), SeasonalNaive(season_length=m)]
        out = StatsForecast(models=models, freq=1).forecast(df=frame, h=horizon)
        forecasts = {
            column: [float(v) for v in out[column].values]
            for column in ["AutoETS", "AutoARIMA", "AutoTheta", "SeasonalNaive"]
        }
        record = {
            "series": ys,
            "season": season,
            "period": period,
            "horizon": horizon,
            "actual": ys[-horizon:],
            "statsforecast": forecasts,
        }
        (HERE / f"{name}.json").write_text(json.dumps(record) + "\n")
        print(name, len(ys), "points")


if __name__ == "__main__":
    main()
