"""The random Stream every drawn thing uses: a generator's parameters, a question file's draws, a
concept question's shuffled choices. Keyed by what is drawn (a generator's name, version, seed, …),
so the same key gives the same numbers in every process, Python and numpy version."""
from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np


class Stream:
    """A stable stream of random integers: BLAKE2b of (key, counter), the same in every process,
    Python and numpy version (numpy's distribution methods may change between releases)."""

    def __init__(self, *key: Any):
        self._key = "\x1f".join(map(str, key)).encode()
        self._n = 0
        self._keyed = hashlib.blake2b(self._key + b"\x1e", digest_size=8)    # the key hashed once, copied per draw

    def bits64(self) -> int:
        h = self._keyed.copy()
        h.update(b"%d" % self._n)
        self._n += 1
        return int.from_bytes(h.digest(), "big")

    def integer(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi] (inclusive), by rejection: no modulo bias."""
        span = hi - lo + 1
        if span <= 0:
            raise ValueError(f"empty range [{lo}, {hi}]")
        limit = (1 << 64) - (1 << 64) % span
        while True:
            v = self.bits64()
            if v < limit:
                return lo + v % span

    def choice(self, seq: Any) -> Any:
        seq = list(seq)
        return seq[self.integer(0, len(seq) - 1)]

    def shuffle(self, seq: Any) -> list:
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, seq: Any, k: int) -> list:
        return self.shuffle(seq)[:k]

    def chance(self, numerator: int, denominator: int) -> bool:
        return self.integer(1, denominator) <= numerator

    def ints(self, lo: int, hi: int, shape: tuple[int, ...], nonzero: bool = False) -> np.ndarray:
        span, count = hi - lo + 1, math.prod(shape)     # integer(lo, hi) per entry, inlined: the same draws
        if span <= 0 and count:
            raise ValueError(f"empty range [{lo}, {hi}]")
        limit = (1 << 64) - (1 << 64) % span if count else 0
        copy, n, from_bytes, vals = self._keyed.copy, self._n, int.from_bytes, []
        for _ in range(count):
            while True:                 # bits64(), inlined: the same hash of (key, counter) per draw
                h = copy()
                h.update(b"%d" % n)
                n += 1
                v = from_bytes(h.digest(), "big")
                if v < limit and (lo + v % span != 0 or not nonzero):
                    break
            vals.append(lo + v % span)
        self._n = n
        return np.array(vals, dtype=float).reshape(shape)

    def decimals(self, lo: float, hi: float, step: float, shape: tuple[int, ...], nonzero: bool = False) -> np.ndarray:
        """Values k·step in [lo, hi]: few significant digits by construction."""
        k = self.ints(round(lo / step), round(hi / step), shape, nonzero)
        return np.round(k * step, 10)
