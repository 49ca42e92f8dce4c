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
      if (lastLine) stream.write(`${lastLine}\n`);
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
