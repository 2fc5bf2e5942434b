import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NginxGatewayOptions, renderNginxConfig } from './nginx-config';

/** Debian's nginx (`apt-get install nginx-light`), or NGINX_BIN. */
export function nginxBinary(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [env.NGINX_BIN, '/usr/sbin/nginx', '/usr/local/sbin/nginx'].filter((c): c is string => !!c);
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error('nginx is not installed: bash tools/setup.sh installs Debian\'s nginx-light (or set NGINX_BIN)');
  return found;
}

export type LocalGatewayOptions = Omit<NginxGatewayOptions, 'runtimeDir' | 'errorLog' | 'accessLog' | 'workerProcesses'> &
  Partial<Pick<NginxGatewayOptions, 'accessLog' | 'workerProcesses'>>;

/**
 * Writes the configuration into `dir` (also its runtime folder), checks it with `nginx -t`, and
 * returns the command line that runs it in the foreground (the caller's child: stopping the child
 * stops nginx; SIGQUIT drains, SIGTERM stops at once).
 */
export function prepareNginx(dir: string, options: LocalGatewayOptions): { command: string; args: string[]; configPath: string } {
  mkdirSync(dir, { recursive: true });
  // Started as root, nginx runs its workers as `nobody`: they must reach the folder for buffered bodies.
  chmodSync(dir, 0o755);
  const configPath = join(dir, 'nginx.conf');
  const config = renderNginxConfig({ accessLog: false, workerProcesses: 1, ...options, runtimeDir: dir, errorLog: 'stderr' });
  writeFileSync(configPath, config);
  const command = nginxBinary();
  // -e: the error log before the configuration is read (Debian's default path is root's only).
  const base = ['-p', dir, '-e', 'stderr', '-c', configPath];
  execFileSync(command, [...base, '-t', '-q'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return { command, args: [...base, '-g', 'daemon off;'], configPath };
}

/** Starts nginx as a child process (see prepareNginx); stdout and stderr are the caller's to read. */
export function spawnNginx(dir: string, options: LocalGatewayOptions): ChildProcess {
  const { command, args } = prepareNginx(dir, options);
  return spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
}
