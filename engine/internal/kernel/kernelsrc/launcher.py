# Sandtray kernel: its programs come on stdin; the sandbox's init until it ends
import os, sys
def _sandtray_init():
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.execv("/bin/sh", ["/bin/sh", "-c", sys.argv[-1]])
_sandtray_init.pid = os.getpid()
def _sandtray_boot():
    import select
    try:
        import _signal as signal
    except ImportError:
        import signal
    ends = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
    for sig in ends:
        signal.signal(sig, lambda n, _: os._exit(128 + n))
    try:
        import _ctypes
        class P:
            _handle = _ctypes.dlopen(None)
        class F(_ctypes.CFuncPtr):
            _flags_ = _ctypes.FUNCFLAG_CDECL
        ok = F(("prctl", P))(4, 0, 0, 0, 0) == 0
    except Exception:
        ok = False
    if not ok:
        os.write(1, b'X\0\0\0\x0d{"exit": 218}')
    if not ok or not select.select([0], [], [], 10)[0]:
        _sandtray_init()
    try:
        os.chdir(sys.argv[1])
    except OSError:
        os.write(2, b"sandtray: cannot enter the workdir %s (not a folder any more?); running in /\n" % os.fsencode(sys.argv[1]))
        os.chdir("/")
    def read(n):
        b = b""
        while len(b) < n:
            c = os.read(0, n - len(b))
            if not c:
                _sandtray_init()
            b += c
        return b
    n = [int(x) for x in read(20).split()]
    src = read(n[0]).decode()
    sys.argv[:] = ["-c", "python", read(n[1]).decode(), "init", sys.argv[2]]
    for sig in ends:
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    return src
try:
    exec(compile(_sandtray_boot(), "<string>", "exec"))
finally:
    if os.getpid() == _sandtray_init.pid:  # not in the kernel's child, a fork
        _sandtray_init()
