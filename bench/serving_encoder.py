"""The evaluation benches' switch to the serving path's encoder: ``--onnx-cache DIR --onnx-weights``.

A serving process encodes small calls (a question, a claim) in ONNX Runtime with int8 or fp32 weights;
these two options make a bench do the same, with the exported graph cached in DIR. The weights default
to the serving default (``auto``: int8 where the CPU has int8 dot products, fp32 elsewhere), resolved
on the machine the bench runs on, so a bench times what a gateway on that machine would run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gateway.models.cpu import resolve_onnx_weights
from gateway.models.onnx_encoder import OnnxWeights

_WEIGHTS: dict[str, OnnxWeights] = {"int8": "int8", "fp32": "fp32", "auto": resolve_onnx_weights("auto")}


def _weights(value: str) -> OnnxWeights:
    if value not in _WEIGHTS:
        raise argparse.ArgumentTypeError(f"{value!r} is not one of auto, int8, fp32")
    return _WEIGHTS[value]


def add_serving_encoder_arguments(parser: argparse.ArgumentParser, encodes: str) -> None:
    """``--onnx-cache DIR`` (encode ``encodes`` in ONNX Runtime, as a serving process) and its weights."""
    parser.add_argument(
        "--onnx-cache",
        type=Path,
        help=f"encode {encodes} in ONNX Runtime, as a serving process does (graph cached here)",
    )
    parser.add_argument(
        "--onnx-weights",
        type=_weights,
        default="auto",
        help="the ONNX graph's weights: auto (as serving: int8 on int8 dot products, else fp32), int8, fp32",
    )
