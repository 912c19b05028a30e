// Sandtray javascript kernel: runs each request's code as a script in this
// one realm, so globals, functions and top-level let/const persist. Requests
// come on fd 62 as "<id> <length>\n<code>"; the end of each run goes to fd 63
// as "<id> <exit code> <i if interrupted, else ->\n", after which the kernel
// stops itself until the next run. A promise the code
// evaluates to is awaited, so `await`-style work finishes inside the call.
'use strict';
(() => {
  const fs = require('fs');
  const net = require('net');
  const vm = require('vm');

  class KernelExit extends Error {
    constructor(code) { super('process.exit'); this.exitCode = code; }
  }
  globalThis.require = require;
  globalThis.module = module;
  // process.exit ends the run, like Python's SystemExit, not the kernel.
  process.exit = (code) => { throw new KernelExit(code ?? process.exitCode ?? 0); };

  let cell = 0;
  let busy = false;
  let pending = Buffer.alloc(0);
  let interruptWait = null;
  process.on('SIGINT', () => { if (interruptWait) interruptWait(); });

  const userStack = (err, file) => {
    if (!(err instanceof Error) || !err.stack) return String(err);
    const lines = err.stack.split('\n');
    const head = lines.filter((l) => !l.startsWith('    at '));
    return head.concat(lines.filter((l) => l.startsWith('    at ') && l.includes(file))).join('\n');
  };

  const compile = (source, filename) => {
    try {
      return new vm.Script(source, { filename });
    } catch (err) {
      // Top-level await: run the code as the body of an async function.
      if (!(err instanceof SyntaxError) || !/await/.test(source)) throw err;
      return new vm.Script('(async () => {\n' + source + '\n})()', { filename, lineOffset: -1 });
    }
  };

  const run = async (source) => {
    const filename = `cell${++cell}.js`;
    try {
      let value = compile(source, filename).runInThisContext({ breakOnSigint: true });
      if (value && typeof value.then === 'function') {
        const interrupted = new Promise((_, reject) => { interruptWait = () => reject(new Error('interrupted')); });
        value = await Promise.race([value, interrupted]);
      }
      return [0, false];
    } catch (err) {
      if (err instanceof KernelExit) return [Number(err.exitCode) || 0, false];
      const interrupted = err && (err.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED' || err.message === 'interrupted');
      process.stderr.write((interrupted ? 'Interrupted (SIGINT)' : userStack(err, filename)) + '\n');
      return interrupted ? [130, true] : [1, false];
    } finally {
      interruptWait = null;
    }
  };

  const next = async () => {
    while (!busy) {
      const nl = pending.indexOf(10);
      if (nl < 0) return;
      const [id, length] = pending.subarray(0, nl).toString().split(' ');
      const end = nl + 1 + Number(length);
      if (pending.length < end) return;
      const source = pending.subarray(nl + 1, end).toString();
      pending = pending.subarray(end);
      busy = true;
      process.env.SANDTRAY_EXEC = id; // marks what the run starts (see supervisor.py, sweep)
      const [code, interrupted] = await run(source);
      fs.writeSync(63, `${id} ${code} ${interrupted ? 'i' : '-'}\n`);
      process.kill(process.pid, 'SIGSTOP'); // the supervisor ends the run once it sees this
      busy = false;
    }
  };

  const requests = new net.Socket({ fd: 62, readable: true, writable: false });
  requests.on('data', (chunk) => { pending = Buffer.concat([pending, chunk]); next(); });
  requests.on('end', () => process.reallyExit(0));
})();
