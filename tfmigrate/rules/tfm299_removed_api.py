"""TFM299: any TF1-only symbol (from the measured API table) that no more specific TFM2xx rule
claims: renamed to its TF2-native replacement when that is a drop-in, else to `tf.compat.v1`."""
from tfmigrate.removed_api import RemovedApiRule


class RemovedApi(RemovedApiRule):
    code = "TFM299"
