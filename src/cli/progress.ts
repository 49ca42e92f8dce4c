import cliProgress from "cli-progress";

export interface ProgressReporter {
  update(done: number, total: number, detail: string): void;
  stop(): void;
}

/** A bar on a terminal; elsewhere (logs, CI) a plain line at most every few seconds. */
export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream, format: `${label} [{bar}] {value}/{total} {detail} eta {eta_formatted}`, hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    let state: "new" | "running" | "stopped" = "new";
    return {
      update(done, total, detail) {
        if (state === "stopped") return;
        if (state === "new") bar.start(total, done, { detail });
        state = "running";
        bar.update(done, { detail });
      },
      stop() {
        if (state === "running") bar.stop();
        state = "stopped";
      },
    };
  }
  let lastPrinted = 0;
  let lastLine = "";
  return {
    update(done, total, detail) {
      lastLine = `${label}: ${done}/${total} ${detail}`.trimEnd();
      const now = Date.now();
      if (now - lastPrinted >= 5000 || done === total) {
        stream.write(`${lastLine}\n`);
        lastPrinted = now;
        lastLine = "";
      }
    },
    stop() {
      // once: a bar stopped where it failed and again where the command ends prints its last line once
      if (lastLine) stream.write(`${lastLine}\n`);
      lastLine = "";
    },
  };
}

/** A progress bar per stage of a run, each labelled by its stage and started at its first update (the one before stopped). */
export function createStageProgress(): { update(stage: string, done: number, total: number, detail: string): void; stop(): void } {
  let current: { stage: string; progress: ProgressReporter } | undefined;
  return {
    update(stage, done, total, detail) {
      if (current?.stage !== stage) {
        current?.progress.stop();
        current = { stage, progress: createProgress(stage) };
      }
      current.progress.update(done, total, detail);
    },
    stop() {
      current?.progress.stop();
    },
  };
}

/** The detail of a progress line: "(2 failed, 1 unreadable by the judge)", counting the judge's unreadable replies apart from failed calls, or "". */
export function failureDetail(failed: number, unreadable = 0): string {
  const parts = [...(failed > 0 ? [`${failed} failed`] : []), ...(unreadable > 0 ? [`${unreadable} unreadable by the judge`] : [])];
  return parts.length > 0 ? `(${parts.join(", ")})` : "";
}

/** Progress of a run over items (scans, episodes): a bar for the whole and one for each item at work. */
export interface ItemsProgress {
  /** The whole run: `done` of `total` frames, with a detail ("scans 3/89"). */
  overall(done: number, total: number, detail: string): void;
  /** One item's frames; `finished` ends its bar (on a terminal) or prints its line (elsewhere). */
  item(name: string, done: number, total: number, finished: boolean): void;
  stop(): void;
}

/**
 * On a terminal, a bar for the whole run and, below it, a bar for each item at work (removed
 * when the item ends); elsewhere (logs, CI), the whole run's line at most every few seconds and
 * a line for each item as it ends.
 */
export function createItemsProgress(label: string, stream: NodeJS.WriteStream = process.stderr): ItemsProgress {
  if (!stream.isTTY) {
    const whole = createProgress(label, stream);
    return {
      overall: (done, total, detail) => whole.update(done, total, detail),
      item(name, done, total, finished) {
        if (finished) stream.write(`${name}: ${done}/${total} ${label}\n`);
      },
      stop: () => whole.stop(),
    };
  }
  const bars = new cliProgress.MultiBar({ stream, format: "{name} [{bar}] {value}/{total} {detail}", hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
  let whole: cliProgress.SingleBar | undefined;
  const items = new Map<string, cliProgress.SingleBar>();
  return {
    overall(done, total, detail) {
      whole ??= bars.create(total, done, { name: label, detail });
      whole.setTotal(total);
      whole.update(done, { name: label, detail });
    },
    item(name, done, total, finished) {
      let bar = items.get(name);
      if (!bar && !finished) items.set(name, (bar = bars.create(total, done, { name, detail: "" })));
      bar?.setTotal(total);
      bar?.update(done, { name, detail: "" });
      if (finished && bar) {
        bars.remove(bar);
        items.delete(name);
      }
    },
    stop: () => bars.stop(),
  };
}
