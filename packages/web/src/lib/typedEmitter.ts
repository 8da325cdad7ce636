/** A minimal event emitter typed by an event map: `on('view', (state) => …)` knows the payload type. */
export class TypedEmitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  on<K extends keyof Events>(type: K, listener: (payload: Events[K]) => void): () => void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  protected emit<K extends keyof Events>(type: K, payload: Events[K]): void {
    for (const listener of this.listeners.get(type) ?? []) (listener as (p: Events[K]) => void)(payload);
  }

  protected removeAllListeners(): void {
    this.listeners.clear();
  }
}
