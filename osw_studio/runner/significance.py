"""How sure a score is: Wilson intervals, pass@k and pass^k, and the paired tests that compare two runs.

All of it is plain arithmetic on the outcomes of a results folder, with no dependency: a suite of a few
hundred tasks is small, and each function is checked against values worked out by hand in the tests.

- :func:`wilson`: the 95% Wilson score interval of a rate (better than the normal one for small counts
  and rates near 0 or 1). A fractional score counts as that fraction of a success.
- :func:`pass_at_k` and :func:`pass_hat_k`: from ``n`` runs of a task with ``c`` successes, the chance
  that at least one (pass@k) or all (pass^k) of ``k`` runs drawn without replacement succeed.
- :func:`mcnemar_exact`: the exact two-sided McNemar test on the tasks two folders share, from the
  tasks only one of them solved.
- :func:`paired_bootstrap`: an interval of the mean score difference over shared tasks (fractional
  scores), resampling tasks with a fixed seed so a report is reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal."""


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` as ``(low, high)`` fractions; ``(0, 0)`` when n is 0.

    >>> [round(x, 4) for x in wilson(8, 10)]
    [0.4902, 0.9433]
    >>> wilson(0, 0)
    (0.0, 0.0)
    """
    if n <= 0:
        return (0.0, 0.0)
    p = min(1.0, max(0.0, successes / n))
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` of the ``n`` runs (``c`` of them successes) succeeds.

    >>> pass_at_k(4, 1, 2)
    0.5
    """
    if k > n:
        raise ValueError(f"k={k} is more than the {n} runs")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` of ``k`` runs drawn from the ``n`` (``c`` successes) succeed (pass^k).

    >>> round(pass_hat_k(4, 3, 2), 4)
    0.5
    """
    if k > n:
        raise ValueError(f"k={k} is more than the {n} runs")
    return math.comb(c, k) / math.comb(n, k)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """The exact two-sided McNemar p-value from the discordant pairs (tasks only A, only B solved).

    Under no difference each discordant pair falls either way with chance 1/2, so the smaller count
    follows Binomial(only_a + only_b, 1/2); the p-value doubles its lower tail (at most 1).

    >>> round(mcnemar_exact(1, 7), 4)
    0.0703
    >>> mcnemar_exact(0, 0)
    1.0
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    low = min(only_a, only_b)
    tail: float = sum(math.comb(n, i) for i in range(low + 1)) / float(2**n)
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class Bootstrap:
    """A paired bootstrap of the mean score difference (B minus A).

    Attributes:
        mean: The observed mean difference.
        low: The 2.5th percentile of the resampled means.
        high: The 97.5th percentile.
        rounds: How many resamples.
    """

    mean: float
    low: float
    high: float
    rounds: int

    @property
    def significant(self) -> bool:
        """Whether the 95% interval leaves out 0."""
        return self.low > 0 or self.high < 0


def paired_bootstrap(
    differences: Sequence[float], *, rounds: int = 10_000, seed: int = 0
) -> Bootstrap | None:
    """Resample the per-task differences with replacement; None when there are none.

    >>> b = paired_bootstrap([1.0, 1.0, 1.0])
    >>> (b.mean, b.low, b.high, b.significant)
    (1.0, 1.0, 1.0, True)
    """
    n = len(differences)
    if n == 0:
        return None
    rng = random.Random(seed)
    values = list(differences)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(rounds))
    low = means[int(0.025 * (rounds - 1))]
    high = means[math.ceil(0.975 * (rounds - 1))]
    return Bootstrap(mean=sum(values) / n, low=low, high=high, rounds=rounds)
