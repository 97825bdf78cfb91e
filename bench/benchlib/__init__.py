"""Helpers for bench/run.py: signing, HTTP clients, processes under test, load generation, report."""
