"""Reference values for eqakit's judge-agreement statistics (src/eval/agreement.ts), computed
with SciPy and NumPy: Spearman's rho, Pearson's r, the paired percentile bootstrap of rho
(N = 9,999, as OpenEQA's human-alignment study) and the per-annotator table.

The bootstrap draws its resample indices from the same mulberry32 sequence as eqakit
(`seededRandom(seed)`, index = floor(u * n)), reimplemented below, so the interval must agree
to rounding; SciPy's own `scipy.stats.bootstrap` (another generator) is recorded beside it as
an independent check of the method.

Run once: python3 bench/agreement_reference.py > test/fixtures/agreement-reference.json
"""
import json
import warnings
import numpy as np
from scipy import stats


def mulberry32(seed):
    state = seed & 0xFFFFFFFF
    def imul(a, b):
        return (a * b) & 0xFFFFFFFF
    while True:
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = imul(t ^ (t >> 15), t | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        t &= 0xFFFFFFFF
        yield ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296


def lcg_scores(seed, n, noise_of=None, spread=1):
    """Deterministic 1-5 marks (a plain LCG: the data, not the statistics, need no SciPy)."""
    state = seed
    out = []
    for i in range(n):
        state = (1103515245 * state + 12345) % 2**31
        if noise_of is None:
            out.append(1 + state % 5)
        else:
            delta = (state % (2 * spread + 1)) - spread
            out.append(int(min(5, max(1, noise_of[i] + delta))))
    return out


def bootstrap_mulberry(x, y, resamples, seed, confidence):
    n = len(x)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    rng = mulberry32(seed)
    rhos = []
    undefined = 0
    for _ in range(resamples):
        idx = np.array([int(next(rng) * n) for _ in range(n)])
        xs, ys = x[idx], y[idx]
        if np.all(xs == xs[0]) or np.all(ys == ys[0]):
            undefined += 1
            continue
        rhos.append(stats.spearmanr(xs, ys).statistic)
    alpha = (1 - confidence) / 2
    lo, hi = np.percentile(np.sort(np.array(rhos)), [100 * alpha, 100 * (1 - alpha)])
    return [float(lo), float(hi)], undefined


def case(name, x, y, resamples=9999, seed=0, confidence=0.95):
    ci, undefined = bootstrap_mulberry(x, y, resamples, seed, confidence)
    scipy_ci = stats.bootstrap((np.asarray(x, float), np.asarray(y, float)), lambda a, b: stats.spearmanr(a, b).statistic,
                               paired=True, vectorized=False, n_resamples=resamples, method="percentile",
                               confidence_level=confidence, random_state=np.random.default_rng(0)).confidence_interval
    return {
        "name": name, "x": x, "y": y, "resamples": resamples, "seed": seed, "confidence": confidence,
        "spearman": float(stats.spearmanr(x, y).statistic),
        "pearson": float(stats.pearsonr(x, y).statistic),
        "spearmanCi": ci,
        "undefinedResamples": undefined,
        # None where SciPy gives NaN (resamples whose rho is undefined)
        "scipyBootstrapCi": [None if np.isnan(v) else float(v) for v in (scipy_ci.low, scipy_ci.high)],
    }


warnings.simplefilter("ignore")
n = 300
llm = lcg_scores(7, n)
annotators = [lcg_scores(100 + a, n, noise_of=llm, spread=1) for a in range(4)]
human_mean = [sum(a[i] for a in annotators) / 4 for i in range(n)]
cases = [
    case("llm vs mean of 4 annotators (300 items, N=9999)", llm, human_mean),
    case("ties everywhere (20 items, seed 7, 90%)", lcg_scores(3, 20), lcg_scores(4, 20, noise_of=lcg_scores(3, 20), spread=2), resamples=2000, seed=7, confidence=0.9),
    case("small sample with undefined resamples (5 items)", [1, 1, 1, 2, 5], [1, 2, 1, 3, 4], resamples=500, seed=3),
]
per_annotator = []
for a in range(4):
    others = [sum(annotators[b][i] for b in range(4) if b != a) / 3 for i in range(n)]
    per_annotator.append({
        "annotator": str(a),
        "vsOtherHumans": float(stats.spearmanr(annotators[a], others).statistic),
        "vsLlm": float(stats.spearmanr(annotators[a], llm).statistic),
    })
ranks = {"values": [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], "ranks": stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]).tolist()}
print(json.dumps({"cases": cases, "annotators": annotators, "llm": llm, "perAnnotator": per_annotator, "ranks": ranks}, indent=1))
