"""`tables.arrow_table`: a run's rows become an Arrow table of the table's schema, value for value, and rows
that do not fit (text in a number column, a row of another length) raise instead of being dropped or cut.
No Spark, no S3: a swarm seed emulated on an in-memory store."""

from __future__ import annotations

import pyarrow as pa
import pytest
import yaml

from regionchaos import tables as tables_mod
from regionchaos.scenario import catalogue
from regionchaos.storage.s3 import StorageConfig
from regionchaos.swarm import SWARM_OVERRIDES, SwarmContext, emulate_seed


@pytest.fixture(scope="module")
def seed_rows() -> dict[str, list[tuple]]:
    with open(catalogue()["smoke"]) as fh:
        data = yaml.safe_load(fh)
    config = StorageConfig(endpoint_url="http://127.0.0.1:9", bucket="unused")  # the seed's store is in memory
    ctx = SwarmContext("smoke", data, dict(SWARM_OVERRIDES), None, config, "swarms/arrow-test/", {})
    record, rows = emulate_seed(ctx, 5)
    assert rows is not None, record.get("error")
    return rows


def _plain(value):
    """A row's value as Arrow gives it back (tuples of an array column come back as lists)."""
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def test_every_table_of_a_seed_holds_its_rows_value_for_value(seed_rows):
    assert set(seed_rows) == set(tables_mod.TABLES)
    assert sum(len(r) for r in seed_rows.values()) > 500  # a real seed, not an empty run
    for name, rows in seed_rows.items():
        table = tables_mod.arrow_table(name, rows)
        assert table.schema == tables_mod.arrow_schema(name), name
        assert table.num_rows == len(rows), name
        got = [list(r.values()) for r in table.to_pylist()]
        assert got == [_plain(row) for row in rows], name


def test_no_rows_give_an_empty_table_of_the_schema():
    table = tables_mod.arrow_table("checkpoints", [])
    assert table.num_rows == 0 and table.schema == tables_mod.arrow_schema("checkpoints")


def test_a_value_of_another_type_raises(seed_rows):
    row = list(seed_rows["checkpoints"][0])
    row[tables_mod.column_names("checkpoints").index("checkpoint_id")] = "7"
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        tables_mod.arrow_table("checkpoints", [tuple(row)])


@pytest.mark.parametrize("change", ["longer", "shorter"])
def test_a_row_of_another_length_raises_instead_of_being_cut(seed_rows, change):
    row = seed_rows["commits"][0]
    bad = row + (None,) if change == "longer" else row[:-1]
    with pytest.raises(pa.ArrowInvalid):
        tables_mod.arrow_table("commits", [*seed_rows["commits"][1:], bad])
