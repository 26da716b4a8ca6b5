/**
 * The emulator's event hook: the transaction lifecycle (and any area)
 * calls `emit({eventType, resourceId, data})`; listeners (e.g. webhook
 * notifications) subscribe. With no listener an event goes nowhere.
 *
 * @module
 */

/** One platform event, e.g. `transaction.created` with the transaction as `data`. */
export interface EmulatorEvent {
  /** `transaction.created`, `transaction.status.updated`, ... */
  eventType: string;
  /** The id of the resource (e.g. the transaction id). */
  resourceId?: string;
  /** The resource as the API returns it. */
  data: unknown;
}

/** Receives events; must not throw (errors are logged and swallowed). */
export type EventSink = (event: EmulatorEvent) => void;

/**
 * Fan-out of events to listeners; a listener that throws does not affect
 * the emitter or the other listeners.
 *
 * @example
 * ```ts
 * const bus = new EventBus();
 * bus.listen((e) => console.log(e.eventType));
 * bus.emit({ eventType: "transaction.created", resourceId: "t1", data: {} });
 * ```
 */
export class EventBus {
  readonly #listeners = new Set<EventSink>();
  readonly #onError: (error: unknown) => void;

  /** `onError` receives what a listener throws. */
  constructor(onError: (error: unknown) => void = () => {}) {
    this.#onError = onError;
  }

  /** Adds a listener. */
  listen(sink: EventSink): void {
    this.#listeners.add(sink);
  }

  /** Delivers `event` to every listener. */
  emit(event: EmulatorEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch (e) {
        this.#onError(e);
      }
    }
  }
}
