"""The FLIP-600 protocol model, pure Python: no Spark, no storage.

- topology: job graph, pipeline regions, FLIP-147 trigger roots
- state: handles, OperatorSubtaskState, redistribution
- checkpoint: CompletedCheckpoint metadata
- store: CompletedCheckpointStore and the cleaner
- enumerator: the split enumerator (OperatorCoordinator) and its region fallback
- holder: the coordinator's side of the enumerator (snapshot, region fallback, resets)
- coordinator: the CheckpointCoordinator's order of events, notifications and restores, with
  pending (a checkpoint's responses and outcome), decision (what they decide), rules (the
  abort and counter rules, the settings), counters (the counter, the forced flag, the failed
  checkpoints), merge (the merged checkpoint) and assignment (the state each task restores)
"""
