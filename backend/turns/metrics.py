"""Token counts, speed and cost of a reply, normalized across wire APIs."""
from __future__ import annotations

import time

from backend.core.types import Usage

TOKEN_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens")


def empty() -> dict:
    return {**{k: 0 for k in TOKEN_FIELDS}, "estimated": False, "cost": None}


def add(total: dict, usage: Usage | dict) -> None:
    get = usage.get if isinstance(usage, dict) else lambda k, d=None: getattr(usage, k, d)
    for key in TOKEN_FIELDS:
        total[key] += get(key, 0) or 0
    total["estimated"] = bool(total["estimated"] or get("estimated", False))
    step_cost = get("cost", None)
    if step_cost is not None:
        total["cost"] = (total["cost"] or 0.0) + step_cost


def cost(usage: dict, price_input: float | None, price_output: float | None) -> float | None:
    """Dollars for these tokens at per-million prices; None when the catalog has no price."""
    if price_input is None and price_output is None:
        return None
    # Cached input is billed like input here: providers discount it differently,
    # and an estimate that errs high is the honest one.
    spent = usage["input_tokens"] * (price_input or 0) + (usage["output_tokens"]) * (price_output or 0)
    return round(spent / 1_000_000, 6)


class StepMeter:
    """Time to first token and output speed of one model step."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.started = clock()
        self.first: float | None = None
        self.usage = empty()

    def output(self) -> None:
        if self.first is None:
            self.first = self.clock()

    def summary(self, price_input: float | None = None, price_output: float | None = None) -> dict:
        out = dict(self.usage)
        now = self.clock()
        out["ttft_ms"] = None if self.first is None else round((self.first - self.started) * 1000)
        streaming = now - self.first if self.first is not None else 0
        out["tokens_per_s"] = round(self.usage["output_tokens"] / streaming, 1) if streaming > 0.001 else None
        out["cost"] = cost(self.usage, price_input, price_output)
        return out
