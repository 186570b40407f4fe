"""What this machine's CPU offers the embedding model: its cores (model threads) and its instructions
(bfloat16 arithmetic, int8 dot products), read from ``/proc/cpuinfo``; ``auto`` settings resolve here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from gateway.models.onnx_encoder import OnnxWeights
from gateway.settings import EmbeddingPrecision, OnnxWeightsSetting


def serving_threads(cpus: int | None = None) -> int:
    """Model threads for a serving process: one per four cores, at least one.

    Measured on 2 cores: with two OpenMP threads, p95 at concurrency 1 rose to ~500 ms whenever another
    process took a core; one thread removed that tail and cost less CPU per request. Throughput under
    concurrency comes from coalescing requests' texts into one model call, not from intra-op threads.
    """
    return max(1, (cpus or os.cpu_count() or 1) // 4)


def bulk_threads(cpus: int | None = None) -> int:
    """Model threads for ingestion and batch jobs, which own the machine: every core."""
    return max(1, cpus or os.cpu_count() or 1)


def _cpu_flags(cpuinfo: Path) -> set[str]:
    try:
        return set(cpuinfo.read_text(errors="replace").split())
    except OSError:
        return set()


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (x86 flags ``avx512_bf16`` or ``amx_bf16``)."""
    return bool(_cpu_flags(cpuinfo) & {"avx512_bf16", "amx_bf16"})


def native_int8_dot(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU has int8 dot-product instructions (x86 ``avx512_vnni``, ``avx_vnni`` or AMX)."""
    return bool(_cpu_flags(cpuinfo) & {"avx512_vnni", "avx_vnni", "amx_int8"})


def resolve_precision(precision: EmbeddingPrecision) -> Literal["bf16", "fp32"]:
    if precision == "auto":
        return "bf16" if native_bf16() else "fp32"
    return precision


def resolve_onnx_weights(weights: OnnxWeightsSetting) -> OnnxWeights:
    """``auto``: int8 where the CPU has int8 dot products (measured there), fp32 elsewhere."""
    if weights == "auto":
        return "int8" if native_int8_dot() else "fp32"
    return weights
