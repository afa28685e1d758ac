/** A merge-queue strategy under test; it reacts to PR arrivals and drives the shared World. */
export interface Policy {
  readonly name: string;
  arrive(pr: number): void;
  /** Invariant violations the policy's own checker found (the World checks landings itself). */
  violations(): number;
}
