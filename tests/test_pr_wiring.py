"""The scenario's ``execution.checkpointing.region.semantics`` reaches the CheckpointCoordinator."""

from regionchaos.emulator import Emulation, MemoryPersistence
from regionchaos.scenario import load


def test_semantics_reaches_the_coordinator():
    for semantics in ("flip", "pr"):
        sc = load("smoke", overrides={"execution.checkpointing.region.semantics": semantics})
        assert Emulation(sc, MemoryPersistence()).coordinator.settings.semantics == semantics
