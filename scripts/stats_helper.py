"""The one statistics helper of the project's scripts (scipy and numpy, Debian's python3-scipy):
means with Student-t confidence intervals over seeds, and (for the quality protocol, whose outcomes
are not normal) percentile-bootstrap intervals of the mean. Every script that reports an interval uses
mean_ci, so "95% interval" means the same thing in every table and figure.
"""
import math

import numpy as np
from scipy import stats

LEVEL = 0.95  # the interval every table and figure reports
INTERVAL_KIND = "95% t-interval"  # how figures and tables name it
BOOTSTRAP_KIND = "bootstrap 95% interval"  # the quality protocol's percentile bootstrap


def t_quantile(df, level=LEVEL):
    """The two-sided `level` quantile of Student's t with df degrees of freedom (nan for df < 1)."""
    if df < 1:
        return float("nan")
    return float(stats.t.ppf(0.5 + level / 2, df))


def finite(xs):
    """The values of xs that are numbers (None and nan dropped), as a numpy array."""
    return np.array([x for x in xs if x is not None and not math.isnan(x)], dtype=float)


def mean_ci(xs, level=LEVEL):
    """(mean, half-width of the `level` t-interval, n) over the finite values of xs; the
    half-width is nan for fewer than two values."""
    a = finite(xs)
    n = len(a)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = float(a.mean())
    if n < 2:
        return m, float("nan"), n
    return m, t_quantile(n - 1, level) * float(a.std(ddof=1)) / math.sqrt(n), n


def stdev(xs):
    """Sample standard deviation (ddof 1) of the finite values; 0 for fewer than two."""
    a = finite(xs)
    return float(a.std(ddof=1)) if len(a) >= 2 else 0.0


def mean(xs):
    a = finite(xs)
    return float(a.mean()) if len(a) else float("nan")


def mean_bootstrap(values, level=LEVEL):
    """(mean, lo, hi): percentile bootstrap `level` interval of the mean (scipy.stats.bootstrap,
    10000 resamples, fixed random state, so the same values give the same interval); a single
    value or identical values give a zero-width interval."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2 or np.all(v == v[0]):
        return float(v.mean()), float(v.mean()), float(v.mean())
    r = stats.bootstrap((v,), np.mean, confidence_level=level, n_resamples=10000,
                        method="percentile", random_state=np.random.default_rng(12345))
    return float(v.mean()), float(r.confidence_interval.low), float(r.confidence_interval.high)
