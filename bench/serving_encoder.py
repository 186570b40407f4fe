"""The evaluation benches' switch to the serving path's encoder: ``--onnx-cache DIR --onnx-weights``.

A serving process encodes small calls (a question, a claim) in ONNX Runtime with int8 or fp32 weights;
these two options make a bench do the same, with the exported graph cached in DIR.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_serving_encoder_arguments(parser: argparse.ArgumentParser, encodes: str) -> None:
    """``--onnx-cache DIR`` (encode ``encodes`` in ONNX Runtime, as a serving process) and its weights."""
    parser.add_argument(
        "--onnx-cache",
        type=Path,
        help=f"encode {encodes} in ONNX Runtime, as a serving process does (graph cached here)",
    )
    parser.add_argument(
        "--onnx-weights", choices=("int8", "fp32"), default="int8", help="the ONNX graph's weights"
    )
