/**
 * The V8 heap of a Worker isolate, read through workerd's inspector (Chrome DevTools Protocol,
 * `Runtime.getHeapUsage`), for the edge bench (bench/store-edge.ts): what the Workers memory
 * limit applies to, apart from the memory of the workerd process around it (Miniflare's R2
 * emulation, V8's other isolates).
 */
import WebSocket from 'ws';

/** `Runtime.getHeapUsage`: bytes used and committed by the isolate's heap, and ArrayBuffer backing stores outside it. */
interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

/** A CDP session with one isolate. */
class Inspector {
  private next = 0;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.pending.get(message.id)?.(message.result);
      if (message.id !== undefined) this.pending.delete(message.id);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Inspector(socket);
  }

  call<T>(method: string): Promise<T> {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (result: unknown) => void);
      this.socket.send(JSON.stringify({ id, method }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** Committed heap plus backing stores: the isolate's memory as the bench counts it. */
function isolateBytes(usage: HeapUsage): number {
  return usage.totalSize + (usage.backingStorageSize ?? 0);
}

/**
 * Runs `during` while polling the isolate at `url` (a `ws://…/core:user:…` inspector target) every
 * 20 ms; the isolate's memory before, its peak while `during` ran, and the peak of each part
 * (heap used, heap committed, ArrayBuffer backing stores).
 */
export async function isolatePeak<T>(url: string, during: () => Promise<T>): Promise<{ value: T; before: number; peak: number; parts: { used: number; committed: number; backing: number } }> {
  const inspector = await Inspector.connect(url);
  try {
    const before = isolateBytes(await inspector.call<HeapUsage>('Runtime.getHeapUsage'));
    let peak = before;
    /** The peak of each part on its own (they need not peak at once). */
    const parts = { used: 0, committed: 0, backing: 0 };
    let finished = false;
    const running = during().finally(() => (finished = true));
    running.catch(() => {}); // awaited below

    while (!finished) {
      const usage = await inspector.call<HeapUsage>('Runtime.getHeapUsage');
      peak = Math.max(peak, isolateBytes(usage));
      parts.used = Math.max(parts.used, usage.usedSize);
      parts.committed = Math.max(parts.committed, usage.totalSize);
      parts.backing = Math.max(parts.backing, usage.backingStorageSize ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { value: await running, before, peak, parts };
  } finally {
    inspector.close();
  }
}
