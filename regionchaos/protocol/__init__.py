"""The FLIP-600 protocol model, pure Python: no Spark, no storage.

- topology: job graph, pipeline regions, FLIP-147 trigger roots
- state: handles, OperatorSubtaskState, redistribution
- checkpoint: CompletedCheckpoint metadata
- store: CompletedCheckpointStore and the cleaner
- enumerator: the split enumerator (OperatorCoordinator) and its region fallback
- coordinator: the CheckpointCoordinator's decisions, notifications and restores
"""
