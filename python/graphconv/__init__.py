"""graphconv: convert neural-network models between NNVM/MXNet/TVM graph JSON,
NNabla .nnp, LightNet JSON IR, RelayViz JSON and ONNX, and run them on
graphconv's reference CPU runtime.

A thin layer over libgraphir (the C library graphconv is built on), loaded
with cffi's ABI mode: nothing is compiled when the package is installed, and
every conversion, check and run is the library's own code.

    >>> import graphconv
    >>> m = graphconv.load("resnet18.onnx")
    >>> m.inputs
    [TensorInfo(name='data', shape=(1, 3, 224, 224), dtype='float32')]
    >>> report = graphconv.convert("resnet18.onnx", "resnet18.nnp", check=True)
    >>> report.status
    'ok'
    >>> y = graphconv.load("resnet18.nnp").run({"data": x})

Errors are raised as :class:`graphconv.Error` (with ``.code``,
``.exit_status``, ``.where``) or one of its subclasses: :class:`UsageError`,
:class:`BadInputError`, :class:`UnsupportedError`, :class:`CheckFailedError`,
:class:`IOError`.
"""
from ._api import (  # noqa: F401
    BadInputError,
    CheckFailedError,
    CheckResult,
    ConversionReport,
    Error,
    Format,
    IOError,
    Model,
    Node,
    OutputComparison,
    TensorInfo,
    UnsupportedError,
    UsageError,
    check,
    common_options,
    convert,
    formats,
    load,
)

__all__ = [
    "load", "convert", "check", "formats", "common_options",
    "Model", "Node", "TensorInfo", "Format", "ConversionReport", "CheckResult", "OutputComparison",
    "Error", "UsageError", "BadInputError", "UnsupportedError", "CheckFailedError", "IOError",
]
