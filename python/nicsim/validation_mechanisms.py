"""The mechanisms of ``docs/validation.md``.

:data:`MECHANISMS`: every mechanism a study's prose gives as the cause of a
result, quoted, with whether nicsim models it (where, and the tests that
show it) or not (why). Each study's catalogue is a module of its own
(:mod:`nicsim.validation_coal`, ``_mq``, ``_lci``, ``_emo``), built from the
records of :mod:`nicsim.validation_records`. Re-exported by
:mod:`nicsim.validation`, which joins it with a run's tables.
"""

from __future__ import annotations

from nicsim import validation_coal, validation_emo, validation_lci, validation_mq
from nicsim.validation_records import STATUSES, Code, Mechanism, Status, Test

__all__ = ["MECHANISMS", "STATUSES", "Code", "Mechanism", "Status", "Test"]

#: Every mechanism the studies' prose gives as the cause of a result.
MECHANISMS: tuple[Mechanism, ...] = (
    validation_coal.MECHANISMS
    + validation_mq.MECHANISMS
    + validation_lci.MECHANISMS
    + validation_emo.MECHANISMS
)
