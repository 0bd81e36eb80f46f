// A tiny HTTP server on 127.0.0.1 serving fixed files, e.g. a machine configuration that a VM
// fetches through QEMU's user network (the guest reaches the host's loopback as 10.0.2.2).
import http from 'node:http';

export interface FileServer {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

export async function serveFiles(files: Record<string, string | Buffer>): Promise<FileServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = files[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr !== 'object') throw new Error('no address');
  return {
    port: addr.port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
