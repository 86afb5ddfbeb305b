"""Shared test set-up. GPU tests: mark them ``@pytest.mark.gpu``; they are skipped where CUDA is absent."""

from __future__ import annotations

import pytest


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no torch, or a broken one, means no CUDA
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none here)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


requires_cuda = pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU (none here)")
