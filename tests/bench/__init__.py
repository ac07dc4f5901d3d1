"""Benchmarks: they measure and print; they fail only when a figure is grossly off."""
