"""The rules of the TF1 modules that exist in neither `tf` nor `tf.compat.v1` (`tf.contrib`,
`tf.estimator`) and of TF1-era private modules (`tensorflow.python.debug`).

A `GoneApiRule` is a removed-API rule handed whole paths under references.OWN_PREFIXES
(`contrib.slim.conv2d`, not the table's `contrib`), names reached through an alias import
(`import tensorflow.contrib.slim as slim; slim.conv2d`) and each imported name of such a module,
as `GoneRef`s (see tfmigrate.facts.references).
"""
from __future__ import annotations

import libcst as cst

from tfmigrate.facts.names import dotted
from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.rules._removed_api import RemovedApiRule


class GoneApiRule(RemovedApiRule):
    """Base of the rules owning paths under OWN_PREFIXES."""

    FULL_PATHS = True


def spelled_gone(ref: TF1Ref) -> str:
    """How to name the reference in a message: the code as written when short, else tf.<path>."""
    code = dotted(ref.node) if isinstance(ref.node, (cst.Name, cst.Attribute)) else None
    if isinstance(ref, GoneRef) and ref.statement is not None:
        return f"tf.{ref.path}" if not ref.path.startswith("python.") else f"tensorflow.{ref.path}"
    if code and len(code) <= 48:
        return code
    return f"tf.{ref.path}"
