"""regionchaos: a chaos-testing pipeline for Flink's regional checkpoints (FLIP-600).

The protocol model lives in :mod:`regionchaos.protocol`; scenarios in
:mod:`regionchaos.scenario`; the run in :mod:`regionchaos.runner`.
"""

from .protocol.state import redistribute

__all__ = ["redistribute"]
