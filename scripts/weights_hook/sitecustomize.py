"""Same initial weights for the reference (compat) run and the native run of a tf1-programs program.

scripts/run_programs.py puts this folder on PYTHONPATH (after run.py's shim, before site-packages),
so every Python process of a run imports this file at startup. It does nothing unless one of these
is set, and even then it imports TensorFlow only when the program itself does (a post-import hook):
    TFMIGRATE_WEIGHTS_DUMP=F.npz   reference run (TF1 graph through tf.compat.v1): after the first
                                   Session.run that runs global_variables_initializer, write the
                                   values of the graph's trainable variables (creation order) to F
    TFMIGRATE_WEIGHTS_LOAD=F.npz   native run (eager TF2): every TRAINABLE variable created (tf.Variable,
                                   Keras 3 layer weights) takes, in creation order, the next array of
                                   F as its initial value while the shapes match
Each writes a status JSON next to F (F.dump.json / F.load.json). The logic is in tfm_weights_hook.
"""
import os

if os.environ.get("TFMIGRATE_WEIGHTS_DUMP") or os.environ.get("TFMIGRATE_WEIGHTS_LOAD"):
    try:
        import tfm_weights_hook

        tfm_weights_hook.install()
    except Exception as exc:  # never break the program itself
        import sys

        print(f"tfm_weights_hook: not installed: {type(exc).__name__}: {exc}", file=sys.stderr)
