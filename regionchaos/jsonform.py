"""The one JSON form of every artifact, and its reader.

In:  a JSON-able value (dicts with string keys, lists, tuples, strings, ints, finite floats, bools,
     None) to encode; the bytes or text of a JSON document to decode.
Out: `dumps(value) -> bytes`: compact, keys sorted, ASCII only: byte for byte what
     ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` writes (`PYTHON`); `loads(raw)`:
     what ``json.loads(raw)`` returns, or the error it raises.

Why not ``json`` alone: encoding with it took 2.4 ms of a swarm seed's 21.5 (~540 objects a seed; decoding
1.5 ms more) and 5.3 s of `large`'s 26.9 s emulation in memory, profiled (200 checkpoint metadata of 766 KB,
1,600 state files). msgspec writes and reads the same documents several times faster: a seed 18.3 ms,
`large` 17.4 s instead of 19.6 (bench/results/probes/README.md). Where its
output could differ from ``json``'s, the value is encoded by ``json`` instead:
- a string that is not ASCII (``json`` escapes it, msgspec writes UTF-8): the output is not ASCII;
- a float written with an exponent or below 1e-4 (``json``: ``1e+16``, ``1e-05``; msgspec: ``1e16``,
  ``0.00001``): the output holds a digit followed by ``e``, or ``0.0000`` (a string holding either
  sends a value the slow way too, which costs time, never bytes);
- a dict key that is not a string (``json`` writes ``"1"`` for ``1``), a lone surrogate (``json`` escapes
  it), a cycle: msgspec raises.
Two differences cannot be seen in the output, so they are kept out of the artifacts instead:
- NaN and infinities (``json``: ``NaN``, not JSON; msgspec: ``null``): every float of a run comes from
  a scenario field, which refuses them (``allow_inf_nan=False`` on the scenario's sections), or from
  arithmetic on finite values;
- types ``json`` refuses and msgspec writes (sets, bytes, dataclasses, dates).
With ``REGIONCHAOS_JSON_CHECK=1`` (`CHECK_ENV`) every `dumps` also encodes with ``json`` and raises
`JSONFormDiffers` on any difference. tests/test_jsonform.py runs every emulated catalogue scenario so
(seeds 1-2, with and without the swarm's fault mix, and every mutant on `smoke`): every artifact they
write, and every JSON column of their tables, is checked against ``json``'s bytes. Not for the whole test
suite: the second encoding makes every emulation a fifth slower (a seed 22.2-22.8 ms against 18.5-19.0;
bench/results/probes/README.md).

`loads` tries msgspec and, where it refuses the input (``NaN``, a lone surrogate escape, a number out
of a float's range, a byte-order mark, another encoding than UTF-8, invalid UTF-8), hands the input to
``json.loads``: a tampered artifact decodes, or fails, exactly as it did with ``json`` alone.
"""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec

CHECK_ENV = "REGIONCHAOS_JSON_CHECK"
PYTHON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # the reference form
_FAST = msgspec.json.Encoder(order="sorted")
_FAST_DECODER = msgspec.json.Decoder()
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in range(256))  # "1.5e16" -> "0.0e00"
_CHECKED = os.environ.get(CHECK_ENV) == "1"


class JSONFormDiffers(AssertionError):
    """Under `CHECK_ENV`: msgspec's bytes for a value are not ``json``'s."""


def dumps(value: Any) -> bytes:
    """``value`` in the one JSON form (see the module docstring): ``json``'s bytes, made fast."""
    try:
        out = _FAST.encode(value)
    except (TypeError, UnicodeEncodeError, RecursionError):  # a key that is not a string, a type neither
        # writes, a lone surrogate (json escapes it), a cycle: json's answer (or json's error)
        return PYTHON.encode(value).encode()
    if _may_differ(out):
        return PYTHON.encode(value).encode()
    if _CHECKED:
        _check(value, out)
    return out


def _may_differ(out: bytes) -> bool:
    """Could ``json`` have written other bytes? Not ASCII, a float below 1e-4 in decimals, or a digit
    followed by ``e`` (msgspec's exponents are lower case). Plain byte searches: a regular expression
    for the same took longer than msgspec's encoding itself (11 ns a byte against 3.7 on `large`'s
    checkpoint metadata; these 2.2)."""
    return not out.isascii() or b"0.0000" in out or b"0e" in out.translate(_DIGITS_AS_ZERO)


def dumps_str(value: Any) -> str:
    """`dumps` as text (the tables' JSON columns)."""
    return dumps(value).decode("ascii")


def _check(value: Any, out: bytes) -> None:
    try:
        reference = PYTHON.encode(value).encode()
    except (TypeError, ValueError) as exc:
        raise JSONFormDiffers(f"json refuses a value msgspec wrote ({exc}): {out[:200]!r}") from exc
    if reference != out:
        at = next((i for i, (a, b) in enumerate(zip(reference, out)) if a != b), min(len(reference), len(out)))
        raise JSONFormDiffers(f"msgspec and json differ at byte {at}: {out[max(0, at - 40):at + 40]!r} "
                              f"against {reference[max(0, at - 40):at + 40]!r}")


def loads(raw: bytes | str) -> Any:
    """What ``json.loads(raw)`` returns (or raises), read by msgspec where it can."""
    try:
        return _FAST_DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        return json.loads(raw)
