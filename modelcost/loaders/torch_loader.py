"""Load a PyTorch model for analysis - on the meta device, so that no weight memory is allocated - and
know how to build it for real when a benchmark needs it.

Sources (``load_torch(source, options)``):

* ``zoo:NAME`` - the built-in zoo (``modelcost.loaders.zoo.ZOO``);
* ``torchvision:NAME`` - ``torchvision.models.get_model(NAME, weights=None)``, input 3x224x224;
* ``path/to/file.py:factory`` and ``package.module:factory`` - a callable returning an ``nn.Module``, called
  under ``torch.device("meta")``. Inputs come from ``--input-shape NAME=1x3x224x224[:DTYPE]`` (names as in
  ``forward``; float32 unless a dtype is given, int64 for token ids - see ``guess_dtype``) or from an
  ``example_inputs`` function beside the factory::

      def example_inputs(batch_size: int = 1):      # the batch_size parameter is optional
          return [torch.randn(batch_size, 3, 32, 32),              # a tensor: its shape, dtype and values
                  ((batch_size, 16), torch.int64, 1000)]           # or (shape, dtype[, high]): ints in [0, high)

  It may also return a dict {forward argument name: item}: a dict is bound by keyword wherever the model is
  called, so optional arguments can be left out (a list binds positionally, in ``forward``'s order). Without a
  ``batch_size`` parameter, dim 0 of each input is taken as the batch dim and set to ``--batch-size``.
  ``--input-shape`` overrides a shape.
* TorchScript files (``.pt``, ``.pth``, ``.ts``, ...): ``torch.jit.load(path, map_location="meta")``;
  inputs from ``--input-shape`` (dtypes as for factories);
* ``.pt2`` programs from ``torch.export.save``: inputs as exported (re-export with dynamic shapes to change the
  batch size);
* pickled whole modules (``torch.save(model)``): only with ``trust_pickle`` (``--trust-pickle``), because
  unpickling runs code from the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import sys
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.core.lazy import require
from modelcost.core.text import strip_ansi
from modelcost.core.trace import trace
from modelcost.core.types import TensorSpec
from modelcost.loaders import buffer_values
from modelcost.loaders.attention import attention_for_counting, set_attention
from modelcost.loaders.base import LoadOptions, factory_file, source_kind
from modelcost.loaders.binding import Bound, bind, call_bound
from modelcost.loaders.input_dtypes import guess_dtype, token_high, with_dtypes
from modelcost.loaders.shapes import bind_shape


@dataclass
class LoadedTorch:
    name: str
    source: str
    format: str  # "pytorch" | "torchscript" | "torch.export"
    module: Any  # torch.nn.Module on the meta device, eval mode
    inputs: list[TensorSpec]  # bound, concrete
    batch_size: int | None = None
    file_size_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    module_types: dict[str, str] = field(default_factory=dict)  # qualified name -> class to show (.pt2)
    input_high: dict[str, int] = field(default_factory=dict)  # integer inputs take values in [0, high)
    build: Callable[[str], Any] | None = field(default=None, repr=False)  # device -> real module
    specs_at: Callable[[int | None], list[TensorSpec]] | None = field(default=None, repr=False)
    examples: dict[str, Any] = field(default_factory=dict, repr=False)  # real example tensors (CPU)
    keyword_inputs: bool = False  # call as module(**{name: tensor}): the inputs skip some forward arguments
    # buffer name -> its value (CPU) where the build kept it: small buffers made from Python data (buffer_values)
    buffer_values: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def keywords(self) -> list[str] | None:
        """The input names when ``module`` is called by keyword (``loaders.binding``), else None (positional)."""
        return [s.name for s in self.inputs] if self.keyword_inputs else None

    def bind(self, tensors: Sequence[Any]) -> Bound:
        """``tensors`` (in ``inputs`` order) in the form the module takes them (``binding.bind``)."""
        return bind(tensors, self.keywords)

    def call(self, module: Any, tensors: Sequence[Any]) -> Any:
        """``module`` applied to ``tensors`` (in ``inputs`` order), bound by keyword when the inputs need it."""
        return call_bound(module, self.bind(tensors))

    def instantiate(self, device: str = "cpu", dtype: Any = None) -> Any:
        """A real module with random init (factories, zoo) or the file's weights, on ``device``, eval mode."""
        if self.build is None:
            raise ModelcostError(f"{self.source}: cannot be instantiated on a real device")
        module = self.build(device)
        if dtype is not None:
            module = module.to(dtype)
        return module.eval()

    def input_specs(self, batch_size: int | None = None) -> list[TensorSpec]:
        """The inputs at another batch size (None: as loaded)."""
        if batch_size is None:
            return list(self.inputs)
        if self.specs_at is not None:
            return self.specs_at(batch_size)
        return [_rebatch(s, batch_size) for s in self.inputs]

    def make_inputs(self, batch_size: int | None = None, device: str = "cpu", dtype: Any = None) -> tuple[Any, ...]:
        """Realistic inputs (seeded): randn for floats, ids in [0, high) for integers, True for bools; an
        example tensor from ``example_inputs`` is reused when its shape fits. ``dtype`` casts float inputs."""
        torch = require("torch")
        gen = torch.Generator().manual_seed(0)
        tensors = []
        for spec in self.input_specs(batch_size):
            tdtype = getattr(torch, spec.dtype)
            example = self.examples.get(spec.name)
            if example is not None and tuple(example.shape) == tuple(spec.shape):
                t = example.clone()
            elif tdtype.is_floating_point or tdtype.is_complex:
                t = torch.randn(spec.shape, generator=gen, dtype=tdtype)
            elif tdtype == torch.bool:
                t = torch.ones(spec.shape, dtype=tdtype)
            else:
                high = self.input_high.get(spec.name, 2)
                t = torch.randint(1 if high > 2 else 0, high, spec.shape, generator=gen, dtype=tdtype)
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            tensors.append(t.to(device))
        return tuple(tensors)

    def meta_inputs(self) -> tuple[Any, ...]:
        torch = require("torch")
        return tuple(torch.empty(s.shape, dtype=getattr(torch, s.dtype), device="meta") for s in self.inputs)


def load_torch(source: str, options: LoadOptions) -> LoadedTorch:
    require("torch")
    trace("torch imported")
    loaders = {"zoo": _load_zoo, "torchvision": _load_torchvision, "factory": _load_factory,
               "torch.export": _load_exported, "torchscript_or_pickle": _load_script_or_pickle}
    load = loaders.get(source_kind(source))
    if load is None:
        raise ModelcostError(f"{source}: not a PyTorch model (expected zoo:NAME, file.py:factory, .pt, .pt2)")
    return _with_attention(load(source, options), options.attn_implementation)


def _with_attention(loaded: LoadedTorch, requested: str | None) -> LoadedTorch:
    """The attention implementation the count runs (``attention.attention_for_counting``, said in a note); an
    explicit ``--attn-implementation`` is also set on every real build (the benchmarks)."""
    note = attention_for_counting(loaded.module, requested, loaded.source)
    if note:
        loaded.notes.append(note)
    build = loaded.build
    if requested and build is not None:
        def build_with(device: str) -> Any:
            module = build(device)
            set_attention(module, requested, loaded.source)
            return module

        loaded.build = build_with
    return loaded


# ---------------------------------------------------------------------------------------------------
# shapes


def _rebatch(spec: TensorSpec, batch_size: int) -> TensorSpec:
    if not spec.shape:
        return spec
    return TensorSpec(spec.name, (batch_size, *spec.shape[1:]), spec.dtype)


def bind_inputs(source: str, specs: list[TensorSpec], options: LoadOptions, dims: dict[str, int] | None = None,
                default_batch: int | None = 1) -> list[TensorSpec]:
    """Bind symbolic dims (batch -> --batch-size or ``default_batch``; others from ``dims`` or --input-shape)
    and refuse --input-shape names the model does not have."""
    names = [s.name for s in specs]
    unknown = sorted(set(options.input_shapes) - set(names))
    if unknown:
        raise ModelcostError(f"{source}: no input named {', '.join(unknown)}; its inputs are {', '.join(names)}")
    bound = dict(dims or {})
    batch = options.batch_size if options.batch_size is not None else default_batch
    return with_dtypes([bind_shape(s, batch, options.input_shapes, bound) for s in specs], options)


def forward_names(module: Any) -> list[str]:
    """Positional parameter names of ``module.forward`` (TorchScript: from its schema)."""
    schema = getattr(getattr(module, "forward", None), "schema", None)
    if schema is not None:
        return [a.name for a in schema.arguments[1:]]
    try:
        params = inspect.signature(module.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def needs_keywords(source: str, module: Any, input_names: list[str]) -> bool:
    """True when ``input_names`` are not the first positional arguments of ``forward`` in order (an optional
    argument was left out, or the order differs): then the module must be called by keyword. A name that
    ``forward`` does not take (and no ``**kwargs`` to catch it) is refused in one line."""
    names = forward_names(module)
    if input_names == names[:len(input_names)]:
        return False
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return True
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = [n for n in input_names if n not in params or params[n].kind is inspect.Parameter.POSITIONAL_ONLY]
    if unknown and not takes_any:
        raise ModelcostError(f"{source}: forward() has no argument {', '.join(map(repr, unknown))}; it takes "
                             f"{', '.join(names) or 'none'}")
    return True


def shapes_from_options(source: str, module: Any, options: LoadOptions, why: str,
                        notes: list[str] | None = None, high: dict[str, int] | None = None) -> list[TensorSpec]:
    """Inputs given only by --input-shape: every forward argument without a default needs one. Its dtype is the
    one given (NAME=DIMS:DTYPE), else ``guess_dtype`` (int64 for token ids, said in ``notes``), else float32."""
    names = forward_names(module)
    required = _required_names(module, names)
    missing = [n for n in required if n not in options.input_shapes]
    if missing:
        example = " ".join(f"{{input_shapes}} {n}={'1x128:int64' if guess_dtype(module, n)[1] else '1x3x224x224'}"
                           for n in missing)
        raise ModelcostError(f"{source}: {why}; give the input shapes, e.g. {example}", fields="input_shapes")
    specs = []
    for n in (n for n in names if n in options.input_shapes):
        dtype, reason = guess_dtype(module, n)
        if n not in options.input_dtypes and reason is not None:
            if notes is not None:
                notes.append(f"input {n!r} taken as int64 token ids ({reason}); give another dtype with "
                             f"--input-shape {n}=DIMS:float32")
            if high is not None and (vocab := token_high(module, n)):
                high[n] = vocab
        specs.append(TensorSpec(n, options.input_shapes[n], dtype))
    specs = bind_inputs(source, specs, options)
    if options.batch_size is not None:
        specs = [_rebatch(s, options.batch_size) for s in specs]
    return specs


def _required_names(module: Any, names: list[str]) -> list[str]:
    schema = getattr(getattr(module, "forward", None), "schema", None)
    if schema is not None:
        return [a.name for a in schema.arguments[1:] if not a.has_default_value()]
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return names
    return [n for n in names if params[n].default is inspect.Parameter.empty]


# ---------------------------------------------------------------------------------------------------
# building on meta


def one_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):  # the user's code called sys.exit(): say so, never exit with its code silently
        return f"sys.exit({exc.code!r})"
    text = " ".join(strip_ansi(str(exc)).split())
    return f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__


def build_on(factory: Callable[[], Any], device: str, source: str, mode: Any = None) -> Any:
    """Call ``factory`` with ``device`` as the default device (and ``mode`` entered: ``build_meta``); a failure is
    the user's, in one line."""
    torch = require("torch")
    try:
        with torch.device(device), mode if mode is not None else contextlib.nullcontext():
            module = factory()
    except ModelcostError:
        raise
    except (Exception, SystemExit) as exc:  # the user's factory raised: say so in one line
        raise ModelcostError(f"{source}: the factory raised {one_line(exc)[:400]}") from exc
    if not isinstance(module, torch.nn.Module):
        raise ModelcostError(f"{source}: the factory returned {type(module).__name__}, not a torch.nn.Module")
    return module


def build_meta(factory: Callable[[], Any], source: str, notes: list[str]) -> tuple[Any, dict[str, Any]]:
    """(``factory``'s module on meta in eval mode, the values of its small buffers by name: ``buffer_values``)."""
    recorder = buffer_values.record_while_building()
    module = build_on(factory, "meta", source, recorder)
    known = buffer_values.of_buffers(module, recorder)  # before on_meta moves a real device's buffers
    return on_meta(module, notes), known


def on_meta(module: Any, notes: list[str]) -> Any:
    """Eval mode, on meta; a factory that placed weights on a real device is moved (and told so)."""
    tensors = [*module.parameters(), *module.buffers()]
    if any(t.device.type != "meta" for t in tensors):
        notes.append("the factory placed tensors on a real device; they were moved to meta for counting")
        module = module.to("meta")
    return module.eval()


def _load_zoo(source: str, options: LoadOptions) -> LoadedTorch:
    from modelcost.loaders.zoo import ZOO

    name = source.removeprefix("zoo:")
    entry = ZOO.get(name)
    if entry is None:
        raise ModelcostError(f"{source}: no such zoo model; choose one of {', '.join(ZOO)} (see 'modelcost zoo')")
    module, known = build_meta(entry.factory, source, notes := [])
    inputs = bind_inputs(source, list(entry.inputs), options, entry.dims)

    def build(device: str) -> Any:
        return build_on(entry.factory, device, source)

    return LoadedTorch(name, source, "pytorch", module, inputs, inputs[0].shape[0] if inputs else None,
                       notes=notes, input_high=dict(entry.input_high), build=build, buffer_values=known)


def _load_torchvision(source: str, options: LoadOptions) -> LoadedTorch:
    tv = require("torchvision")
    name = source.removeprefix("torchvision:")
    if name not in tv.models.list_models():
        raise ModelcostError(f"{source}: torchvision has no model {name!r}; see torchvision.models.list_models()")

    def factory() -> Any:
        return tv.models.get_model(name, weights=None)

    module, known = build_meta(factory, source, notes := [])
    image = TensorSpec("x", ("batch", 3, "height", "width"), "float32")
    inputs = bind_inputs(source, [image], options, {"height": 224, "width": 224})
    return LoadedTorch(name, source, "pytorch", module, inputs, inputs[0].shape[0], notes=notes,
                       build=lambda device: build_on(factory, device, source), buffer_values=known)


# ---------------------------------------------------------------------------------------------------
# factories


def _import_target(source: str, target: str) -> Any:
    if factory_file(target):
        path = Path(target)
        if not path.is_file():
            raise ModelcostError(f"{source}: no such file {target}")
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
        spec = importlib.util.spec_from_file_location(f"_modelcost_factory_{path.stem}_{digest}", path)
        if spec is None or spec.loader is None:
            raise ModelcostError(f"{source}: cannot import {target} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # the user's file raised on import
            sys.modules.pop(spec.name, None)
            raise ModelcostError(f"{source}: importing {target} raised {one_line(exc)[:400]}") from exc
        finally:
            sys.path.remove(str(path.resolve().parent))
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise ModelcostError(
            f"{source}: cannot import module {target!r} ({exc}); is it installed or on PYTHONPATH?"
        ) from exc
    except (Exception, SystemExit) as exc:  # the user's module raised on import
        raise ModelcostError(f"{source}: importing {target} raised {one_line(exc)[:400]}") from exc


def _load_factory(source: str, options: LoadOptions) -> LoadedTorch:
    target, _, attr = source.rpartition(":")
    if not target or not attr:
        raise ModelcostError(f"{source}: expected path/to/file.py:factory or package.module:factory")
    namespace = _import_target(source, target)
    factory = getattr(namespace, attr, None)
    if factory is None or not callable(factory):
        found = sorted(n for n, v in vars(namespace).items() if callable(v) and not n.startswith("_"))[:12]
        raise ModelcostError(f"{source}: {target} has no callable {attr!r}; it has {', '.join(found) or 'none'}")
    notes: list[str] = []
    module, known = build_meta(factory, source, notes)
    examples_fn = getattr(namespace, "example_inputs", None)
    if callable(examples_fn):
        specs_at = _example_specs(source, examples_fn, forward_names(module), options)
        inputs, high, examples = specs_at(options.batch_size)
    else:
        high, examples = {}, {}
        inputs = shapes_from_options(source, module, options, "it has no example_inputs()", notes, high)
        specs_at = None
    batch = inputs[0].shape[0] if inputs and inputs[0].shape else None
    return LoadedTorch(
        attr, source, "pytorch", module, inputs, batch, notes=notes, input_high=high, examples=examples,
        build=lambda device: build_on(factory, device, source),
        specs_at=(lambda b: specs_at(b)[0]) if specs_at else None,
        keyword_inputs=needs_keywords(source, module, [s.name for s in inputs]), buffer_values=known,
    )


def zip_kind(path: Path) -> str | None:
    """'torchscript' | 'pickle' for torch's zip archives; None when not a zip (legacy pickle or garbage)."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, ValueError, EOFError, NotImplementedError):
        return None  # not a zip, or a damaged one (a member name that is not UTF-8, a bad header): not an archive
    if any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
        return "torchscript"
    return "pickle" if any(n.endswith("data.pkl") for n in names) else None


def _example_specs(source: str, fn: Callable[..., Any], names: list[str], options: LoadOptions) -> Callable[
        [int | None], tuple[list[TensorSpec], dict[str, int], dict[str, Any]]]:
    """Turn ``example_inputs`` into batch size -> (specs, integer highs, example tensors)."""
    torch = require("torch")
    takes_batch = "batch_size" in inspect.signature(fn).parameters

    def at(batch_size: int | None) -> tuple[list[TensorSpec], dict[str, int], dict[str, Any]]:
        try:
            raw = fn(batch_size=batch_size or 1) if takes_batch else fn()
        except (Exception, SystemExit) as exc:  # the user's example_inputs raised
            raise ModelcostError(f"{source}: example_inputs() raised {one_line(exc)[:400]}") from exc
        items = list(raw.items()) if isinstance(raw, dict) else list(zip(names, raw, strict=False))
        if not isinstance(raw, dict) and len(raw) > len(names):
            raise ModelcostError(f"{source}: example_inputs() returned {len(raw)} inputs; forward takes {len(names)}")
        if isinstance(raw, dict):
            items.sort(key=lambda kv: names.index(kv[0]) if kv[0] in names else len(names))
        specs, high, examples = [], {}, {}
        for name, item in items:
            if isinstance(item, torch.Tensor):
                shape, dtype = tuple(item.shape), item.dtype
                if item.device.type != "meta":
                    examples[name] = item.detach().cpu()
                    if not (dtype.is_floating_point or dtype == torch.bool) and item.numel():
                        high[name] = int(item.max()) + 1
            else:
                try:
                    shape, dtype = tuple(int(d) for d in item[0]), item[1]
                except (TypeError, ValueError, IndexError) as exc:
                    raise ModelcostError(f"{source}: example_inputs() item {name!r} must be a tensor or "
                                         f"(shape, dtype[, high]), got {item!r}") from exc
                dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
                if len(item) > 2:
                    high[name] = int(item[2])
            if batch_size is not None and not takes_batch and shape:
                shape = (batch_size, *shape[1:])
            specs.append(TensorSpec(name, shape, str(dtype).removeprefix("torch.")))
        given = options.input_shapes  # examples are examples: --input-shape replaces them freely
        unknown = sorted((set(given) | set(options.input_dtypes)) - {s.name for s in specs})
        if unknown:
            raise ModelcostError(f"{source}: no input named {', '.join(unknown)}; its inputs are "
                                 f"{', '.join(s.name for s in specs)}")
        specs = [TensorSpec(s.name, given[s.name], s.dtype) if s.name in given else s for s in specs]
        specs = with_dtypes(specs, options)
        if batch_size is not None:
            specs = [_rebatch(s, batch_size) if s.name in given else s for s in specs]
        examples = {n: t for n, t in examples.items()
                    if any(s.name == n and s.shape == tuple(t.shape) and s.dtype == str(t.dtype).removeprefix("torch.")
                           for s in specs)}
        return specs, high, examples

    return at


# ---------------------------------------------------------------------------------------------------
# files


def _file(source: str) -> Path:
    path = Path(source)
    if not path.is_file():
        raise ModelcostError(f"{source}: no such file")
    return path


def _load_script_or_pickle(source: str, options: LoadOptions) -> LoadedTorch:
    torch = require("torch")
    path = _file(source)
    notes: list[str] = []
    if zip_kind(path) == "torchscript":
        fmt = "torchscript"

        def build(device: str) -> Any:
            try:
                with warnings.catch_warnings():  # "torch.jit.load is deprecated": the user's file is what it is
                    warnings.simplefilter("ignore", DeprecationWarning)
                    return torch.jit.load(str(path), map_location=device)
            except Exception as exc:  # a damaged file
                raise ModelcostError(f"{source}: cannot load as TorchScript: {one_line(exc)[:300]}") from exc

        notes.append("TorchScript: module hooks do not run inside TorchScript, so layers are aten ops of the root")
    else:
        fmt = "pytorch"
        _refuse_untrusted_pickle(source, path, options)

        def build(device: str) -> Any:
            try:
                obj = torch.load(str(path), map_location=device, weights_only=False)
            except Exception as exc:  # a damaged file
                raise ModelcostError(f"{source}: cannot unpickle: {one_line(exc)[:300]}") from exc
            if not isinstance(obj, torch.nn.Module):
                raise ModelcostError(f"{source}: holds a {type(obj).__name__}, not a torch.nn.Module")
            return obj

    module = build("meta").eval()
    inputs = shapes_from_options(source, module, options, "a saved model does not record its input shapes", notes)
    return LoadedTorch(path.stem, source, fmt, module, inputs, inputs[0].shape[0] if inputs else None,
                       file_size_bytes=path.stat().st_size, notes=notes, build=build,
                       keyword_inputs=needs_keywords(source, module, [s.name for s in inputs]))


def _refuse_untrusted_pickle(source: str, path: Path, options: LoadOptions) -> None:
    if options.trust_pickle:
        return
    with path.open("rb") as f:
        magic = f.read(2)
    if zip_kind(path) is None and not magic.startswith(b"\x80"):
        raise ModelcostError(f"{source}: not a PyTorch file (neither TorchScript nor a torch.save archive)")
    torch = require("torch")
    try:
        obj = torch.load(str(path), map_location="meta", weights_only=True)
    except Exception:  # noqa: BLE001 - not loadable without running its code: a pickled module, or garbage
        raise ModelcostError(
            f"{source}: a pickled PyTorch file (not TorchScript); unpickling executes code from the file, so "
            "modelcost loads it only if you trust its source and pass {trust_pickle}", fields="trust_pickle") from None
    raise ModelcostError(
        f"{source}: holds only weights ({type(obj).__name__}), no architecture; write a factory "
        "(file.py:make_model) that builds the model, or save it with torch.jit.save / torch.export.save"
    )


def _load_exported(source: str, options: LoadOptions) -> LoadedTorch:
    torch = require("torch")
    path = _file(source)

    def load() -> Any:
        try:
            return torch.export.load(str(path))
        except Exception as exc:  # not a torch.export archive, or damaged
            raise ModelcostError(f"{source}: cannot load as a torch.export program: {one_line(exc)[:300]}") from exc

    program = load()
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    specs = []
    for name in program.graph_signature.user_inputs:
        val = placeholders[name].meta.get("val")
        if val is None or not isinstance(val, torch.Tensor):
            raise ModelcostError(f"{source}: input {name!r} is not a tensor; only tensor inputs are supported")
        shape = tuple(int(d) if isinstance(d, int) else str(d) for d in val.shape)
        specs.append(TensorSpec(name, shape, str(val.dtype).removeprefix("torch.")))
    inputs = bind_inputs(source, specs, options, default_batch=None)
    if options.batch_size is not None:
        inputs = [_rebatch(s, options.batch_size) for s in inputs]
    for spec, exported in zip(inputs, specs, strict=True):
        if any(isinstance(d, int) and d != g for d, g in zip(exported.shape, spec.shape, strict=True)):
            raise ModelcostError(f"{source}: input {spec.name!r} was exported with the static shape "
                                 f"{list(exported.shape)}; re-export with dynamic_shapes to analyse {list(spec.shape)}")
    types = {}
    for node in program.graph.nodes:
        for path_name, cls in (node.meta.get("nn_module_stack") or {}).values():
            types[path_name] = str(cls).rsplit(".", 1)[-1].strip("'>")

    def build(device: str, prog: Any = None) -> Any:
        prog = prog if prog is not None else load()
        try:
            module = torch.export.unflatten(prog)
        except Exception:  # noqa: BLE001 - unflattening is best effort; the flat module runs the same ops
            module = prog.module()
        return module.to(device)

    meta_module = build("meta", program)
    del program  # the real weights read from the file are not kept while counting
    notes = ["torch.export: weights are read from the file to build the module, then moved to meta"]
    return LoadedTorch(path.stem, source, "torch.export", meta_module, inputs, inputs[0].shape[0] if inputs else None,
                       file_size_bytes=path.stat().st_size, notes=notes, module_types=types, build=build)
