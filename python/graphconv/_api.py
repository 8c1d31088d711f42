"""The package's API over libgraphir (see the package docstring)."""
from __future__ import annotations

import collections
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import ffi, lib

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, bytes, bytearray, memoryview]

# ---- errors ---------------------------------------------------------------


class Error(Exception):
    """A failure reported by libgraphir.

    Attributes:
        code: the stable name of the error code ("syntax", "unsupported-op", ...;
            ``graphconv errors`` lists them).
        exit_status: the exit status graphconv's CLI gives for it (1 usage,
            2 bad input, 3 unsupported content, 4 check failed, 5 I/O).
        where: file, location (JSON pointer, line:column, ...) and node the
            error is about, joined with ": ", or None.
        message: the message without its location.
    """

    def __init__(self, text: str, code: str, exit_status: int, where: Optional[str] = None,
                 message: Optional[str] = None):
        super().__init__(text)
        self.code = code
        self.exit_status = exit_status
        self.where = where
        self.message = message if message is not None else text


class UsageError(Error):
    """A call the library cannot act on: an unknown option or format, a wrong argument."""


class BadInputError(Error):
    """A model file that is malformed or inconsistent."""


class UnsupportedError(Error):
    """Content the library or the target format cannot express faithfully."""


class CheckFailedError(Error):
    """Two models that should compute the same outputs do not."""


class IOError(Error):  # noqa: A001 - graphconv.IOError, as the CLI's exit status 5
    """A file that cannot be read or written."""


_BY_EXIT = {1: UsageError, 2: BadInputError, 3: UnsupportedError, 4: CheckFailedError, 5: IOError}


def _text(p) -> Optional[str]:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else None


def _error_from(err) -> Error:
    code = err.code
    name = _text(lib.gir_status_name(code)) or str(code)
    status = lib.gir_status_exit_code(code)
    formatted = lib.gir_error_format(err)
    try:
        text = _text(formatted) if formatted != ffi.NULL else name
    finally:
        if formatted != ffi.NULL:
            lib.free(formatted)
    where_parts = [_text(p) for p in (err.file, err.location, err.node) if p != ffi.NULL]
    if err.node != ffi.NULL:
        where_parts[-1] = f"node '{where_parts[-1]}'"
    message = _text(err.message) or _text(lib.gir_status_describe(code))
    lib.gir_error_clear(err)
    cls = _BY_EXIT.get(status, Error)
    return cls(text, name, status, ": ".join(where_parts) or None, message)


class _Err:
    """A gir_error for one call; raise_if raises the library's failure."""

    def __init__(self):
        self.err = ffi.new("gir_error *")

    def check(self, status: int) -> None:
        if status != 0:
            if self.err.code == 0:
                self.err.code = status
            raise _error_from(self.err)


def _usage(msg: str) -> UsageError:
    return UsageError(msg, "bad-argument", 1, None, msg)


# ---- types ----------------------------------------------------------------

_NP_OF = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "bool": np.bool_,
}


def _dtype_name(dt: int) -> str:
    return _text(lib.gir_dtype_name(dt))


def _shape_tuple(shape) -> Optional[Tuple[Optional[int], ...]]:
    if shape == ffi.NULL or shape.rank < 0:
        return None
    return tuple(int(shape.dims[i]) if shape.dims[i] >= 0 else None for i in range(shape.rank))


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: its name, shape (None for an unknown
    dimension; None for an unknown rank) and element type ("float32", ...)."""
    name: str
    shape: Optional[Tuple[Optional[int], ...]]
    dtype: str


@dataclass(frozen=True)
class Node:
    """One operator application: canonical operator name (or, for a node
    kept opaque, its name in ``opaque_format``), input and output value
    names (None for an omitted optional input) and attributes."""
    name: str
    op: str
    inputs: Tuple[Optional[str], ...]
    outputs: Tuple[str, ...]
    attrs: Dict[str, Any]
    opaque_format: Optional[str] = None


def _tensor_array(t, copy: bool = True) -> np.ndarray:
    """The data of a gir_tensor as a numpy array (loaded if lazy, copied once)."""
    e = _Err()
    data = ffi.new("const void **")
    e.check(lib.gir_tensor_load(t, data, e.err))
    dt = _dtype_name(lib.gir_tensor_dtype(t))
    shape = _shape_tuple(lib.gir_tensor_shape(t)) or ()
    nbytes = int(lib.gir_tensor_nbytes(t))
    raw = ffi.buffer(data[0], nbytes) if nbytes else b""
    if dt == "bfloat16":
        # bfloat16 is the top half of a float32: widened exactly.
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        arr = bits.view(np.float32)
    elif dt in _NP_OF:
        arr = np.frombuffer(raw, dtype=np.dtype(_NP_OF[dt]).newbyteorder("<"))
        if copy:
            arr = arr.copy()
    else:
        raise UnsupportedError(f"a tensor of element type {dt} has no numpy form", "unsupported", 3)
    return arr.reshape(shape)


def _attr_value(a) -> Any:
    t = lib.gir_attr_get_type(a)
    n = lib.gir_attr_list_len(a)
    if t == 0:
        return int(lib.gir_attr_int(a))
    if t == 1:
        return float(lib.gir_attr_float(a))
    if t == 2:
        return bool(lib.gir_attr_int(a))
    if t == 3:
        return _text(lib.gir_attr_string(a))
    if t == 4:
        p = lib.gir_attr_ints(a)
        return [int(p[i]) for i in range(n)]
    if t == 5:
        p = lib.gir_attr_floats(a)
        return [float(p[i]) for i in range(n)]
    if t == 6:
        p = lib.gir_attr_strings(a)
        return [_text(p[i]) for i in range(n)]
    if t == 7:
        tensor = lib.gir_attr_tensor(a)
        return _tensor_array(tensor) if tensor != ffi.NULL else None
    return None


def _value_info(v) -> TensorInfo:
    return TensorInfo(_text(lib.gir_value_name(v)), _shape_tuple(lib.gir_value_shape(v)),
                      _dtype_name(lib.gir_value_dtype(v)))


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(x) for x in value)
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _input_shapes_text(shapes: Mapping[str, Sequence[int]]) -> str:
    parts = []
    for name, dims in shapes.items():
        parts.append(f"{name}:" + ",".join(str(int(d)) for d in dims))
    return ";".join(parts)


class _Options:
    """A gir_options built from keyword arguments (batch_size=4 is the
    library's batch-size=4), collecting the writer's notes."""

    def __init__(self, options: Mapping[str, Any]):
        self.ptr = ffi.gc(lib.gir_options_new(), lib.gir_options_free)
        if self.ptr == ffi.NULL:
            raise MemoryError("graphconv: out of memory")
        self.notes: List[str] = []
        e = _Err()
        for key, value in options.items():
            if value is None:
                continue
            if key == "input_shapes" and isinstance(value, Mapping):
                value = _input_shapes_text(value)
                key = "input-shape"
            e.check(lib.gir_options_set(self.ptr, key.replace("_", "-").encode(), _option_text(value).encode(),
                                        e.err))

        @ffi.callback("void(void *, const char *)")
        def on_note(_ctx, note):
            self.notes.append(_text(note))

        self._on_note = on_note  # kept alive as long as the options
        lib.gir_options_set_note_handler(self.ptr, on_note, ffi.NULL)


def _fspath(p: PathLike) -> bytes:
    return os.fsencode(os.fspath(p))


# ---- models ---------------------------------------------------------------


class _Parameters(Mapping):
    """name -> numpy array of a model's weights and constants, loaded only
    when asked for (and then released in the library: the array is a copy)."""

    def __init__(self, model: "Model"):
        self._model = model
        self._values = {}
        g = model._g
        for i in range(lib.gir_graph_value_count(g)):
            v = lib.gir_graph_value(g, i)
            if lib.gir_value_tensor(v) != ffi.NULL:
                self._values[_text(lib.gir_value_name(v))] = v

    def __getitem__(self, name: str) -> np.ndarray:
        v = self._values[name]
        t = lib.gir_value_tensor(v)
        arr = _tensor_array(t)
        lib.gir_tensor_unload(t)
        return arr

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<graphconv parameters: {len(self)} tensors>"


class Model:
    """A model read by :func:`load`: its graph in graphconv's canonical
    operators, with lazily loaded weights.  Use it in a ``with`` block or
    call :meth:`close` to release the files it reads weights from at once;
    otherwise that happens when it is garbage collected."""

    def __init__(self, graph, source: Optional[str], fmt: Optional[str]):
        self._g = graph
        self._source = source
        self._format = fmt
        self._sessions: Dict[int, Any] = {}
        self._lock = threading.Lock()

    # lifetime
    def close(self) -> None:
        """Frees the graph and its runtime sessions now."""
        with self._lock:
            # Sessions first: they use the graph.
            for s in self._sessions.values():
                ffi.release(s)
            self._sessions.clear()
            if self._g is not None:
                ffi.release(self._g)
                self._g = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _graph(self):
        if self._g is None:
            raise _usage("graphconv: the model is closed")
        return self._g

    # description
    @property
    def name(self) -> Optional[str]:
        """The graph's name, when the file gives one."""
        return _text(lib.gir_graph_name(self._graph()))

    @property
    def format(self) -> Optional[str]:
        """The format the model was read as ("onnx", "nnabla", ...)."""
        return self._format

    @property
    def inputs(self) -> List[TensorInfo]:
        """The graph inputs a caller feeds (weights are not inputs)."""
        g = self._graph()
        return [_value_info(lib.gir_graph_input(g, i)) for i in range(lib.gir_graph_input_count(g))]

    @property
    def outputs(self) -> List[TensorInfo]:
        g = self._graph()
        return [_value_info(lib.gir_graph_output(g, i)) for i in range(lib.gir_graph_output_count(g))]

    @property
    def nodes(self) -> List[Node]:
        """Every node, in the graph's (topological) order."""
        g = self._graph()
        out = []
        for i in range(lib.gir_graph_node_count(g)):
            n = lib.gir_graph_node(g, i)
            ins = []
            for k in range(lib.gir_node_input_count(n)):
                v = lib.gir_node_input(n, k)
                ins.append(_text(lib.gir_value_name(v)) if v != ffi.NULL else None)
            outs = tuple(_text(lib.gir_value_name(lib.gir_node_output(n, k)))
                         for k in range(lib.gir_node_output_count(n)))
            attrs = {}
            for k in range(lib.gir_node_attr_count(n)):
                a = lib.gir_node_attr(n, k)
                attrs[_text(lib.gir_attr_name(a))] = _attr_value(a)
            out.append(Node(_text(lib.gir_node_name(n)), _text(lib.gir_node_op(n)), tuple(ins), outs, attrs,
                            _text(lib.gir_node_opaque_format(n)) if lib.gir_node_is_opaque(n) else None))
        return out

    def op_histogram(self) -> Dict[str, int]:
        """Operator -> node count, most frequent first (ties by name)."""
        g = self._graph()
        c = collections.Counter(_text(lib.gir_node_op(lib.gir_graph_node(g, i)))
                                for i in range(lib.gir_graph_node_count(g)))
        return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def parameters(self) -> Mapping[str, np.ndarray]:
        """Weights and constants by name, each loaded when first read."""
        self._graph()
        return _Parameters(self)

    @property
    def metadata(self) -> Dict[str, Any]:
        """Format extras: "source.format", "producer", notes of the reader..."""
        g = self._graph()
        meta = {}
        for i in range(lib.gir_graph_meta_count(g)):
            a = lib.gir_graph_meta(g, i)
            meta[_text(lib.gir_attr_name(a))] = _attr_value(a)
        return meta

    def __repr__(self) -> str:
        if self._g is None:
            return "<graphconv.Model (closed)>"
        return (f"<graphconv.Model {self._format or '?'} {self._source or ''}: "
                f"{lib.gir_graph_node_count(self._g)} nodes, {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs>")

    # writing
    def save(self, path: PathLike, format: Optional[str] = None, **options: Any) -> List[str]:
        """Writes the model to ``path`` (atomically: a temporary file renamed
        when complete, companion weight files too).  ``format`` defaults to
        the one the extension names.  ``options`` are the library's write
        options with ``_`` for ``-`` (``force=True``, ``opset=13``,
        ``param_format="protobuf"``...; ``graphconv formats`` lists them).
        Returns the writer's notes (what it wrote in another form without
        changing the meaning)."""
        opts = _Options(options)
        e = _Err()
        e.check(lib.gir_save(self._graph(), _fspath(path), format.encode() if format else ffi.NULL, opts.ptr,
                             e.err))
        return opts.notes

    # running
    def _session(self, threads: int):
        s = self._sessions.get(threads)
        if s is None:
            e = _Err()
            out = ffi.new("gir_session **")
            e.check(lib.gir_session_new(self._graph(), threads, out, e.err))
            s = ffi.gc(out[0], lib.gir_session_free)
            self._sessions[threads] = s
        return s

    def run(self, inputs: Mapping[str, np.ndarray], threads: int = 1) -> Dict[str, np.ndarray]:
        """Runs the model on graphconv's reference CPU runtime.

        ``inputs`` maps every graph input's name to an array of its element
        type and shape.  Returns output name -> array (each copied once out
        of the runtime).  A model keeps one runtime session per thread count,
        so repeated runs do not reload weights; runs of one model are
        serialised."""
        if not isinstance(threads, int) or not 1 <= threads <= 256:
            raise _usage(f"graphconv: threads must be an integer from 1 to 256, not {threads!r}")
        with self._lock:
            g = self._graph()
            wanted = self.inputs
            names = {i.name for i in wanted}
            unknown = [k for k in inputs if k not in names]
            if unknown:
                raise _usage("graphconv: the model has no input named " + ", ".join(repr(k) for k in unknown)
                             + " (inputs: " + ", ".join(repr(n.name) for n in wanted) + ")")
            missing = [i.name for i in wanted if i.name not in inputs]
            if missing:
                raise _usage("graphconv: no data given for input " + ", ".join(repr(n) for n in missing))
            s = self._session(threads)
            e = _Err()
            for info in wanted:
                arr = np.asarray(inputs[info.name])
                want = _NP_OF.get(info.dtype)
                if want is not None and arr.dtype != np.dtype(want):
                    raise _usage(f"graphconv: input '{info.name}' is {info.dtype}; got an array of {arr.dtype}")
                t = _new_tensor(info.name, arr)
                try:
                    e.check(lib.gir_session_set_input_named(s, info.name.encode(), t, e.err))
                finally:
                    lib.gir_tensor_unref(t)
            e.check(lib.gir_session_run(s, e.err))
            result = {}
            for i in range(lib.gir_session_output_count(s)):
                name = _text(lib.gir_value_name(lib.gir_graph_output(g, i)))
                result[name] = _tensor_array(lib.gir_session_output(s, i))
            return result


def load(source: Source, format: Optional[str] = None, params: Union[PathLike, bytes, None] = None,
         **options: Any) -> Model:
    """Reads a model from a path or from bytes.

    ``format`` is a registry name ("onnx", "nnabla", "mxnet", "nnvm", "tvm",
    "lightnet", "relayviz"); by default it is detected from the content,
    then the extension.  ``options`` are the library's read options with
    ``_`` for ``-``: ``params="w.params"``, ``batch_size=4``,
    ``input_shapes={"data": (1, 3, 224, 224)}``, ``executor="runtime"``...
    ``params`` is the companion weights file of formats that keep weights
    beside the model (MXNet/NNVM/TVM ``.params``, LightNet ``.wts``,
    RelayViz); by default it is found beside the model's path.  From bytes
    (``source`` and ``params`` both bytes), the format is detected from the
    content, every tensor is loaded, and nothing stays on disk."""
    if params is not None and not isinstance(params, (bytes, bytearray, memoryview)):
        options["params"] = params
    opts = _Options(options)
    e = _Err()
    out = ffi.new("gir_graph **")
    fmt = format.encode() if format else ffi.NULL
    if isinstance(source, (bytes, bytearray, memoryview)):
        buf = ffi.from_buffer(source)
        pbuf, psize = ffi.NULL, 0
        if isinstance(params, (bytes, bytearray, memoryview)):
            pbuf, psize = ffi.from_buffer(params), len(params)
        e.check(lib.gir_load_memory(buf, len(buf), pbuf, psize, fmt, opts.ptr, out, e.err))
        src_name = None
    else:
        e.check(lib.gir_load(_fspath(source), fmt, opts.ptr, out, e.err))
        src_name = os.fspath(source)
    g = ffi.gc(out[0], lib.gir_graph_free)
    meta_fmt = None
    for i in range(lib.gir_graph_meta_count(g)):
        a = lib.gir_graph_meta(g, i)
        if _text(lib.gir_attr_name(a)) == "source.format" and lib.gir_attr_get_type(a) == 3:
            meta_fmt = _text(lib.gir_attr_string(a))
    return Model(g, src_name, format or meta_fmt)


# ---- formats --------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """A format this build of libgraphir knows, with the options its reader
    and writer take (name -> one-sentence description), beside the
    options every format takes (:func:`common_options`).  Pass them to
    :func:`load` and :meth:`Model.save` with ``_`` for ``-``."""
    name: str
    description: str
    can_read: bool
    can_write: bool
    read_options: Dict[str, str]
    write_options: Dict[str, str]


def _option_docs(get) -> Dict[str, str]:
    key = ffi.new("const char **")
    doc = ffi.new("const char **")
    out = {}
    k = 0
    while get(k, key, doc):
        out[_text(key[0])] = _text(doc[0])
        k += 1
    return out


def formats() -> List[Format]:
    """Every format of the library, in registry order."""
    return [Format(_text(lib.gir_format_name(i)), _text(lib.gir_format_description(i)),
                   bool(lib.gir_format_can_read(i)), bool(lib.gir_format_can_write(i)),
                   _option_docs(lambda k, key, doc, i=i: lib.gir_format_option(i, False, k, key, doc)),
                   _option_docs(lambda k, key, doc, i=i: lib.gir_format_option(i, True, k, key, doc)))
            for i in range(lib.gir_format_count())]


def common_options() -> Dict[str, str]:
    """The options every format takes (params, batch-size, input-shape,
    force, ...), name -> description."""
    return _option_docs(lib.gir_common_option)


# ---- checks and conversions -----------------------------------------------


@dataclass(frozen=True)
class OutputComparison:
    """How one output of model B agrees with model A's (the reference):
    a mismatch is an element with |b - a| > atol + rtol * |a|."""
    name: str
    elements: int
    max_abs_error: float
    max_rel_error: float
    cosine: float
    mismatches: int
    nan_inf_disagreements: int

    @property
    def passed(self) -> bool:
        return self.mismatches == 0 and self.nan_inf_disagreements == 0


@dataclass(frozen=True)
class CheckResult:
    """What a check found: ``method`` is "run" (both models ran on the same
    inputs and ``outputs`` compares them) or "structural" (they could not
    both run: graphs and weights were compared; ``why`` says why)."""
    passed: bool
    method: str
    verdict: Optional[str]
    report: Optional[str]
    outputs: List[OutputComparison]
    atol: float
    rtol: float
    seed: int
    why: Optional[str] = None


@dataclass
class ConversionReport:
    """What :func:`convert` did: the fields of ``graphconv batch --report``."""
    input: str
    output: str
    source_format: Optional[str]
    target_format: Optional[str]
    status: str
    nodes: int = 0
    opaque_nodes: int = 0
    ops: Dict[str, int] = field(default_factory=dict)
    parameters: int = 0
    parameter_elements: int = 0
    parameter_bytes: int = 0
    check: Optional[CheckResult] = None
    notes: List[str] = field(default_factory=list)
    wall_ms: float = 0.0


def _model(x: Union["Model", PathLike], what: str) -> Tuple["Model", bool]:
    """A Model for x (loaded when a path is given; the flag says so)."""
    if isinstance(x, Model):
        return x, False
    if isinstance(x, (str, bytes, bytearray, memoryview)) or isinstance(x, os.PathLike):
        return load(x), True
    raise _usage(f"graphconv: {what} must be a graphconv.Model, a path or bytes, not {type(x).__name__}")


class _CheckOptions:
    """A gir_check_options with its input tensors kept alive."""

    def __init__(self, atol: float, rtol: float, seed: int, threads: int, per_node: bool,
                 inputs: Optional[Mapping[str, np.ndarray]], allow_structural: bool = False):
        self.o = ffi.new("gir_check_options *")
        lib.gir_check_options_init(self.o)
        self.o.atol = float(atol)
        self.o.rtol = float(rtol)
        self.o.seed = int(seed)
        if not isinstance(threads, int) or not 1 <= threads <= 256:
            raise _usage(f"graphconv: threads must be an integer from 1 to 256, not {threads!r}")
        self.o.threads = threads
        self.o.per_node = bool(per_node)
        self.o.allow_structural = bool(allow_structural)
        self._keep = []
        self._tensors = []
        if inputs:
            names = [ffi.new("char[]", k.encode()) for k in inputs]
            tensors = [_new_tensor(k, np.asarray(v)) for k, v in inputs.items()]
            self._tensors = tensors
            self._keep = names
            self._names = ffi.new("const char *[]", names)
            self._arr = ffi.new("gir_tensor *[]", tensors)
            self.o.n_feeds = len(tensors)
            self.o.feed_names = self._names
            self.o.feed_tensors = self._arr

    def close(self) -> None:
        for t in self._tensors:
            lib.gir_tensor_unref(t)
        self._tensors = []


def _result_from(r) -> CheckResult:
    import json
    js = json.loads(_text(r.json)) if r.json != ffi.NULL else {}
    outs = [OutputComparison(o.get("name", ""), int(o.get("elements", 0)), float(o.get("max_abs", 0.0)),
                             float(o.get("max_rel", 0.0)), float(o.get("cosine", 0.0)),
                             int(o.get("mismatches", 0)), int(o.get("nan_inf_disagree", 0)))
            for o in js.get("outputs", [])]
    method = {1: "run", 2: "structural"}.get(r.method, "none")
    return CheckResult(bool(r.passed), method, _text(r.verdict), _text(r.report), outs,
                       float(js.get("atol", 0.0)), float(js.get("rtol", 0.0)), int(js.get("seed", 0)),
                       _text(r.why))


def check(a: Union["Model", PathLike], b: Union["Model", PathLike], atol: float = 1e-4, rtol: float = 1e-3,
          inputs: Optional[Mapping[str, np.ndarray]] = None, seed: int = 0, threads: int = 1,
          per_node: bool = False) -> CheckResult:
    """Runs model ``a`` (the reference) and ``b`` on the same inputs and
    compares their outputs: what ``graphconv check A B`` prints.

    Inputs not given are seeded (floats uniform in [0, 1), from ``seed``).
    Returns the comparison whether or not the models agree (see
    ``.passed``); raises :class:`Error` when a model cannot be read or run."""
    ma, own_a = _model(a, "a")
    try:
        mb, own_b = _model(b, "b")
    except BaseException:
        if own_a:
            ma.close()
        raise
    opts = _CheckOptions(atol, rtol, seed, threads, per_node, inputs)
    r = ffi.new("gir_check_result *")
    try:
        e = _Err()
        st = lib.gir_check_models(ma._graph(), mb._graph(), opts.o, r, e.err)
        if st != 0 and r.method == 0:
            e.check(st)
        lib.gir_error_clear(e.err)
        return _result_from(r)
    finally:
        lib.gir_check_result_clear(r)
        opts.close()
        if own_a:
            ma.close()
        if own_b:
            mb.close()


def _new_tensor(name: str, arr: np.ndarray):
    """A new gir_tensor holding a copy of arr (the caller unrefs it)."""
    dt = _dtype_name_of(arr, name)
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    if arr.ndim > 8:
        raise _usage(f"graphconv: input '{name}' has rank {arr.ndim}; at most 8")
    shape = ffi.new("gir_shape *")
    shape.rank = arr.ndim
    for k, d in enumerate(arr.shape):
        shape.dims[k] = d
    t = ffi.new("gir_tensor **")
    e = _Err()
    e.check(lib.gir_tensor_create(lib.gir_dtype_from_name(dt.encode()), shape, ffi.from_buffer(arr), arr.nbytes,
                                  t, e.err))
    return t[0]


def _dtype_name_of(arr: np.ndarray, name: str) -> str:
    for dt, np_type in _NP_OF.items():
        if arr.dtype == np.dtype(np_type):
            return dt
    raise _usage(f"graphconv: input '{name}' is an array of {arr.dtype}, which the runtime does not take")


def convert(src: Source, dst: PathLike, to: Optional[str] = None, check: bool = True,
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None, atol: float = 1e-4, rtol: float = 1e-3,
            seed: int = 0, allow_structural: bool = False, from_format: Optional[str] = None,
            read_options: Optional[Mapping[str, Any]] = None, **options: Any) -> ConversionReport:
    """Converts ``src`` (a path or bytes) into ``dst``, like ``graphconv SRC
    DST [--to TO] [--check]``.

    ``to`` defaults to the format ``dst``'s extension names; ``options`` are
    write options (``force=True``, ``opset=13``, ...), ``read_options`` and
    ``input_shapes`` go to the reader.  With ``check`` (the default) the
    written model is read back and run beside the source on the same seeded
    inputs; the output appears only when they agree (else
    :class:`CheckFailedError`, whose ``.result`` holds the comparison).  A
    model the runtime cannot run is compared by structure and weights only
    with ``allow_structural=True``.  Returns a :class:`ConversionReport`."""
    t0 = time.monotonic()
    ropts = dict(read_options or {})
    if input_shapes:
        ropts["input_shapes"] = input_shapes
    model = load(src, format=from_format, **ropts)
    try:
        fmt = to
        wopts = _Options(options)
        e = _Err()
        g = model._graph()
        result = None
        if check:
            result = _checked_save(model, dst, fmt, wopts, atol, rtol, seed, allow_structural)
        else:
            e.check(lib.gir_save(g, _fspath(dst), fmt.encode() if fmt else ffi.NULL, wopts.ptr, e.err))
        nodes = model.nodes
        params = model.parameters
        n_elem = n_bytes = 0
        for v in params._values.values():
            t = lib.gir_value_tensor(v)
            shape = _shape_tuple(lib.gir_tensor_shape(t)) or ()
            n_elem += int(np.prod(shape, dtype=np.int64)) if shape else 1
            n_bytes += int(lib.gir_tensor_nbytes(t))
        return ConversionReport(
            input=os.fspath(src) if not isinstance(src, (bytes, bytearray, memoryview)) else "<bytes>",
            output=os.fspath(dst), source_format=model.format, target_format=fmt or _format_for(dst),
            status="ok", nodes=len(nodes), opaque_nodes=sum(1 for n in nodes if n.opaque_format),
            ops=model.op_histogram(), parameters=len(params), parameter_elements=n_elem,
            parameter_bytes=n_bytes, check=result, notes=list(wopts.notes),
            wall_ms=(time.monotonic() - t0) * 1000.0)
    finally:
        model.close()


def _format_for(path: PathLike) -> Optional[str]:
    p = lib.gir_format_for_extension(_fspath(path))
    return _text(p)


def _checked_save(model: "Model", dst: PathLike, fmt: Optional[str], wopts: "_Options", atol: float,
                  rtol: float, seed: int, allow_structural: bool) -> CheckResult:
    """Writes the model to memory, reads it back, checks it against the
    model, and only then writes dst: a model that fails its check is never
    left where the output goes."""
    g = model._graph()
    e = _Err()
    name = fmt or _format_for(dst)
    if name is None:
        raise _usage(f"graphconv: cannot tell the output format from '{os.fspath(dst)}': give to=")
    data = ffi.new("void **")
    size = ffi.new("size_t *")
    pdata = ffi.new("void **")
    psize = ffi.new("size_t *")
    e.check(lib.gir_save_memory(g, name.encode(), wopts.ptr, data, size, pdata, psize, e.err))
    back = ffi.new("gir_graph **")
    try:
        e.check(lib.gir_load_memory(data[0], size[0], pdata[0] if pdata[0] != ffi.NULL else ffi.NULL, psize[0],
                                    name.encode(), ffi.NULL, back, e.err))
    finally:
        lib.free(data[0])
        if pdata[0] != ffi.NULL:
            lib.free(pdata[0])
    b = ffi.gc(back[0], lib.gir_graph_free)
    opts = _CheckOptions(atol, rtol, seed, 1, False, None, allow_structural)
    r = ffi.new("gir_check_result *")
    try:
        st = lib.gir_check_written(g, b, opts.o, r, e.err)
        result = _result_from(r) if r.method != 0 else None
        if st != 0:
            if e.err.code == 0:
                e.err.code = st
            exc = _error_from(e.err)
            exc.result = result
            raise exc
    finally:
        lib.gir_check_result_clear(r)
        opts.close()
        ffi.release(b)
    e.check(lib.gir_save(g, _fspath(dst), name.encode(), wopts.ptr, e.err))
    return result
