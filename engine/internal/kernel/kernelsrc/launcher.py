# Sandtray init: the first kernel's launcher, then the sandbox's reaper (kernel.go)
import os, sys
try: import _signal as signal
except ImportError: import signal
_sandtray_ends = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
def _sandtray_init():
 try:
  signal.set_wakeup_fd(-1); n = os.open(os.devnull, os.O_RDWR)
  for fd in (0, 1, 2): os.dup2(n, fd)
  os.closerange(3, 65536)
 except Exception: pass
 w = set(_sandtray_ends) | {signal.SIGCHLD}; signal.pthread_sigmask(signal.SIG_BLOCK, w)
 for s in w: signal.signal(s, signal.SIG_DFL)
 while True:
  try:
   while os.waitpid(-1, os.WNOHANG)[0]: pass
  except ChildProcessError: pass
  s = signal.sigwait(w)
  if s in _sandtray_ends: os._exit(128 + s)
_sandtray_init.pid = os.getpid()
def _sandtray_boot():
 import select
 for s in _sandtray_ends: signal.signal(s, lambda n, _: os._exit(128 + n))
 try:
  import _ctypes
  class P: _handle = _ctypes.dlopen(None)
  class F(_ctypes.CFuncPtr): _flags_ = _ctypes.FUNCFLAG_CDECL
  ok = F(("prctl", P))(4, 0, 0, 0, 0) == 0
 except Exception: ok = False
 if not ok: os.write(1, b'X\0\0\0\x0d{"exit": 218}')
 if not ok or not select.select([0], [], [], 10)[0]: _sandtray_init()
 try: os.chdir(sys.argv[1])
 except OSError:
  os.write(2, b"sandtray: cannot enter the workdir %s (not a folder any more?); running in /\n" % os.fsencode(sys.argv[1])); os.chdir("/")
 def read(n):
  b = b""
  while len(b) < n:
   c = os.read(0, n - len(b))
   if not c: _sandtray_init()
   b += c
  return b
 n = [int(x) for x in read(20).split()]
 src = read(n[0]).decode()
 sys.argv[:] = ["-c", "python", read(n[1]).decode(), "init"]
 for s in _sandtray_ends: signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
 return src
try: exec(compile(_sandtray_boot(), "<string>", "exec"))
finally:
 if os.getpid() == _sandtray_init.pid: _sandtray_init()
