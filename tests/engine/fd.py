"""Central finite differences, shared by the gradient tests (an independent route to a gradient:
only the forward formula is shared with the engine)."""
import numpy as np

H = 1e-6


def numeric_grad(f, x) -> np.ndarray:
    """∂f/∂x by central differences, entry by entry; f maps an array of x's shape to a float."""
    x = np.array(x, dtype=float)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += H
        xm[idx] -= H
        g[idx] = (f(xp) - f(xm)) / (2 * H)
    return g


def close(a, b, rtol=1e-5, atol=1e-6) -> None:
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol)
