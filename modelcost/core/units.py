"""Human-readable numbers: 4.09 G, 97.5 MiB, 1.23 ms."""

from __future__ import annotations

import math

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


def number(value: float | None, digits: int = 4) -> str:
    """A figure people read, the same in the terminal, Markdown and HTML; never exponent notation (JSON keeps
    the plain number). ``digits`` significant digits below 1,000; whole numbers with grouped digits up to a
    million; K/M/G/T/P above (``si``). 22243.7 -> '22,244'; 0.000123456 -> '0.0001235'; 4.5e9 -> '4.50 G';
    20.0 -> '20'; None -> '-'."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e6:
        return si(value)
    if value == 0:
        return "0"
    decimals = min(15, max(0, digits - 1 - math.floor(math.log10(abs(value)))))
    if abs(round(value, decimals)) >= 1000:
        return f"{value:,.0f}"
    text = f"{value:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text
