"""The scenario's ``execution.checkpointing.region.semantics`` reaches the CheckpointCoordinator."""

from regionchaos.emulator import Emulation
from regionchaos.scenario import load
from tests import memrun


def test_semantics_reaches_the_coordinator():
    for semantics in ("flip", "pr"):
        sc = load("smoke", overrides={"execution.checkpointing.region.semantics": semantics})
        assert Emulation(sc, memrun.persistence(sc)).coordinator.settings.semantics == semantics
