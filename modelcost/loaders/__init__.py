"""Loaders turn what the user names (an ONNX path, ``file.py:factory``, ``zoo:resnet50``, a TorchScript or
``.pt2`` file) into something the analysis and the benchmarks can use, without reading weight bytes."""

from modelcost.loaders.base import LoadOptions, source_kind

__all__ = ["LoadOptions", "source_kind"]
