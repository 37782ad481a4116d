"""The published studies nicsim reproduces, and how it checks itself against them.

This package is to the library (:mod:`nicsim`) what gem5's example
configurations are to gem5: it uses the public API and adds nothing the
library needs. It owns

* the studies' texts and quotes (:mod:`~nicsim.studies.papers`);
* the experiments that reproduce them (:mod:`~nicsim.studies.exp_base`, the
  ``exp_*`` modules, collected by :mod:`~nicsim.studies.experiments`) and
  their figures (``plots*``);
* the reproduction of whole studies (:mod:`~nicsim.studies.campaign`, which
  ``nicsim reproduce`` and :func:`nicsim.reproduce` run) and its report
  (:mod:`~nicsim.studies.report`);
* the calibrations of the presets (:mod:`~nicsim.studies.fit`,
  :mod:`~nicsim.studies.fit_lci`, :mod:`~nicsim.studies.fitted`,
  :mod:`~nicsim.studies.holdout`);
* the validation records and report (``validation*``, with the data files
  ``numbers.toml``, ``mechanisms/*.toml`` and ``cross_study.md``).

Nothing in :mod:`nicsim` imports it at module level: only
:func:`nicsim.run_experiment`, :func:`nicsim.reproduce` and the runner's
experiment lookup load it, when called.
"""
