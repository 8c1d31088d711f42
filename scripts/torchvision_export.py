#!/usr/bin/python3
"""Exports torchvision architectures to ONNX for graphconv's coverage and
speed measurements.  The weights are torchvision's own initialisation under a
fixed seed (no pretrained weights are fetched: this machine has no network),
so the files are reproducible from the installed torch/torchvision alone and
never enter the repository.

Usage: /usr/bin/python3 scripts/torchvision_export.py OUTDIR [NAME...]
Needs Debian's python3-torchvision (and python3-onnx for the check).  Writes
OUTDIR/NAME.onnx and OUTDIR/NAME.input.npy (1x3xHxW float32, seed 0) for
each model; files that exist are kept.  Prints one line per model.
"""
import os
import sys

# name -> (constructor keyword arguments, input side)
MODELS = {
    "mobilenet_v3_small": ({}, 224),
    "mobilenet_v3_large": ({}, 224),
    "efficientnet_b0": ({}, 224),
    "convnext_tiny": ({}, 224),
    "densenet121": ({}, 224),
    "regnet_x_400mf": ({}, 224),
    "regnet_y_400mf": ({}, 224),
    "shufflenet_v2_x1_0": ({}, 224),
    "mnasnet0_5": ({}, 224),
    "googlenet": ({"aux_logits": False, "init_weights": True}, 224),
    "vgg11_bn": ({}, 224),
    "resnext50_32x4d": ({}, 224),
    "resnet50": ({}, 224),
    "alexnet": ({}, 224),
}


def export(name, outdir):
    import numpy as np
    import torch
    import torchvision

    path = os.path.join(outdir, name + ".onnx")
    inp = os.path.join(outdir, name + ".input.npy")
    kwargs, side = MODELS[name]
    if not os.path.exists(inp):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 3, side, side)).astype(np.float32)
        np.save(inp + ".tmp.npy", x)
        os.replace(inp + ".tmp.npy", inp)
    if os.path.exists(path):
        return "kept"
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
    x = torch.from_numpy(np.load(inp))
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=False)
    os.replace(tmp, path)
    return "exported"


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    outdir = argv[1]
    names = argv[2:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit("torchvision_export: unknown model(s): " + ", ".join(unknown))
    os.makedirs(outdir, exist_ok=True)
    for n in names:
        print(f"{n}: {export(n, outdir)}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
