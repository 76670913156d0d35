// VS Code-shaped events without vscode: an adapter can hand `Emitter.event` straight to
// `onDidChangeTreeData`, and the core stays testable in plain node.

export interface Disposable {
  dispose(): void;
}

export type Event<T> = (listener: (e: T) => void) => Disposable;

export class Emitter<T> implements Disposable {
  private listeners = new Set<(e: T) => void>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        // One broken listener must not stop the others (or the controller).
        console.error('launchpad: event listener failed', err);
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
