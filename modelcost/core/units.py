"""Human-readable numbers: 4.09 G, 97.5 MiB, 1.23 ms."""

from __future__ import annotations

_SI = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")]
_BIN = [(1 << 50, "PiB"), (1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]


def si(value: float | int | None, digits: int = 2) -> str:
    """4089184256 -> '4.09 G'. None -> '-'."""
    if value is None:
        return "-"
    for scale, suffix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}f} {suffix}"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def binary_bytes(value: int | float | None, digits: int = 2) -> str:
    """102228128 -> '97.49 MiB'."""
    if value is None:
        return "-"
    for scale, suffix in _BIN:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}f} {suffix}"
    return f"{int(value)} B"


def ms(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f} ms"
