"""The server of tf_programs.py: imports TensorFlow once, then forks a child per program.

Protocol, one JSON request per line on stdin ({"args", "cwd", "env", "out", "err", "legacy"}):
it answers the child's pid, then its exit code (negative: the signal that ended it), a line each.
Nothing runs a TensorFlow op here: the child starts from a process that only imported it.
"""
import builtins
import json
import os
import sys
import threading
import traceback
import types

__import__("tensorflow")  # the point of the server: imported once, before any fork

OTHER_SETTING = 97


def _guard_import_setting(legacy: bool) -> None:
    """Stop with OTHER_SETTING if the program's first `import tensorflow` happens while
    TF_USE_LEGACY_KERAS says otherwise than the server's import did (a fresh interpreter would have
    imported another Keras as `tensorflow.keras`)."""
    real = builtins.__import__

    def importing(name, *args, **kwargs):
        if name == "tensorflow" or name.startswith("tensorflow."):
            builtins.__import__ = real
            now = os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")
            if now != legacy:
                sys.stderr.write("tf_programs: other TF_USE_LEGACY_KERAS at `import tensorflow`\n")
                sys.stderr.flush()
                os._exit(OTHER_SETTING)
        return real(name, *args, **kwargs)
    builtins.__import__ = importing


def _exit_code(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _child(request) -> int:
    os.setpgid(0, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["out"]), (2, request["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    args = request["args"]
    _guard_import_setting(request["legacy"])
    try:
        main = types.ModuleType("__main__")
        main.__builtins__ = builtins
        if args[0] == "-c":
            sys.argv, sys.path[0], filename, text = ["-c", *args[2:]], "", "<string>", args[1]
        else:  # as `python SCRIPT`: argv[0] as given, __file__ absolute, the script's folder first on the path
            sys.argv, filename = list(args), os.path.abspath(args[0])
            sys.path[0] = os.path.dirname(filename)
            with open(filename, "rb") as script:
                text = script.read()
            main.__file__, main.__cached__ = filename, None
        sys.modules["__main__"] = main
        exec(compile(text, filename, "exec"), main.__dict__)
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop)
    except BaseException:  # what the interpreter prints for an uncaught exception
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()  # non-daemon threads are waited for, as at a normal exit
    except Exception:
        pass
    try:
        import atexit
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    return code


def main() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(request)
            finally:
                os._exit(code & 0xFF if code >= 0 else 1)
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    main()
