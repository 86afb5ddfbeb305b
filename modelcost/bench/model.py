"""The model as the benchmarks see it: input specs per batch size, the same inputs for every backend, one set
of weights for every backend, and an ONNX file when an ONNX Runtime / TensorRT backend asks for one.

A PyTorch model is instantiated once on the CPU (seeded, so its random weights are the same every run); each
backend gets a copy on its device at its dtype, and the ONNX export is made from that same CPU module, so
every backend computes with the same weights and accuracy can be compared.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.types import TensorSpec
from modelcost.loaders.binding import Bound, bind, call_bound


def to_channels_last(t: Any) -> Any:
    """``t`` in the channels-last layout of its rank: ``channels_last`` for 4-D (Conv2d's weights and activations),
    ``channels_last_3d`` for 5-D (Conv3d's); other ranks as they are. A net of 3-D convs given ``channels_last``
    fails ("required rank 4 tensor to use channels_last format"), as X3D did in the twelfth held-out set."""
    import torch

    fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())
    return t if fmt is None else t.contiguous(memory_format=fmt)


@dataclass
class BenchModel:
    name: str
    kind: str  # "pytorch" | "onnx"
    specs_for: Callable[[int], list[TensorSpec]]
    make_cpu_module: Callable[[], Any] | None = None  # PyTorch: a real fp32 module in eval mode, on the CPU
    onnx_path: Path | None = None  # ONNX models: the file; PyTorch models: the export, once made
    source: str = ""
    seed: int = 0
    export_note: str = ""
    keyword_inputs: bool = False  # call as module(**{spec name: tensor}) (example_inputs gave a dict)
    _module: Any = None
    _copies: OrderedDict[tuple[str, str, bool], Any] = field(default_factory=OrderedDict)
    _inputs: dict[int, tuple[list[Any], list[str]]] = field(default_factory=dict)
    _int_high: dict[str, int] | None = None
    _hash: str | None = None
    export_ahead: Any = None  # bench.export_ahead.ExportAhead: the export being made in a background process
    compile_ahead: Any = None  # bench.compile_ahead.CompileAhead: graphs being compiled in a background process

    # -- inputs --------------------------------------------------------------------------------------------
    def specs(self, batch_size: int) -> list[TensorSpec]:
        return list(self.specs_for(batch_size))

    def batch_problem(self, batch_size: int) -> str | None:
        """A reason when the inputs at ``batch_size`` do not actually carry that batch (a fixed batch dim)."""
        specs = self.specs(batch_size)
        firsts = [s.shape[0] for s in specs if s.shape]
        if firsts and batch_size not in firsts:
            return f"the model's inputs fix the batch dimension at {firsts[0]} (asked for batch {batch_size})"
        return None

    def host_inputs(self, batch_size: int) -> tuple[list[Any], list[str]]:
        """Arrays (seeded: the same for every backend) and notes on what was assumed about them."""
        if batch_size not in self._inputs:
            from modelcost.bench.inputs import make_host_inputs

            specs = self.specs(batch_size)
            self._inputs[batch_size] = make_host_inputs(specs, int_high=self.int_high(), seed=self.seed + batch_size)
        return self._inputs[batch_size]

    def int_high(self) -> dict[str, int]:
        if self._int_high is None:
            from modelcost.bench import inputs

            specs = self.specs(1)
            if all(s.dtype.startswith("float") or s.dtype in ("half", "double", "bfloat16") for s in specs):
                self._int_high = {}
            elif self.kind == "onnx" and self.onnx_path is not None:
                import onnx

                self._int_high = inputs.onnx_int_ranges(onnx.load(str(self.onnx_path), load_external_data=False))
            else:
                self._int_high = inputs.torch_int_ranges(self.cpu_module(), specs, keywords=self.keywords())
        return self._int_high

    def keywords(self) -> list[str] | None:
        """The input names when the module is called by keyword (``loaders.binding``), else None."""
        return [s.name for s in self.specs(1)] if self.keyword_inputs else None

    def call_args(self, tensors: Sequence[Any]) -> Bound:
        """``tensors`` (in spec order) as the module takes them: a tuple, or a dict by input name."""
        return bind(tensors, self.keywords())

    def bind(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` (the module, or its compiled form) as a callable of the inputs in spec order."""
        if not self.keyword_inputs:
            return fn
        names = self.keywords()

        def by_keyword(*tensors: Any) -> Any:
            return call_bound(fn, bind(tensors, names))

        return by_keyword

    # -- PyTorch weights -----------------------------------------------------------------------------------
    def cpu_module(self) -> Any:
        if self.kind != "pytorch" or self.make_cpu_module is None:
            raise ValueError("PyTorch backends need a PyTorch model")
        if self._module is None:
            import torch

            torch.manual_seed(self.seed)
            self._module = self.make_cpu_module().eval()
        return self._module

    def is_conv_net(self) -> bool:
        """Whether the model has 2-D or 3-D convs (cast runs then use channels-last layouts, ``to_channels_last``)."""
        import torch

        return any(isinstance(m, (torch.nn.Conv2d, torch.nn.Conv3d)) for m in self.cpu_module().modules())

    def device_module(self, device: str, dtype: str = "float32", channels_last: bool = False) -> Any:
        """A copy of the CPU module on ``device`` at ``dtype`` (cached: backends that only read it share it;
        at most two copies are kept)."""
        import torch

        key = (device, dtype, channels_last)
        if key in self._copies:
            self._copies.move_to_end(key)
            return self._copies[key]
        while len(self._copies) >= 2:
            self._copies.popitem(last=False)
        mod = device_copy(self.cpu_module(), device, getattr(torch, dtype))
        if channels_last:
            mod = mod._apply(to_channels_last)  # per tensor: Module.to takes one format for 4-D and 5-D alike
        self._copies[key] = mod.eval()
        return self._copies[key]

    def release_device_copies(self) -> None:
        self._copies.clear()

    # -- ONNX ----------------------------------------------------------------------------------------------
    def onnx_file(self, cache_dir: Path) -> Path:
        """The ONNX file: the model itself, or the cached export of the PyTorch model (dynamic batch)."""
        if self.onnx_path is None:
            ahead, self.export_ahead = self.export_ahead, None
            got = ahead.result() if ahead is not None else None
            if got is not None:
                self.onnx_path, self.export_note = got
                return self.onnx_path
            from modelcost.bench.export import export_to_onnx

            self.onnx_path, self.export_note = export_to_onnx(self, cache_dir)
        return self.onnx_path

    def content_hash(self) -> str:
        """sha256 of what determines the computation: the ONNX file (external data by name, size and mtime),
        or the PyTorch module's class, settings (``module_settings``), weights and input specs."""
        if self._hash is None:
            h = hashlib.sha256()
            if self.kind == "onnx" and self.onnx_path is not None:
                hash_onnx_file(h, self.onnx_path)
            else:
                hash_module(h, self.cpu_module(), self.specs(1))
            self._hash = h.hexdigest()
        return self._hash

    def close(self) -> None:
        if self.export_ahead is not None:
            self.export_ahead.stop()
            self.export_ahead = None
        if self.compile_ahead is not None:
            self.compile_ahead.stop()
            self.compile_ahead = None
        self.release_device_copies()
        self._module = None


def device_copy(module: Any, device: str, dtype: Any) -> Any:
    """``copy.deepcopy(module).to(device, dtype)`` without the CPU copy: each parameter and buffer goes straight to
    the device and is cast there (floating-point ones only, as ``Module.to`` does); shared (tied) tensors stay
    shared; the direct copy takes a fraction of the deep copy's time (BENCHMARKS.md, 'Sixth session')."""
    import copy
    import itertools

    import torch

    memo: dict[int, Any] = {}
    for t in itertools.chain(module.parameters(), module.buffers()):
        if id(t) in memo:
            continue
        data = t.detach().to(device=device)
        if data.is_floating_point():
            data = data.to(dtype=dtype)
        memo[id(t)] = (torch.nn.Parameter(data, requires_grad=t.requires_grad)
                       if isinstance(t, torch.nn.Parameter) else data)
    return copy.deepcopy(module, memo)


def hash_onnx_file(h: Any, path: Path) -> None:
    path = Path(path)
    h.update(path.read_bytes())
    for sibling in sorted(path.parent.iterdir()):
        if sibling != path and sibling.is_file() and not sibling.name.endswith(".onnx"):
            st = sibling.stat()
            h.update(f"{sibling.name}:{st.st_size}:{st.st_mtime_ns}".encode())


def hash_module(h: Any, module: Any, specs: list[TensorSpec]) -> None:
    import torch

    h.update(f"{type(module).__module__}.{type(module).__qualname__}|torch {torch.__version__}".encode())
    h.update(repr([(s.name, s.shape[1:], s.dtype) for s in specs]).encode())
    h.update(module_settings(module).encode())
    for name, t in module.state_dict().items():
        h.update(name.encode())
        h.update(repr((tuple(t.shape), str(t.dtype))).encode())
        data = t.detach().contiguous().cpu().reshape(-1)
        h.update(data.view(torch.uint8).numpy() if data.numel() else b"")  # the buffer itself: no copy of it


_PLAIN = (bool, int, float, str, type(None))


def module_settings(module: Any) -> str:
    """What a forward reads besides its tensors, as text for the content hash: each submodule's class and plain
    attributes (flags, sizes, eps: ``vars`` entries of bools, numbers, strings and tuples of them) and each
    transformers config's values (``to_json_string``). Weights and shapes alone named the same export for two
    models that differ by a flag: XLNet with ``use_mems_eval`` off reused the file exported with it on (12 outputs
    more), until the cache entry was deleted by hand."""
    parts, configs = [], {}
    for name, sub in module.named_modules():
        plain = sorted((k, v) for k, v in vars(sub).items() if not k.startswith("_") and (
            isinstance(v, _PLAIN) or isinstance(v, tuple) and all(isinstance(x, _PLAIN) for x in v)))
        parts.append(f"{name}|{type(sub).__qualname__}|{plain!r}")
        config = getattr(sub, "config", None)
        if callable(getattr(config, "to_json_string", None)) and id(config) not in configs:
            configs[id(config)] = config.to_json_string()
    return "\n".join(parts + list(configs.values()))


def from_module(module: Any, specs_for: Callable[[int], list[TensorSpec]], name: str = "model", seed: int = 0,
                keyword_inputs: bool = False) -> BenchModel:
    """A BenchModel of an ``nn.Module`` you already have (library use and tests); ``keyword_inputs``: call it
    as ``module(**{spec name: tensor})``."""
    return BenchModel(name=name, kind="pytorch", specs_for=specs_for, make_cpu_module=lambda: module, seed=seed,
                      keyword_inputs=keyword_inputs)


def from_loaded_torch(loaded: Any, name: str, source: str = "", seed: int = 0) -> BenchModel:
    """From ``modelcost.loaders.torch_loader.LoadedTorch``: ``instantiate(device, dtype)`` and
    ``input_specs(batch_size)``."""
    model = BenchModel(name=name, kind="pytorch", specs_for=loaded.input_specs,
                       make_cpu_module=lambda: loaded.instantiate("cpu"), source=source, seed=seed,
                       keyword_inputs=bool(getattr(loaded, "keyword_inputs", False)))
    high = dict(getattr(loaded, "input_high", None) or {})
    if high:  # the loader knows the vocab sizes (zoo, example_inputs): no probe needed
        model._int_high = high
    return model


def from_onnx_path(path: Path, specs_for: Callable[[int], list[TensorSpec]], name: str, source: str = "",
                   seed: int = 0) -> BenchModel:
    return BenchModel(name=name, kind="onnx", specs_for=specs_for, onnx_path=Path(path), source=source, seed=seed)
