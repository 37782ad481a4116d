"""Every experiment, in one list: the studies' groups and the ids they hold.

To add an experiment:
1. In its study's ``exp_*.py`` write ``NAME = Experiment(...)``
   (see :mod:`nicsim.studies.exp_base`).
2. Give it ``published=`` values read with ``at(...)``, ``claims=`` (``Claim.below``...), ``plot=``.
3. List ``exp_*.NAME`` in its group in :data:`STUDIES` below; ``nicsim reproduce <id>`` runs it.

This module owns the registry: :data:`STUDIES` (group name → experiments,
in run order), the :data:`EXPERIMENTS` and :data:`GROUPS` derived from it,
and the lookup of ids and group names (:func:`get`, :func:`expand`). What
an experiment is lives in :mod:`nicsim.studies.exp_base`, each study's experiments
in its ``exp_*`` module; running them is :mod:`nicsim.runner`, writing
tables, plots and the report :mod:`nicsim.studies.report`.
"""

from __future__ import annotations

from collections.abc import Iterable

from nicsim._core import NicsimError
from nicsim.studies import (
    exp_coal,
    exp_coal_nas,
    exp_coal_transfer,
    exp_emo,
    exp_lci,
    exp_mq,
    exp_napi,
)
from nicsim.studies.exp_base import Experiment, Params

__all__ = [
    "ALL",
    "EXPERIMENTS",
    "GROUPS",
    "STUDIES",
    "Experiment",
    "Params",
    "expand",
    "get",
]

#: The experiment groups of ``nicsim reproduce <group>``: each lists its
#: experiments in run order. An experiment may sit in more than one group.
STUDIES: dict[str, tuple[Experiment, ...]] = {
    "omx-coal": (
        exp_coal.PINGPONG,
        exp_coal.DELAY_SWEEP,
        exp_coal.MSGRATE,
        exp_coal.IRQ_OVERHEAD,
        exp_coal_transfer.TRANSFER,
        exp_coal_transfer.MARKING,
        exp_coal_transfer.MISORDER,
        exp_coal_nas.NAS_IS,
        exp_coal_nas.NAS,
        exp_napi.NAPI_KNOBS,
    ),
    "napi": (exp_napi.NAPI_KNOBS,),
    "omx-mq": (
        exp_mq.PINGPONG,
        exp_mq.IDLE,
        exp_mq.CACHE,
        exp_mq.ALLTOALL,
        exp_mq.NAS,
    ),
    "lci": (
        exp_lci.POLLING,
        exp_lci.MULTICAST,
        exp_lci.MULTICAST_APPS,
        exp_lci.WATCHDOG,
        exp_lci.TIMERS,
    ),
    "emo": (exp_emo.LATENCY, exp_emo.OVERHEAD, exp_emo.CACHE),
}

#: The group that names every other group: ``nicsim reproduce all``.
ALL = "all"


def _by_id(studies: dict[str, tuple[Experiment, ...]]) -> dict[str, Experiment]:
    experiments: dict[str, Experiment] = {}
    for group in studies.values():
        for experiment in group:
            known = experiments.setdefault(experiment.id, experiment)
            if known is not experiment:
                raise ValueError(f"experiment id {experiment.id!r} names two experiments")
    return experiments


#: Every experiment by id, in the order of :data:`STUDIES`.
EXPERIMENTS: dict[str, Experiment] = _by_id(STUDIES)
#: Group name → the ids (or, for :data:`ALL`, the group names) it runs.
GROUPS: dict[str, tuple[str, ...]] = {
    **{name: tuple(e.id for e in group) for name, group in STUDIES.items()},
    ALL: tuple(STUDIES),
}


def get(exp_id: str) -> Experiment:
    """Return the experiment with this id, or raise a NicsimError naming the choices."""
    try:
        return EXPERIMENTS[exp_id]
    except KeyError:
        allowed = ", ".join(EXPERIMENTS)
        raise NicsimError(f"experiment = {exp_id!r}: unknown; allowed: {allowed}") from None


def expand(names: Iterable[str]) -> list[str]:
    """Expand experiment ids and group names into unique ids, order kept.

    A group may name other groups (:data:`ALL` names them all).

    Examples
    --------
    >>> expand(["coalescing-msgrate", "omx-coal"])[:2]
    ['coalescing-msgrate', 'coalescing-pingpong']
    >>> expand(["all"]) == list(EXPERIMENTS)
    True
    """
    out: list[str] = []
    for name in names:
        if name in GROUPS:
            ids = expand(GROUPS[name])
        elif name in EXPERIMENTS:
            ids = [name]
        else:
            allowed = ", ".join([*GROUPS, *EXPERIMENTS])
            raise NicsimError(f"experiment = {name!r}: unknown; allowed: {allowed}")
        out += [exp_id for exp_id in ids if exp_id not in out]
    return out
