import type { Writable } from 'node:stream';

/** Resolves when the stream wants more, rejects when it is gone (the client went away). */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('The download was closed'));
    out.on('drain', onDrain);
    out.on('close', onClose);
  });
}

/** Writes text to a response stream, waiting while the client is behind (back-pressure). */
export async function write(out: Writable, text: string): Promise<void> {
  if (out.destroyed) throw new Error('The download was closed');
  if (!out.write(text)) await drained(out);
}
