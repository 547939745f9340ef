"""LateralGym: Gymnasium/PettingZoo environments for lateral thinking and creative tool use."""

__version__ = "0.1.0"
