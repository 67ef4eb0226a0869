// Starting the real binaries on free ports and reading the URL they print.
import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const repoRoot = path.resolve(__dirname, '..', '..');
const binDir = process.env.PAYONCE_BIN_DIR ?? path.join(repoRoot, 'target', 'debug');

export interface Running {
  url: string;
  /** The line that announced the URL. */
  banner: string;
  process: ChildProcess;
  logFile: string;
  /** Every line it printed so far, without colours, as this process received them. */
  lines: string[];
}

export function binaryPath(binary: string): string {
  return path.join(binDir, binary);
}

/** Spawns `binary` with `args`, resolving once it prints its `http://` URL. Every
 *  line it prints (stdout and stderr) goes to `logFile` and, without colours, to `onLine`. */
export function start(
  binary: string,
  args: string[],
  logFile: string,
  onLine: (line: string) => void = () => {},
): Promise<Running> {
  const child = spawn(binaryPath(binary), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile, { flags: 'a' });
  const printed: string[] = [];
  const received = (line: string) => {
    log.write(line + '\n');
    const plain = withoutColours(line);
    printed.push(plain);
    onLine(plain);
  };
  readline.createInterface({ input: child.stderr! }).on('line', received);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${binary} did not start; see ${logFile}`)), 15_000);
    const lines = readline.createInterface({ input: child.stdout! });
    let announced = false;
    lines.on('line', (line) => {
      received(line);
      const url = line.match(/http:\/\/[\d.:]+/)?.[0];
      if (url && !announced) {
        announced = true;
        clearTimeout(timer);
        resolve({ url, banner: line, process: child, logFile, lines: printed });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${binary} exited with ${code}; see ${logFile}`));
    });
  });
}

/** Stops a process and waits until it is gone. `SIGKILL` runs no shutdown code. */
export function stop(running: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (running.process.exitCode !== null || running.process.signalCode !== null) return resolve();
    running.process.once('exit', () => resolve());
    running.process.kill(signal);
  });
}

function withoutColours(line: string): string {
  return line.replace(/\x1b\[[0-9;]*m/g, '');
}

export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}
