# Sandtray python kernel: runs each request's code in __main__'s namespace,
# so variables, imports and functions persist between calls. Requests come
# on fd 62 as "<id> <length>\n<code>"; the end of each run goes to fd 63 as
# "<id> <exit code> <i if interrupted, else ->\n", after which the kernel
# stops itself until the supervisor continues it for the next run.
#
# It imports only what the interpreter already has (see supervisor.py):
# traceback and linecache (which imports tokenize and re) cost a new
# kernel's first call milliseconds, so traceback is imported when a run
# fails, and the cells' source reaches linecache when something imports it.
def _sandtray_kernel():
    import os
    import sys

    try:
        import _signal as signal  # signal.py imports enum
    except ImportError:
        import signal

    os.set_inheritable(62, False)  # programs the code starts never get them
    os.set_inheritable(63, False)
    # Stdout is a pipe, which Python would buffer by blocks: by lines, output
    # streams to progress notifications and to jobs as it is printed.
    sys.stdout.reconfigure(line_buffering=True)
    requests = os.fdopen(62, "rb")
    namespace = sys.modules["__main__"].__dict__
    state = {"cell": 0}
    # SIGINT interrupts user code only: one that comes late, between runs,
    # is ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def report(exc):
        # Start the traceback below this frame: it shows only the user's code.
        import traceback
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)

    # The cells' source, for tracebacks: in linecache's cache once linecache
    # is imported (by this kernel's report, or by the code: traceback,
    # warnings, inspect), here until then.
    cells = {}

    def remember(name, source):
        cells[name] = (len(source), None, source.splitlines(True), name)
        lines = sys.modules.get("linecache")
        if lines is not None and isinstance(getattr(lines, "cache", None), dict):
            lines.cache.update(cells)
            cells.clear()

    class CellLines:
        # A finder first on sys.meta_path that finds nothing itself: when
        # linecache is first imported, it has the finders after it find it,
        # and adds the cells to its cache once it is loaded.
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "linecache":
                return None
            sys.meta_path.remove(CellLines)
            for finder in sys.meta_path:
                spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            if isinstance(spec.loader, type):
                return spec  # a class, shared: not patched (remember adds the cells next run)
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                module.cache.update(cells)
                cells.clear()

            spec.loader.exec_module = exec_module
            return spec

    if "linecache" not in sys.modules:
        sys.meta_path.insert(0, CellLines)

    def children():
        # This process's children, from each thread's list (cheap), or every
        # process when the kernel has no such list.
        kids = []
        try:
            for tid in os.listdir("/proc/self/task"):
                with open("/proc/self/task/%s/children" % tid) as f:
                    kids += f.read().split()
        except OSError:
            return os.listdir("/proc")
        return kids

    def reap():
        # Children the code forked and never waited for stay zombies as long
        # as this kernel lives: reap them, but not those a subprocess or
        # multiprocessing Popen object still owns and will wait for.
        me = str(os.getpid()).encode()
        zombies = []
        for name in children():
            if not name.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1 and fields[0] == b"Z" and fields[1] == me:
                zombies.append(int(name))
        if not zombies:
            return
        import gc
        # The code's own Popen objects still waiting for their process;
        # one already waited for (returncode set) may hold a pid the
        # sandbox has given to another process since.
        owned = {getattr(o, "pid", None) for o in gc.get_objects()
                 if type(o).__name__ == "Popen" and getattr(o, "returncode", 0) is None}
        for pid in zombies:
            if pid not in owned:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass

    def run(source):
        state["cell"] += 1
        name = "<cell %d>" % state["cell"]
        remember(name, source)
        try:
            try:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                exec(compile(source, name, "exec"), namespace)
            finally:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                return e.code or 0, False
            print(e.code, file=sys.stderr)
            return 1, False
        except KeyboardInterrupt as e:
            report(e)
            return 130, True
        except BaseException as e:
            report(e)
            return 1, False
        return 0, False

    # Between runs, children that end (the supervisor kills what a run left
    # running) are reaped as they do; during a run, the code's own waits
    # must find its children, so SIGCHLD is left alone.
    def between_runs(*_):
        reap()

    signal.signal(signal.SIGCHLD, between_runs)
    while True:
        header = requests.readline()
        if not header:
            return
        rid, length = header.split()
        source = requests.read(int(length)).decode("utf-8", "replace")
        # Programs the code starts carry the run's id, so the supervisor can
        # stop what they leave running when the run ends.
        os.environ["SANDTRAY_EXEC"] = rid.decode("ascii", "replace")
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        code, interrupted = run(source)
        signal.signal(signal.SIGCHLD, between_runs)
        reap()
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        os.write(63, b"%s %d %s\n" % (rid, code, b"i" if interrupted else b"-"))
        os.kill(os.getpid(), signal.SIGSTOP)  # the supervisor ends the run once it sees this


_sandtray_kernel()
