"""Storage of a run's artifacts on S3-style object storage.

In:  a `StorageConfig` (endpoint, bucket, region, prefix) and a run prefix.
Out: an `ObjectStore` confined to ``s3://BUCKET/runs/RUN_ID/``; `EmbeddedS3` /
     `ensure_storage` for the default embedded S3 server (moto, in a child process); `FaultyObjectStore` for
     planned storage faults.

Modules: `s3` (config, store, errors, stats), `lease` (one run at a time per run id),
`embedded` (the moto server's lifecycle), `s3serve` (the server itself), `faults`.
"""

from regionchaos.storage.embedded import EmbeddedS3, create_bucket, ensure_storage
from regionchaos.storage.faults import (
    FAIL_ALWAYS,
    FaultPlan,
    FaultyObjectStore,
    InjectedCrash,
    InjectedPutFailure,
)
from regionchaos.storage.lease import LeaseLost, RunIdBusy, RunLease
from regionchaos.storage.s3 import (
    BucketMissing,
    ObjectMissing,
    ObjectStore,
    StorageConfig,
    StorageError,
    StorageStats,
    StorageUnreachable,
    check_bucket,
    validate_key,
)

__all__ = [
    "FAIL_ALWAYS",
    "BucketMissing",
    "EmbeddedS3",
    "FaultPlan",
    "FaultyObjectStore",
    "InjectedCrash",
    "InjectedPutFailure",
    "LeaseLost",
    "ObjectMissing",
    "ObjectStore",
    "RunIdBusy",
    "RunLease",
    "StorageConfig",
    "StorageError",
    "StorageStats",
    "StorageUnreachable",
    "check_bucket",
    "create_bucket",
    "ensure_storage",
    "validate_key",
]
