"""Bayesian models, one per module. PyMC is imported inside the functions that build them,
never at import time."""
