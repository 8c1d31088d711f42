"""The Python package against the real files in ../shared: load, save,
convert, run, check, formats, errors, threads and memory."""
import os
import shutil

import numpy as np
import pytest

import graphconv

SHARED = os.environ.get("GIR_SHARED_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared")
MODELS = os.path.join(SHARED, "models")
REAL = os.path.join(SHARED, "realworld")
RESNET = os.path.join(MODELS, "resnet18.onnx")
TESTDATA = os.environ.get("GIR_TESTDATA_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "testdata")


def need(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} is not there")
    return path


def real(*parts):
    return need(os.path.join(REAL, *parts))


@pytest.fixture(scope="module")
def resnet():
    with graphconv.load(need(RESNET)) as m:
        yield m


@pytest.fixture(scope="module")
def resnet_input():
    return np.load(need(os.path.join(MODELS, "input_1x3x224x224.npy")))


@pytest.fixture(scope="module")
def resnet_expected():
    return np.load(need(os.path.join(MODELS, "resnet18.ort_out.npy")))


# ---- load ------------------------------------------------------------------

def test_load_describes_resnet18(resnet):
    assert resnet.format == "onnx"
    assert resnet.inputs == [graphconv.TensorInfo("data", (1, 3, 224, 224), "float32")]
    assert [o.name for o in resnet.outputs] == ["logits"]
    assert resnet.outputs[0].shape == (1, 1000)
    hist = resnet.op_histogram()
    assert hist["Conv"] == 20
    assert hist["Relu"] == 17
    assert hist["Gemm"] == 1
    assert list(hist)[0] == "Conv"  # most frequent first
    assert sum(hist.values()) == len(resnet.nodes)
    conv = next(n for n in resnet.nodes if n.op == "Conv")
    assert conv.attrs["kernel_shape"] == [7, 7]
    assert conv.attrs["strides"] == [2, 2]
    assert conv.inputs[0] == "data"
    assert conv.opaque_format is None
    assert resnet.metadata["source.format"] == "onnx"


def test_parameters_are_lazy_numpy_arrays(resnet):
    params = resnet.parameters
    assert len(params) == 42
    first = next(n for n in resnet.nodes if n.op == "Conv")
    name = first.inputs[1]
    w = params[name]
    assert isinstance(w, np.ndarray)
    assert w.dtype == np.float32 and w.shape == (64, 3, 7, 7)
    assert np.isfinite(w).all() and float(np.abs(w).sum()) > 0
    # Read twice: the same values (the library reloads what it released).
    assert np.array_equal(w, params[name])
    with pytest.raises(KeyError):
        params["no such weight"]


def test_load_from_bytes_equals_load_from_path(resnet, resnet_input):
    with open(RESNET, "rb") as f:
        data = f.read()
    with graphconv.load(data) as m:
        assert m.format == "onnx"
        assert m.inputs == resnet.inputs
        assert m.op_histogram() == resnet.op_histogram()
        a = m.run({"data": resnet_input})
    b = resnet.run({"data": resnet_input})
    assert np.array_equal(a["logits"], b["logits"])


def test_load_mxnet_with_input_shapes():
    sym = real("mxnet", "lenet-symbol.json")
    with graphconv.load(sym, input_shapes={"data": (1, 1, 28, 28)}) as m:
        assert m.format == "mxnet"
        assert m.inputs[0].shape == (1, 1, 28, 28)
        y = m.run({"data": np.zeros((1, 1, 28, 28), np.float32)})
        (out,) = y.values()
        assert out.shape == (1, 10)


# ---- run -------------------------------------------------------------------

def test_run_matches_onnx_runtime(resnet, resnet_input, resnet_expected):
    y = resnet.run({"data": resnet_input})
    out = y["logits"]
    assert out.shape == resnet_expected.shape
    assert out.dtype == np.float32
    assert np.max(np.abs(out - resnet_expected)) <= 1e-4


def test_run_two_threads_gives_the_same_bytes(resnet, resnet_input):
    one = resnet.run({"data": resnet_input}, threads=1)["logits"]
    two = resnet.run({"data": resnet_input}, threads=2)["logits"]
    assert one.tobytes() == two.tobytes()


def test_run_refuses_wrong_inputs(resnet, resnet_input):
    with pytest.raises(graphconv.UsageError, match="no data given for input 'data'"):
        resnet.run({})
    with pytest.raises(graphconv.UsageError, match="no input named 'x'"):
        resnet.run({"data": resnet_input, "x": resnet_input})
    with pytest.raises(graphconv.UsageError, match="input 'data' is float32; got an array of float64"):
        resnet.run({"data": resnet_input.astype(np.float64)})
    with pytest.raises(graphconv.UsageError, match="threads") as e:
        resnet.run({"data": resnet_input}, threads=0)
    assert e.value.code == "bad-argument"  # the registry's name, as the library's own errors
    with pytest.raises(graphconv.BadInputError) as e:
        resnet.run({"data": np.zeros((1, 3, 5, 5), np.float32)})
    assert e.value.exit_status == 2


def test_outputs_are_owned_by_python(resnet, resnet_input):
    a = resnet.run({"data": resnet_input})["logits"]
    keep = a.copy()
    resnet.run({"data": np.zeros_like(resnet_input)})
    assert np.array_equal(a, keep)  # a later run does not write into an earlier result
    a[0, 0] = 42.0                   # and results are writable arrays of their own


# ---- save and convert ------------------------------------------------------

def test_save_and_reload_nnabla(tmp_path, resnet, resnet_input):
    out = tmp_path / "r.nnp"
    notes = resnet.save(out)
    assert isinstance(notes, list)
    with graphconv.load(out) as back:
        assert back.format == "nnabla"
        y = back.run({"data": resnet_input})
    (arr,) = y.values()
    ref = resnet.run({"data": resnet_input})["logits"]
    assert np.max(np.abs(arr - ref)) <= 1e-5


def test_save_refuses_to_overwrite_without_force(tmp_path, resnet):
    out = tmp_path / "r.onnx"
    out.write_bytes(b"keep me")
    with pytest.raises(graphconv.Error) as e:
        resnet.save(out)
    assert out.read_bytes() == b"keep me"
    assert e.value.exit_status == 5
    resnet.save(out, force=True)
    assert out.read_bytes()[:1] != b"k"


def test_save_unknown_option_is_a_usage_error(tmp_path, resnet):
    with pytest.raises(graphconv.UsageError) as e:
        resnet.save(tmp_path / "r.onnx", no_such_option=1)
    assert e.value.exit_status == 1
    assert "no-such-option" in str(e.value)
    assert not (tmp_path / "r.onnx").exists()


def test_convert_with_check(tmp_path):
    out = tmp_path / "r.nnp"
    report = graphconv.convert(need(RESNET), out, check=True)
    assert report.status == "ok"
    assert report.input == RESNET and report.output == str(out)
    assert report.source_format == "onnx" and report.target_format == "nnabla"
    assert report.nodes > 0 and report.parameters > 0
    assert report.check is not None and report.check.passed
    assert report.check.method == "run"
    assert report.check.outputs[0].max_abs_error <= 1e-5
    assert report.check.outputs[0].cosine > 0.9999
    assert out.exists()


def test_convert_refusal_is_unsupported(tmp_path):
    # TVM graph-executor JSON holds compiled tvm_op nodes only: canonical
    # operators cannot be written there.
    out = tmp_path / "x.json"
    with pytest.raises(graphconv.UnsupportedError) as e:
        graphconv.convert(need(RESNET), out, to="tvm")
    assert e.value.exit_status == 3
    assert "tvm" in str(e.value)
    assert not out.exists()


# ---- check -----------------------------------------------------------------

def test_check_same_model_agrees(resnet, resnet_input):
    r = graphconv.check(need(RESNET), resnet, inputs={"data": resnet_input})
    assert r.passed and r.method == "run"
    (o,) = r.outputs
    assert o.name == "logits" and o.elements == 1000
    assert o.max_abs_error == 0.0 and o.mismatches == 0 and o.passed
    assert r.atol == 1e-4 and r.rtol == 1e-3


def test_check_different_models_disagree():
    r = graphconv.check(need(RESNET), need(os.path.join(MODELS, "squeezenet1_0.onnx")), seed=3)
    assert not r.passed
    assert r.method == "run"
    assert r.seed == 3
    assert r.outputs[0].mismatches > 0
    assert r.outputs[0].max_abs_error > 1e-3


def test_check_unreadable_model_raises(tmp_path):
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x08\x07garbage")
    with pytest.raises(graphconv.BadInputError):
        graphconv.check(need(RESNET), p)


def test_convert_check_failure_leaves_no_output(tmp_path):
    # atol=rtol=-1 makes every element a mismatch: the check must fail and
    # nothing may appear where the output goes.
    out = tmp_path / "r.nnp"
    with pytest.raises(graphconv.CheckFailedError) as e:
        graphconv.convert(need(RESNET), out, check=True, atol=-1.0, rtol=0.0)
    assert e.value.exit_status == 4
    assert e.value.result is not None and not e.value.result.passed
    assert not out.exists()
    assert os.listdir(tmp_path) == []


# ---- formats and errors ----------------------------------------------------

def test_formats():
    fs = {f.name: f for f in graphconv.formats()}
    assert {"onnx", "nnabla", "mxnet", "nnvm", "tvm", "lightnet", "relayviz"} <= set(fs)
    assert fs["onnx"].can_read and fs["onnx"].can_write
    assert "ONNX" in fs["onnx"].description
    assert "opset" in fs["onnx"].write_options
    assert "executor" in fs["nnabla"].read_options
    assert not fs["tvm"].read_options.keys() & {"opset"}
    common = graphconv.common_options()
    assert {"params", "batch-size", "force", "max-bytes"} <= set(common)
    assert all(isinstance(v, str) and v for v in common.values())


def test_malformed_file_is_bad_input(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"nodes": [')
    with pytest.raises(graphconv.BadInputError) as e:
        graphconv.load(p)
    err = e.value
    assert err.exit_status == 2
    assert err.code
    assert str(p) in err.where
    assert str(p) in str(err)


def test_missing_file_is_io_error(tmp_path):
    with pytest.raises(graphconv.IOError) as e:
        graphconv.load(tmp_path / "absent.onnx")
    assert e.value.exit_status == 5


def test_unknown_format_is_usage_error():
    with pytest.raises(graphconv.UsageError) as e:
        graphconv.load(need(RESNET), format="caffe")
    assert e.value.exit_status == 1


def test_truncated_nnp_is_bad_input(tmp_path):
    src = tmp_path / "r.nnp"
    graphconv.convert(need(RESNET), src, check=False)
    data = src.read_bytes()
    cut = tmp_path / "cut.nnp"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(graphconv.BadInputError):
        with graphconv.load(cut) as m:
            m.parameters[next(iter(m.parameters))]


def test_closed_model():
    m = graphconv.load(need(RESNET))
    m.close()
    m.close()
    with pytest.raises(graphconv.UsageError, match="closed"):
        m.inputs


# ---- memory ----------------------------------------------------------------

def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_loads_release_memory():
    path = real("mxnet", "lenet-symbol.json")
    shapes = {"data": (1, 1, 28, 28)}

    def once():
        with graphconv.load(path, input_shapes=shapes) as m:
            m.run({"data": np.zeros((1, 1, 28, 28), np.float32)})
            dict(m.parameters)

    for _ in range(50):
        once()
    before = _rss_kb()
    for _ in range(200):
        once()
    grown = _rss_kb() - before
    assert grown < 4096, f"RSS grew by {grown} kB over 200 loads"
